"""The notebook regression (``tests/regression.py``): the book prints what the baselines store.

``make test`` runs ``test_the_built_book_prints_what_the_baselines_store`` (marker ``build``)
after the strict build: the outputs MyST-NB executed for the book are compared with each
baseline, so the chapters are not executed a second time for it. The other tests show that
the comparison can fail, on each kind of difference, and that it ignores what it must ignore.
"""

from __future__ import annotations

import copy

import jupytext
import nbformat
import pytest

import regression
from booktools import ROOT, chapter_sources

SOURCES = chapter_sources()


@pytest.mark.build
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_built_book_prints_what_the_baselines_store(source):
    try:
        built = regression.from_build(source)
    except (FileNotFoundError, ValueError) as error:
        pytest.fail(str(error))
    found = regression.differences(source, regression.read_baseline(source), built)
    assert not found, (
        "\n\n".join(found) + f"\n\nIf the change is intended: python tests/make_baselines.py "
        f"{source.relative_to(ROOT)}, and review the baseline's diff."
    )


# --------------------------------------------------------------------------- the comparison


CHAPTER = ROOT / "chapters" / "01_why_order_matters.md"


def _stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def _display(data, kind="display_data", **metadata):
    out = nbformat.v4.new_output(kind, data=data)
    out.metadata = metadata
    if kind == "execute_result":
        out.execution_count = 7
    return out


def _cells(*outputs_per_cell):
    return [nbformat.v4.new_code_cell("x", outputs=list(outputs)) for outputs in outputs_per_cell]


def _glue(name, text):
    return _display({"application/papermill.record/text/plain": text},
                    scrapbook={"name": name, "mime_prefix": "application/papermill.record/"})


BASE = _cells(
    [_stream("a = 1\n"), _stream("b = 2\n")],
    [_display({"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}), _glue("gap", "0.303")],
    [_display({"application/vnd.plotly.v1+json": {"data": [{"y": [1, 2]}]}, "text/html": "<div>"})],
)


def _differ(cells) -> list[str]:
    return regression.differences(CHAPTER, regression.record(BASE), regression.record(cells))


def test_a_record_holds_outputs_and_glue_but_no_code_or_pixels():
    nb = regression.record(BASE + [nbformat.v4.new_markdown_cell("prose")])
    assert [c.source for c in nb.cells] == ["", "", ""]
    assert nb.cells[0].outputs == [_stream("a = 1\nb = 2\n")]  # the streams joined, as nbval joins them
    assert nb.cells[1].outputs[0].data == {"text/plain": "<Figure>", "image/png": ""}
    assert nb.metadata["glue"] == {"gap": {"text/plain": "0.303"}}
    nbformat.validate(nb)


def test_the_same_outputs_differ_in_nothing():
    same = copy.deepcopy(BASE)
    same[0].outputs = [_stream("a = 1\nb = 2\n")]                       # chunked otherwise
    same[1].outputs[0].data["image/png"] = "AAAA"                       # other pixels
    same[1].outputs[0].metadata = {"image/png": {"width": 3}}          # metadata
    same[2].outputs[0] = _display(same[2].outputs[0].data, "execute_result")  # an execution count
    assert _differ(same) == []


def test_each_kind_of_difference_is_reported_with_a_diff():
    cases = {
        "stdout": (0, [_stream("a = 1\nb = 3\n")], "-b = 2\n+b = 3"),
        "stderr": (0, [_stream("a = 1\nb = 2\n"), _stream("warning\n", "stderr")], "+[stderr]\n+warning"),
        "plotly": (2, [_display({"application/vnd.plotly.v1+json": {"data": [{"y": [1, 3]}]},
                                 "text/html": "<div>"})], "-    2\n+    3"),
        "figure gone": (1, [_glue("gap", "0.303")], "-[image/png]"),
        "error": (0, [_stream("a = 1\nb = 2\n"), nbformat.v4.new_output(
            "error", ename="ValueError", evalue="x: bad", traceback=[])], "+[ename]\n+ValueError"),
    }
    for what, (index, outputs, expected) in cases.items():
        cells = copy.deepcopy(BASE)
        cells[index].outputs = outputs
        found = _differ(cells)
        assert len(found) == 1, (what, found)
        assert f"code cell {index + 1}" in found[0] and "--- baseline\n+++ this run" in found[0], found[0]
        assert expected in found[0], (what, found[0])


def test_a_glued_value_is_compared_by_name_wherever_it_is_glued():
    moved = copy.deepcopy(BASE)
    moved[1].outputs.pop()
    moved[2].outputs.append(_glue("gap", "0.303"))
    assert _differ(moved) == []
    changed = copy.deepcopy(BASE)
    changed[1].outputs[1] = _glue("gap", "0.304")
    (found,) = _differ(changed)
    assert "glued values" in found and "-gap = 0.303\n+gap = 0.304" in found, found


def test_the_sanitizer_of_nbval_sanitize_cfg_applies():
    cells = copy.deepcopy(BASE)
    base = copy.deepcopy(BASE)
    base[0].outputs = [_stream("<obj at 0x7f3a12345678>\n")]
    cells[0].outputs = [_stream("<obj at 0x55d0abcdef12>\n")]
    assert regression.differences(CHAPTER, regression.record(base), regression.record(cells)) == []


def test_a_missing_or_extra_code_cell_says_to_regenerate():
    found = _differ(BASE[:2])
    assert any("has 2 code cells, its baseline 3" in f and "make_baselines.py" in f for f in found), found


def test_an_edit_to_the_prose_or_to_code_that_prints_the_same_needs_no_new_baseline():
    """The record of a chapter does not depend on its Markdown or on its code's text."""
    stored = regression.read_baseline(CHAPTER)
    edited = jupytext.read(CHAPTER)
    code = [c for c in edited.cells if c.cell_type == "code"]
    for cell, kept in zip(code, stored.cells, strict=True):  # the executed chapter, as it printed
        cell.outputs, cell.source = copy.deepcopy(kept.outputs), cell.source + "\n# an edit that prints nothing"
    code[-1].outputs += [_glue(name, data["text/plain"]) for name, data in stored.metadata["glue"].items()]
    for cell in edited.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("the", "THE")
    assert nbformat.writes(regression.record(edited.cells)) == nbformat.writes(stored)


def test_chapters_are_named_by_number_or_stem():
    assert regression.resolve(["04"]) == regression.resolve(["04_rope"]) == regression.resolve(["chapters/04_rope.md"])
    assert regression.resolve([]) == SOURCES
    with pytest.raises(SystemExit, match=r"^chapter: '99'; expected one of 01_why_order_matters"):
        regression.resolve(["99"])
