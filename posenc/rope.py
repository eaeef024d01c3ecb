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

import numpy as np

from ._checks import (
    as_float_array,
    as_position_array,
    broadcast_positions,
    check_choice,
    check_float,
    check_int,
)
from ._checks import _show
from . import _rope_kernel as _kernel
from .sinusoidal import interleave_permutation

__all__ = [
    "rope_frequencies",
    "rope_angles",
    "rope_table",
    "apply_rope",
    "apply_rope_complex",
    "rope_rotation_matrix",
    "rope_decay_curve",
    "apply_rope_2d",
    "interleave_permutation",
    "apply_partial_rope",
]

LAYOUTS = ("interleaved", "half")


def rope_frequencies(head_dim: int, base: float = 10000.0) -> np.ndarray:
    r"""RoPE's rotation frequencies :math:`\theta_i = \text{base}^{-2i/d}`.

    Computed as ``1.0 / base ** (arange(0, d, 2) / d)``, the expression of
    Hugging Face's ``compute_default_rope_parameters`` (transformers 5.24: a static method
    of each model's rotary class, e.g. ``LlamaRotaryEmbedding``; 4.x:
    ``_compute_default_rope_parameters`` in ``modeling_rope_utils.py``), there in float32,
    here in float64.

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


def _table_dtype(dtype) -> np.dtype:
    """The complex dtype of the table that rotates an ``x`` of ``dtype``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind not in "fc" or dt.itemsize > 16:
        raise TypeError(
            f"dtype: expected a floating-point dtype (the dtype of x) or complex64/complex128, "
            f"got {dtype!r}"
        )
    if dt.kind == "c":
        return dt
    # float64 works in complex128; float16 and float32 (and anything else) in complex64
    return np.dtype(np.complex128 if dt == np.float64 else np.complex64)


def rope_table(
    positions,
    head_dim: int,
    *,
    inv_freq=None,
    base: float = 10000.0,
    attention_factor: float = 1.0,
    dtype="float64",
) -> np.ndarray:
    r"""RoPE's cos/sin table :math:`s\,e^{\mathrm{i} m_t\theta_i} = s(\cos m_t\theta_i + \mathrm{i}\,\sin m_t\theta_i)`.

    The table depends only on the positions and the frequencies, not on the queries or
    keys, so its owner computes it once and passes it to every call of
    :func:`apply_rope` (``table=``), for queries and keys of every layer alike, as Hugging
    Face's Llama computes ``cos`` and ``sin`` once per forward pass and hands them to
    ``apply_rotary_pos_emb(q, k, cos, sin)``. The function is pure: nothing is cached.

    The angles :math:`m_t\theta_i` and their cosines and sines are computed in float64;
    the factor :math:`s`, when it is not 1, multiplies them in float64; the result is
    rounded once to the working precision of ``dtype``.

    Parameters
    ----------
    positions : array_like of real, shape (T,) or any shape (...)
        Token positions, as in :func:`rope_angles` (for example Hugging Face's
        ``position_ids[:, None, :]``, shape (B, 1, T), for per-sequence positions).
    head_dim : int
        Head width ``d``, positive and even.
    inv_freq : array_like of float, shape (d/2,), optional
        Frequencies; defaults to :func:`rope_frequencies` with ``base``.
    base : float, default 10000.0
        Used only when ``inv_freq`` is None.
    attention_factor : float, default 1.0
        Positive factor :math:`s` applied to cos and sin (Hugging Face's
        ``attention_scaling``; YaRN's temperature).
    dtype : dtype, default float64
        The dtype of the ``x`` the table will rotate: complex128 for float64, complex64
        for float32 and float16. A complex dtype is taken as it is.

    Returns
    -------
    numpy.ndarray of complex64 or complex128, shape positions.shape + (head_dim // 2,)
        ``table.real`` is :math:`s\cos m_t\theta_i` and ``table.imag`` is
        :math:`s\sin m_t\theta_i`.

    References
    ----------
    Su et al., RoFormer, section 3.4.2; Meta ``llama/model.py``, ``precompute_freqs_cis``
    (the same table as complex numbers); Hugging Face ``transformers``,
    ``LlamaRotaryEmbedding.forward`` (cos and sin, times ``attention_scaling``).
    """
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    attention_factor = check_float("attention_factor", attention_factor, positive=True)
    ctype = _table_dtype(dtype)
    angles = _angles(as_position_array("positions", positions), head_dim, inv_freq, base)
    table = np.empty(angles.shape, dtype=ctype)
    if attention_factor == 1.0:
        np.cos(angles, out=table.real, casting="same_kind")
        np.sin(angles, out=table.imag, casting="same_kind")
    else:
        table.real = np.cos(angles) * attention_factor
        table.imag = np.sin(angles) * attention_factor
    return table


