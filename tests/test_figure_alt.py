"""Every figure of the chapters carries an alt text written for a reader who cannot see it.

A code cell's image output becomes an ``<img>`` in the built book whose alt text is, by
MyST-NB's default, the image's own file path (``../_images/94c9....png``): a screen reader
reads out a hash. The chapters give each static figure an alt text in the cell's metadata
(``mystnb: image: alt:``), saying what is plotted against what and what the reader should
see. This file checks, with no build and no browser:

- every code cell whose output the HTML book shows as an image declares such an alt text.
  Which cells those are is decided from the stored outputs (``tests/baselines``, one cell
  per code cell, kept current by ``tests/test_baselines.py``) with MyST-NB's own choice of the MIME type it
  renders for HTML: an interactive figure (``interactive_figure``) is shown as HTML, its
  PNG still only in the PDF, so it is not one of them. A cell that calls ``plt.show()``
  counts too, so a new figure fails here even before the baselines are regenerated;
- no cell declares an alt text for an image it does not draw (a stale description);
- every ``figure``, ``image`` or ``glue:figure`` directive and every Markdown image in the
  chapters has an alt text;
- each alt text is a description (``helpers.alt_text_problem``): not empty, not a file name, path
  or hash, not a few words, no TeX markup (an alt text is read out as written).

``tests/test_site.py`` applies ``alt_text_problem`` to every ``<img>`` of the built site.
"""

from __future__ import annotations

import copy
import re

import jupytext
import nbformat
import pytest
import yaml

from booktools import ROOT, baseline_for, chapter_sources
from helpers import alt_text_problem


# --------------------------------------------------------------------------- which cells show an image


def html_mime_priority() -> list[str]:
    """The MIME types MyST-NB renders for HTML, best first, with the book's overrides."""
    from myst_nb.core.render import get_mime_priority

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    overrides = ((config.get("sphinx") or {}).get("config") or {}).get("nb_mime_priority_overrides", [])
    return get_mime_priority("html", [tuple(o) for o in overrides])


def shows_image(cell, priority: list[str]) -> bool:
    """Whether the HTML book shows one of this executed cell's outputs as an image.

    Glued outputs (``scrapbook`` metadata) are shown where a ``glue:figure`` directive
    places them, and that directive carries their alt text (checked separately).
    """
    for output in cell.get("outputs", []):
        data = output.get("data") or {}
        if not data or "scrapbook" in (output.get("metadata") or {}):
            continue
        shown = next((mime for mime in priority if mime in data), None)
        if shown is not None and shown.startswith("image/"):
            return True
    return False


def declared_alt(cell) -> str | None:
    image = ((cell.get("metadata") or {}).get("mystnb") or {}).get("image") or {}
    return image.get("alt")


def _label(cell, index: int) -> str:
    name = (((cell.get("metadata") or {}).get("mystnb") or {}).get("figure") or {}).get("name")
    return name or f"code cell {index}"


def figure_cells(chapter, baseline, priority: list[str]) -> tuple[list[int], list[int]]:
    """Indices (in ``chapter``) of the cells that draw an image, and of those that draw none.

    The baseline stores one cell per code cell of the chapter, in order; when the chapter has
    gained or lost a code cell since (the baseline is not regenerated yet), the cells are not
    paired, and a cell counts as a figure if its code calls ``plt.show()``.
    """
    code = [index for index, cell in enumerate(chapter.cells) if cell.cell_type == "code"]
    paired = len(code) == len(baseline.cells)
    draws, draws_none = [], []
    for k, index in enumerate(code):
        if paired:
            (draws if shows_image(baseline.cells[k], priority) else draws_none).append(index)
        elif "plt.show(" in chapter.cells[index].source:
            draws.append(index)
    return draws, draws_none


def figure_alt_problems(chapter, baseline, priority: list[str]) -> list[str]:
    """Every figure cell of ``chapter`` without a proper alt text, and every stale alt text."""
    draws, draws_none = figure_cells(chapter, baseline, priority)
    problems = []
    for index in draws:
        cell = chapter.cells[index]
        problem = alt_text_problem(declared_alt(cell))
        if problem:
            problems.append(f"{_label(cell, index)}: {problem} (set mystnb: image: alt: in the cell's metadata)")
    for index in draws_none:
        cell = chapter.cells[index]
        if declared_alt(cell) is not None:
            problems.append(f"{_label(cell, index)}: declares an alt text but draws no image")
    return problems


# --------------------------------------------------------------------------- directives and Markdown images

_DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>figure|image|glue:figure)\}[^\n]*\n", re.MULTILINE)
_OPTION = re.compile(r"^:(?P<key>[\w-]+):(?P<value>.*)$")
_MARKDOWN_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)[^)]*\)")


