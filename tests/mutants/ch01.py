"""Mutants of chapter 1 (``chapters/01_why_order_matters.md``); see ``mutants/__init__.py``."""

from mutants import Mutant

#: Attention that treats one key slot by its index, whatever the input's order: the fault the
#: equivariance check must catch. ``slot`` is filled in by each mutant below.
_INDEXED_ATTENTION = """
import posenc.attention as _attention

def scaled_dot_product_attention(q, k, v, *, bias=None, mask=None):
    n_k = k.shape[-2]
    extra = np.zeros((q.shape[-2], n_k))
    extra[:, {slot}] = {value}
    bias = extra if bias is None else bias + extra
    return _attention.scaled_dot_product_attention(q, k, v, bias=bias, mask=mask)
"""

MUTANTS = [
    Mutant(
        id="equivariance-mask-slot-0",
        claim="would fail if `posenc`'s attention looked at row indices in any way",
        cell="np.testing.assert_allclose(out_p, P @ out",
        fault="attention masks key slot 0 (a mask that is not permuted with the input)",
        patch=_INDEXED_ATTENTION.format(slot=0, value="-np.inf"),
    ),
    Mutant(
        id="equivariance-bias-slot-2",
        claim="would fail if `posenc`'s attention looked at row indices in any way",
        cell="np.testing.assert_allclose(out_p, P @ out",
        fault="attention adds a bias of 1 to key slot 2",
        patch=_INDEXED_ATTENTION.format(slot=2, value="1.0"),
    ),
]
