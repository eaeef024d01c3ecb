"""Offer each chapter's executed notebook (``.ipynb``) in the page's download menu.

sphinx-book-theme 1.1.4 lists a ``.ipynb`` entry in its download menu only when a launch
provider (Binder, JupyterHub, Colab or Thebe) is configured; the book has none (it runs
offline). This extension does the same two things the theme does then, for every page
that MyST-NB executed:

- it copies the executed notebook, outputs included, from ``_build/jupyter_execute/``
  to ``_build/html/_sources/`` (next to the page's ``.md`` source), and
- it sets ``ipynb_source`` in the page's context before the theme builds its download
  menu (the theme's handler runs at priority 501, this one at 500), so the menu offers
  ``.ipynb`` next to ``.md`` and ``.pdf``.

The notebook opens in Jupyter as it is; ``make lab`` runs the chapters themselves.
"""

from __future__ import annotations

import pathlib
import shutil

OUTPUT_FOLDER = "jupyter_execute"  # where MyST-NB writes executed notebooks (myst_nb.sphinx_ext)


def executed_notebook(app, pagename: str) -> pathlib.Path:
    return pathlib.Path(app.outdir).parent / OUTPUT_FOLDER / f"{pagename}.ipynb"


def _offer_notebook(app, pagename, templatename, context, doctree):
    if app.builder.format != "html" or doctree is None:
        return
    source = executed_notebook(app, pagename)
    if "kernelspec" not in app.env.metadata.get(pagename, {}) or not source.is_file():
        return
    target = pathlib.Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    app.connect("html-page-context", _offer_notebook, priority=500)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
