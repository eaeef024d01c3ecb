"""What a page loads before it shows: scripts deferred, unused style rules dropped, figures lazy (no option of Sphinx or the theme does these).

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
- adds ``defer`` to the script tags that templates write rather than ``script_files``
  (:data:`TEMPLATE_SCRIPT`): the theme's two at the end of ``<body>``
  (``webpack-macros.html``) and the search page's ``searchtools.js``, ``language_data.js``
  and ``searchindex.js``, which need ``doctools.js`` (``_ready``) before them. The search
  waits for its index either way (``Search.deferQuery``).

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

Stylesheets. A page shows nothing until its stylesheets have arrived, and the theme's and
the extensions' are general-purpose: Bootstrap's whole ``bootstrap.css`` (0.21 MB),
pydata-sphinx-theme's, sphinx-design's (0.05 MB, for one drop-down in chapter 1), Font
Awesome's rule for each of its 2,000 icons (0.10 MB; the site shows about twenty): 0.56 MB
on every page, two thirds of it rules that nothing in the site can match. At the
end of the build each stylesheet in ``_static`` is rewritten without the style rules none of
whose selectors can match (:func:`prune_css`), judged against every word of every page,
script and data file of the finished site (:func:`site_words`): a selector is kept unless it
requires a class or an id that no page and no script names, so a class a script adds at
run time (``show``, ``collapsing``, ``modal-open`` in ``bootstrap.js``, the search page's
result classes in ``searchtools.js``) keeps its rules, as does one a script builds from a
prefix it names (``"bs-tooltip-" + placement``). What parentheses and brackets hold is not
required (``:not(.x)``, ``:is(.a, .b)``, ``[class*=col-]``), and at-rules other than the
grouping ones (``@font-face``, ``@keyframes``) are kept whole; MathJax's and Plotly's styles
are made by their scripts and not touched. The same approach as PurgeCSS's, without a Node
tool in the build. The browser test (axe-core's colour contrast in light and dark mode, the
layout at phone and desktop widths, every control) checks the pages with the pruned sheets.
"""

from __future__ import annotations

import pathlib
import re

#: Script files that stay synchronous: inline code in the page runs while the page is parsed
#: and needs them (Sphinx writes ``DOCUMENTATION_OPTIONS.pagename = ...`` after
#: ``documentation_options.js``; each interactive figure's inline script calls
#: ``Plotly.newPlot``, which ``plotly-lazy.js`` defines).
SYNCHRONOUS = ("documentation_options.js", "plotly-lazy.js")

