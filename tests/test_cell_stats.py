"""tests/cell_stats.py: what counts as shown, as bookkeeping, as an assert and as a constant print."""

from __future__ import annotations

import pytest

import cell_stats
from booktools import chapter_sources


@pytest.mark.parametrize(
    ("tags", "expected"),
    [([], "shown"), (["remove-cell"], "hidden"), (["remove-input"], "hidden"),
     (["hide-input"], "folded"), (["hide-cell"], "folded"), (["hide-input", "remove-cell"], "hidden")],
)
def test_visibility(tags, expected):
    assert cell_stats.visibility(tags) == expected


SOURCE = """\
x = np.arange(3)
glue("n", len(x))
assert x.sum() == 3, (
    x)
np.testing.assert_allclose(x, x)
print("sum:", x.sum())
for v in x:
    assert v >= 0
for v in x:
    y = v + 1
    print(y)
if x.any():
    glue("any", True)
else:
    print("none")
"""


def test_bookkeeping_finds_each_kind_and_whole_statements():
    found = cell_stats.bookkeeping(SOURCE)
    assert found["glue"] == {2, 12, 13, 14, 15}      # an if/else of glue and print counts whole
    assert found["assert"] == {3, 4, 5, 7, 8}       # both lines of a split assert; a loop of asserts
    assert found["print"] == {6, 11}                 # the print inside a computing loop, not the loop


def test_bookkeeping_ignores_magics_and_other_calls():
    found = cell_stats.bookkeeping("%matplotlib inline\nplt.plot(x)\nfig.savefig('a')\n")
    assert not any(found.values())


def test_count_asserts():
    assert cell_stats.count_asserts(SOURCE) == 3
    assert cell_stats.count_asserts("ok = np.allclose(a, b)\nprint(ok)\n") == 0


def test_constant_prints_are_bare_booleans_only():
    outputs = [
        {"output_type": "stream", "name": "stdout",
         "text": "max error 1e-12\nequal: True\n    y = f(x, keepdims=True)\nFalse\n"},
        {"output_type": "stream", "name": "stderr", "text": "True\n"},
        {"output_type": "execute_result", "data": {"text/plain": "True"}},
    ]
    assert cell_stats.constant_prints(outputs) == ["equal: True", "False"]


def test_fixed_prints_are_prints_of_literals_only():
    source = (
        'print("the check passed")\n'
        'print(f"a claim", "in two parts")\n'
        'print(f"value {x:.3f}")\n'
        'print("x =", x)\n'
        'print()\n'
        'log("not a print")\n'
    )
    assert cell_stats.fixed_prints(source) == 2


def test_stats_counts_shown_cells_only():
    cells = [
        ("import numpy as np\n", []),
        ("a = 1\nb = 2\n\nprint(a + b)\n", []),
        ("assert a == 1\nprint('hidden: not counted')\n", ["remove-cell"]),
        ("plt.plot([a])\nassert b\n", ["hide-input"]),
    ]
    outputs = [[], [{"output_type": "stream", "name": "stdout", "text": "3\n"}], [], []]
    s = cell_stats.stats(cells, outputs)
    assert s["shown"] == 2 and s["median"] == 2          # 1 and 3 non-blank lines
    assert s["lines"] == 4 and s["kinds"] == {"glue": 0, "assert": 0, "print": 1}
    assert (s["asserts_shown"], s["asserts_all"]) == (0, 2)
    assert s["constant"] == [] and s["fixed"] == 0
    assert cell_stats.stats(cells)["constant"] is None     # no baseline: not counted


def test_the_chapters_are_measured():
    """Every chapter parses; the book has shown cells and their lines add up."""
    for path in chapter_sources():
        s = cell_stats.stats(cell_stats.code_cells(path))
        assert s["shown"] > 0 and sum(s["kinds"].values()) <= s["lines"], path.name
