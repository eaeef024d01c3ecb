r"""RoPE context extension: new frequencies (and a temperature) for longer contexts.

One vocabulary for every method: the head width is the only positional argument, every
other one is keyword-only and named after Hugging Face's ``rope_parameters`` keys
(``factor``, ``partial_rotary_factor``, ``beta_fast``, ``beta_slow``, ``truncate``,
``attention_factor``, ``mscale``, ``mscale_all_dim``, ``low_freq_factor``,
``high_freq_factor``, ``short_factor``, ``long_factor``), with three renamings kept from
this package's first version: ``base`` for ``rope_theta``, ``original_max_position`` for
``original_max_position_embeddings`` and ``max_position`` for the config's
``max_position_embeddings``; ``seq_len`` is the argument of Hugging Face's functions,
``ramp`` this package's own. Every method returns a :class:`RopeScaling`: float64
frequencies ``inv_freq`` and a float ``attention_factor`` (1.0 where the method has none).
It unpacks as a pair, ready for
``apply_rope(x, positions, inv_freq=inv_freq, attention_factor=attention_factor)``::

    inv_freq, attention_factor = yarn_scaling(128, factor=8.0, original_max_position=4096)

The methods are registered in :data:`ROPE_SCALING_FUNCTIONS` under Hugging Face's
``rope_type`` names (``default``, ``linear``, ``dynamic``, ``yarn``, ``longrope``,
``llama3``, ``proportional``) plus ``ntk`` for static NTK-aware scaling, which is not a
Hugging Face ``rope_type``; :func:`rope_scaling` dispatches through it, and
:func:`rope_from_config` reads a whole ``rope_parameters`` config (per layer type where it
is nested) as transformers 5.x does.

The formulas follow Hugging Face ``transformers``' ``modeling_rope_utils``
(``ROPE_INIT_FUNCTIONS``, transformers 5.24.0), which is what the released checkpoints are
run with, computed here in float64 where Hugging Face computes in float32 (a plane lying
exactly on a Llama 3 band edge can fall on the other side). With ``factor = 1`` the
linear, NTK, dynamic, YaRN and Llama 3 methods return the default frequencies (tested).

``partial_rotary_factor`` ``p`` is accepted by every method. All but ``proportional``
rotate only the first ``int(head_dim * p)`` coordinates and return ``int(head_dim * p) / 2``
frequencies computed for that narrower width (the exponent is over the rotated width),
as Hugging Face's functions do for the models that use it (GPT-NeoX, Phi-3, StableLM, Qwen3-Next);
:func:`posenc.rope.apply_partial_rope` applies them. ``proportional`` (Gemma 4) returns
``head_dim / 2`` frequencies with the exponent over the whole head, the first
``int(p * head_dim // 2)`` of them non-zero and the rest zero.

Dynamic NTK and LongRoPE are stateless here: they return the frequencies for the length
``seq_len`` they are given (see :func:`dynamic_ntk_scaling` and :func:`longrope_scaling`
for Hugging Face's stateful update).
"""

from __future__ import annotations

import inspect
import math
import types
from typing import NamedTuple

import numpy as np

from collections.abc import Mapping

from ._checks import _show, as_float_array, check_bool, check_choice, check_float, check_int
from .rope import rope_frequencies

__all__ = [
    "RopeScaling",
    "ROPE_SCALING_FUNCTIONS",
    "rope_scaling",
    "default_scaling",
    "linear_scaling",
    "ntk_scaling",
    "dynamic_ntk_scaling",
    "yarn_scaling",
    "yarn_correction_range",
    "yarn_attention_factor",
    "longrope_scaling",
    "longrope_attention_factor",
    "llama3_scaling",
    "proportional_scaling",
    "rope_from_config",
]


class RopeScaling(NamedTuple):
    r"""New RoPE frequencies and the attention factor that goes with them.

    Returned by every method of :mod:`posenc.scaling`. A named pair: it unpacks as
    ``inv_freq, attention_factor = ...`` and its fields are read by name
    (``yarn_scaling(...).inv_freq``), as Hugging Face's ``ROPE_INIT_FUNCTIONS`` return
    ``(inv_freq, attention_factor)``.

    Parameters
    ----------
    inv_freq : numpy.ndarray of float64, shape (rotary_dim // 2,)
        The frequencies :math:`\theta_i'`, for ``apply_rope(..., inv_freq=...)``;
        ``rotary_dim = int(head_dim * partial_rotary_factor)`` (the head width when the
        whole head is rotated; ``proportional`` always returns ``head_dim // 2``).
    attention_factor : float
        The factor that multiplies the cos/sin table (YaRN's temperature), for
        ``apply_rope(..., attention_factor=...)``; 1.0 for methods without one.
    """

    inv_freq: np.ndarray
    attention_factor: float


RopeScaling.inv_freq.__doc__ = "The frequencies, float64 of shape (rotary_dim // 2,)."
RopeScaling.attention_factor.__doc__ = "The attention factor (1.0 for methods without one)."


def _factor(factor) -> float:
    return check_float("factor", factor, positive=True)


def _rotary_dim(head_dim, partial_rotary_factor, *, minimum: int = 2) -> int:
    """The rotated width ``int(head_dim * p)``, as Hugging Face computes it; checked even."""
    p = check_float("partial_rotary_factor", partial_rotary_factor, positive=True)
    if p > 1.0:
        raise ValueError(f"partial_rotary_factor: expected a fraction in (0, 1], got {p}")
    if p == 1.0:
        return check_int("head_dim", head_dim, minimum=minimum, even=True)
    head_dim = check_int("head_dim", head_dim, minimum=1)
    dim = int(head_dim * p)
    if dim < minimum or dim % 2:
        raise ValueError(
            f"partial_rotary_factor: expected int(head_dim * partial_rotary_factor) to be an even integer "
            f">= {minimum} (head_dim = {head_dim}), got {dim} for {p}"
        )
    return dim


