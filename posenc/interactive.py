"""Interactive figures for the static book: every state computed here, chosen in the browser.

An interactive figure is a list of *states*, each a list of Plotly traces computed in
Python by a chapter's code (with posenc). All states go into one Plotly figure, and a
control shows one state at a time by switching the traces' visibility. The browser
therefore evaluates no formula: every number it draws was computed by the chapter and
stored in the page, and moving the control only chooses among them.

**In the book** (``text/html``, ``InteractiveFigure.to_html``) the control is a
native HTML one: an ``<input type="range">`` for a slider, a ``<select>`` for a drop-down
menu, each with a visible ``<label>``, so that it is reached with the Tab key, moved with
the arrow keys and announced by a screen reader (the slider's ``aria-valuetext`` is the
state's label). A status line under it (``aria-live="polite"``) names the state shown, and
the plot itself is an image (``role="img"``) whose ``aria-label`` is the figure's ``alt``
text. The HTML holds no code: the book's script (``_ext/posenc-interactive.js``, which
``_ext/posenc_plotly.py`` ships with every page that holds a figure) finds each figure by its
``data-posenc-figure`` attribute, draws it and, when the control moves, calls
``Plotly.restyle`` with the precomputed visibility of the chosen state. Plotly's own slider
and menu are left out of the figure the page draws:
plotly.js draws them as SVG that takes no keyboard focus (plotly/plotly.js#562).

**In JupyterLab** the figure is rendered by Plotly's own renderer from the
``application/vnd.plotly.v1+json`` output (ranked above ``text/html``), which draws only
the figure and runs none of the page's script. That output (``InteractiveFigure.figure``)
therefore keeps Plotly's own slider or menu (``layout.sliders`` / ``layout.updatemenus``,
``"update"`` steps with the same visibility masks): mouse-operated, as plotly.js makes
them, and the only control JupyterLab can show. The still PNG for print
(``InteractiveFigure.to_png``) is drawn from that figure too, and names the state
it shows.

The output is deterministic (element ids derived from a name chosen by the chapter,
numbers rounded to a fixed number of significant digits, keys in a fixed order), so the
notebook regression compares it exactly. In the built book the page loads plotly.js once:
its partial "basic" bundle (scatter and bar traces), pinned at the version the pinned
``plotly`` package writes figures for and copied into the site by ``_ext/posenc_plotly.py``
(no CDN).

This module needs only NumPy; it does not import Plotly.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

import numpy as np

from ._checks import check_choice, check_int
from .plotting import OKABE_ITO

__all__ = ["InteractiveFigure", "interactive_figure"]

_ID = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
_CONTROLS = ("slider", "dropdown")
#: Significant digits kept for every number drawn: far below what a screen can show,
#: and fixed, so that the stored output does not depend on the last bits of a float.
DIGITS = 6


def _clean(value, path: str):
    """Arrays and floats to JSON lists of rounded numbers; reject what JSON cannot hold."""
    if isinstance(value, dict):
        return {str(k): _clean(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype.kind in "fiub" and arr.size:
            arr = arr.astype(float)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"states: {path} holds a NaN or an infinity; expected finite numbers")
            rounded = np.array([float(f"{v:.{DIGITS}g}") for v in arr.ravel()]).reshape(arr.shape)
            out = rounded.tolist()
            return out
        return [_clean(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise ValueError(f"states: {path} = {value!r} is not finite; expected a finite number")
        return float(f"{float(value):.{DIGITS}g}")
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"states: {path} has type {type(value).__name__}; expected numbers, strings, lists or dicts")


@dataclass(frozen=True)
class InteractiveFigure:
    """A Plotly figure whose states are switched by a control; displays itself in a notebook.

    Built by :func:`interactive_figure`; not usually constructed by hand.

    Parameters
    ----------
    figure : dict
        The Plotly figure (``{"data": [...], "layout": {...}}``) with every state's traces
        and Plotly's own slider or menu: what JupyterLab renders, and what the still is
        drawn from.
    name : str
        Chosen by the chapter (stable across runs); the plot's element id is ``{name}-plot``
        (so a MyST figure may carry the name itself as its label), the control's
        ``{name}-control`` and the status line's ``{name}-status``.
    n_states : int
        How many states the control chooses among.
    height : int
        Height of the plot in CSS pixels.
    alt : str
        What the figure shows, in words: the plot's ``aria-label``.
    control : {"slider", "dropdown"}
        The kind of control.
    labels : tuple of str
        One label per state (plain text).
    control_label : str
        The text before a state's label (plain text, for example ``"m = "``).
    initial : int
        The state shown first.
    page : dict
        What the book's page draws and switches: ``data`` and ``layout`` (the figure
        without Plotly's own control), and per state its ``restyle`` arguments
        (``states``) and status text (``status``), and the ``labels``.
    """

    figure: dict
    name: str
    n_states: int
    height: int
    alt: str
    control: str
    labels: tuple
    control_label: str = ""
    initial: int = 0
    page: dict = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        """The figure as compact JSON with a fixed key order (safe inside a ``<script>``)."""
        return _json(self.figure)

    def page_json(self) -> str:
        """What the page's script reads (``page``), as ``to_json`` writes it."""
        return _json(self.page)

    def to_html(self) -> str:
        """The plot's ``<div>``, its native control and status line, and their data; no script.

        The plot is ``<div role="img" aria-label="{alt}">``, drawn by ``Plotly.newPlot``
        from ``page_json`` (a ``<script type="application/json">``: data, not code). Under
        it a ``<label>`` and an ``<input type="range">`` (slider) or ``<select>``
        (drop-down) choose the state, and a status line (``aria-live="polite"``) names the
        state shown. The enclosing ``<div>`` carries ``data-posenc-figure="{name}"`` and
        ``data-posenc-shown="{initial}"``, by which the book's script
        (``_ext/posenc-interactive.js``) finds the figure: it draws the plot, and when the
        control moves calls ``Plotly.restyle`` with that state's precomputed visibility,
        sets the status text and the slider's ``aria-valuetext``: no number is computed in
        the browser.

        The page must load that script and plotly.js (the book's Sphinx extension adds both
        to every page that holds an interactive figure). Without plotly.js the plot says so
        in plain text and the control is disabled.
        """
        n = self.name
        esc = html.escape
        s0 = self.initial
        label = _control_title(self.control_label)
        if self.control == "slider":
            control = (
                f'<input type="range" id="{n}-control" min="0" max="{self.n_states - 1}" step="1" value="{s0}" '
                f'aria-valuetext="{esc(self.labels[s0])}" aria-controls="{n}-plot" autocomplete="off">'
            )
        else:
            options = "".join(
                f'<option value="{s}"{" selected" if s == s0 else ""}>{esc(lab)}</option>'
                for s, lab in enumerate(self.labels)
            )
            control = f'<select id="{n}-control" aria-controls="{n}-plot" autocomplete="off">{options}</select>'
        return (
            f'<div class="posenc-figure" id="{n}-figure" data-posenc-figure="{n}" data-posenc-shown="{s0}">\n'
            f'<div class="posenc-interactive" id="{n}-plot" role="img" aria-label="{esc(self.alt)}" '
            f'style="width:100%;height:{self.height}px;"></div>\n'
            f'<div class="posenc-controls"><label for="{n}-control">{esc(label)}</label>{control}</div>\n'
            f'<p class="posenc-status" id="{n}-status" aria-live="polite">{esc(self.page["status"][s0])}</p>\n'
            f'<script type="application/json" id="{n}-json">{self.page_json()}</script>\n'
            "</div>"
        )

    def to_png(self) -> bytes:
        """A still image of the state shown first, drawn with Matplotlib (for print).

        The PDF cannot run a control, so the figure also carries this PNG: the same
        traces (the initial state and the static ones, with their colours, axis ranges
        and titles), and a note naming the state shown and how many the control offers.
        """
        return _still_png(self.figure)

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {
            "text/html": self.to_html(),
            "application/vnd.plotly.v1+json": self.figure,
            "text/plain": f"InteractiveFigure({self.name!r}, {self.n_states} states)",
        }
        # The HTML book shows text/html and JupyterLab Plotly's own type; LaTeX (make pdf)
        # takes this PNG. Without Matplotlib the bundle simply has no still image.
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return bundle
        bundle["image/png"] = self.to_png()
        return bundle


