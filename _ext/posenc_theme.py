"""Theme fixes no option makes: Font Awesome's script and font preloads dropped; scripts deferred; accessible names, roles and ids.

pydata-sphinx-theme 0.15.4 (under sphinx-book-theme 1.1.4) loads Font Awesome twice over: its
CSS with web fonts (``all.min.css``, 0.1 MB) and its JavaScript (``all.min.js``, 1.49 MB on
every page, the heaviest file most pages load), which replaces each ``<i class="fa-...">``
with an inline SVG drawn from the 2,000 icons it carries. The CSS alone draws the same icons
from the web fonts, fetched only when a page shows an icon of that style (the header's icons
are all solid: ``fa-solid-900.woff2``). The theme writes these tags from the macros of its
``static/webpack-macros.html``, which no theme option changes; ``templates/static/webpack-macros.html``
is that file without the script's tag (the script is removed from the site too: a page that
still named it would log a failed load, which the browser test reports) and without the
three ``<link rel="preload" as="font" crossorigin ...>`` of the web fonts (a preload with
``crossorigin`` is a CORS request, which a page opened from disk, ``file://``, cannot make:
two console errors per font on every page; the stylesheet's ``@font-face`` still loads the
font a page uses). The stylesheet stays as the theme ships it, and the fonts are cut down to
the icons the site shows by ``posenc_icons.py``. The same file defers the theme's two scripts
at the end of ``<body>`` (below).

Sphinx, the theme and the extensions put about a dozen ``<script src=...>`` in each page's
``<head>`` without ``defer``: the browser stops parsing the page at each one until it is
fetched and run, so nothing is painted before all of them are in (Lighthouse's "render-blocking
resources", most of a chapter's First Contentful Paint on a phone). Each is given ``defer``
here (:func:`defer_scripts`, on the ``_JavaScript`` objects of the page's ``script_files``, the
attributes Sphinx writes): deferred scripts run in document order once the page is parsed,
before ``DOMContentLoaded``, which is what every one of them waits for anyway. An inline script
cannot be deferred, so a file stays synchronous only when an inline script of the page uses it
as it runs: :data:`SYNC_SCRIPTS`, each with its reason. The other inline scripts need no file:
the theme's colour mode and its ``document.write`` buttons; sphinx-togglebutton's settings
(``toggleHintShow``, ``togglebuttonSelector``: variables its deferred script reads later, so
they are set first either way). The theme's two scripts at the end of ``<body>`` (``bootstrap.js``,
``pydata-sphinx-theme.js``: not in ``script_files``) are deferred by the template above: they
held up the first paint of the longest chapters (Lighthouse listed them as render-blocking)
and now run after the others; they use none of them, only ``DOCUMENTATION_OPTIONS``, which
is defined first. The search page writes its three scripts (``searchtools.js``,
``language_data.js``, ``searchindex.js``, which calls ``Search.setIndex`` of the first) in its
template, not in ``script_files``; ``templates/search.html`` is the theme's template with them
deferred, in the same order. The browser test checks that no other script in a page's
``<head>`` blocks, and that the console stays clean (a script run before what it needs throws).

(The theme's colour mode on a first visit, which Jupyter Book leaves empty, is set in
``_config.yml`` with the theme's documented ``html_context: default_mode``.)

Two controls had an accessible name that did not contain their visible text (axe-core's
``label-content-name-mismatch``, WCAG 2.5.3 "Label in Name": a speech-input user says what
they see). MyST-NB 1.4.0 writes each folded cell's toggle as ``<summary aria-label="Toggle
hidden content">`` around the visible "Show code cell source" (or "Hide ..." when open, the
other line being ``display: none``); the toggle is written here without that ``aria-label``,
so its name is the text it shows. pydata-sphinx-theme 0.15.4's sidebar search button shows
"Search Ctrl+K" but is labelled ``aria-label="Search"``; ``templates/search-button-field.html``
is the theme's template without that ``aria-label`` (its name is then what it shows).

Sphinx's module index (``py-modindex.html``) groups posenc's modules under an expand/collapse
toggle, an ``<img alt="-">`` with a click handler: the keyboard cannot reach it and a screen
reader announces it as "-". The index is one package and its dozen modules, on one screen:
``templates/domainindex.html`` is Sphinx's template without the toggle, every entry shown.

sphinx-proof 0.4.0 writes a theorem's title as a paragraph and the same ids (``proof``,
``proof-content``) into every statement and proof of a page, as sphinx-exercise 1.2.1 does
into every exercise and solution: here a statement is a region named by its title, a proof a
group named "Proof", and no id is repeated (:func:`visit_statement`, :func:`visit_proof`,
:data:`REPEATED_IDS`).

Docutils 0.21's HTML writer gives each bibliography entry ``role="doc-biblioentry"``, a role
DPUB-ARIA 1.1 deprecates (axe-core's ``aria-deprecated-role``); the entries' list then has
no list item (``aria-required-children``). DPUB-ARIA 1.1 says to use ``listitem`` inside the
``list`` instead, which is what the entries are written with here; nothing else changes.
"""