def default_scaling(head_dim: int, *, base: float = 10000.0, partial_rotary_factor: float = 1.0) -> RopeScaling:
    r"""No extension: RoPE's own frequencies, as Hugging Face's ``default`` rope type.

    .. math:: \theta_i = b^{-2i/d}

    with ``d`` the rotated width ``int(head_dim * partial_rotary_factor)``.

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    base : float, default 10000.0
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: the frequencies are those of
        the width ``int(head_dim * p)``, which must be even (Hugging Face's
        ``partial_rotary_factor``).

    Returns
    -------
    RopeScaling
        ``inv_freq`` equal to :func:`posenc.rope.rope_frequencies` of the rotated width,
        ``attention_factor`` 1.0.

    References
    ----------
    Hugging Face transformers 5.24.0, the models' ``compute_default_rope_parameters``
    (for example ``Phi3RotaryEmbedding``, which reads ``partial_rotary_factor``).
    """
    dim = _rotary_dim(head_dim, partial_rotary_factor)
    return RopeScaling(rope_frequencies(dim, base), 1.0)


def linear_scaling(
    head_dim: int, *, factor: float, base: float = 10000.0, partial_rotary_factor: float = 1.0
) -> RopeScaling:
    r"""Position interpolation: divide every frequency by the factor ``s``.

    Position ``m`` is rotated as position ``m / s`` was in training, so a context of
    ``s * L`` positions is squeezed into the ``L`` positions the model has seen.

    .. math:: \theta_i' = \theta_i / s

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    factor : float
        The scale ``s > 0`` (``s > 1`` extends the context).
    base : float, default 10000.0
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: the frequencies are those of
        the width ``int(head_dim * p)``, which must be even (Hugging Face's
        ``partial_rotary_factor``).

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(rotary_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    Chen et al. (2023), "Extending Context Window of Large Language Models via
    Positional Interpolation"; Hugging Face ``_compute_linear_scaling_rope_parameters``.
    """
    factor = _factor(factor)
    dim = _rotary_dim(head_dim, partial_rotary_factor)
    return RopeScaling(rope_frequencies(dim, base) / factor, 1.0)


def ntk_scaling(
    head_dim: int, *, factor: float, base: float = 10000.0, partial_rotary_factor: float = 1.0
) -> RopeScaling:
    r"""NTK-aware scaling: keep the frequencies' shape, enlarge the base.

    .. math:: b' = b\, s^{d/(d-2)}, \qquad \theta_i' = b'^{-2i/d}

    The exponent is chosen so that the slowest frequency is interpolated exactly,
    :math:`\theta_{d/2-1}' = \theta_{d/2-1}/s`, while :math:`\theta_0 = 1` is left
    alone: high frequencies extrapolate, low ones interpolate.

    Parameters
    ----------
    head_dim : int
        Positive even head width, at least 4 (``d - 2`` must be positive).
    factor : float
        The scale ``s > 0``.
    base : float, default 10000.0
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: the frequencies are those of
        the width ``int(head_dim * p)``, which must be even (Hugging Face's
        ``partial_rotary_factor``).
        ``d`` above is that width (at least 4).

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(rotary_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    bloc97 (2023), "NTK-Aware Scaled RoPE", as described by Peng et al. (2024, ICLR)
    under "NTK-aware" interpolation.
    """
    dim = _rotary_dim(head_dim, partial_rotary_factor, minimum=4)
    factor = _factor(factor)
    base = check_float("base", base, greater_than=1.0)
    new_base = base * factor ** (dim / (dim - 2))
    return RopeScaling(rope_frequencies(dim, new_base), 1.0)


def dynamic_ntk_scaling(
    head_dim: int,
    *,
    factor: float,
    seq_len: int,
    original_max_position: int,
    base: float = 10000.0,
    partial_rotary_factor: float = 1.0,
) -> RopeScaling:
    r"""Dynamic NTK scaling, as Hugging Face's ``dynamic`` rope type.

    The base grows with the current sequence length ``L`` (never below the
    original length :math:`L_0`):

    .. math::
        b' = b \left(\frac{s \max(L, L_0)}{L_0} - (s - 1)\right)^{d/(d-2)} ,

    so up to :math:`L_0` the frequencies are exactly the default ones. The effective
    factor at length ``L`` is ``s L / L_0 - (s - 1)``, not ``s``: at ``L = s L_0`` it is
    ``s^2 - s + 1`` (57 for ``s = 8``). The "Dynamic Scaling" of Peng et al. uses
    ``max(1, L / L_0)`` as the factor, which is this formula with ``s = 1``.

    This function is stateless: it returns the frequencies for one length. Hugging
    Face's ``_dynamic_frequency_update`` keeps state across calls (the frequencies only
    grow while the length exceeds the largest seen, and reset when it falls back below
    :math:`L_0`), so the two agree call by call but not across a sequence of calls.

    Parameters
    ----------
    head_dim : int
        Positive even head width, at least 4.
    factor : float
        The scale ``s > 0``.
    seq_len : int
        Current sequence length ``L >= 1`` (Hugging Face uses the largest
        position id plus one).
    original_max_position : int
        Training context :math:`L_0 \ge 1` (``max_position_embeddings``).
    base : float, default 10000.0
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: the frequencies are those of
        the width ``int(head_dim * p)``, which must be even (Hugging Face's
        ``partial_rotary_factor``).
        ``d`` above is that width (at least 4).

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(rotary_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    Hugging Face ``_compute_dynamic_ntk_parameters`` (credited there to
    /u/bloc97 and /u/emozilla); Peng et al. (2024, ICLR), "Dynamic Scaling".
    """
    head_dim = _rotary_dim(head_dim, partial_rotary_factor, minimum=4)
    factor = _factor(factor)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    base = check_float("base", base, greater_than=1.0)
    length = max(seq_len, original_max_position)
    new_base = base * ((factor * length / original_max_position) - (factor - 1)) ** (
        head_dim / (head_dim - 2)
    )
    return RopeScaling(rope_frequencies(head_dim, new_base), 1.0)


