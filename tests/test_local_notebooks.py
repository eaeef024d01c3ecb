"""The notebooks a reader downloads from the built book: readable, and runnable after one install.

These tests read the site in ``_build/html`` (``make book`` first; ``make site-test`` runs
them after the build, as ``make test`` does):

- every chapter page offers its ``.ipynb`` and no Markdown cell of it shows raw MyST (a
  ``{glue:text}`` placeholder, a ``{numref}``/``{prf:ref}``/``{eq}``/``{cite:p}`` role, a
  ``(label)=`` target, a directive fence), and the values and numbers put in their place
  are the ones the HTML page shows;
- a downloaded notebook runs as downloaded: the wheel is built from the checkout, a fresh
  venv is made in an empty directory, ``posenc[book]`` is installed into it from that
  wheel and a wheelhouse of the book's pins with no package index (``--no-index``), and
  ``jupyter execute`` runs the chapter there; its printed outputs equal the book's.

The repository setting is tested without a build, in ``tests/test_reader_docs.py``.
"""

from __future__ import annotations

import hashlib
import html
import os
import pathlib
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from booktools import ROOT, chapter_sources

SITE = pathlib.Path(os.environ.get("POSENC_SITE", ROOT / "_build" / "html"))
CHAPTERS = chapter_sources()
RAW_MYST = re.compile(
    r"\{(glue|glue:text|glue:figure|numref|ref|prf:ref|eq|cite|cite:p|cite:t|doc|term|func|mod|math)\}`"
    r"|^[ \t]*\([A-Za-z0-9_.:-]+\)=[ \t]*$|^[ \t]*(`{3,}|:{3,})\{",
    re.M,
)
#: The chapter executed in the fresh venv: it uses glue, Matplotlib and an interactive figure.
RUN_CHAPTER = "04_rope"


def downloaded(chapter: pathlib.Path) -> pathlib.Path:
    path = SITE / "_sources" / "chapters" / f"{chapter.stem}.ipynb"
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} is missing: run `make book`")
    return path


def markdown_cells(nb) -> list[str]:
    return [cell.source for cell in nb.cells if cell.cell_type == "markdown"]


