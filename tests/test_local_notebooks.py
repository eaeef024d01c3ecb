"""The notebooks a reader downloads from the built book: readable, and runnable on their own.

These tests read the site in ``_build/html`` (``make book`` first; ``make site-test`` runs
them after the build, as ``make test`` does):

- every chapter page offers its ``.ipynb`` and no Markdown cell of it shows raw MyST (a
  ``{glue:text}`` placeholder, a ``{numref}``/``{prf:ref}``/``{eq}``/``{cite:p}`` role, a
  ``(label)=`` target, a directive fence) or a stray Markdown character once rendered (an
  emphasis mark left as a literal ``*``), and the values and numbers put in their place
  are the ones the HTML page shows; each figure's number and caption follow its cell;
- a downloaded notebook runs on its own: in an empty directory, a fresh venv holding only a
  notebook runner (``ipykernel``, ``nbclient``) executes it from its first cell, whose
  ``%pip install`` of ``posenc[book]`` (as the build wrote it) is served by a wheelhouse of
  the book's pins with no package index (``--no-index``); its printed outputs equal the book's.

The repository setting and the install requirement are tested without a build, in
``tests/test_reader_docs.py``.
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
import tomllib

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


def rendered_text(markdown: str) -> str:
    """The text a Markdown cell shows (CommonMark, with ``$`` math), code and math left out."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)
    text = []

    def walk(tokens):
        for token in tokens:
            if token.type == "text":
                text.append(token.content)
            if token.children:
                walk(token.children)

    walk(md.parse(markdown))
    return "\n".join(text)


def stray_characters(markdown: str) -> list[str]:
    """Emphasis and code marks that a renderer would print literally (one that did not open or close)."""
    return re.findall(r"[*`]", rendered_text(markdown))


def test_stray_characters_are_found():
    """The check below can fail: the old first cell's emphasis around a title printed its asterisks."""
    old = "*This notebook is a chapter of* Positional Encodings, executable*, downloaded with its outputs.*"
    assert stray_characters(old) == ["*", "*"]
    assert stray_characters("*Fine*, `code*`, $a*b$ and snake_case_names.") == []


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_stray_characters_in_the_downloaded_markdown(chapter):
    nb = nbformat.read(downloaded(chapter), as_version=4)
    stray = [(n, s) for n, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
             for s in stray_characters(cell.source)]
    assert not stray, f"{chapter.stem}.ipynb: literal Markdown marks in cells {stray[:5]}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_downloaded_code_cells_are_the_chapters(chapter):
    """Only the Markdown is rewritten; code, its outputs and the kernel are the executed notebook's."""
    nb = nbformat.read(downloaded(chapter), as_version=4)
    executed = nbformat.read(ROOT / "_build" / "jupyter_execute" / "chapters" / f"{chapter.stem}.ipynb", 4)
    code = [(c.source, c.outputs) for c in nb.cells[1:] if c.cell_type == "code"]
    assert code == [(c.source, c.outputs) for c in executed.cells if c.cell_type == "code"]
    assert nb.metadata["kernelspec"]["name"] == "python3"
    first = nb.cells[0]
    assert first.cell_type == "code" and first.metadata.get("tags") == ["posenc-download-note"]
    assert re.search(r'^%pip install --quiet "posenc\[book\] @ (git\+https://\S+@[0-9a-f]{40}|file:///\S+)"$',
                     first.source, re.M), first.source


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_figure_has_its_number_and_caption_below_it(chapter):
    """A figure cell's caption (in its metadata) follows it as text, numbered as on the page."""
    nb = nbformat.read(downloaded(chapter), as_version=4)
    page = _page_text(chapter)
    figures = [(n, c.metadata["mystnb"]["figure"]) for n, c in enumerate(nb.cells)
               if c.cell_type == "code" and "figure" in c.metadata.get("mystnb", {})]
    assert figures or chapter.stem == "01_why_order_matters", "no figure found: the parser is broken"
    for n, figure in figures:
        caption = nb.cells[n + 1]
        assert caption.cell_type == "markdown" and caption.metadata.get("tags") == ["posenc-figure-caption"]
        number = re.search(r"\*\*(Fig\. \d+\.\d+)\.\*\*", caption.source)
        assert number and number.group(1) in page, caption.source
        assert f'<a id="{figure["name"]}"></a>' in caption.source
        words = re.split(r"[${]", figure["caption"])[0].split()[:4]  # its first words, up to any math or role
        assert " ".join(words) in re.sub(r"\s+", " ", caption.source), (words, caption.source)


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


