"""What a page loads before it shows: scripts deferred, figures lazy (no option of Sphinx or the theme does these).

Scripts.
A ``<script src>`` without ``defer`` stops the HTML parser until the script has arrived and
run, so the page shows nothing until then (Lighthouse's "render-blocking resources"). Each
chapter named eleven such scripts in its ``<head>`` (Sphinx's ``doctools.js`` and
``sphinx_highlight.js``, sphinx-copybutton's two, sphinx-togglebutton's, sphinx-design's,
sphinx-book-theme's, the book's own ``tabstops.js`` and ``previews.js``) and two at the end of
its ``<body>`` (pydata-sphinx-theme's ``bootstrap.js`` and ``pydata-sphinx-theme.js``).
Sphinx's ``html_js_files`` can defer only the files it lists, not those the extensions and
the theme add; so this extension

- marks every script file of the page's ``script_files`` ``defer`` (``html-page-context``,
  after the other extensions have added theirs), except the two that inline code of the
  page needs while the page is parsed (:data:`SYNCHRONOUS`); and
- adds ``defer`` to the theme's two script tags at the end of ``<body>``, which its
  template writes (``webpack-macros.html``), not ``script_files`` (:data:`THEME_SCRIPT`).

Deferred scripts run in the order the page names them, after the page is parsed and before
``DOMContentLoaded``, which is where every one of these scripts starts its work (each waits
for ``DOMContentLoaded`` or checks ``document.readyState``); the inline settings they read
(``togglebuttonSelector``, ``toggleHintShow``, ``window.MathJax``) run before them, as the
parser meets them. The browser test (tests/test_site.py) checks what they do: copy buttons,
folded cells, previews, the theme's controls, formulas, figures.

Figures. A chapter's figure PNGs (MyST-NB writes each ``<img>`` with its size as an inline
style, ``style="width: 716px; height: 408px;"``) were all fetched as the page loaded, though
none is on the first screen: on a phone's connection they compete with the stylesheets the
first paint waits for. Each such ``<img>`` is written here with ``loading="lazy"`` (the
browser fetches it as it comes near the viewport; printing and the browser test, which
sets ``loading = 'eager'``, still get every image) and with ``width`` and ``height``
attributes from that style (:func:`lazy_images`): ``custom.css`` sets ``height: auto`` so
that a narrowed figure keeps its proportions, and without the attributes a figure not yet
loaded would have no height, and the text below it would jump when it arrives.
"""

from __future__ import annotations

import pathlib
import re

#: Script files that stay synchronous: inline code in the page runs while the page is parsed
#: and needs them (Sphinx writes ``DOCUMENTATION_OPTIONS.pagename = ...`` after
#: ``documentation_options.js``; each interactive figure's inline script calls
#: ``Plotly.newPlot``, which ``plotly-lazy.js`` defines).
SYNCHRONOUS = ("documentation_options.js", "plotly-lazy.js")

#: The theme's script tags at the end of ``<body>`` (one line each in the page).
THEME_SCRIPT = re.compile(
    r'<script src="((?:[^"]*/)?_static/scripts/(?:bootstrap|pydata-sphinx-theme)\.js(?:\?digest=[0-9a-f]+)?)">'
    r"</script>"
)


#: A figure's ``<img>`` as MyST-NB writes it, with its size as an inline style in pixels.
SIZED_IMG = re.compile(r'<img (?![^>]*\bloading=)([^>]*?)style="width: ([0-9.]+)px; height: ([0-9.]+)px;"')


def lazy_images(html: str) -> str:
    """``html`` with each sized figure ``<img>`` loaded lazily, its size also given as attributes."""

    def rewrite(match):
        width, height = (str(round(float(v))) for v in match.group(2, 3))
        return (
            f'<img {match.group(1)}height="{height}" loading="lazy" '
            f'style="width: {match.group(2)}px; height: {match.group(3)}px;" width="{width}"'
        )

    return SIZED_IMG.sub(rewrite, html)


def deferred(js):
    """The script ``js`` of ``script_files``, loaded with ``defer`` unless it must not be."""
    from sphinx.builders.html._assets import _JavaScript

    name = pathlib.PurePosixPath(str(getattr(js, "filename", js) or "")).name
    attributes = dict(getattr(js, "attributes", {}))
    if not name or name in SYNCHRONOUS or "async" in attributes or "defer" in attributes:
        return js
    attributes["defer"] = "defer"
    return _JavaScript(js.filename, priority=js.priority, **attributes)


def defer_theme_scripts(html: str) -> str:
    return THEME_SCRIPT.sub(r'<script defer="defer" src="\1"></script>', html)


def _page_context(app, pagename, templatename, context, doctree):
    if app.builder.format == "html" and "script_files" in context:
        context["script_files"] = [deferred(js) for js in context["script_files"]]


def _fix_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = pathlib.Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in ("_static", "_sources"):
            continue  # the theme's own template files, not pages
        text = page.read_text(encoding="utf-8")
        new = lazy_images(defer_theme_scripts(text))
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    # After every other extension has added its scripts (sphinx.ext.mathjax and the book's
    # own run at the default priority 500).
    app.connect("html-page-context", _page_context, priority=900)
    # Before sphinx-codeautolink (priority 500) rewrites the chapters through BeautifulSoup.
    app.connect("build-finished", _fix_pages, priority=400)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