def _json(value) -> str:
    """Compact JSON with a fixed key order, safe inside a ``<script>`` element."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return text.replace("</", "<\\/")


def _control_title(control_label: str) -> str:
    """The control's visible label: its prefix without the trailing ``=`` or ``:`` ("m = " -> "m")."""
    title = _plain(control_label).strip().rstrip("=:").strip()
    return title or "state"


def _status(control_label: str, label: str, s: int, n_states: int) -> str:
    """The status line's text for state ``s``: the state's name and its place among the states."""
    return f"Showing {_plain(control_label)}{_plain(label)}, state {s + 1} of {n_states}."


def _axis_names(trace: dict) -> tuple[str, str]:
    """Plotly's axis references ("x", "y2") as layout keys ("xaxis", "yaxis2")."""
    x, y = trace.get("xaxis", "x"), trace.get("yaxis", "y")
    return "xaxis" + x[1:], "yaxis" + y[1:]


def _plain(text) -> str:
    """Plotly's HTML subset in a title to plain text."""
    return re.sub(r"<[^>]+>", "", str(text or "")).replace("&nbsp;", " ")


def _state_note(layout: dict) -> str:
    """Which state the still shows, from the layout's slider or menu."""
    for key, prefix in (("sliders", "currentvalue"), ("updatemenus", None)):
        for control in layout.get(key, []):
            steps = control.get("steps") or control.get("buttons") or []
            if not steps:
                continue
            active = steps[control.get("active", 0)]["label"]
            label = control.get(prefix, {}).get("prefix", "") if prefix else ""
            if not label:
                notes = [a.get("text", "") for a in layout.get("annotations", [])]
                label = notes[0] if notes else ""
            kind = "a slider" if key == "sliders" else "a menu"
            return f"Shown: {_plain(label)}{_plain(active)} (the HTML version offers {len(steps)} states on {kind})"
    return ""