def _requirements() -> list[str]:
    """What installing ``posenc[book]`` from its source needs: its dependencies, the book extra, the build backend."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return (project["project"]["dependencies"] + project["project"]["optional-dependencies"]["book"]
            + project["build-system"]["requires"])


def _wheelhouse() -> pathlib.Path:
    """Wheels of those requirements at the book's pins, kept in .venv between runs (the one download)."""
    key = hashlib.sha256((_pins() + "\n".join(_requirements())).encode()).hexdigest()[:12]
    house = pathlib.Path(sys.prefix) / f".wheelhouse-{key}"
    if not (house / ".complete").is_file():
        house.mkdir(exist_ok=True)
        constraints = house / "constraints.txt"
        constraints.write_text(_pins())
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
             "--only-binary=:all:", "-d", str(house), "-c", str(constraints), *_requirements()],
            check=True,
        )
        (house / ".complete").write_text("")
    return house


def test_a_downloaded_notebook_runs_on_its_own_after_its_first_cell(tmp_path):
    """In an empty directory, with only a notebook runner, the notebook installs what it needs and runs.

    Offline: pip finds no index, only the wheelhouse; a ``git+<address>@<commit>`` requirement
    (a build that knew the repository's address) is served from this clone by git's own
    ``insteadOf``, so the commit the line names must be this checkout's.
    """
    source = downloaded(ROOT / "chapters" / f"{RUN_CHAPTER}.md")
    book = nbformat.read(source, as_version=4)
    line = re.search(r'^%pip install --quiet "posenc\[book\] @ (?P<url>\S+)"$', book.cells[0].source, re.M)
    assert line, book.cells[0].source
    house = _wheelhouse()
    # A reader's empty directory: the notebook, nothing else; a fresh venv; a home of its own
    # (so no kernel spec or setting of this machine's user is found), no pip configuration.
    reader = tmp_path / "reader"
    reader.mkdir()
    notebook = reader / source.name
    shutil.copyfile(source, notebook)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV", "PIP_", "GIT_"))}
    env.update(HOME=str(tmp_path / "home"), PATH=f"{reader / 'env' / 'bin'}:/usr/bin:/bin",
               PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    git = re.fullmatch(r"git\+(?P<repo>https://\S+)@(?P<commit>[0-9a-f]{40})", line["url"])
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is needed to serve the notebook's git+ requirement from this clone")
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=f"url.{ROOT.as_uri()}.insteadOf",
                   GIT_CONFIG_VALUE_0=git["repo"])
    else:
        assert line["url"] == ROOT.as_uri(), f"built from another clone: {line['url']}"
    subprocess.run([sys.executable, "-m", "venv", str(reader / "env")], check=True, cwd=reader, env=env)
    # The reader's notebook runner (Jupyter's kernel and `jupyter execute`), nothing of the book.
    subprocess.run(["env/bin/pip", "install", "--quiet", "-c", str(house / "constraints.txt"), "ipykernel", "nbclient"],
                   check=True, cwd=reader, env=env)
    run = subprocess.run(["env/bin/jupyter", "execute", "--inplace", notebook.name],
                         cwd=reader, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    where = subprocess.run(["env/bin/python", "-c", "import posenc; print(posenc.__file__)"],
                           check=True, cwd=reader, env=env, capture_output=True, text=True).stdout
    assert where.startswith(str(reader / "env")), where
    ran = nbformat.read(notebook, as_version=4)

    def printed(nb):
        return ["".join(o.text for o in c.outputs if o.output_type == "stream" and o.name == "stdout")
                for c in nb.cells[1:] if c.cell_type == "code"]

    assert printed(ran) == printed(book)
    assert not [o for c in ran.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert sorted(p.name for p in reader.iterdir()) == sorted(["env", notebook.name])
