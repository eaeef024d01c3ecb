"""Small fixes to the theme, for a console free of errors, served or opened from disk.

pydata-sphinx-theme 0.15.4 (under sphinx-book-theme 1.1.4) reads the colour mode from
``localStorage`` and falls back to the template variable ``default_mode`` (set through
``html_context``; it is not a theme option), which Jupyter Book 1 leaves empty. On a reader's first visit the mode is then ``""`` and the theme logs
``Got invalid theme mode: . Resetting to auto.`` as a console error on every page.
Setting ``default_mode`` to ``"auto"`` (follow the reader's system setting, which is what
the theme falls back to anyway) removes the error and changes nothing else.

pydata-sphinx-theme also writes into every page ``<link rel="preload" as="font"
crossorigin ...>`` for Font Awesome's three web fonts. A preload with ``crossorigin`` is a
CORS request, which a page opened from disk (``file://``, no origin) cannot make: Chrome
logs two console errors per font on every page. The icons do not need these fonts (the
theme draws them as SVG with Font Awesome's script), and a preload is only a hint, so
after the build these three tags are removed from the pages; nothing else is touched.

Two controls had an accessible name that did not contain their visible text (axe-core's
``label-content-name-mismatch``, WCAG 2.5.3 "Label in Name": a speech-input user says what
they see). MyST-NB 1.4.0 writes each folded cell's toggle as ``<summary aria-label="Toggle
hidden content">`` around the visible "Show code cell source" (or "Hide ..." when open, the
other line being ``display: none``); the toggle is written here without that ``aria-label``,
so its name is the text it shows. pydata-sphinx-theme 0.15.4's sidebar search button shows
"Search Ctrl+K" but is labelled ``aria-label="Search"``; ``templates/search-button-field.html``
is the theme's template without that ``aria-label`` (its name is then what it shows).

Docutils 0.21's HTML writer gives each bibliography entry ``role="doc-biblioentry"``, a role
DPUB-ARIA 1.1 deprecates (axe-core's ``aria-deprecated-role``); the entries' list then has
no list item (``aria-required-children``). DPUB-ARIA 1.1 says to use ``listitem`` inside the
``list`` instead, which is what the entries are written with here; nothing else changes.
"""

from __future__ import annotations

import pathlib
import re
from html import escape

from docutils import nodes

#: Templates that replace the theme's own of the same name (see the module docstring).
TEMPLATES = pathlib.Path(__file__).with_name("templates")

#: Exactly the theme's preload tags for Font Awesome's web fonts (one per line in the page).
FONT_PRELOAD = re.compile(
    r'^[ \t]*<link rel="preload" as="font" type="font/woff2" crossorigin '
    r'href="(?:[^"]*/)?_static/vendor/fontawesome/[0-9.]+/webfonts/fa-[a-z0-9-]+\.woff2" />[ \t]*\n',
    re.M,
)


def drop_font_preloads(html: str) -> str:
    return FONT_PRELOAD.sub("", html)


def _drop_font_preloads(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = pathlib.Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in ("_static", "_sources"):
            continue  # the theme's own template files, not pages
        text = page.read_text(encoding="utf-8")
        new = drop_font_preloads(text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def _theme_defaults(app, config):
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context
    config.templates_path = [str(TEMPLATES), *config.templates_path]


def visit_hide_cell_input(self, node):
    """MyST-NB's folded-cell toggle, named by the text it shows (no ``aria-label``)."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def visit_citation(self, node):
    """Docutils' bibliography entry, as a ``listitem`` of its ``list`` (not ``doc-biblioentry``)."""
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def depart_citation(self, node):
    self.body.append("</div>\n")
    if not isinstance(node.next_node(descend=False, siblings=True), type(node)):
        self.body.append("</div>\n")


def setup(app):
    app.add_node(nodes.citation, override=True, html=(visit_citation, depart_citation))
    app.setup_extension("myst_nb")  # its node is registered first, then replaced for HTML
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(visit_hide_cell_input, depart_HideCellInput))
    app.connect("config-inited", _theme_defaults)
    app.connect("build-finished", _drop_font_preloads)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
