"""`make lab`: chapters open as notebooks, and saving one writes it back unchanged.

What can be checked without a browser: the settings file that makes the Jupytext
notebook the default viewer, its installation into the environment (not the user's
home), the viewer's name as the installed jupytext extension registers it, and the
round trip that JupyterLab performs when a chapter is opened, run and saved.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import jupytext
import nbformat
import pytest

from booktools import ROOT, baseline_for, chapter_sources
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
    assert sum(c.cell_type == "code" for c in nb.cells) == len(base.cells)
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


# --------------------------------------------------------------------------- issue 24: the lab as a reader finds it

SERVER_CONFIG = ROOT / "lab" / "jupyter_server_config.py"


def _server_config():
    import importlib.util

    spec = importlib.util.spec_from_file_location("posenc_lab_server_config", SERVER_CONFIG)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_lab_passes_extra_flags_to_jupyter_lab():
    run = subprocess.run(["make", "-n", "lab", 'ARGS=--no-browser --port 8899'], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert re.search(r"jupyter lab chapters/ .*--no-browser --port 8899$", run, re.M), run


def test_make_lab_installs_the_server_config_into_the_environment_only():
    dry = subprocess.run(["make", "-n", "-B", "lab-setup"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert "cp lab/jupyter_server_config.py .venv/etc/jupyter/jupyter_server_config.py" in dry
    assert "~" not in dry and "$HOME" not in dry


def test_a_chapter_opens_with_the_language_info_its_kernel_will_report(tmp_path):
    """The cause of the "unsaved" mark on opening: no language_info until the kernel sets it.

    JupyterLab writes the kernel's ``language_info`` into the notebook when the kernel
    connects and skips the write only when an equal value is there already; the
    contents manager supplies exactly ipykernel's value, and saving drops it again.
    """
    pytest.importorskip("jupyter_server", reason="jupyter_server comes with `make lab` (requirements-lab.txt)")
    import asyncio

    from ipykernel.ipkernel import IPythonKernel

    config = _server_config()
    root = tmp_path / "chapters"
    root.mkdir()
    (root / "jupytext.toml").write_bytes((ROOT / "chapters" / "jupytext.toml").read_bytes())
    chapter = CHAPTERS[0]
    (root / chapter.name).write_bytes(chapter.read_bytes())
    manager = config.ChapterContentsManager(root_dir=str(root))
    assert hasattr(config.ChapterContentsManager, "formats")  # jupytext's server extension keeps it
    model = asyncio.run(manager.get(chapter.name, content=True, type="notebook"))
    assert model["content"]["metadata"]["language_info"] == IPythonKernel.language_info
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": model["content"]}, chapter.name))
    assert (root / chapter.name).read_bytes() == chapter.read_bytes()


def test_the_installed_server_config_is_the_repositorys():
    installed = pathlib.Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.py"
    if not (pathlib.Path(sys.prefix) / ".lab-installed").exists():
        pytest.skip("`make lab-setup` has not run in this environment")
    assert installed.read_bytes() == SERVER_CONFIG.read_bytes(), "run `make lab-setup`"


def test_every_installed_lab_extension_is_compatible_with_the_pinned_jupyterlab():
    """jupyterlab-myst 2.7.0, for one, wants @jupyter/ydoc ^3 where JupyterLab 4.6 has ^4."""
    jupyter = pathlib.Path(sys.prefix) / "bin" / "jupyter"
    pytest.importorskip("jupyterlab", reason="JupyterLab comes with `make lab` (requirements-lab.txt)")
    listing = subprocess.run([str(jupyter), "labextension", "list"], capture_output=True, text=True, check=True)
    text = listing.stdout + listing.stderr
    assert "jupyterlab-myst" in text
    assert "not compatible" not in text and "\u2718" not in text and " X" not in text, text


def test_jupyterlab_myst_is_pinned():
    assert re.search(r"^jupyterlab-myst==\d+\.\d+\.\d+$", (ROOT / "requirements-lab.txt").read_text(), re.M)


def test_interactive_figures_carry_the_books_height_for_jupyterlab():
    """JupyterLab's Plotly renderer draws a figure without layout.height 360 px high."""
    from posenc.interactive import interactive_figure

    states = [[{"x": [0, 1], "y": [0, s], "name": "line"}] for s in (1, 2)]
    fig = interactive_figure(states, name="fig-size", labels=["a", "b"], alt="A line.", height=520)
    assert fig.figure["layout"]["height"] == 520
    assert fig._repr_mimebundle_()["application/vnd.plotly.v1+json"]["layout"]["height"] == 520