def _mscale(factor: float, mscale: float = 1.0) -> float:
    """Hugging Face's ``get_mscale``: ``0.1 * mscale * ln(s) + 1``, 1.0 for ``s <= 1``."""
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def yarn_attention_factor(*, factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    r"""YaRN's temperature :math:`\sqrt{1/t} = 0.1 \ln s + 1` (1.0 for :math:`s \le 1`).

    With DeepSeek's two parameters, both given and non-zero, it is the ratio

    .. math::
        \frac{0.1\, m \ln s + 1}{0.1\, m_\text{all} \ln s + 1}

    (``mscale`` :math:`m`, ``mscale_all_dim`` :math:`m_\text{all}`; 1 for DeepSeek-V3,
    whose ``mscale = mscale_all_dim = 1``, which moves the whole temperature into the
    softmax scale, see :func:`posenc.mla.mla_softmax_scale`). With only one of the two, or
    one of them 0, Hugging Face ignores both and this function does too.

    Parameters
    ----------
    factor : float
        The scale ``s > 0``.
    mscale, mscale_all_dim : float, optional
        DeepSeek's multipliers of :math:`\ln s`, non-negative.

    Returns
    -------
    float

    References
    ----------
    Peng et al. (2024, ICLR), the attention scaling of YaRN; Hugging Face transformers 5.24.0,
    ``get_mscale`` and the ``attention_factor`` rule in ``_compute_yarn_parameters``.
    """
    factor = _factor(factor)
    if mscale is not None:
        mscale = check_float("mscale", mscale, minimum=0.0)
    if mscale_all_dim is not None:
        mscale_all_dim = check_float("mscale_all_dim", mscale_all_dim, minimum=0.0)
    if mscale and mscale_all_dim:
        return _mscale(factor, mscale) / _mscale(factor, mscale_all_dim)
    return _mscale(factor)


def yarn_correction_range(
    head_dim: int,
    *,
    original_max_position: int,
    base: float = 10000.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
):
    r"""The band of dimensions over which YaRN ramps from extrapolation to interpolation.

    Dimension pair ``i`` completes :math:`L_0 \theta_i / (2\pi)` turns over the
    training context.  Solving "turns = :math:`\beta`" for the dimension index
    gives

    .. math:: \text{dim}(\beta) = \frac{d \,\ln\!\bigl(L_0 / (2\pi\beta)\bigr)}{2 \ln b} ,

    and the range is :math:`[\text{dim}(\beta_\text{fast}), \text{dim}(\beta_\text{slow})]`,
    floored and ceiled when ``truncate`` and then clamped to ``[0, d - 1]``
    (Hugging Face clamps to ``d - 1``, not ``d/2 - 1``; reproduced here).

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    original_max_position : int
        Training context :math:`L_0 \ge 1`.
    base : float, default 10000.0
    beta_fast, beta_slow : float
        Turn counts that bound the ramp, ``beta_fast > beta_slow > 0``.
    truncate : bool, default True
        Round the bounds outwards to integers (Hugging Face's default; gpt-oss
        sets it to False).

    Returns
    -------
    (low, high) : tuple of two numbers
        ints when ``truncate``, floats otherwise.

    References
    ----------
    Peng et al. (2024, ICLR), "NTK-by-parts" interpolation, and their reference code;
    Hugging Face ``find_correction_range``.
    """
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    base = check_float("base", base, greater_than=1.0)
    beta_fast = check_float("beta_fast", beta_fast, positive=True)
    beta_slow = check_float("beta_slow", beta_slow, positive=True)
    truncate = check_bool("truncate", truncate)
    if beta_fast <= beta_slow:
        raise ValueError(
            f"beta_fast: expected a turn count greater than beta_slow = {beta_slow}, got {beta_fast}"
        )

    def correction_dim(turns: float) -> float:
        return (head_dim * math.log(original_max_position / (turns * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, head_dim - 1)


def yarn_scaling(
    head_dim: int,
    *,
    factor: float,
    original_max_position: int,
    base: float = 10000.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
    ramp: str = "released",
    attention_factor: float | None = None,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    partial_rotary_factor: float = 1.0,
) -> RopeScaling:
    r"""YaRN ("NTK-by-parts" frequencies plus an attention temperature).

    With the ramp :math:`\gamma_i = \operatorname{clip}\bigl((i - \text{low})/(\text{high} - \text{low}), 0, 1\bigr)`
    over pair index ``i`` (see :func:`yarn_correction_range`; ``high`` is nudged
    by 0.001 when equal to ``low``), the frequencies blend extrapolation and
    interpolation:

    .. math::
        \theta_i' = \frac{\theta_i}{s}\,\gamma_i + \theta_i\,(1 - \gamma_i),

    so fast pairs (many turns in training) are kept and slow pairs are
    interpolated.  The attention factor is ``attention_factor`` when it is given, and
    otherwise :func:`yarn_attention_factor` of ``factor``, ``mscale`` and
    ``mscale_all_dim`` (Hugging Face's precedence).

    Two ramps are offered, named apart because they differ on narrow heads:

    ``ramp="released"`` (default)
        The ramp of the released code (Hugging Face ``_compute_yarn_parameters``, which
        follows the authors' ``find_correction_range`` and ``linear_ramp_mask``): linear
        in the *pair index*, between the indices where the turn count equals
        ``beta_fast`` and ``beta_slow``, rounded outwards when ``truncate`` and clamped
        to ``[0, head_dim - 1]``.
    ``ramp="paper"``
        The paper's ramp (Peng et al., section 3.2, Eqs. 17-20): linear in the *number of
        turns* :math:`\rho_i = L_0\theta_i/(2\pi)`, with no rounding,

        .. math::
            \gamma_i = \operatorname{clip}\Bigl(\frac{\beta_\text{fast} - \rho_i}
            {\beta_\text{fast} - \beta_\text{slow}}, 0, 1\Bigr)

        (the paper writes the extrapolated share :math:`1 - \gamma_i =
        \operatorname{clip}((\rho_i - \alpha)/(\beta - \alpha), 0, 1)` with
        :math:`\alpha = \beta_\text{slow}`, :math:`\beta = \beta_\text{fast}`).
        ``truncate`` is ignored.

    The two agree on every pair with at least ``beta_fast`` or at most ``beta_slow``
    turns when the rounded indices are not clamped; in between the paper's ramp is
    a function of the turn count alone, the released one of the index.  With a head
    of width 8 and :math:`L_0 = 32`, pair 0 has about 5 turns: the released ramp keeps
    it (the rounded lower index is 0), the paper's ramp gives it the ratio 0.24 at
    ``s = 8``.

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    factor : float
        The scale ``s > 0``.
    original_max_position : int
        Training context :math:`L_0 \ge 1`.
    base : float, default 10000.0
    beta_fast, beta_slow : float, default 32.0 and 1.0
    truncate : bool, default True
        Round the released ramp's edges outwards (ignored for ``ramp="paper"``). gpt-oss
        sets it to False.
    ramp : {"released", "paper"}, default "released"
        Which ramp (see above).
    attention_factor : float, optional
        Positive temperature that overrides the computed one (Hugging Face's
        ``attention_factor``).
    mscale, mscale_all_dim : float, optional
        DeepSeek's parameters of the temperature, see :func:`yarn_attention_factor`.
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: everything above is computed
        for the width ``d = int(head_dim * p)``, which must be even.

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(rotary_dim // 2,)``) and ``attention_factor``.

    References
    ----------
    Peng et al. (2024, ICLR), "YaRN: Efficient Context Window Extension of Large
    Language Models", section 3.2 (the paper's ramp); Hugging Face transformers 5.24.0,
    ``_compute_yarn_parameters`` (the released ramp, ``attention_factor``, ``mscale``,
    ``mscale_all_dim``, ``truncate``).
    """
    factor = _factor(factor)
    ramp = check_choice("ramp", ramp, ("released", "paper"))
    head_dim = _rotary_dim(head_dim, partial_rotary_factor)
    if attention_factor is None:
        attention_factor = yarn_attention_factor(factor=factor, mscale=mscale, mscale_all_dim=mscale_all_dim)
    else:
        attention_factor = check_float("attention_factor", attention_factor, positive=True)
        yarn_attention_factor(factor=factor, mscale=mscale, mscale_all_dim=mscale_all_dim)  # checks them
    if ramp == "paper":
        original_max_position = check_int("original_max_position", original_max_position, minimum=1)
        base = check_float("base", base, greater_than=1.0)
        beta_fast = check_float("beta_fast", beta_fast, positive=True)
        beta_slow = check_float("beta_slow", beta_slow, positive=True)
        check_bool("truncate", truncate)
        if beta_fast <= beta_slow:
            raise ValueError(
                f"beta_fast: expected a turn count greater than beta_slow = {beta_slow}, got {beta_fast}"
            )
        theta = rope_frequencies(head_dim, base)
        turns = original_max_position * theta / (2 * math.pi)
        gamma = np.clip((beta_fast - turns) / (beta_fast - beta_slow), 0.0, 1.0)
        inv_freq = (theta / factor) * gamma + theta * (1.0 - gamma)
        return RopeScaling(inv_freq, attention_factor)
    low, high = yarn_correction_range(
        head_dim,
        original_max_position=original_max_position,
        base=base,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    theta = rope_frequencies(head_dim, base)
    if low == high:
        high = high + 0.001  # Hugging Face: "Prevent singularity"
    ramp = np.clip((np.arange(head_dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    inv_freq = (theta / factor) * (1.0 - extrapolation) + theta * extrapolation
    return RopeScaling(inv_freq, attention_factor)


def llama3_scaling(
    head_dim: int,
    *,
    factor: float,
    original_max_position: int,
    base: float = 10000.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    partial_rotary_factor: float = 1.0,
) -> RopeScaling:
    r"""Llama 3.1's frequency-dependent scaling, as Hugging Face's ``llama3`` rope type.

    With wavelength :math:`\lambda_i = 2\pi/\theta_i` and training context :math:`L_0`:

    * :math:`\lambda_i < L_0/\text{high\_freq\_factor}`: unchanged;
    * :math:`\lambda_i > L_0/\text{low\_freq\_factor}`: divided by ``s``;
    * in between (edges included): :math:`(1-\mu)\theta_i/s + \mu\theta_i` with
      :math:`\mu = (L_0/\lambda_i - \text{low\_freq\_factor}) /
      (\text{high\_freq\_factor} - \text{low\_freq\_factor})`.

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    factor : float
        The scale ``s > 0`` (8 for Llama 3.1).
    original_max_position : int
        :math:`L_0` (8192 for Llama 3.1).
    base : float, default 10000.0
        500000 for Llama 3.
    low_freq_factor, high_freq_factor : float, default 1.0 and 4.0
        Band edges, ``0 < low_freq_factor <= high_freq_factor``. Equal edges (Llama 4
        Scout: both 1) leave no band in between: every plane whose wavelength exceeds
        :math:`L_0/\text{low\_freq\_factor}` is divided by ``s``, the others are kept (a
        wavelength exactly on the edge, where Hugging Face divides 0 by 0, is rejected).
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: the frequencies are those of
        the width ``int(head_dim * p)``, which must be even.

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(rotary_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    Meta Llama 3.1 ``apply_scaling``; Hugging Face transformers 5.24.0,
    ``_compute_llama3_parameters``.
    """
    factor = _factor(factor)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    low_freq_factor = check_float("low_freq_factor", low_freq_factor, positive=True)
    high_freq_factor = check_float("high_freq_factor", high_freq_factor, positive=True)
    if high_freq_factor < low_freq_factor:
        raise ValueError(
            f"high_freq_factor: expected a value >= low_freq_factor = {low_freq_factor}, got {high_freq_factor}"
        )
    theta = rope_frequencies(_rotary_dim(head_dim, partial_rotary_factor), base)
    low_freq_wavelen = original_max_position / low_freq_factor
    high_freq_wavelen = original_max_position / high_freq_factor
    wavelen = 2 * math.pi / theta
    scaled = np.where(wavelen > low_freq_wavelen, theta / factor, theta)
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    if high_freq_factor == low_freq_factor:
        if is_medium.any():
            raise ValueError(
                f"low_freq_factor: with high_freq_factor equal to it, a wavelength lies exactly on the band edge "
                f"{low_freq_wavelen} and its factor is 0 / 0 (NaN in Hugging Face); expected no plane on the edge"
            )
        return RopeScaling(scaled, 1.0)
    smooth = (original_max_position / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    return RopeScaling(np.where(is_medium, smoothed, scaled), 1.0)


def longrope_attention_factor(*, factor: float, original_max_position: int) -> float:
    r"""LongRoPE's attention factor :math:`\sqrt{1 + \ln s / \ln L_0}` (1.0 for :math:`s \le 1`).

    Parameters
    ----------
    factor : float
        The scale ``s > 0``; Phi-3 configs leave it out and Hugging Face takes
        ``max_position_embeddings / original_max_position_embeddings`` (32 for a
        131072-token model trained at 4096).
    original_max_position : int
        Training context :math:`L_0 \ge 2`.

    Returns
    -------
    float

    References
    ----------
    Ding et al. (2024, ICML), "LongRoPE: Extending LLM Context Window Beyond 2 Million
    Tokens"; Hugging Face transformers 5.24.0, ``_compute_longrope_parameters``.
    """
    factor = _factor(factor)
    original_max_position = check_int("original_max_position", original_max_position, minimum=2)
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original_max_position))


def _per_plane(name: str, values, n: int) -> np.ndarray:
    arr = as_float_array(name, values, min_ndim=1).astype(np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected {n} factors, one per rotated plane, got shape {arr.shape}")
    if np.any(arr <= 0):
        raise ValueError(f"{name}: expected factors > 0, got a minimum of {arr.min()}")
    return arr


def longrope_scaling(
    head_dim: int,
    *,
    short_factor,
    long_factor,
    original_max_position: int,
    base: float = 10000.0,
    factor: float | None = None,
    max_position: int | None = None,
    attention_factor: float | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> RopeScaling:
    r"""LongRoPE (the Phi-3 family in Hugging Face): one searched factor per plane, two sets.

    Plane ``i`` is divided by its own factor :math:`\lambda_i`,

    .. math:: \theta_i' = \frac{1}{\lambda_i\, b^{2i/d}} ,

    with :math:`\lambda` = ``long_factor`` when the sequence is longer than the original
    context (``seq_len > original_max_position``) and ``short_factor`` otherwise, or when
    ``seq_len`` is not given (Hugging Face's frequencies at initialisation).

    Hugging Face switches the whole set when the largest position id plus one first
    exceeds ``original_max_position`` (``longrope_frequency_update``), for every position
    at once: keys cached under the short factors were rotated with other frequencies than
    the ones the queries now use, so a KV cache that crosses the switch must be re-encoded.

    Precedence, as Hugging Face's: ``attention_factor`` when given; otherwise
    :func:`longrope_attention_factor` of ``factor`` when given, else of
    ``max_position / original_max_position`` (Phi-3 configs give no ``factor``). The
    factor only feeds the attention factor: the frequencies come from the per-plane lists.
    :func:`rope_from_config` also applies Hugging Face's rule that a top-level
    ``original_max_position_embeddings`` (Phi-3 configs) overrides the one in
    ``rope_parameters``.

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    short_factor, long_factor : array_like of float, shape (rotary_dim // 2,)
        Positive per-plane factors :math:`\lambda_i`, found by search (Ding et al.).
    original_max_position : int
        Training context :math:`L_0 \ge 2`.
    base : float, default 10000.0
    factor : float, optional
        The scale ``s > 0`` for the attention factor.
    max_position : int, optional
        The extended context (``max_position_embeddings``), used when ``factor`` is None.
    attention_factor : float, optional
        Positive factor that overrides the computed one.
    seq_len : int, optional
        Current sequence length ``>= 1`` (Hugging Face: the largest position id plus one).
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in (0, 1] of the head that is rotated: the
        frequencies are those of the width ``d = int(head_dim * p)``, which must be even.

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(rotary_dim // 2,)``) and ``attention_factor``.

    References
    ----------
    Ding et al. (2024, ICML), "LongRoPE: Extending LLM Context Window Beyond 2 Million
    Tokens"; Hugging Face transformers 5.24.0, ``_compute_longrope_parameters`` and
    ``dynamic_rope_update`` (float32 there).
    """
    dim = _rotary_dim(head_dim, partial_rotary_factor)
    short = _per_plane("short_factor", short_factor, dim // 2)
    long = _per_plane("long_factor", long_factor, dim // 2)
    original_max_position = check_int("original_max_position", original_max_position, minimum=2)
    base = check_float("base", base, greater_than=1.0)
    if max_position is not None:
        max_position = check_int("max_position", max_position, minimum=1)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1)
    if factor is not None:
        factor = _factor(factor)
    elif attention_factor is None and max_position is None:
        raise ValueError(
            "factor: expected a number, or max_position to derive it as max_position / original_max_position "
            "(or an explicit attention_factor), got none of them"
        )
    if attention_factor is not None:
        attention_factor = check_float("attention_factor", attention_factor, positive=True)
    else:
        if factor is None:
            factor = max_position / original_max_position
        attention_factor = longrope_attention_factor(factor=factor, original_max_position=original_max_position)
    ext = long if seq_len is not None and seq_len > original_max_position else short
    return RopeScaling(1.0 / (ext * base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)), attention_factor)


def proportional_scaling(
    head_dim: int, *, base: float = 10000.0, factor: float = 1.0, partial_rotary_factor: float = 1.0
) -> RopeScaling:
    r"""Proportional RoPE (Gemma 4's global layers): position in a fraction of the planes only.

    With ``n = int(p * head_dim // 2)`` (``p`` = ``partial_rotary_factor``), the first
    ``n`` planes keep RoPE's frequencies *of the whole head*, the others get frequency 0
    and carry no position:

    .. math::
        \theta_i' = \begin{cases} b^{-2i/d}/s & i < n \\ 0 & n \le i < d/2 \end{cases}

    This differs from ``partial_rotary_factor`` in every other method, which rotates the
    first ``int(p d)`` coordinates with the exponent over that narrower width,
    :math:`b^{-2i/(p d)}`: here the rotated planes are the fast end of the full-width
    spectrum (the p-RoPE of Barbero et al., which drops the slowest frequencies), and the
    result has ``head_dim // 2`` entries, for rotating the whole head with
    ``apply_rope(..., layout="half")`` as Gemma 4 does.

    Parameters
    ----------
    head_dim : int
        Positive even head width (512 for Gemma 4's global layers).
    base : float, default 10000.0
    factor : float, default 1.0
        The scale ``s > 0`` that divides every frequency.
    partial_rotary_factor : float, default 1.0
        Fraction ``p`` in [0, 1] of the planes that carry position (0.25 in Gemma 4).

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(head_dim // 2,)``, zero from plane ``n`` on) and
        ``attention_factor``, always 1.0.

    References
    ----------
    Barbero et al. (2025, ICLR), "Round and Round We Go! What Makes Rotary Positional
    Encodings Useful?" (p-RoPE); Hugging Face transformers 5.24.0,
    ``_compute_proportional_rope_parameters``.
    """
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    base = check_float("base", base, greater_than=1.0)
    factor = _factor(factor)
    p = check_float("partial_rotary_factor", partial_rotary_factor, minimum=0.0)
    if p > 1.0:
        raise ValueError(f"partial_rotary_factor: expected a fraction in [0, 1], got {p}")
    n = int(p * head_dim // 2)
    inv_freq = np.zeros(head_dim // 2, dtype=np.float64)
    inv_freq[:n] = rope_frequencies(head_dim, base)[:n]
    return RopeScaling(inv_freq / factor, 1.0)


#: The methods by ``rope_type``, as Hugging Face's ``ROPE_INIT_FUNCTIONS``: ``"default"``,
#: ``"linear"`` (position interpolation), ``"dynamic"`` (dynamic NTK), ``"yarn"``,
#: ``"longrope"``, ``"llama3"`` and ``"proportional"`` are Hugging Face's names (transformers
#: 5.24.0 registers all but ``"default"``, which each model computes itself); ``"ntk"`` (static NTK-aware scaling,
#: :func:`ntk_scaling`) is this package's own key, since Hugging Face has no such
#: ``rope_type``. A read-only mapping: every function takes the head width and then
#: keyword-only parameters, and returns a :class:`RopeScaling`.
#:
#: :meta hide-value:
ROPE_SCALING_FUNCTIONS = types.MappingProxyType(
    {
        "default": default_scaling,
        "linear": linear_scaling,
        "ntk": ntk_scaling,
        "dynamic": dynamic_ntk_scaling,
        "yarn": yarn_scaling,
        "longrope": longrope_scaling,
        "llama3": llama3_scaling,
        "proportional": proportional_scaling,
    }
)


def rope_scaling(head_dim: int, *, rope_type: str, **params) -> RopeScaling:
    r"""The frequencies of the method named ``rope_type``, from :data:`ROPE_SCALING_FUNCTIONS`.

    ``rope_scaling(128, rope_type="yarn", factor=8.0, original_max_position=4096)`` is
    ``yarn_scaling(128, factor=8.0, original_max_position=4096)``: the keyword arguments
    are passed on unchanged, so a Hugging Face ``rope_parameters`` entry reads as one call
    once its keys are renamed (``original_max_position_embeddings`` to
    ``original_max_position``, ``rope_theta`` to ``base``); :func:`rope_from_config` does
    that renaming, and Hugging Face's defaults, for a whole config.

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    rope_type : {"default", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3", "proportional"}
        Hugging Face's name of the method, or ``"ntk"`` for static NTK-aware scaling
        (not a Hugging Face ``rope_type``).
    **params
        The keyword arguments of that method (for example ``factor``, ``base``).

    Returns
    -------
    RopeScaling
        What the method returns.

    Raises
    ------
    ValueError
        ``rope_type`` is not a registered name.
    TypeError
        A parameter that the method does not take, or one it requires is missing
        (the message names it and lists the method's parameters).

    References
    ----------
    Hugging Face ``ROPE_INIT_FUNCTIONS`` in ``modeling_rope_utils``.
    """
    rope_type = check_choice("rope_type", rope_type, tuple(ROPE_SCALING_FUNCTIONS))
    method = ROPE_SCALING_FUNCTIONS[rope_type]
    accepted = [p for p in inspect.signature(method).parameters.values() if p.kind is p.KEYWORD_ONLY]
    names = ", ".join(p.name for p in accepted)
    for name in params:
        if name not in {p.name for p in accepted}:
            raise TypeError(
                f"{name}: not a parameter of rope_type {rope_type!r} ({method.__name__}); expected some of: {names}"
            )
    for p in accepted:
        if p.default is p.empty and p.name not in params:
            raise TypeError(f"{p.name}: required by rope_type {rope_type!r} ({method.__name__}), missing")
    return method(head_dim, **params)



def _config_head_dim(config: Mapping) -> int:
    """The head width Hugging Face's RoPE functions read from a config."""
    if config.get("qk_rope_head_dim") is not None:  # MLA: DeepseekV3Config sets head_dim = qk_rope_head_dim
        return config["qk_rope_head_dim"]
    if config.get("head_dim"):
        return config["head_dim"]
    hidden, heads = config.get("hidden_size"), config.get("num_attention_heads")
    if hidden is None or heads is None:
        raise ValueError(
            "config: expected 'head_dim', or 'hidden_size' and 'num_attention_heads', to give the head width, "
            "got none of them"
        )
    return check_int("config['hidden_size']", hidden, minimum=1) // check_int(
        "config['num_attention_heads']", heads, minimum=1
    )


def _layer_head_dim(config: Mapping, layer_type: str, head_dim: int) -> int:
    """Gemma 4's wider global layers: ``per_layer_config`` (to_dict) or ``global_head_dim`` (config.json)."""
    per_layer = config.get("per_layer_config")
    if per_layer:
        widths = {
            (per_layer.get(str(i)) or per_layer.get(i) or {}).get("head_dim", head_dim)
            for i, t in enumerate(config["layer_types"])
            if t == layer_type
        }
        if len(widths) != 1:
            raise ValueError(
                f"config['per_layer_config']: expected one head width per layer type, got {sorted(widths)} "
                f"for {layer_type!r}"
            )
        return widths.pop()
    default = 512 if str(config.get("model_type", "")).startswith("gemma4") else None  # Gemma4TextConfig's default
    global_head_dim = config.get("global_head_dim", default)
    if layer_type == "full_attention" and global_head_dim is not None:
        return global_head_dim
    return head_dim


def _entry_scaling(entry, name: str, *, head_dim: int, config: Mapping, truncate, seq_len, original_override):
    """One ``rope_parameters`` dict, read as Hugging Face 5.24.0's init functions read it."""
    if not isinstance(entry, Mapping):
        raise TypeError(f"{name}: expected a dict of RoPE parameters, got {_show(entry)}")
    rope_type = entry.get("rope_type", entry.get("type", "default"))
    if not isinstance(rope_type, str) or rope_type not in ROPE_SCALING_FUNCTIONS or rope_type == "ntk":
        known = ", ".join(repr(t) for t in ROPE_SCALING_FUNCTIONS if t != "ntk")
        raise ValueError(f"{name}: expected a 'rope_type' among {known}, got {_show(rope_type)}")
    if entry.get("rope_theta") is None:
        raise ValueError(
            f"{name}: expected a 'rope_theta' entry (transformers 5.x writes one in every rope_parameters), "
            f"got keys {sorted(entry)}"
        )
    top_partial = config.get("partial_rotary_factor")
    params = {
        "base": entry["rope_theta"],
        "partial_rotary_factor": entry.get("partial_rotary_factor", 1.0 if top_partial is None else top_partial),
    }
    max_position = config.get("max_position_embeddings")

    def need(key):
        if entry.get(key) is None:
            raise ValueError(f"{name}: rope_type {rope_type!r} requires {key!r}, got keys {sorted(entry)}")
        return entry[key]

    def positions_key():
        if max_position is None:
            raise ValueError(f"config: rope_type {rope_type!r} requires 'max_position_embeddings', missing")
        return max_position

    original = None
    if rope_type in ("llama3", "yarn", "longrope"):  # HF's standardize_rope_params
        original = original_override if original_override is not None else entry.get("original_max_position_embeddings")
        if original is None:
            original = positions_key()
        params["original_max_position"] = original
    if rope_type in ("linear", "dynamic", "llama3"):
        params["factor"] = need("factor")
    if rope_type == "proportional":
        params["factor"] = entry.get("factor", 1.0)
    if rope_type == "dynamic":
        params["original_max_position"] = positions_key()
        params["seq_len"] = positions_key() if seq_len is None else seq_len
    if rope_type == "llama3":
        params["low_freq_factor"] = need("low_freq_factor")
        params["high_freq_factor"] = need("high_freq_factor")
    if rope_type == "yarn":
        factor = entry.get("factor")
        params["factor"] = positions_key() / original if factor is None else factor
        params["beta_fast"] = entry.get("beta_fast") or 32.0
        params["beta_slow"] = entry.get("beta_slow") or 1.0
        params["truncate"] = truncate
        for key in ("attention_factor", "mscale", "mscale_all_dim"):
            params[key] = entry.get(key)
    if rope_type == "longrope":
        params["short_factor"] = need("short_factor")
        params["long_factor"] = need("long_factor")
        params["factor"] = entry.get("factor")
        params["max_position"] = positions_key()
        params["attention_factor"] = entry.get("attention_factor")
        params["seq_len"] = seq_len
    try:
        return ROPE_SCALING_FUNCTIONS[rope_type](head_dim, **params)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from exc


def rope_from_config(config, *, seq_len: int | None = None) -> dict:
    r"""The frequencies and attention factor of every layer type, from a model's config.

    ``config`` is a model's configuration as transformers 5.x writes it
    (``PreTrainedConfig.to_dict()``, or a ``config.json`` saved by 5.x; for a multimodal
    model its ``text_config``). Its ``rope_parameters`` is either one dict of RoPE
    parameters for every layer, or a dict of them keyed by layer type (the names in
    ``config["layer_types"]``: Gemma's ``"sliding_attention"`` and ``"full_attention"``).
    Each dict is read as Hugging Face's ``ROPE_INIT_FUNCTIONS`` and the models'
    ``compute_default_rope_parameters`` read it (transformers 5.24.0):

    * ``rope_type`` (default ``"default"``; the legacy key ``type`` is read too),
      ``rope_theta`` (required: 5.x always writes it) and ``partial_rotary_factor``
      (default: the config's top-level one, else 1.0);
    * the head width is ``qk_rope_head_dim`` for multi-head latent attention (DeepSeek's
      config sets ``head_dim`` to it), else ``head_dim``, else
      ``hidden_size // num_attention_heads``; for Gemma 4's ``"full_attention"`` layers,
      the width in ``per_layer_config``, else ``global_head_dim`` (512 by default for a
      ``gemma4`` ``model_type``);
    * ``original_max_position_embeddings`` (``llama3``, ``yarn``, ``longrope``): a
      top-level key of the config wins when ``rope_parameters`` is flat (Phi-3), then
      the dict's own, then ``max_position_embeddings``;
    * ``dynamic`` takes its original length from ``max_position_embeddings``, and the
      length ``seq_len``, by default ``max_position_embeddings`` (its value at
      initialisation); ``longrope`` uses the short factors unless ``seq_len`` exceeds
      the original length;
    * ``yarn``: ``factor`` missing means ``max_position_embeddings /
      original_max_position_embeddings``; ``beta_fast`` and ``beta_slow`` missing or 0
      mean 32 and 1; ``truncate`` is read from the *top level* of ``rope_parameters``
      (default True), as Hugging Face reads it, so a per-layer-type ``truncate`` is
      ignored;
    * keys no RoPE function reads (``mrope_section``, ``mrope_interleaved``) are ignored.

    Parameters
    ----------
    config : mapping
        The config dict (with ``rope_parameters``, ``max_position_embeddings`` where the
        rope type needs it, the head width, and ``layer_types`` when the parameters are
        per layer type).
    seq_len : int, optional
        Sequence length for the ``dynamic`` and ``longrope`` types (see above).

    Returns
    -------
    dict
        For a flat ``rope_parameters``: ``{None: RopeScaling}`` (Hugging Face's
        ``layer_type=None``). For a nested one: ``{layer_type: RopeScaling}`` in the order
        of ``rope_parameters``, with ``None`` as the value of a layer type whose
        parameters are ``None`` (no RoPE in those layers).

    Raises
    ------
    ValueError, TypeError
        The config lacks ``rope_parameters`` (a 4.x config with ``rope_scaling``, or a
        multimodal config whose ``text_config`` holds them), a required key, or holds a
        value the method rejects; the message begins with where the problem is
        (``config``, ``rope_parameters`` or ``rope_parameters['full_attention']``).

    References
    ----------
    Hugging Face transformers 5.24.0, ``modeling_rope_utils``:
    ``RotaryEmbeddingConfigMixin.standardize_rope_params`` and ``ROPE_INIT_FUNCTIONS``;
    ``Gemma4TextRotaryEmbedding`` (per-layer-type frequencies and head widths).

    Examples
    --------
    >>> cfg = {"head_dim": 256, "max_position_embeddings": 131072,
    ...        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
    ...        "rope_parameters": {
    ...            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    ...            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}
    >>> {k: v.inv_freq.shape for k, v in rope_from_config(cfg).items()}
    {'sliding_attention': (128,), 'full_attention': (128,)}
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config: expected a mapping (a config dict), got {_show(config)}")
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1)
    params = config.get("rope_parameters")
    if params is None:
        if "text_config" in config:
            hint = "for a multimodal model pass config['text_config']"
        elif "rope_scaling" in config or "rope_theta" in config:
            hint = "this is a transformers 4.x config (rope_scaling, rope_theta): load and save it with 5.x"
        else:
            hint = "found none"
        raise ValueError(f"config: expected a 'rope_parameters' entry as transformers 5.x writes it; {hint}")
    if not isinstance(params, Mapping):
        raise TypeError(f"rope_parameters: expected a dict, got {_show(params)}")
    head_dim = _config_head_dim(config)
    truncate = params.get("truncate", True)
    labels = config.get("layer_types") or ()
    nested = [key for key in params if key in labels]
    if not nested:
        override = config.get("original_max_position_embeddings")
        return {
            None: _entry_scaling(params, "rope_parameters", head_dim=head_dim, config=config, truncate=truncate,
                                 seq_len=seq_len, original_override=override)
        }
    return {
        layer_type: None
        if params[layer_type] is None
        else _entry_scaling(
            params[layer_type],
            f"rope_parameters[{layer_type!r}]",
            head_dim=_layer_head_dim(config, layer_type, head_dim),
            config=config,
            truncate=truncate,
            seq_len=seq_len,
            original_override=None,
        )
        for layer_type in nested
    }