def markdown_alt_problems(text: str) -> list[str]:
    """Figure, image and glue:figure directives, and Markdown images, without a proper alt text."""
    problems = []
    for match in _DIRECTIVE.finditer(text):
        alt = None
        for line in text[match.end():].splitlines():
            option = _OPTION.match(line.strip())
            if not option:
                break
            if option["key"] == "alt":
                alt = option["value"].strip()
        problem = alt_text_problem(alt)
        if problem:
            line_no = text.count("\n", 0, match.start()) + 1
            problems.append(f"line {line_no}: {{{match['name']}}}: {problem} (give it an :alt: option)")
    for match in _MARKDOWN_IMAGE.finditer(text):
        problem = alt_text_problem(match["alt"])
        if problem:
            problems.append(f"image {match['src']}: {problem}")
    return problems


# --------------------------------------------------------------------------- the tests

SOURCES = chapter_sources()


@pytest.fixture(scope="module")
def priority() -> list[str]:
    return html_mime_priority()


def _read(source):
    return jupytext.read(source), nbformat.read(baseline_for(source), as_version=4)


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_every_figure_cell_has_alt_text(source, priority):
    chapter, baseline = _read(source)
    problems = figure_alt_problems(chapter, baseline, priority)
    assert not problems, f"{source.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_every_directive_and_markdown_image_has_alt_text(source):
    problems = markdown_alt_problems(source.read_text(encoding="utf-8"))
    assert not problems, f"{source.name}:\n" + "\n".join(problems)


def test_figure_cells_are_told_from_interactive_ones(priority):
    """Static figures are found; interactive ones (shown as HTML, their PNG only in the PDF) are not."""
    found, interactive = {}, set()
    for source in SOURCES:
        chapter, baseline = _read(source)
        draws, _ = figure_cells(chapter, baseline, priority)
        found[source.stem] = {_label(chapter.cells[i], i) for i in draws}
        interactive |= {
            _label(cell, i)
            for i, cell in enumerate(chapter.cells)
            if cell.cell_type == "code" and "interactive_figure(" in cell.source
        }
    print("\nfigures that must carry alt text: " + ", ".join(f"{k} {len(v)}" for k, v in found.items()))
    labels = set().union(*found.values())
    assert {"fig-perm-weights", "fig-rope-decay", "fig-experiment-rope"} <= labels
    assert interactive and not labels & interactive, labels & interactive


# --------------------------------------------------------------------------- the checks can fail


@pytest.mark.parametrize(
    "alt",
    [None, "", "   ", "../_images/94c9e1f7a0b2.png", "figure.svg", "94c9e1f7a0b2c3d4e5f6a7b8",
     "plot of 94c9e1f7a0b2c3d4e5f6 values", "_images/plot", "a plot", "Heat map of $A(X)$ over the keys",
     r"Line plot of \sqrt{i+1} against the position"],
)
def test_alt_text_problem_rejects(alt):
    assert alt_text_problem(alt)


def test_alt_text_problem_accepts_a_description():
    alt = "Heatmap of the encoding for positions 0 to 100: fast in low dimensions, slow in high ones (1/2)"
    assert alt_text_problem(alt) is None


def test_a_figure_without_alt_text_is_caught(priority):
    source = ROOT / "chapters" / "04_rope.md"
    chapter, baseline = _read(source)
    assert not figure_alt_problems(chapter, baseline, priority)
    draws, draws_none = figure_cells(chapter, baseline, priority)
    for how in ("removed", "file name"):
        broken = copy.deepcopy(chapter)
        image = broken.cells[draws[0]].metadata["mystnb"]["image"]
        if how == "removed":
            del image["alt"]
        else:
            image["alt"] = "../_images/94c9e1f7a0b2c3d4e5f6.png"
        problems = figure_alt_problems(broken, baseline, priority)
        assert len(problems) == 1 and _label(chapter.cells[draws[0]], draws[0]) in problems[0], problems
    # A new figure cell, not yet in the baseline, is caught from its plt.show().
    broken = copy.deepcopy(chapter)
    broken.cells.insert(1, nbformat.v4.new_code_cell("fig, ax = plt.subplots()\nax.plot([0, 1])\nplt.show()"))
    assert any("code cell 1" in p for p in figure_alt_problems(broken, baseline, priority))
    # An alt text left on a cell that draws nothing is caught.
    broken = copy.deepcopy(chapter)
    broken.cells[draws_none[0]].metadata["mystnb"] = {"image": {"alt": "A figure that is no longer drawn here"}}
    assert any("draws no image" in p for p in figure_alt_problems(broken, baseline, priority))


def test_a_directive_without_alt_text_is_caught():
    good = "```{glue:figure} fig-x\n:alt: Line plot of the loss against the step\n:name: fig-x\n\nCaption.\n```\n"
    assert not markdown_alt_problems(good)
    for bad in (
        "```{glue:figure} fig-x\n:name: fig-x\n\nCaption.\n```\n",
        ":::{figure} plot.png\n:alt: plot.png\n:::\n",
        "```{image} plot.png\n```\n",
        "Some text ![](../_images/plot.png) here.\n",
    ):
        assert markdown_alt_problems(bad), bad
