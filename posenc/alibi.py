r"""ALiBi: attention with linear biases (Press, Smith & Lewis, ICLR 2022).

Head ``h`` adds :math:`-m_h (i - j)` to the score of query ``i`` and key ``j``; no
position enters the embeddings.  The slopes form a geometric sequence that starts
at :math:`2^{-8/H}` and has that same ratio, so for ``H = 8`` heads they are
:math:`1/2, 1/4, \dots, 1/256`.

The ALiBi authors' reference implementation and BLOOM (Hugging Face
``build_alibi_tensor``) use a slope rule for head counts that are not powers of two:
take the slopes of the largest power of two ``n <= H``, then the odd-indexed
slopes of ``2n`` heads (every other one, starting with the first) until ``H``
slopes are found.
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
    offset = relative_positions(n_queries, n_keys)  # j - i
    slopes = alibi_slopes(n_heads)[:, None, None]
    # One allocation of the output and in-place updates: peak memory is the output
    # plus one (T_q, T_k) offset matrix, not several full-size temporaries.
    bias = np.multiply(slopes, offset[None] if causal else np.abs(offset)[None], dtype=np.float64)
    if causal:
        # m (j - i) is already -m (i - j); keys after the query are masked.
        np.copyto(bias, -np.inf, where=(offset > 0)[None])
    else:
        np.subtract(0.0, bias, out=bias)  # -m |i - j|; "0.0 -" keeps the diagonal at +0.0
    return bias


def alibi_bias_bloom(n_heads: int, n_keys: int) -> np.ndarray:
    r"""ALiBi as BLOOM computes it: :math:`+m_h\, j`, the same for every query.

    Hugging Face's ``build_alibi_tensor`` returns ``slopes * arange(n_keys)``
    (for a sequence without padding), broadcast over queries.  Under a causal mask
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
