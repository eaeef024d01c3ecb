"""Checks of the PDF that `make pdf` builds (_build/latex/book.pdf), with Poppler's tools.

Skipped, with a message saying what to install, when TeX or Poppler is absent or the PDF
was not built; POSENC_REQUIRE_TEX=1 (set by .ci/run) turns that into a failure.

Debian packages: texlive-xetex texlive-latex-extra texlive-fonts-recommended
texlive-latex-recommended tex-gyre latexmk fonts-freefont-otf xindy poppler-utils.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
LATEX = ROOT / "_build" / "latex"
PDF = LATEX / "book.pdf"
LOG = LATEX / "book.log"
TOOLS = ("xelatex", "latexmk", "pdftotext", "pdfimages", "pdffonts", "pdfinfo")
INSTALL = ("sudo apt-get install texlive-xetex texlive-latex-extra texlive-fonts-recommended "
           "texlive-latex-recommended tex-gyre latexmk fonts-freefont-otf xindy poppler-utils")

#: Overfull boxes allowed in the LaTeX log, each wider than OVERFULL_PT points. Lines
#: a few points too wide (an unbreakable formula or identifier at the end of a line) do
#: not show; anything wider must be fixed or listed here. The one allowed today: chapter
#: 1's table of scheme families ("What a good encoding needs"), whose last column, the
#: chapter numbers "1, 6", is 7.3 pt too wide (LaTeX's tabulary gives that column less
#: than its unbreakable contents; a `tabularcolumns` line in the chapter would fix it).
OVERFULL_PT = 5.0
OVERFULL_MAX = 1
#: Fewest pages: the six chapters and the reference pages cannot fit in fewer.
MIN_PAGES = 60


def _missing() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


@pytest.fixture(scope="module")
def pdf() -> pathlib.Path:
    why = None
    if _missing():
        why = f"TeX/Poppler tools missing ({', '.join(_missing())}): {INSTALL}"
    elif not PDF.is_file():
        why = f"{PDF.relative_to(ROOT)} not built: run `make pdf`"
    if why:
        if os.environ.get("POSENC_REQUIRE_TEX") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return PDF


def _run(*args) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def text(pdf) -> str:
    return _run("pdftotext", "-layout", str(pdf), "-")


def _pages(pdf) -> int:
    return int(re.search(r"^Pages:\s+(\d+)", _run("pdfinfo", str(pdf)), re.M).group(1))


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]


def _title(file: str) -> str:
    source = (ROOT / f"{file}.md").read_text(encoding="utf-8")
    return re.search(r"^# (.+)$", source, re.M).group(1).strip()


def test_page_count(pdf):
    assert _pages(pdf) >= MIN_PAGES


def test_every_chapter_and_reference_page_is_in_it(text):
    flat = re.sub(r"\s+", " ", text)
    for file in _toc_files()[1:]:
        title = re.sub(r"\s+", " ", _title(file))
        words = re.sub(r"[`*$\\{}]", "", title)
        assert words in flat, f"{file}: title {words!r} not found in the PDF"


def test_no_unresolved_references(text):
    # What LaTeX prints for a reference or citation it could not resolve ...
    for mark in ("??", "[?]"):
        lines = [line.strip() for line in text.splitlines() if mark in line]
        assert not lines, f"{mark!r} in the PDF: {lines[:5]}"
    # ... and what it logs for one, including Sphinx's hyperlinks (which print no mark).
    log = LOG.read_text(encoding="utf-8", errors="replace")
    undefined = re.findall(r"^LaTeX Warning: (?:Hyper reference|Reference|Citation) .*", log, re.M)
    assert not undefined, undefined[:5]
    assert "There were undefined references" not in log


def test_numbered_theorems_equations_figures_exercises(text):
    # sphinx-proof and sphinx-exercise number within sections (Theorem 2.4.1, Exercise
    # 1.7.2), figures within chapters (Fig. 2.1), equations within chapters ((2.1)).
    for pattern in (r"Theorem \d+\.\d+\.\d+", r"Exercise \d+\.\d+\.\d+", r"Fig\. \d+\.\d+", r"\(\d+\.\d+\)"):
        assert re.search(pattern, text), f"nothing numbered like {pattern} in the PDF"
    # sphinx-proof 0.4 labels and numbers a theorem in LaTeX through the chapter it finds by
    # comparing the typeset title with the source's; where they differ (a straight apostrophe,
    # typeset as ’) the label is `None:...` and the theorem has no number.
    tex = (LATEX / "book.tex").read_text(encoding="utf-8")
    orphans = re.findall(r"\\label\{None:([^}]*)\}", tex)
    assert not orphans, f"theorems in no chapter (is the chapter's title typed as it is typeset?): {orphans[:5]}"


def test_bibliography_is_in_it(text):
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    n_entries = len(re.findall(r"^@\w+\{", bib, re.M))
    assert "Bibliography" in text or "References" in text
    # a few cited titles appear in full
    assert "Attention Is All You Need" in text or "Attention is all you need" in text
    assert n_entries > 0


def test_code_cells_and_their_outputs_are_in_it(text):
    assert "import numpy as np" in text and "from posenc" in text


def _figure_count() -> int:
    """Figures the book shows: MyST-NB figure cells and interactive figures (one still each)."""
    n = 0
    for source in sorted((ROOT / "chapters").glob("*.md")):
        t = source.read_text(encoding="utf-8")
        n += len(re.findall(r"^\s+figure:\s*$", t, re.M))
    return n


def test_every_figure_is_an_image_in_it(pdf, text):
    # Every figure cell (the interactive ones included, through their still PNG) has its
    # numbered caption, and an image on the caption's page or the page before (a float's
    # caption can be pushed past a page break).
    expected = _figure_count()
    assert expected >= 5
    pages = text.split("\f")
    captions = {}
    for number, page in enumerate(pages, start=1):
        for label in re.findall(r"^\s*Fig\. (\d+\.\d+):", page, re.M):
            captions.setdefault(label, number)
    assert len(captions) == expected, f"{len(captions)} figure captions in the PDF, {expected} figure cells"
    rows = [line.split() for line in _run("pdfimages", "-list", str(pdf)).splitlines()[2:]]
    with_images = {int(r[0]) for r in rows if r and r[2] == "image"}
    missing = [label for label, page in captions.items() if not {page, page - 1} & with_images]
    assert not missing, f"figures with no image near their caption: {missing}"


def test_all_fonts_are_embedded(pdf):
    rows = _run("pdffonts", str(pdf)).splitlines()[2:]
    assert rows
    # columns: name type encoding emb sub uni object ID; 'emb' is the 4th from the end
    not_embedded = [r for r in rows if r.split()[-5] != "yes"]
    assert not not_embedded, not_embedded


def test_overfull_boxes_within_the_documented_number(pdf):
    log = LOG.read_text(encoding="utf-8", errors="replace")
    widths = [float(w) for w in re.findall(r"^Overfull \\[hv]box \(([\d.]+)pt too", log, re.M)]
    wide = [w for w in widths if w > OVERFULL_PT]
    assert len(wide) <= OVERFULL_MAX, f"{len(wide)} overfull boxes wider than {OVERFULL_PT}pt: {sorted(wide)[-10:]}"
