"""The stored baselines belong to the current chapters, and hold nothing that varies between runs.

A baseline stores one cell per code cell of its chapter (the outputs the regression compares,
``tests/regression.py``), so these tests fail, with the fix in the message, when a chapter
gained or lost a code cell and its baseline was not regenerated, or when a chapter has no
baseline at all. An edit to the prose, or to code that prints the same, needs no new baseline.
"""

from __future__ import annotations

import pathlib

import jupytext
import nbformat
import pytest
import yaml

from booktools import BASELINES, ROOT, baseline_for, chapter_sources

SOURCES = chapter_sources()


def fix(source: pathlib.Path) -> str:
    return f"run `python tests/make_baselines.py {source.relative_to(ROOT)}` and commit its baseline"


def test_there_are_chapters():
    assert SOURCES, "no chapters/NN_name.md found"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_baseline_has_a_cell_per_code_cell(source: pathlib.Path):
    baseline = baseline_for(source)
    assert baseline.exists(), f"{source.name} has no baseline {baseline.name}: {fix(source)}"
    code = [c for c in jupytext.read(source).cells if c.cell_type == "code"]
    stored = nbformat.read(baseline, as_version=4)
    assert len(code) == len(stored.cells), (
        f"{source.name} has {len(code)} code cells, its baseline {len(stored.cells)}: {fix(source)}"
    )
    # the stored form (tests/regression.py): outputs only, cells numbered among the code cells
    assert [(c.cell_type, c.source, c.id) for c in stored.cells] == [
        ("code", "", f"code-{k:03d}") for k in range(len(code))], f"{baseline.name} is not in the stored form: {fix(source)}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_baseline_has_outputs(source: pathlib.Path):
    """A chapter's baseline stores outputs to compare (a chapter that prints nothing is suspect)."""
    nb = nbformat.read(baseline_for(source), as_version=4)
    assert nb.cells, f"{source.name} has no code cells"
    assert any(c.outputs for c in nb.cells), f"{baseline_for(source).name} stores no outputs: {fix(source)}"


def test_no_orphan_baselines():
    known = {baseline_for(s).name for s in SOURCES}
    orphans = sorted(p.name for p in BASELINES.glob("*.ipynb") if p.name not in known)
    assert not orphans, f"baselines without a chapter: {orphans}: run `make baselines`"


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
    bundles = [(f"code cell {k + 1}", output.get("text", ""), output.get("data", {}))
               for k, cell in enumerate(nb.cells) for output in cell.outputs]
    bundles += [(f"the glued value {name}", "", data) for name, data in nb.metadata.get("glue", {}).items()]
    for where, stream, data in bundles:
        texts = [stream] + [v for k, v in data.items() if k.startswith("text/")]
        for text in texts:
            for what, pattern in VOLATILE.items():
                match = pattern.search(text if isinstance(text, str) else "".join(text))
                assert not match, f"{source.name} {where} prints {what}: {match.group(0)!r}"


GLUE_ROLE = __import__("re").compile(r"\{glue:text\}`([^`]+)`")


def glued_values(baseline: pathlib.Path) -> dict[str, str]:
    """name -> the text/plain a chapter glued (what the regression compares and the text shows)."""
    glue = nbformat.read(baseline, as_version=4).metadata.get("glue", {})
    return {name: data["text/plain"] for name, data in glue.items()}


def glue_uses() -> list[tuple[str, str, str, str]]:
    """(page, chapter stem, name, format) of every {glue:text} role in the book's pages."""
    uses = []
    pages = sorted(ROOT.glob("*.md")) + SOURCES
    for page in pages:
        if page.name in ("README.md", "CONTRIBUTING.md"):
            continue
        for ref in GLUE_ROLE.findall(page.read_text()):
            stem, _, rest = ref.rpartition("::")
            name, _, fmt = rest.partition(":")
            uses.append((page.name, pathlib.Path(stem).stem if stem else page.stem, name, fmt))
    return uses


def digits_after_point(text: str) -> int | None:
    """Digits after the decimal point of a plain float repr; None for ints, strings, exponents."""
    match = __import__("re").fullmatch(r"-?\d+\.(\d+)", text)
    return len(match.group(1)) if match else None


def significant_digits(text: str) -> int | None:
    match = __import__("re").fullmatch(r"-?(\d+)\.?(\d*)(e[-+]?\d+)?", text)
    if not match or ("." not in text and "e" not in text):
        return None
    return len((match.group(1) + match.group(2)).lstrip("0"))


def test_glued_values_carry_only_the_digits_the_text_shows():
    """A glued float holds no more digits than its {glue:text} role displays.

    The text shows ``name:.3f`` with 3 decimals; if the stored value had 16, the regression
    would compare bits that the reader never sees and that depend on the BLAS kernel.
    ``posenc.book.glue(name, value, decimals=3)`` rounds it; this test finds a glue call that
    forgot to, or a role whose format shows fewer digits than were glued.
    """
    values = {s.stem: glued_values(baseline_for(s)) for s in SOURCES}
    problems = []
    uses = glue_uses()
    assert uses, "no {glue:text} role found: the parser is broken"
    for page, stem, name, fmt in uses:
        stored = values.get(stem, {}).get(name)
        if stored is None:
            problems.append(f"{page}: {{glue:text}}`{name}` has no glued value in {stem}")
            continue
        stored = stored.strip("'\"")
        fixed = __import__("re").fullmatch(r"\.(\d+)f", fmt)
        if fixed:
            shown, kept = int(fixed.group(1)), digits_after_point(stored)
            if kept is not None and kept > shown:
                problems.append(f"{page}: {name} is glued as {stored} but shown with {shown} decimals")
        elif fmt in ("", "s", "d"):
            sig = significant_digits(stored)
            if sig is not None and sig > 6:
                problems.append(f"{page}: {name} is glued with its full repr {stored}")
    assert not problems, "\n".join(problems)


def test_glue_precision_check_can_fail(tmp_path):
    """The check above flags a full-repr float and a value with more decimals than shown."""
    assert digits_after_point("3.6108841891612475") == 16
    assert digits_after_point("0.213") == 3 and digits_after_point("7") is None
    assert significant_digits("0.21283569503792046") == 17
    assert significant_digits("2.4e-07") == 2 and significant_digits("12") is None
