r"""ALiBi: attention with linear biases (Press, Smith & Lewis, ICLR 2022).

Head ``h`` adds :math:`-m_h (i - j)` to the score of query ``i`` and key ``j``; no
position enters the embeddings.  The slopes form a geometric sequence that starts
at :math:`2^{-8/H}` and has that same ratio, so for ``H = 8`` heads they are
:math:`1/2, 1/4, \dots, 1/256`.

For head counts that are not powers of two the ALiBi authors' reference implementation
(``get_slopes``, copied by BigScience's Megatron-DeepSpeed) uses a rule that Hugging Face's
``build_alibi_tensor`` (BLOOM) re-implements in float32: take the slopes of the largest power
of two ``n <= H``, then every other slope of ``2n`` heads, starting with the first (the 1st,
3rd, 5th, ...: indices 0, 2, 4, ... counted from zero), until ``H`` slopes are found.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_bool, check_int
from .attention import relative_positions

__all__ = ["alibi_slopes", "alibi_bias", "alibi_bias_bloom"]


def _power_of_two_slopes(n: int) -> np.ndarray:
    # start = ratio = 2 ** (-8 / n); slope_k = start * ratio**k = 2 ** (-8 (k + 1) / n)
    k = np.arange(1, n + 1, dtype=np.float64)
    return 2.0 ** (-8.0 * k / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    r"""Per-head ALiBi slopes :math:`m_h`.

    For ``H`` a power of two, :math:`m_h = 2^{-8h/H}`, ``h = 1..H``.  Otherwise,
    with :math:`n = 2^{\lfloor \log_2 H \rfloor}`, the first ``n`` slopes are those of
    ``n`` heads and the remaining ``H - n`` are
    :math:`2^{-8(2k-1)/(2n)}`, ``k = 1..H-n`` (every other slope of ``2n`` heads).

    Parameters
    ----------
    n_heads : int
        Number of attention heads ``H >= 1``.

    Returns
    -------
    numpy.ndarray of float64, shape (n_heads,)

    References
    ----------
    Press et al. (2022), section 3 and the authors' ``get_slopes`` in
    ``ofirpress/attention_with_linear_biases``; Hugging Face ``transformers``,
    ``models/bloom/modeling_bloom.py``, ``build_alibi_tensor``.
    """
    n_heads = check_int("n_heads", n_heads, minimum=1)
    n = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = _power_of_two_slopes(n)
    if n == n_heads:
        return slopes
    extra = _power_of_two_slopes(2 * n)[0::2][: n_heads - n]
    return np.concatenate([slopes, extra])


def alibi_bias(n_heads: int, n_queries: int, n_keys: int | None = None, *, causal: bool = True) -> np.ndarray:
    r"""The ALiBi bias tensor to add to attention scores.

    Query ``q`` sits at absolute position :math:`i = T_k - T_q + q` (queries are the
    last ``n_queries`` positions, as with a KV cache), key ``j`` at ``j``.

    * ``causal=True``: :math:`B_{h,q,j} = -m_h (i - j)` for :math:`j \le i` and
      :math:`-\infty` above the diagonal (the causal mask is folded in).
    * ``causal=False``: :math:`B_{h,q,j} = -m_h |i - j|`, a symmetric form
      for encoders. This is an extension: Press et al. (2022) define only the
      causal form.

    Parameters
    ----------
    n_heads : int
        Number of heads ``H >= 1``.
    n_queries : int
        Number of queries ``T_q >= 1``.
    n_keys : int, optional
        Number of keys ``T_k >= T_q``; defaults to ``n_queries``.
    causal : bool, default True

    Returns
    -------
    numpy.ndarray of float64, shape (n_heads, n_queries, n_keys)

    References
    ----------
    Press et al. (2022), Figure 3 and section 3.
    """
    n_heads = check_int("n_heads", n_heads, minimum=1)
    causal = check_bool("causal", causal)
    n_queries = check_int("n_queries", n_queries, minimum=1)
    n_keys = n_queries if n_keys is None else check_int("n_keys", n_keys, minimum=1)
    if n_keys < n_queries:
        relative_positions(n_queries, n_keys)  # raises the shared error, which names n_keys
    slopes = alibi_slopes(n_heads)
    bias = np.empty((n_heads, n_queries, n_keys), dtype=np.float64)
    # Written into the output block of query rows by block of query rows: peak memory is
    # the output plus one small (rows, T_k) offset block, not a full-size temporary.
    # The offsets j - i are integers, exact in float64, so every element is the same
    # product m_h * (j - i) as in the one-shot formula, bit for bit.
    keys = np.arange(n_keys, dtype=np.float64)
    step = max(1, _BLOCK_ELEMS // n_keys)
    for start in range(0, n_queries, step):
        stop = min(start + step, n_queries)
        i = np.arange(start, stop, dtype=np.float64)[:, None] + (n_keys - n_queries)
        offset = keys[None, :] - i  # j - i: rows start..stop of relative_positions(n_queries, n_keys)
        future = offset > 0 if causal else None
        if not causal:
            np.abs(offset, out=offset)
        for h in range(n_heads):
            block = bias[h, start:stop]
            np.multiply(slopes[h], offset, out=block)
            if causal:
                # m (j - i) is already -m (i - j); keys after the query are masked.
                np.copyto(block, -np.inf, where=future)
            else:
                np.subtract(0.0, block, out=block)  # -m |i - j|; "0.0 -" keeps the diagonal at +0.0
    return bias


#: Elements of one block of offsets in alibi_bias (64 KiB of float64).
_BLOCK_ELEMS = 1 << 13


def alibi_bias_bloom(n_heads: int, n_keys: int) -> np.ndarray:
    r"""ALiBi as BLOOM computes it: :math:`+m_h\, j`, the same for every query.

    Hugging Face's ``build_alibi_tensor`` returns ``slopes * arange(n_keys)``
    (for a sequence without padding), broadcast over queries, cast to the model's dtype
    (``.to(dtype)``); here it stays in float64.  Under a causal mask
    it differs from :func:`alibi_bias` by :math:`m_h i` in row ``i``, a constant per
    row, and softmax is invariant to such constants: the attention weights agree.

    Parameters
    ----------
    n_heads : int
        Number of heads ``H >= 1``.
    n_keys : int
        Number of keys ``T_k >= 1``.

    Returns
    -------
    numpy.ndarray of float64, shape (n_heads, 1, n_keys)

    References
    ----------
    Hugging Face ``transformers``, ``models/bloom/modeling_bloom.py``,
    ``build_alibi_tensor``.
    """
    n_heads = check_int("n_heads", n_heads, minimum=1)
    n_keys = check_int("n_keys", n_keys, minimum=1)
    return alibi_slopes(n_heads)[:, None, None] * np.arange(n_keys, dtype=np.float64)[None, None, :]
