"""Ship plotly.js with the book, from the pinned ``plotly`` package: no CDN.

Interactive figures (``posenc.interactive``) write a ``<div class="posenc-interactive">``
and a call to ``Plotly.newPlot``. This extension

- adds ``_static/plotly.min.js`` to the ``<head>`` of exactly the pages that hold such a
  figure (a plain, synchronous script, so it is defined before the figures' inline
  scripts run; pages without a figure do not load it), and
- copies ``plotly.min.js`` from the installed ``plotly`` package into the site's
  ``_static`` once per build, so the book works offline and from ``file://``.
"""

from __future__ import annotations

import pathlib
import shutil

MARKER = 'class="posenc-interactive"'
TARGET = "plotly.min.js"


def _plotly_js() -> pathlib.Path:
    import plotly

    path = pathlib.Path(plotly.__file__).parent / "package_data" / TARGET
    if not path.is_file():
        raise FileNotFoundError(f"plotly.min.js not found in the installed plotly package ({path.parent})")
    return path


def _page_context(app, pagename, templatename, context, doctree):
    if MARKER in context.get("body", ""):
        app.add_js_file(TARGET, priority=200)
        app.env.posenc_plotly_pages = getattr(app.env, "posenc_plotly_pages", set()) | {pagename}


def _copy(app, exception):
    if exception is None and app.builder.format == "html":
        static = pathlib.Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_plotly_js(), static / TARGET)


def setup(app):
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
