"""Ship plotly.js with the pages that hold a figure, no CDN, and claim Plotly's MIME type: no option does either.

Interactive figures (``posenc.interactive``) write a ``<div class="posenc-interactive">``
and a call to ``Plotly.newPlot``. This extension

- adds ``_static/plotly.min.js`` to the ``<head>`` of exactly the pages that hold such a
  figure (a plain, synchronous script, so it is defined before the figures' inline
  scripts run; pages without a figure do not load it), and
- copies ``plotly.min.js`` from the installed ``plotly`` package into the site's
  ``_static`` once per build, so the book works offline and from ``file://``, and
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
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
