"""How the chapters' code reads: cell length, bookkeeping, asserts shown, prints of a constant.

Issue 23 (item 4) sets the chapters beside QuantEcon's lectures, where a code cell makes one
point (median 5 lines) and the bookkeeping lives in hidden cells. This script measures, per
chapter and for the whole book:

- ``shown``: the code cells whose code a reader sees without clicking (no ``remove-cell``,
  ``remove-input``, ``hide-input`` or ``hide-cell`` tag; a ``hide-input`` cell only draws a
  figure, its code folded behind a toggle);
- ``median``: the median number of non-blank lines of a shown cell;
- ``bookkeeping``: the share of the shown non-blank lines that belong to a ``glue(...)``
  call, an ``assert`` (or ``np.testing.assert_*``) or a ``print(...)`` statement (a loop or
  ``if`` whose body is all bookkeeping counts whole), with the three parts;
- ``asserts``: the asserts in shown cells, of all the chapter's asserts;
- ``constant prints``: the output lines of shown cells, in the stored baseline
  (``tests/baselines/NN_name.ipynb``), that print ``True`` or ``False``: a check that can
  only print one value while the chapter is correct, which belongs in an assert;
- ``fixed prints``: the ``print`` calls of shown cells whose arguments are all string
  literals (a claim printed as text, whatever the code computed).

Usage: ``python tests/cell_stats.py [chapter.md ...]`` (default: every chapter).
"""

from __future__ import annotations

import ast
import json
import pathlib
import re
import statistics
import sys

from booktools import baseline_for, chapter_sources

HIDDEN = {"remove-cell", "remove-input"}
FOLDED = {"hide-input", "hide-cell"}
KINDS = ("glue", "assert", "print")
# A bare boolean, not a keyword argument of printed source code (``keepdims=True``).
BOOLEAN = re.compile(r"(?<![=\w])(True|False)\b")


def visibility(tags) -> str:
    """``"hidden"``, ``"folded"`` or ``"shown"``: what a reader of the HTML sees of a cell's code."""
    tags = set(tags)
    if tags & HIDDEN:
        return "hidden"
    if tags & FOLDED:
        return "folded"
    return "shown"


def _call_kind(node: ast.AST) -> str | None:
    """The bookkeeping kind of a bare call statement (``glue(...)``, ``print(...)``, ``np.testing.assert_*(...)``)."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name in ("glue", "print"):
        return name
    if name.startswith("assert_"):
        return "assert"
    return None


def _statement_kind(node: ast.stmt) -> str | None:
    """The kind of a bookkeeping statement, None for one that computes something.

    A compound statement (``for``, ``if``, ``with``) is bookkeeping when every statement of
    its body is; its kind is then the first one's.
    """
    if isinstance(node, ast.Assert):
        return "assert"
    kind = _call_kind(node)
    if kind:
        return kind
    if isinstance(node, (ast.For, ast.If, ast.With)):
        body = node.body + getattr(node, "orelse", [])
        kinds = [_statement_kind(s) for s in body]
        if kinds and all(kinds):
            return kinds[0]
    return None


def _parse(source: str) -> ast.Module:
    # IPython magics and shell escapes are not Python; they compute nothing worth counting.
    lines = ["pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    return ast.parse("\n".join(lines))


def bookkeeping(source: str) -> dict[str, set[int]]:
    """The (1-based) line numbers of ``source`` spent on each kind of bookkeeping."""
    found: dict[str, set[int]] = {kind: set() for kind in KINDS}

    def visit(body):
        for node in body:
            kind = _statement_kind(node)
            if kind:
                found[kind].update(range(node.lineno, node.end_lineno + 1))
            else:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []) or [])
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body)

    visit(_parse(source).body)
    return found


def count_asserts(source: str) -> int:
    """Assert statements and ``assert_*`` calls (``np.testing.assert_allclose``...) in ``source``."""
    count = 0
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Assert):
            count += 1
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            count += name.startswith("assert_")
    return count


def _literal(node: ast.AST) -> bool:
    """A string literal, or an f-string without a single replacement field."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values)


