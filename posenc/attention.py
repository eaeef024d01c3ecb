"""Scaled dot-product attention, the function every positional encoding feeds.

Shapes follow the usual convention: a leading batch/head shape ``...``, ``T_q``
queries, ``T_k`` keys and values, width ``d`` for queries and keys and ``d_v`` for
values.  Attention itself has no idea where tokens are: chapter 1 proves that it is
permutation equivariant, and every later chapter adds position in one of three
places (to the input, inside the scores by rotation, or as an additive bias).

Reference: Vaswani et al. (2017), "Attention Is All You Need", eq. (1).
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_int, _show

__all__ = ["softmax", "scaled_dot_product_attention", "causal_mask", "relative_positions"]


def softmax(x, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax along ``axis``.

    .. math:: \operatorname{softmax}(x)_j = \frac{e^{x_j - \max_k x_k}}{\sum_l e^{x_l - \max_k x_k}}

    Subtracting the maximum leaves the result unchanged (the factor
    :math:`e^{-\max x}` cancels) and keeps every exponent :math:`\le 0`, so large
    logits cannot overflow.  Entries equal to ``-inf`` get probability 0 (masking).

    Parameters
    ----------
    x : array_like of float, shape (..., n, ...)
        Logits.  ``-inf`` is allowed (a masked entry); NaN and ``+inf`` are not.
    axis : int, default -1
        Axis along which the probabilities sum to one.

    Returns
    -------
    numpy.ndarray, same shape and dtype as ``x``
        Non-negative values that sum to 1 along ``axis``.

    Raises
    ------
    ValueError
        If a slice along ``axis`` is entirely ``-inf`` (softmax is undefined there)
        or ``x`` contains NaN or ``+inf``.
    """
    x = as_float_array("x", x, min_ndim=1, allow_neg_inf=True)
    axis = check_int("axis", axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis: expected an axis of an array with {x.ndim} dimensions, got {axis}")
    x_max = np.max(x, axis=axis, keepdims=True)
    if np.isneginf(x_max).any():
        raise ValueError(
            "x: a slice along the softmax axis is entirely -inf (every entry masked); "
            "softmax is undefined there"
        )
    with np.errstate(over="ignore"):  # x - x_max may round to -inf, whose exp is exactly 0
        e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def relative_positions(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """Offsets ``key - query`` for every query/key pair, queries aligned to the last keys.

    Query ``q`` sits at absolute position ``i = n_keys - n_queries + q`` (the last
    ``n_queries`` positions, as with a KV cache) and key ``j`` at ``j``; entry
    ``[q, j]`` is ``j - i``.  This is the alignment shared by :func:`causal_mask`,
    ALiBi (:func:`posenc.alibi.alibi_bias`) and T5 (:func:`posenc.relative.t5_relative_bias`).

    Parameters
    ----------
    n_queries : int
        Number of queries, ``T_q >= 1``.
    n_keys : int, optional
        Number of keys, ``T_k >= T_q``; defaults to ``n_queries``.

    Returns
    -------
    numpy.ndarray of int64, shape (T_q, T_k)
        Zero where a query meets its own key, negative for earlier keys.
    """
    n_queries = check_int("n_queries", n_queries, minimum=1)
    n_keys = n_queries if n_keys is None else check_int("n_keys", n_keys, minimum=1)
    if n_keys < n_queries:
        raise ValueError(
            f"n_keys: expected n_keys >= n_queries = {n_queries} (queries are the last "
            f"n_queries positions), got {n_keys}"
        )
    i = np.arange(n_queries, dtype=np.int64)[:, None] + (n_keys - n_queries)
    return np.arange(n_keys, dtype=np.int64)[None, :] - i


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """Boolean causal mask, ``True`` where a query may attend to a key.

    Queries are aligned to the *last* ``n_queries`` keys, as with a KV cache: query
    ``q`` sits at absolute position ``i = n_keys - n_queries + q`` and may attend to
    keys ``j <= i`` (see :func:`relative_positions`).  With ``n_keys == n_queries``
    this is the lower triangle.

    Parameters
    ----------
    n_queries : int
        Number of queries, ``T_q >= 1``.
    n_keys : int, optional
        Number of keys, ``T_k >= T_q``; defaults to ``n_queries``.

    Returns
    -------
    numpy.ndarray of bool, shape (T_q, T_k)

    References
    ----------
    This is PyTorch's lower-right causal mask (``torch.nn.attention.bias.causal_lower_right``,
    ``tril(ones(T_q, T_k), diagonal=T_k - T_q)``) and FlashAttention's ``causal=True`` since
    version 2.1.  ``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``
    aligns to the upper left instead (``tril(ones(T_q, T_k))``); the two agree when
    ``T_q == T_k``.
    """
    return relative_positions(n_queries, n_keys) <= 0


def scaled_dot_product_attention(q, k, v, *, bias=None, mask=None):
    r"""Scaled dot-product attention with an optional additive bias and boolean mask.

    .. math::
        S = \frac{Q K^\top}{\sqrt d} + B, \qquad
        A = \operatorname{softmax}_{\text{rows}}(S \text{ with masked entries } = -\infty),
        \qquad \operatorname{Attn}(Q, K, V) = A V .

    Parameters
    ----------
    q : array_like of float, shape (..., T_q, d)
        Queries.
    k : array_like of float, shape (..., T_k, d)
        Keys.
    v : array_like of float, shape (..., T_k, d_v)
        Values.
    bias : array_like of float, optional, broadcastable to (..., T_q, T_k)
        Added to the scaled scores (ALiBi, T5 buckets).  May contain ``-inf``.
    mask : array_like of bool, optional, broadcastable to (..., T_q, T_k)
        ``True`` where attention is allowed (see :func:`causal_mask`).

    Returns
    -------
    out : numpy.ndarray, shape (..., T_q, d_v)
        Weighted averages of the values.
    weights : numpy.ndarray, shape (..., T_q, T_k)
        The attention weights ``A``; each row sums to one.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite inputs, or a query row with no allowed key
        (fully masked): that would be NaN, so it is an error instead.
    TypeError
        On non-float inputs or a mask that is not boolean.

    References
    ----------
    Vaswani et al. (2017), "Attention Is All You Need", eq. (1).  The float ``bias`` and the
    boolean ``mask`` (``True`` = may attend) are the two kinds of ``attn_mask`` of
    ``torch.nn.functional.scaled_dot_product_attention``.
    """
    q = as_float_array("q", q, min_ndim=2)
    k = as_float_array("k", k, min_ndim=2)
    v = as_float_array("v", v, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"k: expected the same last dimension as q ({q.shape[-1]}), got shape {k.shape}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"v: expected as many rows as k has keys ({k.shape[-2]}), got shape {v.shape}"
        )
    d = q.shape[-1]
    if d == 0:
        raise ValueError(f"q: expected a positive feature dimension, got shape {q.shape}")
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(d)
    score_shape = scores.shape
    if bias is not None:
        bias = as_float_array("bias", bias, allow_neg_inf=True)
        try:
            scores = scores + bias
        except ValueError:
            raise ValueError(
                f"bias: expected a shape broadcastable to the scores {score_shape}, got {bias.shape}"
            ) from None
        if scores.shape != score_shape:
            raise ValueError(
                f"bias: expected a shape broadcastable to the scores {score_shape}, got {bias.shape}"
            )
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise TypeError(f"mask: expected a boolean array (True = may attend), got {_show(mask)}")
        try:
            mask_b = np.broadcast_to(mask, score_shape)
        except ValueError:
            raise ValueError(
                f"mask: expected a shape broadcastable to the scores {score_shape}, got {mask.shape}"
            ) from None
        scores = np.where(mask_b, scores, -np.inf)
    if np.isneginf(scores).all(axis=-1).any():
        name = "mask" if mask is not None else "bias"
        raise ValueError(
            f"{name}: some query has no key it may attend to (a fully masked row); "
            "its attention weights would be NaN"
        )
    weights = softmax(scores, axis=-1)
    out = np.matmul(weights, v)
    return out, weights
