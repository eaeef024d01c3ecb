r"""Rotary position embedding (RoPE), Su et al. (2024), "RoFormer", Neurocomputing 568 (arXiv:2104.09864).

Each query or key vector of width ``d`` is split into ``d/2`` pairs; the pair ``i``
of the vector at position ``m`` is rotated by the angle :math:`m\theta_i` with

.. math:: \theta_i = \text{base}^{-2i/d}, \qquad i = 0, \dots, d/2 - 1 .

Because rotations compose, :math:`\langle R_m q, R_n k\rangle = \langle q, R_{n-m} k\rangle`:
the attention score depends on the positions only through their offset.

Two memory layouts are in production use and both are implemented here:

``layout="interleaved"``
    pairs are coordinates ``(2i, 2i+1)``: RoFormer, Meta's original Llama code
    (``torch.view_as_complex``), GPT-J (``rotate_every_two``).
``layout="half"``
    pairs are coordinates ``(i, i + d/2)``: GPT-NeoX and Hugging Face
    ``transformers`` (``rotate_half``), used for Llama checkpoints converted to
    that format.

They differ by the fixed permutation :func:`posenc.sinusoidal.interleave_permutation`.

All angles are computed in float64 whatever the input dtype; outputs keep the
dtype of ``x``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ._checks import (
    as_float_array,
    as_position_array,
    as_positions,
    broadcast_positions,
    check_choice,
    check_float,
    check_int,
)
from .sinusoidal import interleave_permutation

__all__ = [
    "rope_frequencies",
    "rope_angles",
    "apply_rope",
    "apply_rope_complex",
    "rope_rotation_matrix",
    "rope_decay_curve",
    "apply_rope_2d",
    "interleave_permutation",
]

LAYOUTS = ("interleaved", "half")


def rope_frequencies(head_dim: int, base: float = 10000.0) -> np.ndarray:
    r"""RoPE's rotation frequencies :math:`\theta_i = \text{base}^{-2i/d}`.

    Computed as ``1.0 / base ** (arange(0, d, 2) / d)``, the expression of
    Hugging Face's ``_compute_default_rope_parameters`` (there in float32, here in
    float64).

    Parameters
    ----------
    head_dim : int
        Width ``d`` of one attention head, a positive even integer.
    base : float, default 10000.0
        The RoPE base (``rope_theta``): 10000 in RoFormer and Llama 2,
        500000 in Llama 3.  Must be > 1.

    Returns
    -------
    numpy.ndarray of float64, shape (head_dim // 2,)
        Decreasing from :math:`\theta_0 = 1`.

    References
    ----------
    Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    section 3.2 (the general form).
    """
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    base = check_float("base", base, greater_than=1.0)
    return 1.0 / base ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def _inv_freq(inv_freq, head_dim: int, base: float) -> np.ndarray:
    if inv_freq is None:
        return rope_frequencies(head_dim, base)
    arr = as_float_array("inv_freq", inv_freq, min_ndim=1).astype(np.float64)
    if arr.shape != (head_dim // 2,):
        raise ValueError(
            f"inv_freq: expected shape ({head_dim // 2},) for head_dim = {head_dim}, got {arr.shape}"
        )
    return arr


def rope_angles(positions, head_dim: int, *, inv_freq=None, base: float = 10000.0) -> np.ndarray:
    r"""The rotation angles :math:`m_t \theta_i`, in float64.

    Parameters
    ----------
    positions : array_like of real, shape (T,) or any shape (...)
        Token positions (fractional positions are allowed); a batch of rows, such as
        Hugging Face's ``position_ids`` of shape (B, T), is allowed.
    head_dim : int
        Head width ``d``, positive and even.
    inv_freq : array_like of float, shape (d/2,), optional
        Frequencies to use instead of :func:`rope_frequencies` (for example the
        output of a function in :mod:`posenc.scaling`).
    base : float, default 10000.0
        Used only when ``inv_freq`` is None.

    Returns
    -------
    numpy.ndarray of float64, shape positions.shape + (head_dim // 2,)
    """
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    return _angles(as_position_array("positions", positions), head_dim, inv_freq, base)


def _angles(pos: np.ndarray, head_dim: int, inv_freq, base: float) -> np.ndarray:
    """``pos[..., None] * theta`` in float64, for validated positions of any shape."""
    return pos[..., None] * _inv_freq(inv_freq, head_dim, base)


def _check_x(x, *, check_finite: bool = True) -> np.ndarray:
    x = as_float_array("x", x, min_ndim=2, check_finite=check_finite)
    if x.shape[-1] < 2 or x.shape[-1] % 2:
        raise ValueError(
            f"x: expected an even, positive last dimension (head_dim), got shape {x.shape}"
        )
    return x


def apply_rope(
    x,
    positions,
    *,
    inv_freq=None,
    base: float = 10000.0,
    layout: str = "interleaved",
    attention_factor: float = 1.0,
) -> np.ndarray:
    r"""Rotate every pair of coordinates of ``x`` by its position's angle.

    For a pair :math:`(a, b)` with angle :math:`\phi = m\theta_i` the result is
    :math:`(a\cos\phi - b\sin\phi,\; a\sin\phi + b\cos\phi)\cdot s`, where
    :math:`s` is ``attention_factor`` (Hugging Face multiplies its cos and sin
    caches by ``attention_scaling``; YaRN uses it as its temperature).

    Parameters
    ----------
    x : array_like of float, shape (..., T, head_dim)
        Queries or keys (not values: RoPE leaves values alone).
    positions : array_like of real, shape (T,) or broadcastable to x.shape[:-1]
        Position of each token: one row (T,) shared by every sequence and head (the
        common, fastest case), or one row per sequence as production code passes them
        (left padding, packed sequences, a KV cache whose sequences have different
        lengths): for ``x`` of shape (B, H, T, d), Hugging Face's ``position_ids`` of
        shape (B, T) go in as ``position_ids[:, None, :]``, shape (B, 1, T).
    inv_freq : array_like of float, shape (head_dim/2,), optional
        Frequencies; defaults to :func:`rope_frequencies` with ``base``.
    base : float, default 10000.0
        Used only when ``inv_freq`` is None.
    layout : {"interleaved", "half"}
        Which coordinates form a pair: ``(2i, 2i+1)`` as RoFormer, Meta's Llama
        and GPT-J, or ``(i, i + head_dim/2)`` as GPT-NeoX and Hugging Face's
        ``rotate_half``.
    attention_factor : float, default 1.0
        Positive factor applied to cos and sin.

    Returns
    -------
    numpy.ndarray, shape and dtype of ``x``

    References
    ----------
    Su et al., RoFormer, section 3.4.2 (the efficient realisation); Hugging Face ``transformers``,
    ``models/llama/modeling_llama.py``, ``rotate_half`` and ``apply_rotary_pos_emb``.
    """
    # Finiteness is checked below, on the fly where the blocked path reads x anyway.
    x = _check_x(x, check_finite=False)
    head_dim = x.shape[-1]
    layout = check_choice("layout", layout, LAYOUTS)
    attention_factor = check_float("attention_factor", attention_factor, positive=True)
    pos = broadcast_positions("positions", positions, x.shape[:-1])
    # The rotation of pair (a, b) is the complex product (a + ib) * (cos + i sin).
    # cos and sin are computed in float64 and rounded once to the working precision:
    # complex64 for float32 (and float16) inputs, complex128 for float64.
    ctype = np.complex128 if x.dtype == np.float64 else np.complex64
    cis = _cis(pos, head_dim, inv_freq, base, attention_factor, ctype)
    fast = (
        layout == "interleaved"
        and x.dtype in (np.float32, np.float64)
        and x.dtype.isnative
        and x.strides[-1] == x.itemsize
        # the vector loop of the complex multiply needs contiguous (T, d/2) inner blocks
        and cis.shape[-2:] == x.shape[-2:-1] + (head_dim // 2,)
        and cis.shape[-2] * cis.shape[-1] >= 2
    )
    if cis.ndim == 2 and x.size >= _BLOCKED_MIN_SIZE and not fast:
        return _rotate_blocked(x, cis, layout)
    _check_finite(x)
    if fast:
        # Reinterpret adjacent (2i, 2i+1) floats as one complex number (no copy), one
        # complex multiply per pair: about the cost of a copy.
        out = np.empty_like(x, order="C")
        np.multiply(x.view(ctype), cis, out=out.view(ctype))
        return out
    return _rotate(x, cis, layout)


def _check_finite(x: np.ndarray) -> None:
    if not np.isfinite(x).all():
        raise ValueError("x: expected finite values, found NaN or infinity")


#: Below this many elements the plain path is as fast as the blocked one.
_BLOCKED_MIN_SIZE = 1 << 16
#: Bytes of the blocked path's complex buffer: small enough to stay in a core's L2 cache.
_BLOCK_BYTES = 1 << 21


def _cis(pos: np.ndarray, head_dim: int, inv_freq, base: float, attention_factor: float, ctype) -> np.ndarray:
    """``attention_factor * exp(i * angles)`` rounded once from float64 to ``ctype``.

    cos and sin are evaluated in float64 and written straight into the real and
    imaginary parts; the factor, when it is not 1, multiplies the float64 values before
    the rounding. The table depends only on the positions and the frequencies, so, as
    production code does (Hugging Face computes ``cos`` and ``sin`` once per forward
    pass and hands them to every layer, for queries and keys alike), the last few tables
    are kept and reused: a repeated call returns the identical table, so results do not
    depend on whether it was cached.
    """
    freq = _inv_freq(inv_freq, head_dim, base)
    key = (pos.shape, pos.tobytes(), freq.tobytes(), float(attention_factor), np.dtype(ctype).str)
    with _CIS_LOCK:
        cached = _CIS_CACHE.get(key)
        if cached is not None:
            _CIS_CACHE.move_to_end(key)
            return cached
    angles = pos[..., None] * freq
    cis = np.empty(angles.shape, dtype=ctype)
    if attention_factor == 1.0:
        np.cos(angles, out=cis.real, casting="same_kind")
        np.sin(angles, out=cis.imag, casting="same_kind")
    else:
        cis.real = np.cos(angles) * attention_factor
        cis.imag = np.sin(angles) * attention_factor
    cis.flags.writeable = False
    if cis.nbytes <= _CIS_CACHE_MAX_BYTES:
        with _CIS_LOCK:
            _CIS_CACHE[key] = cis
            while len(_CIS_CACHE) > _CIS_CACHE_SIZE:
                _CIS_CACHE.popitem(last=False)
    return cis


#: How many cos/sin tables are kept (queries and keys of a few configurations).
_CIS_CACHE_SIZE = 8
#: Tables larger than this are not kept (batched positions can make them large).
_CIS_CACHE_MAX_BYTES = 1 << 25
_CIS_CACHE: OrderedDict = OrderedDict()
_CIS_LOCK = threading.Lock()


def _split(x: np.ndarray, layout: str):
    half = x.shape[-1] // 2
    if layout == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    return x[..., :half], x[..., half:]


def _multiply_flat(z: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``z * c`` for arrays of one shape, computed as one contiguous 1-D product.

    NumPy's complex multiply has a vector loop (for contiguous operands) and a scalar
    loop (for broadcast, in-place or single-element inner loops) that round differently
    in the last bit. Always taking the contiguous 1-D form makes a token's rotation
    independent of the shape of the batch it comes in, bit for bit.
    """
    zf = np.ascontiguousarray(z).reshape(-1)
    cf = np.ascontiguousarray(c).reshape(-1)
    w = np.empty_like(zf)
    np.multiply(zf, cf, out=w)
    return w.reshape(z.shape)


def _rotate(x: np.ndarray, cis: np.ndarray, layout: str) -> np.ndarray:
    """Gather the pairs into one complex array, multiply by ``cis``, scatter back."""
    a, b = _split(x, layout)
    z = np.empty(np.broadcast_shapes(a.shape, cis.shape), dtype=cis.dtype)
    z.real = a
    z.imag = b
    w = _multiply_flat(z, np.broadcast_to(cis, z.shape))
    out = np.empty_like(x)
    lo, hi = _split(out, layout)
    lo[...], hi[...] = w.real, w.imag
    return out


def _rotate_blocked(x: np.ndarray, cis: np.ndarray, layout: str) -> np.ndarray:
    """:func:`_rotate` block by block, for one (T, d/2) table shared by all rows of ``x``.

    The same complex multiplications as :func:`_rotate` (so the same bits), but through a
    small buffer that stays in cache: the pairs of a layout that is not interleaved
    (Hugging Face's ``rotate_half``) are gathered and scattered without a full-size
    temporary.
    """
    n_tokens, head_dim = x.shape[-2], x.shape[-1]
    half = head_dim // 2
    rows = np.ascontiguousarray(x).reshape(-1, n_tokens, head_dim)
    out = np.empty(rows.shape, dtype=x.dtype)
    block_rows = max(1, _BLOCK_BYTES // (half * cis.itemsize))
    if n_tokens >= block_rows:
        group, span = 1, block_rows
    else:
        group, span = max(1, block_rows // n_tokens), n_tokens
    real = np.float64 if cis.dtype == np.complex128 else np.float32
    # Flat buffers, viewed with the shape of each block: every view is contiguous.
    src = np.empty(group * span * half, dtype=cis.dtype)
    dst = np.empty_like(src)
    tab = np.empty_like(src) if group > 1 else None
    for i in range(0, rows.shape[0], group):
        j = min(i + group, rows.shape[0])
        for s in range(0, n_tokens, span):
            e = min(s + span, n_tokens)
            size = (j - i) * (e - s) * half
            z, w = src[:size], dst[:size]
            zf = z.view(real).reshape(j - i, e - s, 2 * half)
            a, b = _split(rows[i:j, s:e], layout)
            zf[..., 0::2] = a
            zf[..., 1::2] = b
            if not np.isfinite(zf).all():
                raise ValueError("x: expected finite values, found NaN or infinity")
            if j - i == 1:
                table = cis[s:e].reshape(-1)  # contiguous rows of the (T, d/2) table
            else:
                # several short sequences in one block: the table repeated for each
                table = tab[:size]
                table.reshape(j - i, e - s, half)[...] = cis[s:e]
            np.multiply(z, table, out=w)
            wf = w.view(real).reshape(j - i, e - s, 2 * half)
            lo, hi = _split(out[i:j, s:e], layout)
            lo[...] = wf[..., 0::2]
            hi[...] = wf[..., 1::2]
    return out.reshape(x.shape)


def apply_rope_complex(x, positions, *, inv_freq=None, base: float = 10000.0) -> np.ndarray:
    r"""RoPE computed as complex multiplication, :math:`z_i \mapsto z_i e^{\mathrm{i} m \theta_i}`.

    The pair ``(x[2i], x[2i+1])`` is read as the complex number
    :math:`z_i = x_{2i} + \mathrm{i}\, x_{2i+1}` (the interleaved layout, as in
    Meta's Llama ``apply_rotary_emb``), multiplied by :math:`e^{\mathrm{i} m\theta_i}`
    and written back.  The product is formed in complex128.

    Parameters
    ----------
    x : array_like of float, shape (..., T, head_dim)
    positions : array_like of real, shape (T,) or broadcastable to x.shape[:-1]
        As in :func:`apply_rope`.
    inv_freq : array_like of float, shape (head_dim/2,), optional
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray, shape and dtype of ``x``
        Equal to ``apply_rope(x, positions, layout="interleaved")`` up to rounding.

    References
    ----------
    Su et al., RoFormer, section 3.4.1; Meta ``llama/model.py``,
    ``precompute_freqs_cis`` and ``apply_rotary_emb``.
    """
    x = _check_x(x)
    head_dim = x.shape[-1]
    pos = broadcast_positions("positions", positions, x.shape[:-1])
    angles = _angles(pos, head_dim, inv_freq, base)
    z = x[..., 0::2].astype(np.float64) + 1j * x[..., 1::2].astype(np.float64)
    z = z * np.exp(1j * angles)
    out = np.empty_like(x)
    out[..., 0::2] = z.real
    out[..., 1::2] = z.imag
    return out


def rope_rotation_matrix(position, head_dim: int, *, inv_freq=None, base: float = 10000.0) -> np.ndarray:
    r"""The block-diagonal rotation :math:`R_m` of RoPE in the interleaved layout.

    .. math::
        R_m = \operatorname{diag}\!\left(
        \begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\ \sin m\theta_i & \cos m\theta_i\end{pmatrix}
        \right)_{i=0}^{d/2-1},
        \qquad \texttt{apply\_rope}(x, [m]) = x R_m^\top \text{ (row vectors)}.

    Parameters
    ----------
    position : float
        The position ``m``.
    head_dim : int
        Positive even width ``d``.
    inv_freq : array_like of float, shape (d/2,), optional
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray of float64, shape (head_dim, head_dim)
        Orthogonal, with :math:`R_m^\top R_n = R_{n-m}`.
    """
    position = check_float("position", position)
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    phi = position * _inv_freq(inv_freq, head_dim, base)
    c, s = np.cos(phi), np.sin(phi)
    r = np.zeros((head_dim, head_dim), dtype=np.float64)
    idx = np.arange(0, head_dim, 2)
    r[idx, idx] = c
    r[idx, idx + 1] = -s
    r[idx + 1, idx] = s
    r[idx + 1, idx + 1] = c
    return r


def rope_decay_curve(distances, head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    r"""RoFormer's long-term decay curve :math:`\frac{2}{d}\sum_{j=1}^{d/2} |S_j|`.

    With :math:`h_i = q_{[2i:2i+2]}\, \overline{k_{[2i:2i+2]}}` (complex) the score is
    :math:`\operatorname{Re}\sum_i h_i e^{\mathrm{i} r\theta_i}` for relative distance
    :math:`r`.  Abel summation with :math:`S_j = \sum_{i=0}^{j-1} e^{\mathrm{i} r\theta_i}`
    and :math:`h_{d/2} = 0` gives

    .. math::
        \Bigl|\sum_{i=0}^{d/2-1} h_i e^{\mathrm{i} r\theta_i}\Bigr|
        \le \Bigl(\max_i |h_{i+1} - h_i|\Bigr) \sum_{j=1}^{d/2} |S_j| ,

    and this function returns the mean :math:`\frac{2}{d}\sum_j |S_j|`, which
    decays as :math:`r` grows (RoFormer, section 3.4.3 and Figure 2).

    Parameters
    ----------
    distances : array_like of real, shape (N,)
        Relative distances ``r``.
    head_dim : int
        Positive even width ``d``.
    base : float, default 10000.0

    Returns
    -------
    numpy.ndarray of float64, shape (N,)
    """
    r = as_positions("distances", distances)
    theta = rope_frequencies(head_dim, base)
    partial = np.cumsum(np.exp(1j * r[:, None] * theta[None, :]), axis=1)
    return np.abs(partial).mean(axis=1)


def apply_rope_2d(x, rows, cols, *, base: float = 100.0) -> np.ndarray:
    r"""Axial 2D RoPE for image patches: half of the planes turn with the column, half with the row.

    The ``d/2`` planes of a head of width ``d`` (a multiple of 4) are split in two
    groups of ``d/4`` with the same frequencies
    :math:`\theta_t = \text{base}^{-4t/d}`, ``t = 0 .. d/4 - 1``: plane ``t`` is rotated by
    :math:`c\,\theta_t` (the column, or x coordinate) and plane ``d/4 + t`` by
    :math:`r\,\theta_t` (the row, or y coordinate). Pairs are interleaved, ``(2i, 2i+1)``,
    as in the complex-number form. The score of a query at ``(r, c)`` and a key at
    ``(r', c')`` then depends on the positions only through ``(r - r', c - c')``.

    Parameters
    ----------
    x : array_like of float, shape (..., T, head_dim)
        Queries or keys of ``T`` patches; ``head_dim`` a positive multiple of 4.
    rows, cols : array_like of real, shape (T,) or broadcastable to x.shape[:-1]
        Row (y) and column (x) of each patch, for example ``divmod(arange(H * W), W)``.
    base : float, default 100.0
        The frequency base; 100 is the value of Heo et al.'s reference code for images
        (a grid is tens of patches wide, not thousands of tokens long).

    Returns
    -------
    numpy.ndarray, shape and dtype of ``x``
        Angles and the product are computed in float64.

    References
    ----------
    Heo, Park, Han and Yun, "Rotary Position Embedding for Vision Transformer"
    (ECCV 2024), RoPE-Axial; their code's ``compute_axial_cis`` (x frequencies first, then
    y) with ``init_t_xy`` (``t_x = t % W``, ``t_y = t // W``).
    """
    x = _check_x(x)
    head_dim = x.shape[-1]
    if head_dim % 4:
        raise ValueError(f"x: expected a last dimension (head_dim) divisible by 4, got shape {x.shape}")
    base = check_float("base", base, greater_than=1.0)
    r = broadcast_positions("rows", rows, x.shape[:-1])
    c = broadcast_positions("cols", cols, x.shape[:-1])
    theta = rope_frequencies(head_dim // 2, base)
    angles = np.concatenate(
        np.broadcast_arrays(c[..., None] * theta, r[..., None] * theta), axis=-1
    )  # (..., T, d/2): column planes first, then row planes
    z = (x[..., 0::2].astype(np.float64) + 1j * x[..., 1::2].astype(np.float64)) * np.exp(1j * angles)
    out = np.empty_like(x)
    out[..., 0::2] = z.real
    out[..., 1::2] = z.imag
    return out
