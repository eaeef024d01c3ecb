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
    manager_class = config.chapter_contents_manager()
    manager = manager_class(root_dir=str(root))
    assert hasattr(manager_class, "formats")  # jupytext's server extension keeps it
    model = asyncio.run(manager.get(chapter.name, content=True, type="notebook"))
    assert model["content"]["metadata"]["language_info"] == IPythonKernel.language_info
    # the glued values as {eval} expressions; what jupyterlab-myst stores after running them is not saved
    markdown = [c for c in model["content"]["cells"] if c["cell_type"] == "markdown"]
    text = "".join(c["source"] for c in markdown)
    assert "{glue:text}" in chapter.read_text() and "{glue:text}" not in text and "book.glued(" in text
    for cell in markdown:
        cell["metadata"]["user_expressions"] = [{"expression": "x", "result": {"status": "ok", "data": {}}}]
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": model["content"]}, chapter.name))
    assert (root / chapter.name).read_bytes() == chapter.read_bytes()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_glued_value_is_shown_as_an_eval_and_saved_back_as_its_role(chapter):
    """Each {glue:text} of the chapter becomes an {eval} of posenc.book.glued, and back, exactly."""
    config = _server_config()
    text = chapter.read_text(encoding="utf-8")
    assert not config.EVAL_ROLE.search(text), "a chapter's own {eval} of glued() would be saved as a glue role"
    shown = config.glue_as_eval(text)
    assert "{glue:text}" not in shown or "::" in shown
    assert shown.count('book.glued("') == text.count("{glue:text}`")
    assert config.eval_as_glue(shown) == text
    # the expressions evaluate in the kernel to the text MyST-NB pastes
    from posenc.book import glue, glued

    glue("x_gap", 0.30349, decimals=3)
    expression = config.EVAL_ROLE.search(config.glue_as_eval("{glue:text}`x_gap:.2f`")).group(0)
    assert eval(expression[len("{eval}`"):-1]) == glued("x_gap", ".2f") == "0.30"


def test_make_lab_keeps_the_users_jupyter_and_ipython_files_in_the_environment():
    """Settings, workspaces, the trust database, runtime files and IPython's history stay in .venv."""
    run = subprocess.run(["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    line = next(line for line in run.splitlines() if "jupyter lab chapters/" in line)
    venv = str(ROOT / ".venv")
    for variable in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        assert re.search(rf"\b{variable}={re.escape(venv)}/", line), (variable, line)
    # jupyter-lsp would run `npm prefix --global`, which writes npm's log into ~/.npm
    assert '"jupyter_lsp": False' in SERVER_CONFIG.read_text()
    settings = json.loads(OVERRIDES.read_text())
    # jupyterlab-myst evaluates a Markdown cell's {eval} only where the cell is drawn: every cell is
    assert settings["@jupyterlab/notebook-extension:tracker"]["windowingMode"] == "none"


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


def test_in_jupyterlab_the_prose_shows_the_glued_values_and_home_is_untouched(tmp_path):
    """`make lab` in headless Chromium: Run All on chapter 1, then every glued value shows in the prose.

    The server runs with an empty home of its own (HOME): after the run it is still empty (no
    ~/.jupyter, ~/.local, ~/.ipython, ~/.npm, ~/.config, ~/.cache), and the chapter's file is
    unchanged (JupyterLab saves it on its own every two minutes).
    """
    if not (pathlib.Path(sys.prefix) / ".lab-installed").exists():
        pytest.skip("`make lab-setup` has not run in this environment")
    import os
    import socket
    import time
    import urllib.request

    from selenium.webdriver.common.by import By
    from browser.harness import _need_browser, make_driver

    chapter = CHAPTERS[0]
    before = chapter.read_bytes()
    home = tmp_path / "home"
    home.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, HOME=str(home))
    server = subprocess.Popen(["make", "lab", f"ARGS=--no-browser --port {port} --ServerApp.token=t"], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    driver = None
    try:
        for _ in range(180):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token=t", timeout=2)
                break
            except OSError:
                time.sleep(1)
        driver = make_driver(*_need_browser())
        # ?reset: a workspace of its own, not the tabs of an earlier `make lab`
        driver.get(f"http://127.0.0.1:{port}/lab/tree/{chapter.name}?token=t&reset")
        menu = driver.find_elements

        def click(selector, label):
            for _ in range(60):
                found = [e for e in menu(By.CSS_SELECTOR, selector) if e.text.startswith(label)]
                if found:
                    found[0].click()
                    return
                time.sleep(1)
            raise AssertionError(f"no {label!r} in JupyterLab's menus")

        for _ in range(60):  # the notebook is open once its cells are drawn
            if len(menu(By.CSS_SELECTOR, ".jp-CodeCell")) > 3:
                break
            time.sleep(1)
        click(".lm-MenuBar-itemLabel", "Run")
        click(".lm-Menu-itemLabel", "Run All Cells")
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            prompts = [p.text for p in menu(By.CSS_SELECTOR, ".jp-CodeCell .jp-InputArea-prompt")]
            if prompts and all(re.search(r"\[\d+\]", p) for p in prompts):
                break
            time.sleep(2)
        time.sleep(3)
        prose = "\n".join(e.text for e in menu(By.CSS_SELECTOR, ".jp-MarkdownCell"))
    finally:
        if driver is not None:
            driver.quit()
        os.killpg(server.pid, 15)
        server.wait(timeout=60)
    values = {name: data["text/plain"] for name, data in
              nbformat.read(baseline_for(chapter), as_version=4).metadata["glue"].items()}
    assert "book.glued(" not in prose and "Error" not in prose, prose[:3000]
    shown = [name for name in values if re.search(rf"{{glue:text}}`{name}\b", chapter.read_text())]
    assert shown and all(values[name] in prose for name in shown), (values, prose[:3000])
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert left == [], left
    assert chapter.read_bytes() == before
