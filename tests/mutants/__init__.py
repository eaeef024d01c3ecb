"""Mutants: every sentence that says a chapter's check would fail on a fault is run against that fault.

A chapter that writes "the check below would fail if the mask were not permuted" makes a claim
about its check. A claim is only as strong as the check, so each such sentence has a *mutant*:
the fault it names is injected into the chapter's own execution, and the check cell the sentence
refers to must then raise. A mutant the check survives means the sentence (or the check) is wrong.

Writing a mutant
----------------
Each chapter ``chapters/NN_name.md`` has a module ``tests/mutants/chNN.py`` with a list
``MUTANTS`` of :class:`Mutant` and, optionally, a list ``NOT_CLAIMS`` of :class:`NotClaim` for
sentences that match the trigger words without claiming anything about a check ("the catch
is ..."). A mutant names

- ``claim``: a verbatim piece of the sentence (whitespace is normalised, Markdown kept as
  written); it must occur exactly once in the chapter's text;
- ``cell``: a verbatim piece of the source of the code cell that must fail (exactly one code
  cell contains it);
- the fault, as ``patch`` (Python run in the chapter's namespace just before cell ``at``,
  default the check cell: monkeypatching a ``posenc`` function, replacing a variable) and/or
  ``replace`` (``(cell piece, old, new)`` edits of the source of chapter code cells, each
  ``old`` occurring in that cell: a wrong formula, a different input);
- ``fault``: one line saying what was injected (it goes into the ledger);
- ``expect``: the exception the check cell must raise (default ``AssertionError``).

How it runs
-----------
``python -m mutants run 01_why_order_matters`` (from ``tests/``) executes the chapter's code
cells once, in order, in one in-process IPython shell started in ``chapters/`` (as the book
executes them). Before the first cell a mutant touches, the process forks; the child applies
the mutant, runs the cells from there up to the check cell and records what the check cell
raised; the parent goes on with the unmutated chapter. So a chapter is executed once however
many mutants it has, and every mutant runs the chapter's real cells on the real state.
The parent must itself run the check cell without error: a check that fails unmutated is
reported as such. ``tests/test_mutants.py`` runs every chapter's mutants (``make test``);
``python -m mutants ledger`` writes ``tests/mutants/LEDGER.md``, which a test keeps current.

Trigger sentences
-----------------
:data:`TRIGGER` finds the sentences that say a check fails, would fail, catches, guards against
or detects something. Every such sentence of a chapter's text must contain the ``claim`` of one
of its mutants or of a :class:`NotClaim`; a new sentence without one fails ``test_mutants.py``.
"""

from __future__ import annotations

import importlib
import pathlib
import re
from dataclasses import dataclass

import jupytext

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
LEDGER = pathlib.Path(__file__).with_name("LEDGER.md")

