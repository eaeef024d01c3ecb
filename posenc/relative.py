r"""T5's relative position bias: log-spaced buckets with a learned scalar per head.

Raffel et al. (2020) add to each attention score a learned scalar that depends
only on the bucket of the relative position ``key - query``.  Half of the buckets
(per direction when bidirectional) are exact small distances; the rest cover
distances up to ``max_distance`` on a logarithmic grid, and everything farther
shares the last bucket.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_float_array, as_int_array, check_bool, check_int
from .attention import relative_positions

__all__ = ["t5_relative_position_bucket", "t5_relative_bias"]


def t5_relative_position_bucket(
    relative_position,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    r"""Map relative positions ``key - query`` to T5's buckets.

    With ``bidirectional`` the buckets are split in two halves, the upper half for
    keys after the query; otherwise only non-positive offsets (keys before the
    query) are distinguished and later keys fall in bucket 0.  Within a half of
    ``n`` buckets, distances ``0 .. n/2 - 1`` get their own bucket and a distance
    :math:`r \ge n/2` gets

    .. math::
        \min\!\left(n - 1,\; \frac n2 + \left\lfloor
        \frac{\ln(2r/n)}{\ln(2\,\text{max\_distance}/n)}\left(n - \frac n2\right)
        \right\rfloor\right).

    The logarithm is evaluated in float32, as T5 (Mesh TensorFlow) and Hugging
    Face compute it (``modeling_t5.py``, ``_relative_position_bucket``:
    ``torch.log(relative_position.float() / max_exact)``), so that bucket edges
    that fall on an integer in exact arithmetic round the way those
    implementations do.  The float32 logarithm taken is the correctly rounded
    one (the float64 logarithm rounded to float32), not NumPy's float32
    ``log``, whose SIMD implementations differ between CPUs and are not
    guaranteed to be correctly rounded; the division and the scaling stay in
    float32.

    Parameters
    ----------
    relative_position : array_like of int, any shape
        ``memory_position - query_position``.
    bidirectional : bool, default True
        True for the encoder, False for the causal decoder.
    num_buckets : int, default 32
        Total number of buckets, at least 2 (at least 4 when bidirectional).
    max_distance : int, default 128
        Distances at or beyond this share the last bucket; must exceed the
        number of exact buckets.

    Returns
    -------
    numpy.ndarray of int64, same shape as ``relative_position``
        Values in ``[0, num_buckets)``.

    References
    ----------
    Raffel et al. (2020), section 2.1; Hugging Face ``transformers``,
    ``models/t5/modeling_t5.py``, ``T5Attention._relative_position_bucket``.
    """
    rel = as_int_array("relative_position", relative_position)
    bidirectional = check_bool("bidirectional", bidirectional)
    num_buckets = check_int("num_buckets", num_buckets, minimum=4 if bidirectional else 2)
    max_distance = check_int("max_distance", max_distance, minimum=1)
    n = num_buckets // 2 if bidirectional else num_buckets
    max_exact = n // 2
    if max_exact < 1:
        raise ValueError(f"num_buckets: expected at least 2 buckets per direction, got {num_buckets}")
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance: expected more than the {max_exact} exact buckets, got {max_distance}"
        )
    buckets = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        buckets += (rel > 0).astype(np.int64) * n
        dist = np.abs(rel)
    else:
        dist = -np.minimum(rel, 0)
    is_small = dist < max_exact
    with np.errstate(divide="ignore"):
        # float32 as in T5/HF: log(dist / max_exact) on float32, divided by a Python float.
        # The float32 log is the correctly rounded one (float64 log rounded to float32),
        # the same on every CPU, unlike NumPy's float32 log (SIMD paths, not correctly rounded).
        ratio = np.log((dist.astype(np.float32) / np.float32(max_exact)).astype(np.float64)).astype(np.float32)
        scaled = ratio / np.float32(math.log(max_distance / max_exact)) * np.float32(n - max_exact)
    large = max_exact + np.where(is_small, 0, scaled).astype(np.int64)
    large = np.minimum(large, n - 1)
    return buckets + np.where(is_small, dist, large)


def t5_relative_bias(
    bucket_values,
    n_queries: int,
    n_keys: int | None = None,
    *,
    bidirectional: bool = True,
    max_distance: int = 128,
) -> np.ndarray:
    r"""Assemble T5's bias tensor from the learned per-bucket values.

    Query ``q`` sits at position :math:`i = T_k - T_q + q` (the last ``n_queries``
    positions), key ``j`` at ``j`` (:func:`posenc.attention.relative_positions`); the
    bias of head ``h`` is ``bucket_values[bucket(j - i), h]``.

    Parameters
    ----------
    bucket_values : array_like of float, shape (num_buckets, n_heads)
        The learned table (Hugging Face's ``relative_attention_bias.weight``).
    n_queries : int
        Number of queries ``T_q >= 1``.
    n_keys : int, optional
        Number of keys ``T_k >= T_q``; defaults to ``n_queries``.
    bidirectional : bool, default True
    max_distance : int, default 128

    Returns
    -------
    numpy.ndarray of float, shape (n_heads, n_queries, n_keys)
    """
    values = as_float_array("bucket_values", bucket_values)
    if values.ndim != 2:
        raise ValueError(f"bucket_values: expected shape (num_buckets, n_heads), got {values.shape}")
    buckets = t5_relative_position_bucket(
        relative_positions(n_queries, n_keys),
        bidirectional=bidirectional,
        num_buckets=values.shape[0],
        max_distance=max_distance,
    )
    return np.moveaxis(values[buckets], -1, 0)