_DASHES = {"dot": ":", "dash": "--", "dashdot": "-.", "longdash": "--", "solid": "-"}


def _still_png(figure: dict) -> bytes:
    import io

    # A bare Figure (no pyplot): the kernel's backend and pyplot's figures are untouched,
    # and savefig renders with Agg. No layout engine: the axes are placed by hand below
    # (the book style turns constrained layout on, which would warn about them).
    from matplotlib.figure import Figure

    layout = figure["layout"]
    traces = [tr for tr in figure["data"] if tr.get("visible", True) is True]
    pairs = []
    for tr in traces:
        if _axis_names(tr) not in pairs:
            pairs.append(_axis_names(tr))
    fig = Figure(figsize=(7.0, 4.2 if len(pairs) == 1 else 4.6), dpi=150, facecolor="white", layout="none")
    note = _state_note(layout)
    title = _plain(layout.get("title", {}).get("text", ""))
    top = 0.80 if title else 0.86
    left, right, bottom = 0.11, 0.98, 0.14
    axes = {}
    for xname, yname in pairs:
        xd = layout.get(xname, {}).get("domain", [0.0, 1.0])
        yd = layout.get(yname, {}).get("domain", [0.0, 1.0])
        gap_x = 0.07 if xd != [0.0, 1.0] else 0.0
        gap_y = 0.06 if yd != [0.0, 1.0] else 0.0
        rect = [left + (right - left) * xd[0] + (gap_x if xd[0] > 0 else 0.0),
                bottom + (top - bottom) * yd[0] + (gap_y if yd[0] > 0 else 0.0),
                (right - left) * (xd[1] - xd[0]) - gap_x,
                (top - bottom) * (yd[1] - yd[0]) - gap_y]
        ax = fig.add_axes(rect)
        ax.grid(True, color="#e5e5e5", linewidth=0.8)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        axes[(xname, yname)] = ax
    handles, labels = [], []
    for tr in traces:
        ax = axes[_axis_names(tr)]
        x, y = tr.get("x", []), tr.get("y", [])
        colour = tr.get("marker", {}).get("color") or tr.get("line", {}).get("color")
        name = tr.get("name") if tr.get("showlegend") else None
        if tr.get("type", "scatter") == "bar":
            h = ax.bar(x, y, color=colour, width=0.8)
        else:
            mode = tr.get("mode", "lines+markers")
            line = tr.get("line", {})
            h = None
            if "text" in mode:
                for xi, yi, s in zip(x, y, tr.get("text", [])):
                    ax.text(xi, yi, s, ha="center", va="center", fontsize=tr.get("textfont", {}).get("size", 13) * 0.7)
            if "lines" in mode or "markers" in mode:
                (h,) = ax.plot(
                    x, y, color=colour,
                    linestyle=_DASHES.get(line.get("dash", "solid"), "-") if "lines" in mode else "none",
                    linewidth=line.get("width", 2) * 0.75,
                    marker="o" if "markers" in mode else None,
                    markersize=tr.get("marker", {}).get("size", 6) * 0.6,
                )
        if name and h is not None:
            handles.append(h)
            labels.append(_plain(name))
    for (xname, yname), ax in axes.items():
        xa, ya = layout.get(xname, {}), layout.get(yname, {})
        if xa.get("type") == "log":
            ax.set_xscale("log")
        if ya.get("type") == "log":
            ax.set_yscale("log")
        if "range" in xa:
            lo, hi = xa["range"]
            ax.set_xlim(*((10 ** lo, 10 ** hi) if xa.get("type") == "log" else (lo, hi)))
        if "range" in ya:
            ax.set_ylim(*ya["range"])
        if "tickvals" in xa:
            ax.set_xticks(xa["tickvals"], xa.get("ticktext", [str(v) for v in xa["tickvals"]]))
            ax.minorticks_off()
        ax.set_xlabel(_plain(xa.get("title", {}).get("text", "")), fontsize=9)
        ax.set_ylabel(_plain(ya.get("title", {}).get("text", "")), fontsize=9)
        ax.tick_params(labelsize=8)
        if ya.get("scaleanchor") == "x":
            ax.set_aspect("equal", adjustable="box")
    if title:
        fig.text(0.02, 0.975, title, fontsize=10.5, va="top", ha="left")
    if handles:
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.02, (0.93 if title else 0.985)),
                   ncol=min(len(labels), 4), fontsize=8, frameon=False, handlelength=2.2)
    if note:
        fig.text(0.02, 0.015, note, fontsize=8.5, va="bottom", ha="left", color="#444444")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150, facecolor="white", metadata={"Software": None})
    return buf.getvalue()