from __future__ import annotations

import pathlib
import re
import shutil
from html import escape

from docutils import nodes

#: Templates that replace the theme's own of the same name (see the module docstring).
TEMPLATES = pathlib.Path(__file__).with_name("templates")

#: Files (by name) that stay synchronous in ``<head>``: an inline script right after them uses them.
SYNC_SCRIPTS = {
    # Sphinx writes ``<script>DOCUMENTATION_OPTIONS.pagename = '...';</script>`` into every
    # page's head: it needs the DOCUMENTATION_OPTIONS object this file defines (0.3 kB). The
    # theme's synchronous pydata-sphinx-theme.js at the end of <body> reads that object too.
    "documentation_options.js": "Sphinx's inline DOCUMENTATION_OPTIONS.pagename = ...",
}


def _name(filename: str) -> str:
    return str(filename).split("?")[0].rsplit("/", 1)[-1]


def defer_scripts(files: list) -> list:
    """The page's ``script_files`` with ``defer`` on every external script that does not need to block.

    Inline scripts (no file name), scripts already ``defer``, ``async`` or modules, and the
    files of :data:`SYNC_SCRIPTS` are left as they are; order and priorities are kept.
    """
    from sphinx.builders.html._assets import _JavaScript

    out = []
    for js in files:
        filename = getattr(js, "filename", js)
        attributes = getattr(js, "attributes", {})
        if (
            not isinstance(js, _JavaScript)
            or not filename
            or {"defer", "async"} & set(attributes)
            or attributes.get("type") == "module"
            or _name(filename) in SYNC_SCRIPTS
        ):
            out.append(js)
        else:
            out.append(_JavaScript(filename, priority=js.priority, **attributes, defer="defer"))
    return out


def _defer(app, pagename, templatename, context, doctree):
    files = context.get("script_files")
    if isinstance(files, list):
        files[:] = defer_scripts(files)


def _drop_fontawesome_script(app, exception):
    # The pages no longer name it (templates/static/webpack-macros.html): the site need not carry it.
    if exception is not None or app.builder.format != "html":
        return
    for script_dir in (pathlib.Path(app.outdir) / "_static" / "vendor" / "fontawesome").glob("*/js"):
        shutil.rmtree(script_dir)


def _templates(app, config):
    config.templates_path = [str(TEMPLATES), *config.templates_path]


