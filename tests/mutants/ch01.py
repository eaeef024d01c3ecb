"""Mutants of chapter 1 (``chapters/01_why_order_matters.md``); see ``mutants/__init__.py``."""

from mutants import Mutant

#: Attention that adds a fixed matrix ``B`` (a function of the query and key slots ``i``, ``j``,
#: not of the tokens) to its scores: the fault the equivariance check must catch. ``{bias}`` is
#: an expression in ``i`` (column of query slots), ``j`` (row of key slots) and ``n_q``, ``n_k``.
_SLOT_BIAS = """
import posenc.attention as _attention

def scaled_dot_product_attention(q, k, v, *, bias=None, mask=None):
    n_q, n_k = q.shape[-2], k.shape[-2]
    i, j = np.arange(n_q)[:, None], np.arange(n_k)[None, :]
    extra = np.broadcast_to(np.asarray({bias}, dtype=float), (n_q, n_k))
    bias = extra if bias is None else bias + extra
    return _attention.scaled_dot_product_attention(q, k, v, bias=bias, mask=mask)
"""

_GENERATORS_ONLY = """
perms = {name: perm for name, perm in perms.items() if name != "random derangement"}
"""

#: The query-key pair (i, j) of the head's smallest attention weight, computed before the fault
#: is injected: the pair whose mask or bias moves the least weight, the hardest for the check.
_SMALLEST_PAIR = """
_, _A0 = attn(X)
_qi, _kj = (int(v) for v in np.unravel_index(np.argmin(_A0), _A0.shape))
"""

_EQUIVARIANCE = "would fail if `posenc`'s attention added to the scores a mask or a bias"
_EVERY_MASK = "fails for every mask fixed to the slots that breaks equivariance"
_EVERY_BIAS = "every bias fixed to the slots whose spread"
_CHECK = "np.testing.assert_allclose(out_p, P_test @ out"

MUTANTS = [
    Mutant(
        id="equivariance-mask-slot-0",
        claim=_EQUIVARIANCE,
        cell=_CHECK,
        fault="attention masks key slot 0 (a mask that is not permuted with the input)",
        patch=_SLOT_BIAS.format(bias="np.where(j == 0, -np.inf, 0.0)"),
    ),
    Mutant(
        id="equivariance-bias-slot-2",
        claim=_EQUIVARIANCE,
        cell=_CHECK,
        fault="attention adds a bias of 1 to key slot 2",
        patch=_SLOT_BIAS.format(bias="np.where(j == 2, 1.0, 0.0)"),
    ),
    Mutant(
        id="equivariance-causal-mask",
        claim=_EQUIVARIANCE,
        cell=_CHECK,
        fault="attention applies a causal mask (key slot j > query slot i masked)",
        patch=_SLOT_BIAS.format(bias="np.where(j > i, -np.inf, 0.0)"),
    ),
    Mutant(
        id="equivariance-circulant-bias",
        claim=_EQUIVARIANCE,
        cell=_CHECK,
        fault="attention adds the circulant bias B_ij = (j - i) mod n, which the cyclic shift leaves unchanged",
        patch=_SLOT_BIAS.format(bias="0.5 * ((j - i) % n_k)"),
    ),
    Mutant(
        id="equivariance-distance-bias",
        claim=_EQUIVARIANCE,
        cell=_CHECK,
        fault="attention adds the symmetric distance bias B_ij = -|i - j| (ALiBi's form without a mask)",
        patch=_SLOT_BIAS.format(bias="-np.abs(i - j)"),
    ),
    # The proposition's two generators alone (the random derangement dropped) against the faults
    # that one of them cannot see: a slot bias the swap leaves in place, a bias the shift leaves.
    Mutant(
        id="generators-see-slot-bias",
        claim=_EVERY_BIAS,
        cell=_CHECK,
        fault="the check keeps only the cyclic shift and the swap; attention adds a bias of 1 to key slot 2",
        patch=_SLOT_BIAS.format(bias="np.where(j == 2, 1.0, 0.0)") + _GENERATORS_ONLY,
    ),
    Mutant(
        id="generators-see-circulant-bias",
        claim=_EVERY_BIAS,
        cell=_CHECK,
        fault="the check keeps only the cyclic shift and the swap; attention adds the circulant bias (j - i) mod n",
        patch=_SLOT_BIAS.format(bias="0.5 * ((j - i) % n_k)") + _GENERATORS_ONLY,
    ),
    # A single masked query-key pair, the one with the smallest weight: part 4 of the proposition
    # and the smallest-weight assert say the check sees it, whichever permutations move it.
    Mutant(
        id="equivariance-mask-smallest-pair",
        claim=_EVERY_MASK,
        cell=_CHECK,
        fault="attention masks the single query-key pair of the head's smallest weight",
        patch=_SMALLEST_PAIR + _SLOT_BIAS.format(bias="np.where((i == _qi) & (j == _kj), -np.inf, 0.0)"),
    ),
    Mutant(
        id="generators-see-mask-smallest-pair",
        claim=_EVERY_MASK,
        cell=_CHECK,
        fault="the check keeps only the cyclic shift and the swap; attention masks the pair of the smallest weight",
        patch=_SMALLEST_PAIR + _SLOT_BIAS.format(bias="np.where((i == _qi) & (j == _kj), -np.inf, 0.0)")
        + _GENERATORS_ONLY,
    ),
    # A bias just above part 4's threshold: 1e-8 on one pair gives a spread of at least 1e-8, and
    # (1 - exp(-5e-9)) times a weight of about 0.006 is 3e-11 > 1e-11.
    Mutant(
        id="generators-see-tiny-bias",
        claim=_EVERY_BIAS,
        cell=_CHECK,
        fault="the check keeps only the cyclic shift and the swap; attention adds 1e-8 to the pair of the smallest weight",
        patch=_SMALLEST_PAIR + _SLOT_BIAS.format(bias="np.where((i == _qi) & (j == _kj), 1e-8, 0.0)")
        + _GENERATORS_ONLY,
    ),
    Mutant(
        id="smallest-weight-unscaled",
        claim="a hidden cell asserts that it exceeds",
        cell="assert A_min > 1e-9",
        fault="the projections of the equivariance check drawn without the 1/sqrt(d) scaling",
        replace=(("W_Q, W_K, W_V = (rng.normal(size=(d, d)) / np.sqrt(d)",
                  "rng.normal(size=(d, d)) / np.sqrt(d) for", "rng.normal(size=(d, d)) for"),),
    ),
    Mutant(
        id="counting-biased-estimator",
        claim="narrow enough to reject the natural-looking",
        cell="est = (d_sim - 2) / np.sum(h_sim**2, axis=1)",
        fault="the estimator d_v / |h_i|^2 instead of (d_v - 2) / |h_i|^2",
        replace=(("est = (d_sim - 2) / np.sum", "est = (d_sim - 2) / np.sum", "est = d_sim / np.sum"),),
    ),
]
