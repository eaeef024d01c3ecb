"""`make lab`'s Jupyter server configuration: a chapter opens unmodified.

Installed by `make lab-setup` into the environment's own configuration folder
(``.venv/etc/jupyter/jupyter_server_config.py``), never into ``~/.jupyter``.

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

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class


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


class ChapterContentsManager(build_async_jupytext_contents_manager_class(AsyncLargeFileManager)):
    """jupytext's contents manager; text notebooks come with their kernel's ``language_info``."""

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if not str(path).endswith(".ipynb"):
            model = with_language_info(model)
        return model


if "get_config" in globals():  # read by the Jupyter server (not when imported by a test)
    c = get_config()  # noqa: F821
    # A jupytext contents manager already: jupytext's server extension keeps it as it is.
    c.ServerApp.contents_manager_class = ChapterContentsManager