def apply_rope(
    x,
    positions=None,
    *,
    inv_freq=None,
    base: float = 10000.0,
    layout: str = "interleaved",
    attention_factor: float = 1.0,
    table=None,
) -> np.ndarray:
    r"""Rotate every pair of coordinates of ``x`` by its position's angle.

    For a pair :math:`(a, b)` with angle :math:`\phi = m\theta_i` the result is
    :math:`(a\cos\phi - b\sin\phi,\; a\sin\phi + b\cos\phi)\cdot s`, where
    :math:`s` is ``attention_factor`` (Hugging Face multiplies its cos and sin
    caches by ``attention_scaling``; YaRN uses it as its temperature). It is computed
    as the complex product :math:`(a + \mathrm{i}b)\, s\,e^{\mathrm{i}\phi}` with the
    table of :func:`rope_table`, in complex128 for float64 ``x`` and in complex64
    otherwise.

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
        Omitted when ``table`` is given.
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
    table : numpy.ndarray of complex, shape (..., T, head_dim/2), optional
        A table from :func:`rope_table` (``dtype=x.dtype``), computed once by the caller
        and reused, for example for queries and keys of every layer; its shape must
        broadcast against ``x.shape[:-1] + (head_dim/2,)``. Given instead of
        ``positions``, ``inv_freq``, ``base`` and ``attention_factor``; the result is the
        same, bit for bit, as with them.

    Returns
    -------
    numpy.ndarray, shape and dtype of ``x``

    References
    ----------
    Su et al., RoFormer, section 3.4.2 (the efficient realisation); Hugging Face ``transformers``,
    ``models/llama/modeling_llama.py``, ``rotate_half`` and ``apply_rotary_pos_emb``.
    """
    x = _check_x(x, check_finite=False)  # finiteness is checked below
    layout = check_choice("layout", layout, LAYOUTS)
    if table is None:
        pos = broadcast_positions("positions", positions, x.shape[:-1])
        table = rope_table(pos, x.shape[-1], inv_freq=inv_freq, base=base,
                           attention_factor=attention_factor, dtype=x.dtype)
    else:
        table = _check_table(table, x, positions, inv_freq, base,
                             attention_factor)
    if _kernel.blocked_applies(x, table):
        # large inputs: the same products, block by block through the cache
        return _kernel.rotate_blocked(x, table, layout)
    _kernel.check_finite(x)
    a, b = _pairs(x, layout)
    z = np.empty(a.shape, dtype=table.dtype)  # in the table's precision
    z.real, z.imag = a, b  # z = a + ib
    w = _kernel.multiply_flat(z, np.broadcast_to(table, z.shape))  # z * table
    out = np.empty_like(x)
    lo, hi = _pairs(out, layout)
    lo[...], hi[...] = w.real, w.imag
    return out


def _pairs(x: np.ndarray, layout: str):
    """The two coordinates of every pair: ``(2i, 2i+1)`` or ``(i, i + d/2)``."""
    half = x.shape[-1] // 2
    if layout == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    return x[..., :half], x[..., half:]


