"""The book's plot style: legible on a phone, in print and in grey scale.

A single function, :func:`use_book_style`, sets Matplotlib's ``rcParams``; chapters
call it once in their setup cell.  Colours follow the Okabe-Ito palette, which stays
distinguishable under the common forms of colour blindness; line styles differ too,
so that curves remain distinguishable in grey scale.  Heat maps use ``cividis``, whose lightness increases
monotonically: it is safe for colour-blind readers and keeps its order in grey scale,
so signed values (encodings, similarities) remain readable in print, with negative
values dark and positive values light.
"""

from __future__ import annotations

__all__ = ["OKABE_ITO", "HEATMAP", "use_book_style"]

#: Okabe & Ito (2008) colour-blind-safe qualitative palette (black omitted).
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
#: The colour map of every heat map (monotone lightness, safe for colour blindness and grey scale).
HEATMAP = "cividis"


def use_book_style() -> None:
    """Set Matplotlib defaults used by every figure in the book.

    Figures default to 6.4 x 3.6 inches at 110 dpi with 11-point text, so that a
    figure scaled to a phone's width keeps readable labels.

    Two settings are for the HTML book:

    - every figure has an opaque white background, set explicitly rather than left to
      the backend's defaults: a transparent figure would put its black labels on the
      dark background of the theme's dark mode, and
    - in a notebook kernel, figures are sent as pixel-doubled PNG ("retina": 220 dpi,
      with the 110-dpi size in the output's metadata), so they stay crisp on
      high-density screens and keep their size on the page.
    """
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(
        {
            "figure.facecolor": "white",
            "figure.edgecolor": "white",
            "savefig.facecolor": "white",
            "savefig.edgecolor": "white",
            "axes.facecolor": "white",
            "figure.figsize": (6.4, 3.6),
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "figure.constrained_layout.use": True,
            "font.size": 11,
            "axes.titlesize": 12,
            "axes.labelsize": 11,
            "legend.fontsize": 10,
            "xtick.labelsize": 10,
            "ytick.labelsize": 10,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "lines.linewidth": 2.0,
            "image.cmap": HEATMAP,
            "axes.prop_cycle": cycler(color=list(OKABE_ITO[:4]))
            + cycler(linestyle=["-", "--", "-.", ":"]),
        }
    )
    _use_retina_png()


def _use_retina_png() -> None:
    """In an IPython kernel, display figures as pixel-doubled PNG; elsewhere do nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book's stack
        return
    shell = get_ipython()
    if shell is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("retina")
