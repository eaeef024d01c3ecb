"""`make lab`: chapters open as notebooks, and saving one writes it back unchanged.

What can be checked without a browser: the settings file that makes the Jupytext
notebook the default viewer, its installation into the environment (not the user's
home), the viewer's name as the installed jupytext extension registers it, and the
round trip that JupyterLab performs when a chapter is opened, run and saved.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

import jupytext
import nbformat
import pytest

from booktools import ROOT, baseline_for, cell_signature, chapter_sources
from format_chapters import canonical

CHAPTERS = chapter_sources()
OVERRIDES = ROOT / "lab" / "overrides.json"
VIEWER = "Jupytext Notebook"


def test_overrides_make_the_jupytext_notebook_the_default_viewer():
    settings = json.loads(OVERRIDES.read_text())
    viewers = settings["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    # Chapters are .md files in MyST format: JupyterLab gives them the file type
    # "markdown"; jupytext registers "myst" too.
    assert viewers == {"markdown": VIEWER, "myst": VIEWER}


def test_the_viewer_name_is_the_one_the_installed_jupytext_extension_registers():
    import sys

    ext = pathlib.Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"
    assert ext.is_dir(), "jupytext's JupyterLab extension is not installed in this environment"
    sources = "".join(p.read_text(errors="ignore") for p in ext.rglob("*.js"))
    assert f'"{VIEWER}"' in sources or f"'{VIEWER}'" in sources


def test_make_lab_installs_the_overrides_into_the_environment_only():
    dry = subprocess.run(
        ["make", "-n", "-B", "lab-setup"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "cp lab/overrides.json .venv/share/jupyter/lab/settings/overrides.json" in dry
    assert "~" not in dry and "$HOME" not in dry and ".jupyter/lab/user-settings" not in dry
    run = subprocess.run(["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "jupyter lab chapters/" in run


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_is_in_the_form_jupytext_writes(chapter):
    text = chapter.read_text(encoding="utf-8")
    assert canonical(text) == text, f"{chapter.name} would change on its first save: run `make format`"


def _opened_run_and_saved(chapter: pathlib.Path) -> str:
    """What JupyterLab writes back after opening the chapter, running it and saving.

    The jupytext contents manager reads the file, the kernel adds outputs, execution
    counts and ``language_info``; on save it writes with the configuration found next to
    the notebook (``chapters/jupytext.toml``).
    """
    config = jupytext.config.load_jupytext_config(str(chapter))
    assert config is not None, "chapters/jupytext.toml was not found"
    nb = jupytext.read(chapter, fmt="md:myst")
    for n, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.execution_count = n
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    nb.metadata["widgets"] = {}
    return jupytext.writes(nb, fmt="md:myst", config=config)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_saving_from_the_notebook_view_leaves_the_chapter_unchanged(chapter):
    assert _opened_run_and_saved(chapter) == chapter.read_text(encoding="utf-8")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_jupytext_reads_the_chapter_as_the_notebook_of_its_baseline(chapter):
    nb = jupytext.read(chapter)
    base = nbformat.read(baseline_for(chapter), as_version=4)
    assert [cell_signature(c) for c in nb.cells] == [cell_signature(c) for c in base.cells]
    assert nb.metadata["kernelspec"]["name"] == "python3"


def test_the_contents_manager_round_trip_when_jupyter_server_is_installed(tmp_path):
    """The real contents manager JupyterLab uses (installed by `make lab` only)."""
    pytest.importorskip("jupyter_server", reason="jupyter_server comes with `make lab` (requirements-lab.txt)")
    from jupyter_server.services.contents.largefilemanager import LargeFileManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    root = tmp_path / "chapters"
    root.mkdir()
    (root / "jupytext.toml").write_bytes((ROOT / "chapters" / "jupytext.toml").read_bytes())
    for chapter in CHAPTERS:
        (root / chapter.name).write_bytes(chapter.read_bytes())
    manager = build_sync_jupytext_contents_manager_class(LargeFileManager)(root_dir=str(root))
    for chapter in CHAPTERS:
        model = manager.get(chapter.name, content=True, type="notebook")
        nb = model["content"]
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
                cell.execution_count = 1
        nb.metadata["language_info"] = {"name": "python"}
        manager.save({"type": "notebook", "format": "json", "content": nb}, chapter.name)
        assert (root / chapter.name).read_bytes() == chapter.read_bytes(), chapter.name
        assert not list(root.glob("*.ipynb"))


def test_the_pinned_jupyterlab_can_load_jupytexts_extension():
    """jupytext's JupyterLab extension is built against a JupyterLab minor version.

    With an older JupyterLab its module federation refuses to load it (console:
    "Failed to create module: package: jupyterlab-jupytext"), no "Jupytext Notebook"
    viewer exists, and a double-click opens a chapter as text. JupyterLab X.Y.Z ships
    @jupyterlab/application X.Y.Z, so the pin must satisfy the extension's requirement.
    """
    import re
    import sys

    ext = pathlib.Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext" / "static"
    entry = "".join(p.read_text(errors="ignore") for p in ext.glob("remoteEntry*.js"))
    required = re.search(r'"@jupyterlab/application",[^}]*?requiredVersion:"\^(\d+)\.(\d+)\.', entry)
    assert required, "could not read the extension's @jupyterlab/application requirement"
    need = tuple(int(g) for g in required.groups())
    pin = re.search(r"^jupyterlab==(\d+)\.(\d+)\.\d+$", (ROOT / "requirements-lab.txt").read_text(), re.M)
    assert pin, "requirements-lab.txt does not pin jupyterlab"
    have = tuple(int(g) for g in pin.groups())
    assert have[0] == need[0] and have >= need, f"jupyterlab {have} cannot load jupytext's extension (needs ^{need})"
