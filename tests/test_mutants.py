"""Every sentence that says a chapter's check would fail on a fault: the fault injected, the check failing.

See ``tests/mutants/__init__.py`` for how a mutant is written and run. Each chapter is executed
once (in a subprocess, ``python -m mutants run STEM``), forking at every mutant's first
affected cell; each mutant is then one test here.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import mutants

TESTS = pathlib.Path(__file__).resolve().parent
CHAPTERS = {p.stem: mutants.load(p) for p in mutants.chapter_paths()}
MUTANT_IDS = [(stem, m.id) for stem, ch in CHAPTERS.items() for m in ch.mutants]


def run_mutants(stem: str, tmp: pathlib.Path) -> dict:
    out = tmp / f"{stem}.json"
    env = dict(os.environ, PYTHONPATH=str(TESTS))
    proc = subprocess.run(
        [sys.executable, "-m", "mutants", "run", stem, "--json", str(out)],
        cwd=TESTS, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert out.exists(), f"the mutant run of {stem} wrote no results:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def results(tmp_path_factory):
    cache: dict[str, dict] = {}
    tmp = tmp_path_factory.mktemp("mutants")

    def get(stem: str) -> dict:
        if stem not in cache:
            cache[stem] = run_mutants(stem, tmp)
        return cache[stem]

    return get


@pytest.mark.parametrize("stem", sorted(CHAPTERS))
def test_every_claim_has_a_mutant(stem):
    """Every trigger sentence is covered, every claim and cell piece is found exactly once."""
    found = mutants.problems(CHAPTERS[stem])
    assert not found, f"{stem}:\n" + "\n".join(found)


@pytest.mark.parametrize("stem,mutant_id", MUTANT_IDS, ids=[f"{s[:2]}-{m}" for s, m in MUTANT_IDS])
def test_mutant_is_killed(results, stem, mutant_id):
    """The fault the sentence names, injected into the chapter's run, makes its check cell raise."""
    result = results(stem)
    assert result["chapter_error"] is None, f"{stem} fails unmutated: {result['chapter_error']}"
    outcome = result["mutants"][mutant_id]
    assert outcome["status"] == "killed", f"{stem} mutant {mutant_id}: {outcome}"


def test_ledger_is_current():
    current = mutants.LEDGER.read_text() if mutants.LEDGER.exists() else ""
    assert current == mutants.ledger(), "tests/mutants/LEDGER.md is stale: run `python -m mutants ledger` in tests/"


FAKE_CHAPTER = textwrap.dedent(
    """\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      display_name: Python 3 (ipykernel)
      language: python
      name: python3
    ---

    # A chapter

    ```{code-cell} ipython3
    values = [1, 2, 3]
    ```

    The check below would fail if the values did not sum to six.

    ```{code-cell} ipython3
    assert sum(values) == 6
    ```
    """
)


HARNESS_SELF_TEST = textwrap.dedent(
    """\
    import json, pathlib, sys
    import mutants
    from mutants.__main__ import run_chapter

    path = pathlib.Path(sys.argv[1])
    claim = "would fail if the values did not sum to six"
    chapter = mutants.load(path)
    uncovered = mutants.problems(chapter)
    chapter.mutants = [
        mutants.Mutant(id="caught", claim=claim, cell="assert sum", fault="a value changed",
                       replace=(("values = [", "[1, 2, 3]", "[1, 2, 4]"),)),
        mutants.Mutant(id="missed", claim=claim, cell="assert sum", fault="the order changed",
                       replace=(("values = [", "[1, 2, 3]", "[3, 2, 1]"),)),
        mutants.Mutant(id="patched", claim=claim, cell="assert sum", fault="a patch", patch="values = []"),
        mutants.Mutant(id="wrong", claim=claim, cell="assert sum", fault="a type error", patch="values = None"),
    ]
    covered = mutants.problems(chapter)
    result = run_chapter(chapter)
    statuses = {k: v["status"] for k, v in result["mutants"].items()}
    print(json.dumps({"uncovered": uncovered, "covered": covered, "statuses": statuses,
                      "chapter_error": result["chapter_error"]}))
    """
)


def test_the_harness_tells_a_caught_fault_from_a_missed_one(tmp_path):
    """A fault the check sees is killed, one it cannot see survives, an exception of another kind
    is not a kill, and a claim without a mutant is reported."""
    path = tmp_path / "99_fake.md"
    path.write_text(FAKE_CHAPTER)
    proc = subprocess.run([sys.executable, "-c", HARNESS_SELF_TEST, str(path)], cwd=TESTS,
                          env=dict(os.environ, PYTHONPATH=str(TESTS)), capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["uncovered"] == [
        "no mutant (or NotClaim) for the sentence: 'The check below would fail if the values did not sum to six.'"
    ]
    assert report["covered"] == []
    assert report["chapter_error"] is None
    assert report["statuses"] == {"caught": "killed", "missed": "survived", "patched": "killed",
                                  "wrong": "wrong-exception"}