#: The script tags that templates write, not ``script_files``: the theme's two at the end of
#: ``<body>`` and the search page's three (Sphinx's ``search.html``; ``searchtools.js`` calls
#: ``_ready``, which the deferred ``doctools.js`` defines, so it must be deferred too).
TEMPLATE_SCRIPT = re.compile(
    r'<script src="((?:[^"]*/)?(?:_static/scripts/(?:bootstrap|pydata-sphinx-theme)\.js|_static/searchtools\.js'
    r'|_static/language_data\.js|searchindex\.js)(?:\?[^"]*)?)"></script>'
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


def defer_template_scripts(html: str) -> str:
    return TEMPLATE_SCRIPT.sub(r'<script defer="defer" src="\1"></script>', html)


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
        new = lazy_images(defer_template_scripts(text))
        if new != text:
            page.write_text(new, encoding="utf-8")


# --- Stylesheets: the rules no page can match, dropped ------------------------------------

#: A class or id in a selector (escaped names, ``.sm\:flex``, are kept as they are).
SELECTOR_NAME = re.compile(r"[.#](-?[_a-zA-Z][_a-zA-Z0-9-]*)(?![\\_a-zA-Z0-9-])")
#: A word of a page or a script: what may be a class or an id at run time.
WORD = re.compile(r"[_a-zA-Z][_a-zA-Z0-9-]*")
#: A comment (a prelude holds the comments written before its rule).
COMMENT = re.compile(r"/\*.*?\*/", re.S)
#: A comment that must stay with the file (``/*!`` is minifiers' mark for one).
LICENCE = re.compile(r"^/\*!|licen[cs]e|copyright", re.I)
#: At-rules whose block holds rules (filtered inside); any other at-rule is kept whole.
GROUPING = ("@media", "@supports", "@layer", "@container", "@document")


def css_blocks(css: str) -> list:
    """``css`` as a list of ``(prelude, body)``: ``body`` the text between the braces, or None for ``@import ...;``."""
    blocks, i, n, start = [], 0, len(css), 0
    depth, prelude_end = 0, None
    while i < n:
        c = css[i]
        if c == "/" and css.startswith("/*", i):
            end = css.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and css[j] != c:
                j += 2 if css[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            if depth == 0:
                prelude_end = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                blocks.append((css[start:prelude_end], css[prelude_end + 1 : i]))
                start = i + 1
        elif c == ";" and depth == 0:
            blocks.append((css[start : i + 1], None))
            start = i + 1
        i += 1
    if css[start:].strip():
        blocks.append((css[start:], None))
    return blocks


def _split_selectors(prelude: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(prelude):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(prelude[start:i])
            start = i + 1
    parts.append(prelude[start:])
    return parts


def _outer(selector: str) -> str:
    """``selector`` without what brackets and parentheses hold (``[class*=x]``, ``:not(.y)``)."""
    out, depth = [], 0
    for c in selector:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def may_match(selector: str, words: set[str], prefixes: tuple[str, ...]) -> bool:
    """Whether ``selector`` may match: each class and id it requires is a word of the site.

    Conservative: what brackets and parentheses hold is not required (``:not(.x)``,
    ``:is(.a, .b)``, ``[class*=col-]``), and a name that a script may build from a prefix it
    names (``"bs-tooltip-" + placement``) counts as present.
    """
    outer = _outer(selector)
    if "\\" in outer:
        return True
    return all(name in words or name.startswith(prefixes) for name in SELECTOR_NAME.findall(outer))


def prune_css(css: str, words: set[str], prefixes: tuple[str, ...] = ()) -> str:
    """``css`` without the style rules none of whose selectors :func:`may_match` the site."""
    out = []
    for prelude, body in css_blocks(css):
        head = COMMENT.sub("", prelude).strip()  # Pygments writes "/* Keyword.Namespace */" before a rule
        if body is None:
            out.append(prelude)
        elif head.startswith("@"):
            if head.lower().startswith(GROUPING):
                inner = prune_css(body, words, prefixes)
                if inner.strip():
                    out.append(f"{prelude}{{{inner}}}")
            else:
                out.append(f"{prelude}{{{body}}}")  # @font-face, @keyframes, @page, @property ...
        elif any(may_match(s, words, prefixes) for s in _split_selectors(head)):
            out.append(f"{prelude}{{{body}}}")
        else:  # a dropped rule's licence or copyright comment stays (Sphinx's basic.css, ...)
            out.extend(c for c in COMMENT.findall(prelude) if LICENCE.search(c))
    return "".join(out)


def site_words(outdir: pathlib.Path) -> tuple[set[str], tuple[str, ...]]:
    """Every word of the site's pages and scripts, and the ``-``-ended prefixes scripts name."""
    words: set[str] = set()
    for path in outdir.rglob("*"):
        if path.suffix in (".html", ".js", ".json") and path.is_file():
            words.update(WORD.findall(path.read_text(encoding="utf-8", errors="replace")))
    prefixes = tuple(sorted(w for w in words if w.endswith("-") and len(w) > 3))
    return words, prefixes


def prune_stylesheets(outdir: pathlib.Path) -> None:
    words, prefixes = site_words(outdir)
    for sheet in (outdir / "_static").rglob("*.css"):
        if "mathjax" in sheet.parts:
            continue
        css = sheet.read_text(encoding="utf-8")
        pruned = prune_css(css, words, prefixes)
        if pruned != css:
            sheet.write_text(pruned, encoding="utf-8")


def _prune(app, exception):
    if exception is None and app.builder.format == "html":
        prune_stylesheets(pathlib.Path(app.outdir))


def setup(app):
    # After every other extension has added its scripts (sphinx.ext.mathjax and the book's
    # own run at the default priority 500).
    app.connect("html-page-context", _page_context, priority=900)
    # Before sphinx-codeautolink (priority 500) rewrites the chapters through BeautifulSoup.
    app.connect("build-finished", _fix_pages, priority=400)
    # After every other extension has written its pages and copied its scripts (the
    # stylesheets are pruned against what the finished site names).
    app.connect("build-finished", _prune, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