def visit_hide_cell_input(self, node):
    """MyST-NB's folded-cell toggle, named by the text it shows (no ``aria-label``)."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def visit_statement(self, node):
    """sphinx-proof's statement (a theorem, a lemma, ...) as a region named by its title.

    A screen reader announces the region by its name ("Theorem 4.3 (...)") and lists it among
    the page's landmarks; the title gets the id the region names it by.
    """
    title = node.next_node(nodes.title)
    attributes = {"role": "region"}
    if title is not None and node["ids"]:
        if not title["ids"]:
            title["ids"] = [f"{node['ids'][0]}-title"]
        attributes["aria-labelledby"] = title["ids"][0]
    self.body.append(self.starttag(node, "div", CLASS="admonition", **attributes))


#: The ids sphinx-proof and sphinx-exercise give the body of every statement, exercise and
#: solution (a ``section``): the same id up to a dozen times in a page, and nothing links there.
REPEATED_IDS = {"proof-content", "exercise-content", "solution-content"}


def _drop_repeated_ids(app, doctree, docname):
    for section in doctree.findall(nodes.section):
        section["ids"] = [i for i in section["ids"] if i not in REPEATED_IDS]


def visit_proof(self, node):
    """sphinx-proof's proof, in a group named "Proof"; its box loses the id ``proof`` that
    sphinx-proof gives every proof of the page (custom.css keeps the box's look)."""
    for box in node.children:
        if box.get("ids") == ["proof"]:
            box["ids"] = []
    self.body.append('<div class="proof-group" role="group" aria-label="Proof">\n')


def depart_proof(self, node):
    self.body.append("</div>\n")


def visit_citation(self, node):
    """Docutils' bibliography entry, as a ``listitem`` of its ``list`` (not ``doc-biblioentry``)."""
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def depart_citation(self, node):
    self.body.append("</div>\n")
    if not isinstance(node.next_node(descend=False, siblings=True), type(node)):
        self.body.append("</div>\n")


#: The redirect that sphinx-external-toc writes as the site's index.html (build-finished,
#: priority 500) when the root document is not "index": one line, no title, no icon.
BARE_REDIRECT = re.compile(r'\A<meta http-equiv="Refresh" content="0; url=([^"]+)" />\n?\Z')


def full_redirect(text: str, title: str, favicon: str) -> str | None:
    """The bare redirect page as a page of its own: language, title, the site's icon and a link.

    Without an icon, the browser asks the server for /favicon.ico while the redirect is
    pending, which the site does not have (a failed request in the console); None if ``text``
    is not the bare redirect.
    """
    found = BARE_REDIRECT.match(text)
    if not found:
        return None
    target = escape(found.group(1))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n"
        f'<link rel="icon" href="{escape(favicon)}">\n'
        f'<meta http-equiv="Refresh" content="0; url={target}">\n'
        f'</head>\n<body>\n<p><a href="{target}">{escape(title)}</a></p>\n</body>\n</html>\n'
    )


def _fix_index(app, exception):
    if exception is not None or app.builder.format != "html" or not app.config.html_favicon:
        return
    index = pathlib.Path(app.outdir) / "index.html"
    if index.is_file():
        page = full_redirect(index.read_text(encoding="utf-8"), app.config.html_title,
                             f"_static/{pathlib.Path(app.config.html_favicon).name}")
        if page is not None:
            index.write_text(page, encoding="utf-8")


def setup(app):
    app.add_node(nodes.citation, override=True, html=(visit_citation, depart_citation))
    app.setup_extension("myst_nb")  # its node is registered first, then replaced for HTML
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(visit_hide_cell_input, depart_HideCellInput))
    app.setup_extension("sphinx_proof")  # its nodes are registered first, then replaced for HTML
    from sphinx_proof.nodes import NODE_TYPES, depart_enumerable_node, proof_node

    for statement in NODE_TYPES.values():
        app.add_node(statement, override=True, html=(visit_statement, depart_enumerable_node))
    app.add_node(proof_node, override=True, html=(visit_proof, depart_proof))
    app.connect("doctree-resolved", _drop_repeated_ids)
    app.connect("config-inited", _templates)
    # After every extension that adds a page's scripts in this event (sphinx-tippy: 500).
    app.connect("html-page-context", _defer, priority=900)
    app.connect("build-finished", _drop_fontawesome_script)
    # After sphinx-external-toc writes the redirect (priority 500).
    app.connect("build-finished", _fix_index, priority=950)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
