r"""The sinusoidal positional encoding of Vaswani et al. (2017).

.. math::
    \mathrm{PE}(p)_{2i} = \sin(\omega_i p), \qquad
    \mathrm{PE}(p)_{2i+1} = \cos(\omega_i p), \qquad
    \omega_i = \text{base}^{-2i/d}, \quad i = 0, \dots, d/2 - 1 .

Sines sit in the even columns and cosines in the odd ones, the layout of the formula
printed in the paper (section 3.5).  The paper's own code, tensor2tensor, instead
concatenates all sines and then all cosines and spaces its frequencies as
``max_timescale ** (-i / (d/2 - 1))``, and so do fairseq and the DDPM code that copies it;
:func:`tensor2tensor_encoding` reproduces that form and :func:`interleave_permutation`
converts between the two layouts.

All angles are computed in float64.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_position_array, check_float, check_int

__all__ = [
    "sinusoidal_frequencies",
    "sinusoidal_encoding",
    "sinusoidal_shift_matrix",
    "interleave_permutation",
    "tensor2tensor_frequencies",
    "tensor2tensor_encoding",
]


def sinusoidal_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""Angular frequencies :math:`\omega_i = \text{base}^{-2i/d}` of the sinusoidal encoding.

    Computed in log space, :math:`\omega_i = \exp(-(2i/d) \ln \text{base})`, the form
    tensor2tensor and fairseq use for their grid.  In float64 it differs from the power
    form ``base ** (-2 * i / d)`` by up to about 14 units in the last place (the rounding
    of :math:`\ln \text{base}` and of the exponent, magnified by :math:`\exp`), and its
    consecutive ratios are no more equal than the power form's (they spread over about
    18 units in the last place at ``d_model = 512``, the power form's over about 3).
    Neither difference matters next to the rounding of an angle :math:`\omega_i p`.

    Parameters
    ----------
    d_model : int
        Model width ``d``, a positive even integer.
    base : float, default 10000.0
        Ratio that sets the longest wavelength, :math:`2\pi \cdot \text{base}^{(d-2)/d}`;
        must be > 1.

    Returns
    -------
    numpy.ndarray of float64, shape (d_model // 2,)
        Decreasing frequencies from :math:`\omega_0 = 1` down to
        :math:`\text{base}^{-(d-2)/d}`.

    References
    ----------
    Vaswani et al. (2017), "Attention Is All You Need", section 3.5.
    """
    d_model = check_int("d_model", d_model, minimum=2, even=True)
    base = check_float("base", base, greater_than=1.0)
    i = np.arange(d_model // 2, dtype=np.float64)
    return np.exp(-(2.0 * i / d_model) * np.log(base))


def _positions(positions, ndim: int | None = None) -> np.ndarray:
    """An int ``T`` means ``0..T-1``; otherwise finite real positions, their shape kept."""
    return as_position_array("positions", positions, ndim=ndim, count=True)


def sinusoidal_encoding(positions, d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""The sinusoidal positional encoding, sines in even and cosines in odd columns.

    Parameters
    ----------
    positions : int or array_like of real, shape (T,) or any shape (...)
        Either a number of positions ``T`` (meaning ``0, 1, ..., T-1``) or the
        positions themselves (any finite reals; fractional positions are allowed,
        as position interpolation uses them), in any shape: one row per sequence,
        such as Hugging Face's ``position_ids`` of shape (B, T), gives (B, T, d_model).
    d_model : int
        Model width ``d``, a positive even integer.
    base : float, default 10000.0
        Frequency base, see :func:`sinusoidal_frequencies`.

    Returns
    -------
    numpy.ndarray of float64, shape (T, d_model), or positions.shape + (d_model,)
        Row ``t`` is :math:`\mathrm{PE}(p_t)` with
        :math:`\mathrm{PE}(p)_{2i} = \sin(\omega_i p)` and
        :math:`\mathrm{PE}(p)_{2i+1} = \cos(\omega_i p)`.

    References
    ----------
    Vaswani et al. (2017), "Attention Is All You Need", section 3.5.
    """
    pos = _positions(positions)
    omega = sinusoidal_frequencies(d_model, base)
    angles = pos[..., None] * omega
    pe = np.empty(pos.shape + (omega.shape[0] * 2,), dtype=np.float64)
    pe[..., 0::2] = np.sin(angles)
    pe[..., 1::2] = np.cos(angles)
    return pe


def sinusoidal_shift_matrix(k, d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""The matrix :math:`M_k` with :math:`\mathrm{PE}(p + k) = M_k\, \mathrm{PE}(p)` for every ``p``.

    :math:`M_k` is block diagonal with one 2x2 block per frequency, acting on the
    pair :math:`(\sin \omega_i p, \cos \omega_i p)`:

    .. math::
        \begin{pmatrix} \cos \omega_i k & \sin \omega_i k \\
                        -\sin \omega_i k & \cos \omega_i k \end{pmatrix}

    which is the angle-addition formula written as a matrix.  It does not depend on
    ``p``, is orthogonal, and :math:`M_j M_k = M_{j+k}`.  Vaswani et al. (2017,
    section 3.5) chose the encoding because :math:`\mathrm{PE}(p + k)` is a linear
    function of :math:`\mathrm{PE}(p)`; this is that function.

    Parameters
    ----------
    k : float
        The offset (any finite real; negative shifts backwards).
    d_model : int
        Model width, a positive even integer.
    base : float, default 10000.0
        Frequency base, see :func:`sinusoidal_frequencies`.

    Returns
    -------
    numpy.ndarray of float64, shape (d_model, d_model)

    References
    ----------
    Vaswani et al. (2017), "Attention Is All You Need", section 3.5.
    """
    k = check_float("k", k)
    omega = sinusoidal_frequencies(d_model, base)
    c, s = np.cos(omega * k), np.sin(omega * k)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    idx = np.arange(0, d_model, 2)
    m[idx, idx] = c
    m[idx, idx + 1] = s
    m[idx + 1, idx] = -s
    m[idx + 1, idx + 1] = c
    return m


def interleave_permutation(dim: int) -> np.ndarray:
    """Column order that turns a concatenated (half-split) layout into an interleaved one.

    If ``y`` stores pairs as ``(y[i], y[i + dim/2])`` (tensor2tensor's sines then
    cosines, or GPT-NeoX's ``rotate_half`` RoPE) then ``y[..., perm]`` stores the
    same pairs as ``(2i, 2i+1)`` (Vaswani et al., RoFormer, Meta's Llama).  The
    inverse permutation is ``numpy.argsort(perm)``.

    Parameters
    ----------
    dim : int
        A positive even width.

    Returns
    -------
    numpy.ndarray of int64, shape (dim,)
        ``[0, dim/2, 1, dim/2 + 1, ..., dim/2 - 1, dim - 1]``.

    References
    ----------
    The concatenated layout: tensor2tensor's ``get_timing_signal_1d`` and GPT-NeoX's
    ``rotate_half``; the interleaved one: Vaswani et al. (2017), section 3.5, and
    RoFormer (Su et al., 2024).
    """
    dim = check_int("dim", dim, minimum=2, even=True)
    half = dim // 2
    perm = np.empty(dim, dtype=np.int64)
    perm[0::2] = np.arange(half)
    perm[1::2] = np.arange(half) + half
    return perm


def tensor2tensor_frequencies(
    d_model: int, *, min_timescale: float = 1.0, max_timescale: float = 1.0e4
) -> np.ndarray:
    r"""The frequency grid of tensor2tensor's ``get_timing_signal_1d``.

    .. math::
        \omega_i = \text{min\_timescale} \cdot
        \left(\frac{\text{max\_timescale}}{\text{min\_timescale}}\right)^{-i/(d/2 - 1)},
        \quad i = 0, \dots, d/2 - 1

    (tensor2tensor multiplies by ``min_timescale``, which matters only when it is
    not 1).  With the defaults the slowest frequency is exactly
    ``1 / max_timescale``, whereas the paper's grid stops at
    :math:`\text{base}^{-(d-2)/d}`.

    Parameters
    ----------
    d_model : int
        A positive even width.  The grid divides by ``d/2 - 1``, which is 0 for
        ``d_model = 2``; tensor2tensor clamps that divisor to 1, and so does this
        function, so ``d_model = 2`` gives the single frequency ``min_timescale``.
    min_timescale, max_timescale : float
        Shortest and longest timescale, ``0 < min_timescale < max_timescale``.

    Returns
    -------
    numpy.ndarray of float64, shape (d_model // 2,)

    References
    ----------
    tensor2tensor, ``tensor2tensor/layers/common_attention.py``, ``get_timing_signal_1d``.
    """
    d_model = check_int("d_model", d_model, minimum=2, even=True)
    min_timescale = check_float("min_timescale", min_timescale, positive=True)
    max_timescale = check_float("max_timescale", max_timescale, greater_than=min_timescale)
    n = d_model // 2
    increment = np.log(max_timescale / min_timescale) / max(n - 1, 1)
    return min_timescale * np.exp(np.arange(n, dtype=np.float64) * -increment)


def tensor2tensor_encoding(
    positions, d_model: int, *, min_timescale: float = 1.0, max_timescale: float = 1.0e4
) -> np.ndarray:
    """tensor2tensor's timing signal: all sines, then all cosines.

    Parameters
    ----------
    positions : int or array_like of real, shape (T,)
        As in :func:`sinusoidal_encoding`.
    d_model : int
        A positive even width.
    min_timescale, max_timescale : float
        See :func:`tensor2tensor_frequencies`.

    Returns
    -------
    numpy.ndarray of float64, shape (T, d_model)
        ``[sin(p * omega), cos(p * omega)]`` concatenated along the last axis.

    References
    ----------
    tensor2tensor, ``get_timing_signal_1d``; the same grid is used by
    ``tensor2tensor``'s Transformer, which the paper's experiments ran on.
    """
    pos = _positions(positions, ndim=1)
    omega = tensor2tensor_frequencies(
        d_model, min_timescale=min_timescale, max_timescale=max_timescale
    )
    angles = pos[:, None] * omega[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
