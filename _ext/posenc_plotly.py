"""Ship plotly.js's partial "basic" bundle with the pages that hold a figure (no CDN), and claim Plotly's MIME type: no option does either.

Interactive figures (``posenc.interactive``) write a ``<div class="posenc-interactive">``
and their data, which ``posenc-interactive.js`` (shipped here) draws with ``Plotly.newPlot``.
They draw only scatter and bar traces, so the book ships plotly.js's official partial
bundle ``plotly.js-basic-dist-min`` (scatter, bar and pie traces, with every layout
component: sliders, drop-down menus, legends, annotations):
1.2 MB, against 4.8 MB for the full ``plotly.min.js`` that the ``plotly`` package carries.
It is pinned in ``_ext/assets.json`` (fetched, sha512-checked, by ``_ext/fetch_assets.py``,
which ``make venv`` runs) at the plotly.js version the pinned ``plotly`` package bundles,
and the build refuses another version: the figures' JSON is written by that package. A
trace type outside the bundle would not draw; the browser test (tests/test_site.py) fails
on any trace plotly.js did not draw as the type it was given. This extension

- adds ``_static/plotly-lazy.js`` (``_ext/plotly-lazy.js``, 3 kB) and, after it, the figures'
  own script ``_static/posenc-interactive.js`` (``_ext/posenc-interactive.js``, 2 kB: draws
  each figure, switches its states) to the ``<head>`` of exactly the pages that hold such a
  figure (both deferred, so they do not hold up the first paint; pages without a figure load
  neither). ``plotly-lazy.js`` stands in for
  ``window.Plotly`` and loads ``plotly-basic.min.js`` only when a figure comes near the
  viewport, then draws it: a reader who never scrolls to a figure never downloads plotly.js,
  and a page's first load stays within the browser test's weight budget (tests/test_site.py
  measures the first load and the load after every figure is drawn). Nothing else waits for
  it: the figure's ``<div>`` keeps its size, role and alt text, and its control works;
- copies ``plotly-basic.min.js``, ``plotly-lazy.js`` and ``posenc-interactive.js`` into the
  site's ``_static`` once per build, so the book works offline and from ``file://``, and
- drops MyST-NB's build warning ``skipping unknown output mime type:
  application/vnd.plotly.v1+json``, and only that one. An interactive figure's output
  carries its figure twice: as ``text/html`` (what the book shows) and as Plotly's own
  MIME type (what JupyterLab renders). MyST-NB cannot render the second and warns about
  it while parsing, even though it then shows the ``text/html``; with ``-W`` that warning
  fails the build. Any other unknown MIME type still warns (``suppress_warnings`` on
  ``mystnb.unknown_mime_type`` would silence them all). MyST-NB 1.4's supported ways to
  claim a MIME type, a MIME render plugin or a render plugin, are loaded only from an
  installed distribution's entry points (``myst_nb.mime_renderers``), which would put build
  code into posenc's wheel; ``nb_mime_priority_overrides`` only orders the types it renders,
  after this warning.
"""

from __future__ import annotations

import logging
import pathlib
import re
import shutil

import fetch_assets

MARKER = 'class="posenc-interactive"'
PACKAGE = "plotly.js-basic-dist-min"  # the npm package, pinned in _ext/assets.json
TARGET = "plotly-basic.min.js"
LOADER = pathlib.Path(__file__).with_name("plotly-lazy.js")  # what the pages load: see the docstring
#: The figures' own script: draws each figure and switches its states (see posenc.interactive).
FIGURES = pathlib.Path(__file__).with_name("posenc-interactive.js")


def bundle_version(path: pathlib.Path) -> str:
    """The plotly.js version in a bundle's banner (``plotly.js (basic - minified) v4.1.1``)."""
    with path.open(encoding="utf-8") as f:
        head = f.read(500)
    match = re.search(r"\* plotly\.js\b[^\n]*? v(\d+\.\d+\.\d+)", head)
    if not match:
        raise ValueError(f"{path}: no plotly.js version in its banner")
    return match.group(1)


def _plotly_js() -> pathlib.Path:
    """The pinned basic bundle, checked to be the plotly.js that the ``plotly`` package bundles."""
    from plotly.offline import get_plotlyjs_version

    path = fetch_assets.asset(PACKAGE, TARGET)
    version, wanted = bundle_version(path), get_plotlyjs_version()
    if version != wanted:
        raise ValueError(
            f"{path} is plotly.js {version}; the pinned plotly package writes figures for plotly.js {wanted} "
            f"(pin {PACKAGE} {wanted} in _ext/assets.json)"
        )
    return path


def _page_context(app, pagename, templatename, context, doctree):
    if MARKER in context.get("body", ""):
        app.add_js_file(LOADER.name, priority=200, loading_method="defer")
        app.add_js_file(FIGURES.name, priority=201, loading_method="defer")
        app.env.posenc_plotly_pages = getattr(app.env, "posenc_plotly_pages", set()) | {pagename}


def _check(app):
    if app.builder.format == "html":
        _plotly_js()  # fail at the start of the build, not after every chapter has run


def _copy(app, exception):
    if exception is None and app.builder.format == "html":
        static = pathlib.Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_plotly_js(), static / TARGET)
        shutil.copyfile(LOADER, static / LOADER.name)
        shutil.copyfile(FIGURES, static / FIGURES.name)


PLOTLY_MIME = "application/vnd.plotly.v1+json"


class _PlotlyMimeWarning(logging.Filter):
    """Drops exactly MyST-NB's 'skipping unknown output mime type' warning for Plotly's MIME type."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"skipping unknown output mime type: {PLOTLY_MIME}" not in record.getMessage()


def _install_filter() -> None:
    # Sphinx has set up its handlers before extensions load; the filter goes first, ahead of
    # the one that turns warnings into errors under -W.
    for handler in logging.getLogger("sphinx").handlers:
        if not any(isinstance(f, _PlotlyMimeWarning) for f in handler.filters):
            handler.filters.insert(0, _PlotlyMimeWarning())


def setup(app):
    _install_filter()
    app.connect("builder-inited", _check)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