#: Words by which a sentence (or a code comment) says that a check fails on, or catches, some
#: fault. Deliberately broad: a sentence that uses them without claiming anything about a check
#: is listed, with the reason, as a :class:`NotClaim`.
TRIGGER = re.compile(
    r"\bfail(?:s|ed|ing)?\b"
    r"|\bcatch(?:es|ing)?\b|\bcaught\b"
    r"|\bguard(?:s|ed|ing)?\b"
    r"|\bdetect(?:s|ed|ing)?\b"
    r"|\bflag(?:s|ged)?\b"
    r"|\brules? out\b|\bruled out\b"
    r"|\bwould (?:not|never) pass\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Mutant:
    """A fault injected into a chapter's execution; its check cell must raise ``expect``."""

    id: str
    claim: str
    cell: str
    fault: str
    patch: str = ""
    replace: tuple[tuple[str, str, str], ...] = ()
    at: str | None = None
    expect: str = "AssertionError"

    def __post_init__(self):
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", self.id):
            raise ValueError(f"id: {self.id!r}; expected lower-case words joined by '-'")
        for name in ("claim", "cell", "fault"):
            if not getattr(self, name).strip():
                raise ValueError(f"{name}: empty in mutant {self.id!r}; expected non-empty text")
        if not self.patch.strip() and not self.replace:
            raise ValueError(f"patch: empty in mutant {self.id!r}; expected a patch, a replace, or both")
        for edit in self.replace:
            if len(edit) != 3 or edit[1] == edit[2]:
                raise ValueError(f"replace: {edit!r} in mutant {self.id!r}; expected (cell piece, old, new), old != new")


@dataclass(frozen=True)
class NotClaim:
    """A trigger sentence that claims nothing about a check, and why."""

    text: str
    why: str


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class Chapter:
    """A chapter's cells and its mutants."""

    stem: str
    path: pathlib.Path
    code: list[str]          # source of each code cell, in order
    prose: list[str]         # each Markdown cell, whitespace-normalised, then each code cell's comments
    mutants: list[Mutant]
    not_claims: list[NotClaim]


def chapter_paths() -> list[pathlib.Path]:
    return sorted(CHAPTERS.glob("[0-9][0-9]_*.md"))


def module_name(path: pathlib.Path) -> str:
    return "mutants.ch" + path.stem[:2]


def load(path: pathlib.Path) -> Chapter:
    nb = jupytext.read(path)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    prose = [normalise(c.source) for c in nb.cells if c.cell_type == "markdown"]
    prose += [normalise(comment) for src in code for comment in comments(src)]
    try:
        module = importlib.import_module(module_name(path))
    except ModuleNotFoundError as err:
        if err.name != module_name(path):
            raise
        mutants, not_claims = [], []
    else:
        mutants, not_claims = list(getattr(module, "MUTANTS", [])), list(getattr(module, "NOT_CLAIMS", []))
    return Chapter(path.stem, path, code, prose, mutants, not_claims)


def comments(source: str) -> list[str]:
    """The comments of a code cell, each run of consecutive comment lines joined."""
    import io
    import tokenize

    found, run, last = [], [], -2
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            line = tok.start[0]
            if run and line != last + 1:
                found.append(" ".join(run))
                run = []
            run.append(tok.string.lstrip("#").strip())
            last = line
    if run:
        found.append(" ".join(run))
    return found


def sentences(markdown: str) -> list[str]:
    """A Markdown cell cut into sentences (after ., ! or ? followed by a space and a capital or markup)."""
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(*`$\[{])", markdown) if s]


def trigger_sentences(chapter: Chapter) -> list[str]:
    return [s for cell in chapter.prose for s in sentences(cell) if TRIGGER.search(s)]


def one_cell(chapter: Chapter, piece: str, what: str) -> int:
    """Index of the one code cell whose source contains ``piece``."""
    hits = [i for i, src in enumerate(chapter.code) if piece in src]
    if len(hits) != 1:
        raise LookupError(
            f"{what}: {piece!r} is in {len(hits)} code cells of {chapter.stem} (cells {hits}); expected exactly one"
        )
    return hits[0]


@dataclass(frozen=True)
class Plan:
    """Where a mutant forks from and what it runs."""

    mutant: Mutant
    start: int            # the first code cell the mutant runs (after its patch)
    check: int            # the code cell that must raise
    sources: tuple[str, ...]  # the (possibly edited) sources of cells start..check


def plan(chapter: Chapter, mutant: Mutant) -> Plan:
    check = one_cell(chapter, mutant.cell, f"mutant {mutant.id} cell")
    sources = list(chapter.code)
    touched = [check]
    for piece, old, new in mutant.replace:
        index = one_cell(chapter, piece, f"mutant {mutant.id} replace")
        if old not in sources[index]:
            raise LookupError(f"replace: {old!r} is not in the cell of {chapter.stem} holding {piece!r} (mutant {mutant.id})")
        sources[index] = sources[index].replace(old, new)
        touched.append(index)
    if mutant.at is not None:
        touched.append(one_cell(chapter, mutant.at, f"mutant {mutant.id} at"))
    start = min(touched)
    if start > check:
        raise LookupError(f"mutant {mutant.id}: its edits come after its check cell")
    return Plan(mutant, start, check, tuple(sources[start:check + 1]))


def problems(chapter: Chapter) -> list[str]:
    """What is wrong with a chapter's mutant list, before anything runs."""
    found = []
    text = " \n ".join(chapter.prose)
    ids = [m.id for m in chapter.mutants]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        found.append(f"mutant id {dup!r} is used twice")
    pieces = [(m.claim, f"mutant {m.id}") for m in chapter.mutants] + [(n.text, "not-claim") for n in chapter.not_claims]
    for claim, who in pieces:
        count = text.count(normalise(claim))
        if count != 1:
            found.append(f"{who}: claim {normalise(claim)!r} occurs {count} times in the text; expected once")
    for mutant in chapter.mutants:
        try:
            plan(chapter, mutant)
        except LookupError as err:
            found.append(str(err))
    for sentence in trigger_sentences(chapter):
        if not any(normalise(c) in sentence for c, _ in pieces):
            found.append(f"no mutant (or NotClaim) for the sentence: {sentence!r}")
    return found


def ledger() -> str:
    """The ledger of every chapter's claims and mutants, as Markdown."""
    lines = [
        "# Mutant ledger",
        "",
        "Generated by `python -m mutants ledger` (run from `tests/`); do not edit. Each row is a",
        "sentence of a chapter that says a check fails on some fault, the code cell of that check,",
        "and the fault `tests/test_mutants.py` injects into the chapter's own execution: the check",
        "cell must raise. See `tests/mutants/__init__.py`.",
        "",
    ]
    total = 0
    for path in chapter_paths():
        chapter = load(path)
        lines += [f"## {path.name}", ""]
        if chapter.mutants:
            lines += ["| mutant | the sentence says | check cell | fault injected | must raise |", "|---|---|---|---|---|"]
            for mutant in chapter.mutants:
                try:
                    check = one_cell(chapter, mutant.cell, "cell")
                    first = next(line for line in chapter.code[check].splitlines() if line.strip())
                    where = f"code cell {check}: `{first.strip()[:60]}`"
                except (LookupError, StopIteration):
                    where = "(not found)"
                lines.append(
                    f"| `{mutant.id}` | {_cell(normalise(mutant.claim))} | {_cell(where)} | {_cell(mutant.fault)} | `{mutant.expect}` |"
                )
            total += len(chapter.mutants)
        else:
            lines.append("No mutants.")
        if chapter.not_claims:
            lines += ["", "Sentences with trigger words that claim nothing about a check:", ""]
            lines += [f"- {_cell(normalise(n.text))}: {n.why}" for n in chapter.not_claims]
        lines.append("")
    lines.append(f"{total} mutants in all.")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
