"""`make lab`'s Jupyter server configuration: a chapter opens unmodified, its glued values shown.

Installed by `make lab-setup` into the environment's own configuration folder
(``.venv/etc/jupyter/jupyter_server_config.py``), never into ``~/.jupyter``.

Glued values: the book replaces each ``{glue:text}`name``` role by the value a cell glued
(MyST-NB, at build time); jupyterlab-myst has no glue, and showed the bare name. It does
evaluate MyST's inline ``{eval}`expression``` when a Markdown cell runs (Run All runs them in
order, after the code cells above). So the contents manager below hands JupyterLab each
``{glue:text}`name:format``` as ``{eval}`__import__("posenc.book").book.glued("name", "format")```
(``posenc.book.glued``: the text the book shows, from the value the kernel glued), and turns
it back into the role when it saves, dropping the results jupyterlab-myst keeps in the cell's
metadata (``user_expressions``): the ``.md`` file is written as it was read.

Why a chapter opened marked "unsaved": the chapters are MyST files read by jupytext,
which (rightly) keeps ``language_info`` out of the file, so the notebook JupyterLab
receives has none. When the kernel connects, JupyterLab writes the kernel's
``language_info`` into the notebook's metadata, and any metadata change marks the
document dirty; closing it then asks "Save?". JupyterLab skips the write when the
metadata already holds an equal value (``YNotebook.setMetadata`` compares with
``deepEqual``). So the contents manager below, jupytext's own with one addition, gives a
Python chapter the ``language_info`` that this environment's ipykernel reports (the same
interpreter runs the server and the kernel). Saving is unchanged: jupytext drops
``language_info`` again when it writes the ``.md`` (tests/test_lab.py checks both).
"""

from __future__ import annotations

import re


def kernel_language_info() -> dict:
    """The ``language_info`` ipykernel sends in its ``kernel_info_reply`` (from its own class)."""
    from ipykernel.ipkernel import IPythonKernel

    return dict(IPythonKernel.language_info)


def with_language_info(model: dict) -> dict:
    """Add the kernel's ``language_info`` to a Python text notebook that has none."""
    if model.get("type") != "notebook" or not model.get("content"):
        return model
    metadata = model["content"]["metadata"]
    if "language_info" not in metadata and metadata.get("kernelspec", {}).get("language") == "python":
        metadata["language_info"] = kernel_language_info()
    return model


#: A role of the chapter's own glued values (a value glued in another page, ``page::name``, is left alone).
GLUE_ROLE = re.compile(r"\{glue:text\}`(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<format>[^`\"]*))?`")
EVAL_ROLE = re.compile(
    r'\{eval\}`__import__\("posenc\.book"\)\.book\.glued\("(?P<name>[A-Za-z_][A-Za-z0-9_]*)"(?:, "(?P<format>[^`"]*)")?\)`'
)


def glue_as_eval(text: str) -> str:
    """Each ``{glue:text}`name[:format]``` of a Markdown text as the ``{eval}`` that shows its value."""
    def evaluated(match):
        fmt = f', "{match["format"]}"' if match["format"] is not None else ""
        return f'{{eval}}`__import__("posenc.book").book.glued("{match["name"]}"{fmt})`'

    return GLUE_ROLE.sub(evaluated, text)


def eval_as_glue(text: str) -> str:
    """The inverse of :func:`glue_as_eval`."""
    def role(match):
        return f"{{glue:text}}`{match['name']}" + (f":{match['format']}" if match["format"] is not None else "") + "`"

    return EVAL_ROLE.sub(role, text)


def _markdown_cells(model: dict):
    if model.get("type") == "notebook" and model.get("content"):
        yield from (cell for cell in model["content"]["cells"] if cell["cell_type"] == "markdown")


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def chapter_contents_manager():
    """jupytext's contents manager, with text notebooks given their kernel's ``language_info``
    and their glued values as ``{eval}`` expressions (imported here: jupyter_server comes with
    `make lab` only, and the functions above are tested without it)."""
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

    class ChapterContentsManager(build_async_jupytext_contents_manager_class(AsyncLargeFileManager)):
        async def get(self, path, content=True, type=None, format=None, **kwargs):
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            if not str(path).endswith(".ipynb"):
                model = with_language_info(model)
                for cell in _markdown_cells(model):
                    cell["source"] = glue_as_eval(_source(cell))
            return model

        async def save(self, model, path=""):
            if not str(path).endswith(".ipynb"):
                for cell in _markdown_cells(model):
                    cell["source"] = eval_as_glue(_source(cell))
                    cell.get("metadata", {}).pop("user_expressions", None)
            return await super().save(model, path)

    return ChapterContentsManager


if "get_config" in globals():  # read by the Jupyter server (not when imported by a test)
    c = get_config()  # noqa: F821
    # A jupytext contents manager already: jupytext's server extension keeps it as it is.
    c.ServerApp.contents_manager_class = chapter_contents_manager()
    # jupyter-lsp looks for language servers with `npm prefix --global`, and npm writes its log
    # into ~/.npm; the chapters use no language server, so the extension is not loaded.
    c.ServerApp.jpserver_extensions = {"jupyter_lsp": False}