def fixed_prints(source: str) -> int:
    """``print(...)`` calls in ``source`` whose arguments are all string literals."""
    return sum(
        1
        for node in ast.walk(_parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
        and node.args and all(_literal(a) for a in node.args)
    )


def nonblank(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.strip()}


def constant_prints(outputs) -> list[str]:
    """The printed lines of a cell's outputs that show a bare ``True`` or ``False``."""
    lines = []
    for out in outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            text = out["text"] if isinstance(out["text"], str) else "".join(out["text"])
            lines += [line for line in text.splitlines() if BOOLEAN.search(line)]
    return lines


def code_cells(path: pathlib.Path):
    """(source, tags) of each code cell of a MyST chapter, read through jupytext."""
    import jupytext

    nb = jupytext.read(path)
    return [(c.source, c.metadata.get("tags", [])) for c in nb.cells if c.cell_type == "code"]


def baseline_outputs(path: pathlib.Path, cells) -> list | None:
    """Each code cell's stored outputs; None when the baseline is missing or stale."""
    baseline = baseline_for(path)
    if not baseline.exists():
        return None
    stored = json.loads(baseline.read_text(encoding="utf-8"))["cells"]  # one per code cell (tests/regression.py)
    if len(stored) != len(cells):
        return None
    return [c.get("outputs", []) for c in stored]


def stats(cells, outputs=None) -> dict:
    """The figures of one chapter (or of several, their cells concatenated)."""
    lengths, lines, kinds = [], 0, dict.fromkeys(KINDS, 0)
    asserts_shown = asserts_all = fixed = 0
    constant = [] if outputs is not None else None
    for index, (source, tags) in enumerate(cells):
        n_asserts = count_asserts(source)
        asserts_all += n_asserts
        if visibility(tags) != "shown":
            continue
        asserts_shown += n_asserts
        fixed += fixed_prints(source)
        text = nonblank(source)
        lengths.append(len(text))
        lines += len(text)
        for kind, numbers in bookkeeping(source).items():
            kinds[kind] += len(numbers & text)
        if outputs is not None:
            constant += constant_prints(outputs[index])
    return {
        "shown": len(lengths),
        "median": statistics.median(lengths) if lengths else 0,
        "lines": lines,
        "kinds": kinds,
        "asserts_shown": asserts_shown,
        "asserts_all": asserts_all,
        "constant": constant,
        "fixed": fixed,
    }


def row(name: str, s: dict) -> str:
    kept = sum(s["kinds"].values())
    share = f"{kept / s['lines']:4.0%}" if s["lines"] else "   -"
    parts = "/".join(str(s["kinds"][k]) for k in KINDS)
    constant = "stale" if s["constant"] is None else str(len(s["constant"]))
    return (f"{name:<26} {s['shown']:>5} {s['median']:>6} {share:>5} {parts:>12} "
            f"{s['asserts_shown']:>4}/{s['asserts_all']:<4} {constant:>8} {s['fixed']:>5}")


def main(argv: list[str]) -> int:
    paths = [pathlib.Path(a).resolve() for a in argv] or chapter_sources()
    print(f"{'chapter':<26} {'shown':>5} {'median':>6} {'bkp':>5} {'glue/ass/pr':>12} {'asserts':>9} {'constant':>8} {'fixed':>5}")
    everything, outputs_all, details = [], [], []
    for path in paths:
        cells = code_cells(path)
        outputs = baseline_outputs(path, cells)
        s = stats(cells, outputs)
        print(row(path.stem, s))
        everything += cells
        outputs_all = None if outputs is None or outputs_all is None else outputs_all + outputs
        details += [f"  {path.stem}: {line}" for line in s["constant"] or []]
    print(row("all", stats(everything, outputs_all)))
    print("\nshown: code cells shown unfolded; median: their median non-blank lines; bkp: share of")
    print("those lines in glue/assert/print statements (the three counts follow); asserts: shown/all;")
    print("constant: printed lines showing True or False (from the baselines; 'stale' if out of date);")
    print("fixed: print calls whose arguments are all string literals.")
    if details:
        print("\nprints of a constant:")
        print("\n".join(details))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
