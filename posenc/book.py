"""Glue for the book's chapters: numbers recorded for the text, rounded to what the text shows.

A chapter computes a number and the prose quotes it (MyST-NB's ``{glue:text}`` role).
The number is stored in the executed notebook, and the notebook regression compares the
stored text with a re-run character by character.  A float glued with its full ``repr``
(``3.6108841891612475``) carries its last bits into that comparison, and the last bits
of a reduction (a norm, a dot product, a matrix product) depend on the BLAS kernel that
NumPy picked for the CPU it runs on.  :func:`glue` therefore rounds every float to the
precision the text needs before it is recorded: ``decimals`` digits after the point
(what a ``{glue:text}`name:.3f``` shows) or ``sig`` significant digits (for values such
as ``2.4e-07``).  Rounding a value to 3 decimals can still flip between kernels only if
the value lies within about ``1e-15`` of a rounding boundary, which no chapter's value
does; ``tests/test_portability.py`` re-runs the chapters under several kernels to show it.

Outside the book (a downloaded notebook run without MyST-NB installed) :func:`glue`
records nothing and returns the rounded value, so a chapter runs with only ``posenc``,
NumPy and Matplotlib.
"""

from __future__ import annotations

import ast
import inspect
import numbers
import textwrap

import numpy as np

__all__ = ["glue", "glued", "rounded", "show_source", "Source"]

#: The values :func:`glue` recorded in this Python session, by name (the last, for a name
#: glued twice): what :func:`glued` reads.
GLUED: dict[str, object] = {}


def rounded(value, *, decimals: int | None = None, sig: int | None = None):
    """Return ``value`` as the plain Python value the book's text shows.

    Parameters
    ----------
    value : int, float, bool, str or NumPy scalar
        Integers (Python or NumPy), booleans and strings are returned unchanged (NumPy
        integers as ``int``); a float must say how it is rounded.
    decimals : int, optional
        Digits after the decimal point to keep (``round(value, decimals)``); ``0`` gives
        an ``int``.
    sig : int, optional
        Significant digits to keep, for values whose size varies (``2.4e-07``).

    Returns
    -------
    int, float, bool or str

    Raises
    ------
    TypeError
        If ``value`` is an array, a complex number or another unsupported type, or a float
        is given without exactly one of ``decimals`` and ``sig``.
    ValueError
        If ``decimals`` is negative, ``sig`` is not positive, or a float is not finite.
    """
    if decimals is not None and sig is not None:
        raise TypeError(f"decimals: {decimals!r} given with sig={sig!r}; expected only one of them")
    if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral)):
        raise TypeError(f"decimals: {decimals!r}; expected a non-negative integer")
    if decimals is not None and decimals < 0:
        raise ValueError(f"decimals: {decimals!r}; expected a non-negative integer")
    if sig is not None and (isinstance(sig, bool) or not isinstance(sig, numbers.Integral)):
        raise TypeError(f"sig: {sig!r}; expected a positive integer")
    if sig is not None and sig < 1:
        raise ValueError(f"sig: {sig!r}; expected a positive integer")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"value: {value!r}; expected a finite number")
        if decimals is None and sig is None:
            raise TypeError(
                f"value: the float {value!r} needs decimals= or sig=; expected the precision the text shows"
            )
        if sig is not None:
            return float(f"{value:.{int(sig)}g}")
        if decimals == 0:
            return int(round(value))
        return round(value, int(decimals))
    raise TypeError(
        f"value: {type(value).__name__} {value!r}; expected an int, float, bool or str "
        "(glue one number at a time, not an array)"
    )


def glue(name: str, value, *, decimals: int | None = None, sig: int | None = None):
    """Record ``value``, rounded by :func:`rounded`, under ``name`` for the chapter's text.

    Within the book (MyST-NB installed) this calls ``myst_nb.glue(name, value,
    display=False)``, so the text quotes it with ``{glue:text}`name``` (or with a
    format, ``{glue:text}`name:.3f```, whose digits must not exceed ``decimals``).
    Without MyST-NB nothing is recorded.  Returns None, as ``myst_nb.glue`` does, so a
    cell that ends on a glue call shows nothing (in the page or in a downloaded
    notebook); :func:`rounded` gives the value itself.

    Raises
    ------
    TypeError
        If ``name`` is not a non-empty string, or as :func:`rounded` does.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name: {name!r}; expected a non-empty string")
    value = rounded(value, decimals=decimals, sig=sig)
    GLUED[name] = value
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return None
    myst_glue(name, value, display=False)
    return None


class _Shown(str):
    """A string that a notebook displays as it is (its ``repr`` has no quotes)."""

    def __repr__(self) -> str:
        return str(self)


def glued(name: str, format_spec: str = "") -> str:
    """The text ``{glue:text}`name:format_spec``` shows for the value glued under ``name`` in this session.

    In JupyterLab (``make lab``) a chapter's ``{glue:text}`` roles are shown as MyST ``{eval}``
    expressions that call this function (``lab/jupyter_server_config.py``), so that once the
    cells above have run, the prose shows the number the book prints there. The text is
    formatted by MyST-NB's own ``format_plain_text``, as the book's pasted values are.

    Raises
    ------
    LookupError
        If nothing was glued under ``name`` in this session (the cell that glues it has not run).
    """
    from myst_nb.core.variables import format_plain_text

    if name not in GLUED:
        raise LookupError(f"name: {name!r} was not glued in this session; expected the name of a value "
                          "glue() recorded (run the cells above first)")
    return _Shown(format_plain_text(repr(GLUED[name]), format_spec))


class Source:
    """The source of a ``posenc`` object, shown by a notebook as a highlighted Python block.

    A chapter shows the code it runs, not a copy: :func:`show_source` reads it from the
    installed package with ``inspect.getsource``, so the page, the PDF, a downloaded
    notebook and the in-page Run controls show the same lines, and the notebook regression
    compares them with the stored output (a change to the shown function shows up there).

    Attributes
    ----------
    text : str
        The source, dedented, with the docstring replaced by ``...`` unless it was kept.
    """

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        return f"```python\n{self.text}\n```"


def show_source(obj, *, docstring: bool = False) -> Source:
    """The source of a function, class or method of ``posenc``, to show in a chapter.

    Parameters
    ----------
    obj : function, class or method
        Anything ``inspect.getsource`` can read.
    docstring : bool, optional
        Keep the docstring (default: replace it by an ellipsis, ``...``: the API page has it).

    Returns
    -------
    Source
        Displayed as a highlighted Python block; ``str(...)``/``repr`` give the text.

    Raises
    ------
    TypeError
        If ``obj`` has no Python source (a built-in, a NumPy function, an instance).
    """
    if not isinstance(docstring, (bool, np.bool_)):
        raise TypeError(f"docstring: {docstring!r}; expected True or False")
    try:
        text = textwrap.dedent(inspect.getsource(obj)).rstrip("\n")
    except (TypeError, OSError) as err:
        raise TypeError(f"obj: {obj!r}; expected a function, class or method with Python source") from err
    if not docstring:
        lines = text.splitlines()
        node = ast.parse(text).body[0]
        first = node.body[0] if getattr(node, "body", None) else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and isinstance(
            first.value.value, str
        ):
            indent = lines[first.lineno - 1][: len(lines[first.lineno - 1]) - len(lines[first.lineno - 1].lstrip())]
            lines[first.lineno - 1 : first.end_lineno] = [f"{indent}..."]
            text = "\n".join(lines)
    return Source(text)