def _check_table(table, x: np.ndarray, positions, inv_freq, base, attention_factor) -> np.ndarray:
    """Validate a caller's table for ``x``; return it in the working precision of ``x``."""
    if positions is not None or inv_freq is not None or base != 10000.0 or attention_factor != 1.0:
        raise ValueError(
            "table: expected either a table or positions (with inv_freq, base and "
            "attention_factor), got both"
        )
    if not isinstance(table, np.ndarray) or table.dtype.kind != "c":
        raise TypeError(f"table: expected the complex array returned by rope_table, got {_show(table)}")
    ctype = _table_dtype(x.dtype)
    if table.dtype != ctype:
        if ctype == np.complex64 and table.dtype == np.complex128:
            # rounding the float64 cos and sin once, exactly what rope_table(dtype=x.dtype) does
            table = table.astype(np.complex64)
        else:
            raise TypeError(
                f"table: expected {ctype} for x of dtype {x.dtype} (rope_table(..., dtype=x.dtype)), "
                f"got {table.dtype}"
            )
    want = x.shape[:-1] + (x.shape[-1] // 2,)
    try:
        shape = np.broadcast_shapes(table.shape, want)
    except ValueError:
        shape = None
    if table.ndim < 2 or shape != want:
        raise ValueError(
            f"table: shape {table.shape} does not broadcast against "
            f"x.shape[:-1] + (head_dim/2,) = {want}; expected a table from rope_table with "
            f"head_dim = {x.shape[-1]}, such as shape {want[-2:]}"
        )
    if not np.isfinite(table).all():
        raise ValueError("table: expected finite values, found NaN or infinity")
    return table


def apply_rope_complex(
    x, positions, *, inv_freq=None, base: float = 10000.0
) -> np.ndarray:
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
    r = as_position_array("distances", distances, ndim=1)
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
    # The first d/2 coordinates hold the column planes, the last d/2 the row planes: each
    # half is 1D RoPE in complex form with the frequencies theta, by column or by row.
    half = head_dim // 2
    out = np.empty_like(x)
    out[..., :half] = apply_rope_complex(x[..., :half], c, inv_freq=theta)
    out[..., half:] = apply_rope_complex(x[..., half:], r, inv_freq=theta)
    return out


def apply_partial_rope(x, positions, *, inv_freq, layout: str = "half", attention_factor: float = 1.0) -> np.ndarray:
    r"""RoPE on the first ``2 len(inv_freq)`` coordinates of each head; the rest pass unchanged.

    The convention of ``partial_rotary_factor`` in Hugging Face's models: with
    ``r = int(head_dim * p)`` rotated coordinates, ``x[..., :r]`` is rotated with the
    ``r / 2`` frequencies of width ``r`` (from any function of :mod:`posenc.scaling` with
    ``partial_rotary_factor=p``) and ``x[..., r:]`` carries no position. The pairs inside
    the rotated slice are ``(i, i + r/2)`` (``layout="half"``: GPT-NeoX, Phi-3,
    StableLM, Persimmon, Qwen3-Next) or ``(2i, 2i+1)``
    (``layout="interleaved"``: GLM and GLM-4). Gemma 4's ``proportional`` type is
    not this convention: it rotates the whole head with zero frequencies in its last
    planes (:func:`posenc.scaling.proportional_scaling`, then :func:`apply_rope`).

    Parameters
    ----------
    x : array_like of float, shape (..., T, head_dim)
        Queries or keys.
    positions : array_like of real, shape (T,) or broadcastable to x.shape[:-1]
        As in :func:`apply_rope`.
    inv_freq : array_like of float, shape (r / 2,)
        Frequencies of the rotated width ``r``, with ``2 <= r <= head_dim``.
    layout : {"half", "interleaved"}, default "half"
        Which coordinates of the rotated slice form a pair.
    attention_factor : float, default 1.0
        Positive factor applied to cos and sin, on the rotated slice only (as Hugging Face
        multiplies its cos/sin cache, which covers only that slice).

    Returns
    -------
    numpy.ndarray, shape and dtype of ``x``

    References
    ----------
    Hugging Face transformers 5.24.0, ``apply_rotary_pos_emb`` in
    ``models/phi3/modeling_phi3.py`` and ``models/gpt_neox/modeling_gpt_neox.py``
    (``rotary_dim = cos.shape[-1]``, ``q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]``)
    and in ``models/glm/modeling_glm.py`` (the interleaved pairs).
    """
    x = _check_x(x)
    layout = check_choice("layout", layout, LAYOUTS)
    freqs = as_float_array("inv_freq", inv_freq, min_ndim=1)
    if freqs.ndim != 1 or not 1 <= freqs.shape[0] <= x.shape[-1] // 2:
        raise ValueError(
            f"inv_freq: expected a 1-D array of 1 to head_dim / 2 = {x.shape[-1] // 2} frequencies, "
            f"got shape {freqs.shape}"
        )
    attention_factor = check_float("attention_factor", attention_factor, positive=True)
    pos = broadcast_positions("positions", positions, x.shape[:-1])
    rotary = 2 * freqs.shape[0]
    out = x.copy()
    out[..., :rotary] = apply_rope(x[..., :rotary], pos, inv_freq=freqs, layout=layout,
                                   attention_factor=attention_factor)
    return out