def interactive_figure(
    states,
    *,
    name: str,
    labels,
    alt: str,
    control: str = "slider",
    control_label: str = "",
    title: str | None = None,
    x_title: str = "",
    y_title: str = "",
    x_range=None,
    y_range=None,
    static=(),
    height: int = 440,
    layout=None,
    initial: int = 0,
) -> InteractiveFigure:
    """Build an interactive figure from states computed in Python.

    Parameters
    ----------
    states : sequence of sequences of dict
        ``states[s]`` is the list of Plotly trace dicts drawn in state ``s`` (for example
        ``{"type": "scatter", "x": x, "y": y, "name": "..."}``; arrays may be NumPy). Every
        state has the same number of traces, so the legend stays put while the data change.
        Traces without a ``line``/``marker`` colour get the book's Okabe-Ito colours by
        their index within the state.
    name : str
        Element id for the HTML, unique on the page: lowercase letters, digits and
        hyphens, starting with a letter (for example ``"fig-rope-slider"``).
    labels : sequence of str
        One label per state, shown on the control.
    alt : str
        What the figure shows, in words, for a reader who cannot see it (the plot's
        ``aria-label``, read by a screen reader): what is plotted against what, and
        what the control changes. Required; at least one word.
    control : {"slider", "dropdown"}
        A slider (ordered states: a position, a scale factor) or a drop-down menu
        (unordered choices: a head, a scheme).
    control_label : str
        Text before the current label (for example ``"m = "``). Without its trailing
        ``=`` or ``:`` it is also the control's visible label in the book (``"m"``).
    title, x_title, y_title : str
        Figure and axis titles (plain text or Plotly's HTML subset).
    x_range, y_range : (float, float), optional
        Fixed axis ranges, so that moving the control does not rescale the axes.
    static : sequence of dict
        Traces drawn in every state (reference curves).
    height : int
        Height in CSS pixels.
    layout : dict, optional
        Extra Plotly layout entries (merged last, for example a second axis).
    initial : int
        The state shown first.

    Returns
    -------
    InteractiveFigure
        Displays itself in a notebook (``text/html`` for the book, with a native slider or
        menu; Plotly's own MIME type, with Plotly's own control, for JupyterLab; a still
        PNG for print); ``.figure`` is the Plotly JSON.
    """
    control = _check_options(name, control, alt, control_label)
    height = check_int("height", height, minimum=200)
    n_states = _check_states(states)
    labels = list(labels) if not isinstance(labels, str) else [labels]
    if len(labels) != n_states or not all(isinstance(lab, str) for lab in labels):
        raise ValueError(f"labels: {len(labels)} labels; expected one string per state ({n_states})")
    initial = check_int("initial", initial, minimum=0)
    if initial >= n_states:
        raise ValueError(f"initial: {initial}; expected an index below the number of states ({n_states})")

    data, owners = _traces(states, static, initial)
    # State s shows its own traces and the static ones (owner None); Plotly's "update" steps
    # and the page's restyle calls both take these precomputed masks.
    steps = [
        {"label": labels[s], "method": "update", "args": [{
            "visible": [o in (s, None) for o in owners],
            "showlegend": [o in (s, None) and "name" in tr for o, tr in zip(owners, data)],
        }]}
        for s in range(n_states)
    ]
    lay = _layout(height, title, x_title, y_title, x_range, y_range, layout)
    page = {
        "data": data,
        "layout": lay,
        "labels": [_plain(lab_) for lab_ in labels],
        "states": [step["args"][0] for step in steps],
        "status": [_status(control_label, labels[s], s, n_states) for s in range(n_states)],
    }
    figure = {"data": data, "layout": _with_plotly_control(lay, control, steps, initial, control_label)}
    return InteractiveFigure(figure, name, n_states, height, alt=alt.strip(), control=control,
                             labels=tuple(page["labels"]), control_label=_plain(control_label),
                             initial=initial, page=page)


