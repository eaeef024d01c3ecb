"""Mutants of chapter 5 (``chapters/05_alibi.md``); see ``mutants/__init__.py``."""

from mutants import Mutant

#: alibi_slopes (which alibi_bias calls) with the slope of one head, index {head}, 1 % too steep.
_ONE_SLOPE = """
import posenc.alibi as _alibi
_slopes = _alibi.alibi_slopes

def _one_wrong(n_heads):
    s = _slopes(n_heads).copy()
    s[{head}] *= 1.01
    return s

_alibi.alibi_slopes = _one_wrong
"""

MUTANTS = [
    Mutant(
        id="content-price-wrong-slope-steepest",
        claim="so a wrong slope of any head inside `alibi_bias` would make it fail",
        cell="np.testing.assert_allclose(wq[:, i_q - far_d], wq[:, i_q - 1], rtol=1e-12)",
        fault="alibi_bias (through alibi_slopes) gives head 1 only a slope 1 % too steep",
        patch=_ONE_SLOPE.format(head=0),
    ),
    Mutant(
        id="content-price-wrong-slope-middle",
        claim="so a wrong slope of any head inside `alibi_bias` would make it fail",
        cell="np.testing.assert_allclose(wq[:, i_q - far_d], wq[:, i_q - 1], rtol=1e-12)",
        fault="alibi_bias (through alibi_slopes) gives head 4 only a slope 1 % too steep",
        patch=_ONE_SLOPE.format(head=3),
    ),
]