# ---------------------------------------------------------------- what the download menu offers


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_the_page_offers_the_notebook(chapter):
    page = (SITE / "chapters" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    assert f"_sources/chapters/{chapter.stem}.ipynb" in page
    downloaded(chapter)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_raw_myst_in_the_downloaded_markdown(chapter):
    nb = nbformat.read(downloaded(chapter), as_version=4)
    raw = [m.group(0) for text in markdown_cells(nb) for m in RAW_MYST.finditer(text)]
    assert not raw, f"{chapter.stem}.ipynb shows raw MyST: {raw[:5]}"


def test_the_raw_myst_pattern_catches_what_the_chapter_sources_hold():
    """The check above can fail: on the chapter sources themselves it finds every kind."""
    text = "\n".join(chapter.read_text(encoding="utf-8") for chapter in CHAPTERS)
    found = {m.group(1) or m.group(0)[:2] for m in RAW_MYST.finditer(text)}
    assert {"glue:text", "numref", "prf:ref", "eq", "cite:p", "(c", "``"} <= found, found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_downloaded_code_cells_are_the_chapters(chapter):
    """Only the Markdown is rewritten; code, its outputs and the kernel are the executed notebook's."""
    nb = nbformat.read(downloaded(chapter), as_version=4)
    executed = nbformat.read(ROOT / "_build" / "jupyter_execute" / "chapters" / f"{chapter.stem}.ipynb", 4)
    code = [(c.source, c.outputs) for c in nb.cells if c.cell_type == "code"]
    assert code == [(c.source, c.outputs) for c in executed.cells if c.cell_type == "code"]
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert nb.cells[0].metadata.get("tags") == ["posenc-download-note"]
    assert re.search(r'pip install "(posenc)?\.?\[book\]', nb.cells[0].source), nb.cells[0].source


def _page_text(chapter) -> str:
    page = (SITE / "chapters" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    return re.sub(r"\s+", " ", text)


def test_glued_values_and_references_are_those_the_page_shows():
    """Chapter 2's sentence from the issue, and its numbered references, read as on the page."""
    chapter = ROOT / "chapters" / "02_sinusoidal.md"
    nb = nbformat.read(downloaded(chapter), as_version=4)
    text = re.sub(r"\s+", " ", "\n".join(markdown_cells(nb)))
    page = _page_text(chapter)
    sentence = re.search(r"(\d+) of the (\d+) cosine coordinates stay above 0\.9", text)
    assert sentence, "the glued counts of the 'cosine coordinates' sentence are missing"
    assert sentence.group(0) in page
    # Each theorem reference reads as on the page ("Theorem 2.1"), and a theorem heading carries it.
    refs = set(re.findall(r"\b(?:Theorem|Lemma|Proposition|Corollary) \d+\.\d+", text))
    assert refs and refs <= set(re.findall(r"\b(?:Theorem|Lemma|Proposition|Corollary) \d+\.\d+", page))
    assert re.search(r"^> \*\*Theorem 2\.\d+", "\n".join(markdown_cells(nb)), re.M)
    # Equation references: "(2.N)" both in the text and as the tag of the labelled block.
    tags = re.findall(r"\\tag\{(\d+\.\d+)\}", "\n".join(markdown_cells(nb)))
    assert tags and all(f"({t})" in page for t in tags)
    # Citations as the page prints them (author and year).
    assert "Vaswani et al." in text and "{cite" not in text


# ---------------------------------------------------------------- run as downloaded


def _pins() -> str:
    """requirements.txt as a constraints file (its `-e .` line is not a constraint)."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return "\n".join(line for line in lines if line.strip() and not line.startswith(("-e", "#"))) + "\n"


def _wheelhouse(wheel: pathlib.Path) -> pathlib.Path:
    """Wheels of posenc[book]'s dependencies at the book's pins, kept in .venv between runs."""
    extras = re.search(r"^book = \[.*?^\]", (ROOT / "pyproject.toml").read_text(), re.S | re.M).group(0)
    key = hashlib.sha256((_pins() + extras).encode()).hexdigest()[:12]
    house = pathlib.Path(sys.prefix) / f".wheelhouse-{key}"
    if not (house / ".complete").is_file():
        house.mkdir(exist_ok=True)
        constraints = house / "constraints.txt"
        constraints.write_text(_pins())
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
             "--only-binary=:all:", "-d", str(house), "-c", str(constraints), f"{wheel}[book]"],
            check=True,
        )
        (house / ".complete").write_text("")
    for old in house.glob("posenc-*.whl"):
        old.unlink()
    return house


def test_a_downloaded_notebook_runs_after_the_documented_install(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to copy the checkout")
    source = downloaded(ROOT / "chapters" / f"{RUN_CHAPTER}.md")
    # The wheel, built from a copy of the checkout's committed and working files (never in ROOT).
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(
        ".venv", "_build", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "--quiet", "--no-deps",
                    "-w", str(wheels), str(checkout)], check=True)
    (wheel,) = wheels.glob("posenc-*.whl")
    house = _wheelhouse(wheel)
    # A reader's empty directory: the notebook, nothing else; a fresh venv; a home of its own
    # (so no kernel spec or setting of this machine's user is found).
    reader = tmp_path / "reader"
    reader.mkdir()
    notebook = reader / source.name
    shutil.copyfile(source, notebook)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(tmp_path / "home"), PATH=f"{reader / 'env' / 'bin'}:/usr/bin:/bin", MPLBACKEND="agg")
    subprocess.run([sys.executable, "-m", "venv", str(reader / "env")], check=True, cwd=reader, env=env)
    # The documented command, `pip install "posenc[book]"`, with no index: only the wheel and the pins.
    subprocess.run(
        ["env/bin/pip", "install", "--disable-pip-version-check", "--quiet", "--no-index",
         "--find-links", str(wheels), "--find-links", str(house), "posenc[book]"],
        check=True, cwd=reader, env=env,
    )
    where = subprocess.run(["env/bin/python", "-c", "import posenc; print(posenc.__file__)"],
                           check=True, cwd=reader, env=env, capture_output=True, text=True).stdout
    assert where.startswith(str(reader / "env")), where
    run = subprocess.run(["env/bin/jupyter", "execute", "--inplace", notebook.name],
                         cwd=reader, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    ran = nbformat.read(notebook, as_version=4)
    book = nbformat.read(source, as_version=4)

    def printed(nb):
        return ["".join(o.text for o in c.outputs if o.output_type == "stream" and o.name == "stdout")
                for c in nb.cells if c.cell_type == "code"]

    assert printed(ran) == printed(book)
    assert not [o for c in ran.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert sorted(p.name for p in reader.iterdir()) == sorted(["env", notebook.name])
