"""Mutants of chapter 3 (``chapters/03_learned.md``); see ``mutants/__init__.py``."""

from mutants import Mutant

_TIE_RETURN = "return logA[t, t] - logA[t, t + 2], u + u1 + np.sqrt((u + w1) * (u1 + w2))"

MUTANTS = [
    Mutant(
        id="tie-bound-without-root",
        claim="it would fail if the right side lacked its square-root term",
        cell="assert np.all(lhs <= rhs + 1e-9)",
        fault="the right side of prop-gram-neighbours without its square-root term",
        replace=(("def tie_sides", _TIE_RETURN, "return logA[t, t] - logA[t, t + 2], u + u1"),),
    ),
    Mutant(
        id="tie-bound-too-large",
        claim="it would fail if the right side were 1 % larger",
        cell="np.testing.assert_allclose(lhs / rhs, np.cos(phi / 2) ** 2",
        fault="the right side of prop-gram-neighbours multiplied by 1.01",
        replace=(("def tie_sides", _TIE_RETURN, _TIE_RETURN.replace("u + u1 +", "1.01 * (u + u1 +") + ")"),),
    ),
    Mutant(
        id="grid-1d-table",
        claim="The test a purely 1-D table would fail",
        cell="assert C_grid[row_wrap].mean() < 0 < C_grid[vertical].mean()",
        fault="the 36-row table trained on 1-D smoothing of the flattened order instead of the grid task",
        replace=(("history_2d = train(", "A_star=A_star_grid", "A_star=smoothing_matrix(G * G)"),),
    ),
]