def _check_options(name, control, alt, control_label) -> str:
    """The control's kind, once the element id, the kind, the alt text and the control's label are checked."""
    if not isinstance(name, str) or not _ID.match(name):
        raise ValueError(
            f"name: {name!r} is not a valid element id; expected lowercase letters, digits and hyphens, "
            "starting with a letter (at most 64 characters)"
        )
    control = check_choice("control", control, _CONTROLS)
    if not isinstance(alt, str):
        raise TypeError(
            f"alt: expected a string describing what the figure shows, got {alt!r} of type {type(alt).__name__}"
        )
    if not re.search(r"\w", alt):
        raise ValueError(f"alt: {alt!r} says nothing; expected a description of what the figure shows")
    if not isinstance(control_label, str):
        raise TypeError(
            f"control_label: expected a string, got {control_label!r} of type {type(control_label).__name__}"
        )
    return control


def _check_states(states) -> int:
    """The number of states, once checked: at least two, each the same positive number of trace dicts."""
    if isinstance(states, (str, bytes)) or not hasattr(states, "__len__"):
        raise TypeError(f"states: expected a sequence of states (lists of trace dicts), got {type(states).__name__}")
    n_states = len(states)
    if n_states < 2:
        raise ValueError(f"states: {n_states} state(s); expected at least 2 for a control to choose among")
    per_state = None
    for s, traces in enumerate(states):
        if isinstance(traces, dict) or not hasattr(traces, "__len__"):
            raise TypeError(f"states: states[{s}] is a {type(traces).__name__}; expected a list of trace dicts")
        if per_state is None:
            per_state = len(traces)
        if len(traces) != per_state or per_state == 0:
            raise ValueError(
                f"states: states[{s}] has {len(traces)} traces; expected the same positive number in every "
                f"state ({per_state} in states[0])"
            )
        for t, trace in enumerate(traces):
            if not isinstance(trace, dict):
                raise TypeError(f"states: states[{s}][{t}] is a {type(trace).__name__}; expected a dict")
    return n_states


