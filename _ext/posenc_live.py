"""Run and edit each chapter's code cells in the reader's browser, offline (Pyodide from the site itself): no Sphinx extension offers this without a server or a CDN.

On every chapter page (a page built from a notebook), each code cell that shows its code gets
a bar of native buttons: "Run" (runs the cells above that have not run yet, then this one),
"Run from the top" (a fresh namespace, every cell from the first through this one) and, once
the cell has run, "Show stored output". The page's cells run in order, in one namespace, in
a Web Worker (``_static/posenc-live-worker.js``) that loads Pyodide from ``_pyodide/`` on the
same site: printed output, the value of a last bare expression, a traceback and every open
Matplotlib figure (as a PNG) appear under the cell in place of its stored output (for a cell
tagged hide-output, of its whole fold, and folded in turn, open or closed as that fold was;
"Show stored output" gives it back as it was). Once Python has started, the code of every
cell can be edited in place. Cells hidden from the page
(``remove-cell``) run too, in their place: their sources, with every code cell's, are written
to ``_live/<page>.json``, which the page fetches on the first click. An interactive Plotly
figure keeps its precomputed version (the page says so under it).

Nothing of this loads before a click: the page gets ``posenc-live.js`` and
``posenc-live.css`` (a few kB); the worker, the JSON and Pyodide (27 MB) come on the first
click. From ``file://`` browsers start no worker, so the control says how to serve the book
(``make serve``).

``_ext/fetch_pyodide.py`` (run by ``make book``) assembles ``_pyodide/`` into the virtual
environment; this extension copies it into the site. If it is missing or its assembly failed,
the pages get no Run controls and the build log says why (at info level: a build without
the live cells is a complete book, not a broken one).
"""

from __future__ import annotations

import json
import pathlib
import shutil

import fetch_pyodide
from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = pathlib.Path(__file__).parent
SCRIPT, WORKER, STYLE = "posenc-live.js", "posenc-live-worker.js", "posenc-live.css"
#: The site folder Pyodide is served from (the worker's ``indexURL``).
SITE_DIR = "_pyodide"
#: The site folder of the pages' cell lists.
CELLS_DIR = "_live"


def pyodide_dir() -> tuple[pathlib.Path | None, str]:
    """The assembled Pyodide folder, or None with the reason it is not there."""
    out = fetch_pyodide.OUT
    if (out / "pyodide-lock.json").is_file() and not (out / fetch_pyodide.UNAVAILABLE).exists():
        return out, ""
    if (out / fetch_pyodide.UNAVAILABLE).is_file():
        return None, (out / fetch_pyodide.UNAVAILABLE).read_text(encoding="utf-8").strip()
    return None, f"{out} is not assembled (run `python _ext/fetch_pyodide.py`; `make book` does)"


def _inited(app):
    app.posenc_live_dir, reason = pyodide_dir() if app.builder.format == "html" else (None, "not an HTML build")
    app.posenc_live_pages = set()
    if app.builder.format == "html" and app.posenc_live_dir is None:
        logger.info(f"posenc_live: the chapter pages get no Run controls: {reason}", color="red")


def code_cells(source: pathlib.Path) -> list[dict]:
    """Every code cell of a MyST notebook, in order: its index among all cells and its source."""
    from myst_nb.core.read import read_myst_markdown_notebook

    notebook = read_myst_markdown_notebook(source.read_text(encoding="utf-8"))
    return [
        {"index": i, "source": cell.source}
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
    ]


def _resolved(app, doctree, docname):
    if getattr(app, "posenc_live_dir", None) is None:
        return
    shown = {}
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") == "cell_code" and "cell_index" in node:
            node["classes"].append(f"posenc-cell-{node['cell_index']}")
            shown[node["cell_index"]] = node
    if not shown:
        return
    source = pathlib.Path(app.env.doc2path(docname))
    if source.suffix != ".md":
        return
    cells = code_cells(source)
    by_index = {cell["index"]: cell for cell in cells}
    for index, node in shown.items():
        if index not in by_index:
            logger.warning(f"posenc_live: {docname}: the page's cell {index} is no code cell of {source.name}",
                           location=node)
            return
        cell = by_index[index]
        cell["shown"] = True
        code = [n.astext() for n in node.findall(nodes.literal_block)
                if "cell_input" in getattr(n.parent, "get", lambda *_: [])("classes", [])]
        if code and code[0].strip() != cell["source"].strip():
            logger.warning(f"posenc_live: {docname}: cell {index}'s code on the page differs from its source",
                           location=node)
            return
    for cell in cells:
        cell.setdefault("shown", False)
    target = pathlib.Path(app.outdir) / CELLS_DIR / f"{docname}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"cells": cells}, ensure_ascii=False), encoding="utf-8")
    app.posenc_live_pages.add(docname)


def _page_context(app, pagename, templatename, context, doctree):
    if pagename in getattr(app, "posenc_live_pages", ()):
        app.add_css_file(STYLE)
        app.add_js_file(SCRIPT, loading_method="defer")


def _copy(app, exception):
    if exception is not None or getattr(app, "posenc_live_dir", None) is None:
        return
    out = pathlib.Path(app.outdir)
    static = out / "_static"
    static.mkdir(parents=True, exist_ok=True)
    for name in (SCRIPT, WORKER, STYLE):
        shutil.copyfile(HERE / name, static / name)
    target = out / SITE_DIR
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(app.posenc_live_dir, target)
    size = sum(p.stat().st_size for p in target.iterdir())
    logger.info(f"posenc_live: Run controls on {len(app.posenc_live_pages)} pages; {SITE_DIR}/ holds "
                f"{size / 1e6:.2f} MB, loaded only on a click")


def setup(app):
    app.connect("builder-inited", _inited)
    app.connect("doctree-resolved", _resolved)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}
