"""Mutants of chapter 5 (``chapters/05_alibi.md``); see ``mutants/__init__.py``."""

from mutants import Mutant

MUTANTS = [
    Mutant(
        id="content-price-wrong-slope",
        claim="so a wrong slope inside `alibi_bias` would make it fail",
        cell="np.testing.assert_allclose(wq[i_q - far_d], wq[i_q - 1], rtol=1e-12)",
        fault="alibi_bias (through alibi_slopes) uses slopes 1 % too steep",
        patch="""
import posenc.alibi as _alibi
_slopes = _alibi.alibi_slopes
_alibi.alibi_slopes = lambda n_heads: 1.01 * _slopes(n_heads)
""",
    ),
]
