"""The stored baselines must be the current chapters, cell for cell.

nbval compares each re-run cell with the output stored in ``tests/baselines``; that
is only meaningful if the stored notebook has the chapter's current cells.  These
tests fail, with the fix in the message, when a chapter was edited but its
baseline not regenerated, or when a chapter has no baseline at all.
"""

from __future__ import annotations

import pathlib

import jupytext
import nbformat
import pytest
import yaml

from booktools import BASELINES, ROOT, baseline_for, cell_signature, chapter_sources

FIX = "run `make baselines` and commit tests/baselines"

SOURCES = chapter_sources()


def test_there_are_chapters():
    assert SOURCES, "no chapters/NN_name.md found"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_baseline_matches_chapter(source: pathlib.Path):
    baseline = baseline_for(source)
    assert baseline.exists(), f"{source.name} has no baseline {baseline.name}: {FIX}"
    chapter = [cell_signature(c) for c in jupytext.read(source).cells]
    stored = [cell_signature(c) for c in nbformat.read(baseline, as_version=4).cells]
    assert len(chapter) == len(stored), (
        f"{source.name} has {len(chapter)} cells, its baseline {len(stored)}: {FIX}"
    )
    for index, (mine, theirs) in enumerate(zip(chapter, stored)):
        assert mine == theirs, f"{source.name} cell {index} differs from its baseline: {FIX}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_baseline_has_outputs(source: pathlib.Path):
    """Every code cell that prints in the chapter must have stored output to compare."""
    nb = nbformat.read(baseline_for(source), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{source.name} has no code cells"
    assert all(c.get("execution_count") for c in code), f"{baseline_for(source).name} was not executed: {FIX}"
    assert any(c.outputs for c in code), f"{baseline_for(source).name} stores no outputs: {FIX}"


def test_no_orphan_baselines():
    known = {baseline_for(s).name for s in SOURCES}
    orphans = sorted(p.name for p in BASELINES.glob("*.ipynb") if p.name not in known)
    assert not orphans, f"baselines without a chapter: {orphans}: {FIX}"


def test_every_chapter_is_in_the_toc_and_exists():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []) or [toc]:
        for entry in part.get("chapters", []):
            files.append(entry["file"])
    for f in files:
        exists = any((ROOT / (f + ext)).exists() for ext in ("", ".md", ".ipynb"))
        assert exists, f"_toc.yml lists {f}, which does not exist"
    listed = {pathlib.Path(f).stem for f in files}
    missing = [s.name for s in SOURCES if s.stem not in listed]
    assert not missing, f"chapters not in _toc.yml: {missing}"


VOLATILE = {
    "a memory address": __import__("re").compile(r"\bat 0x[0-9a-fA-F]+"),
    "a NumPy scalar repr (print a rounded float instead)": __import__("re").compile(r"np\.(float|int)\d+\("),
    "an absolute path": __import__("re").compile(r"(/home/|/tmp/|/work/|/Users/|[A-Z]:\\\\)"),
    "a timing": __import__("re").compile(r"\b\d+(\.\d+)?\s?(ms|µs|us|seconds)\b"),
}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_outputs_hold_nothing_volatile(source: pathlib.Path):
    """Outputs must be reproducible: no addresses, scalar reprs, paths or timings."""
    nb = nbformat.read(baseline_for(source), as_version=4)
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")]
            texts += [v for k, v in output.get("data", {}).items() if k.startswith(("text/", "application/papermill"))]
            for text in texts:
                for what, pattern in VOLATILE.items():
                    match = pattern.search(text if isinstance(text, str) else "".join(text))
                    assert not match, f"{source.name} cell {index} prints {what}: {match.group(0)!r}"