def _traces(states, static, initial: int) -> tuple[list, list]:
    """Every state's traces, then the static ones, as Plotly dicts; and each one's state (None if static).

    A state's trace without a colour gets the Okabe-Ito colour of its index within the state
    (the same in every state, so the legend stays put); static traces are grey by default.
    Only the initial state is visible and in the legend at first.
    """
    fixed = [_clean(dict(trace), f"static[{i}]") for i, trace in enumerate(static)]
    data, owners = [], []
    for s, traces in enumerate(states):
        for t, trace in enumerate(traces):
            tr = _clean(dict(trace), f"states[{s}][{t}]")
            tr.setdefault("type", "scatter")
            if tr["type"] == "scatter":
                colour = OKABE_ITO[t % len(OKABE_ITO)]
                tr.setdefault("line", {}).setdefault("color", colour)
                tr.setdefault("marker", {}).setdefault("color", colour)
                tr["legendgroup"] = f"trace{t}"
            tr["showlegend"] = bool(tr.get("showlegend", True)) and s == initial if "name" in tr else False
            tr["visible"] = s == initial
            data.append(tr)
            owners.append(s)
    for tr in fixed:
        tr.setdefault("type", "scatter")
        if tr["type"] == "scatter":
            tr.setdefault("line", {}).setdefault("color", "#555555")
        tr["showlegend"] = bool(tr.get("showlegend", True)) and "name" in tr  # no "trace N" entries
        tr["visible"] = True
        data.append(tr)
        owners.append(None)
    return data, owners


def _layout(height, title, x_title, y_title, x_range, y_range, extra) -> dict:
    """The page's Plotly layout: the book's font, axes and margins, then the caller's entries."""
    axis = {"showgrid": True, "gridcolor": "#e5e5e5", "zeroline": False, "linecolor": "#444444",
            "ticks": "outside", "automargin": True}
    lay = {
        # The book's div has this height; JupyterLab's Plotly renderer, given none, draws 360 px.
        "height": height,
        "font": {"family": "DejaVu Sans, Arial, sans-serif", "size": 13, "color": "#222222"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        # room above the plot for the legend (one or two rows on a phone) and the title; below
        # it the axis title (Plotly's own control, in JupyterLab's figure, needs more: below)
        "margin": {"l": 60, "r": 20, "t": 110 if title else 60, "b": 60},
        "xaxis": dict(axis, title={"text": x_title}),
        "yaxis": dict(axis, title={"text": y_title}),
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "hovermode": "closest",
    }
    if title:
        lay["title"] = {"text": title, "x": 0.02, "xanchor": "left", "y": 0.98, "yref": "container",
                        "yanchor": "top", "font": {"size": 14}}
    if x_range is not None:
        lay["xaxis"]["range"] = _clean(list(x_range), "x_range")
    if y_range is not None:
        lay["yaxis"]["range"] = _clean(list(y_range), "y_range")
    if extra:
        for key, value in _clean(dict(extra), "layout").items():
            merge = isinstance(value, dict) and isinstance(lay.get(key), dict)
            lay[key] = {**lay[key], **value} if merge else value
    return lay


def _with_plotly_control(lay: dict, control: str, steps: list, initial: int, control_label: str) -> dict:
    """A copy of the page's layout with Plotly's own slider or menu: JupyterLab's figure, and the still's.

    The page draws ``lay`` and switches states with its own native control instead.
    """
    lab = json.loads(json.dumps(lay))
    lab["margin"]["b"] = max(lab["margin"].get("b", 0), 120)
    if control == "slider":
        lab["sliders"] = [{
            "active": initial,
            "currentvalue": {"prefix": control_label, "font": {"size": 14}},
            "pad": {"t": 60, "b": 10},  # below the x-axis title, also when it wraps
            "len": 1.0,
            "x": 0,
            "steps": steps,
        }]
        return lab
    lab["updatemenus"] = [{
        "type": "dropdown",
        # Opens upwards: below the plot there is no room, and a menu opening down is clipped.
        "direction": "up",
        "active": initial,
        "buttons": steps,
        "x": 0,
        "xanchor": "left",
        "y": -0.22,
        "yanchor": "top",
        "showactive": True,
    }]
    if control_label:
        lab["annotations"] = [{"text": control_label, "showarrow": False, "x": 0, "xref": "paper",
                               "xanchor": "right", "y": -0.22, "yref": "paper", "yanchor": "top"}
                              ] + lab.get("annotations", [])
    return lab
