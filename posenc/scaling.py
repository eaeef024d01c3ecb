r"""RoPE context extension: new frequencies (and a temperature) for longer contexts.

One vocabulary for every method: the head width is the only positional argument, every
other one is keyword-only and named after Hugging Face's ``rope_scaling`` config keys
(``factor``, ``original_max_position`` for ``original_max_position_embeddings``,
``base`` for ``rope_theta``, ``beta_fast``, ``beta_slow``, ``truncate``,
``low_freq_factor``, ``high_freq_factor``; ``seq_len`` is the argument of Hugging
Face's dynamic method, ``ramp`` this package's own), and every method returns a
:class:`RopeScaling`: float64 frequencies ``inv_freq`` of shape ``(head_dim // 2,)`` and
a float ``attention_factor`` (1.0 where the method has none). It unpacks as a pair,
ready for ``apply_rope(x, positions, inv_freq=inv_freq, attention_factor=attention_factor)``::

    inv_freq, attention_factor = yarn_scaling(128, factor=8.0, original_max_position=4096)

The methods are registered in :data:`ROPE_SCALING_FUNCTIONS` under Hugging Face's
``rope_type`` names (``default``, ``linear``, ``dynamic``, ``yarn``, ``llama3``) plus
``ntk`` for static NTK-aware scaling, which is not a Hugging Face ``rope_type``;
:func:`rope_scaling` dispatches through it.

The formulas follow Hugging Face ``transformers``' ``modeling_rope_utils``
(``ROPE_INIT_FUNCTIONS``), which is what the released checkpoints are run with,
computed here in float64.  With ``factor = 1`` every method returns the default
frequencies (tested).

What this module leaves out of Hugging Face's options: YaRN's explicit
``attention_factor``, ``mscale`` and ``mscale_all_dim`` (DeepSeek's variant); the
override of the factor by ``max_position_embeddings / original_max_position_embeddings``
when a config carries both; ``partial_rotary_factor`` (pass the rotated width as
``head_dim``); and float32 evaluation (Hugging Face computes the frequencies in float32,
which can move a plane lying exactly on a Llama 3 band edge).  Dynamic NTK is
stateless here (see :func:`dynamic_ntk_scaling`).
"""

from __future__ import annotations

import inspect
import math
import types
from typing import NamedTuple

import numpy as np

from ._checks import check_bool, check_choice, check_float, check_int
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
    "llama3_scaling",
]


class RopeScaling(NamedTuple):
    r"""New RoPE frequencies and the attention factor that goes with them.

    Returned by every method of :mod:`posenc.scaling`. A named pair: it unpacks as
    ``inv_freq, attention_factor = ...`` and its fields are read by name
    (``yarn_scaling(...).inv_freq``), as Hugging Face's ``ROPE_INIT_FUNCTIONS`` return
    ``(inv_freq, attention_factor)``.

    Parameters
    ----------
    inv_freq : numpy.ndarray of float64, shape (head_dim // 2,)
        The frequencies :math:`\theta_i'`, for ``apply_rope(..., inv_freq=...)``.
    attention_factor : float
        The factor that multiplies the cos/sin table (YaRN's temperature), for
        ``apply_rope(..., attention_factor=...)``; 1.0 for methods without one.
    """

    inv_freq: np.ndarray
    attention_factor: float


RopeScaling.inv_freq.__doc__ = "The frequencies, float64 of shape (head_dim // 2,)."
RopeScaling.attention_factor.__doc__ = "The attention factor (1.0 for methods without one)."


def _factor(factor) -> float:
    return check_float("factor", factor, positive=True)


def default_scaling(head_dim: int, *, base: float = 10000.0) -> RopeScaling:
    r"""No extension: RoPE's own frequencies, as Hugging Face's ``default`` rope type.

    .. math:: \theta_i = b^{-2i/d}

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    base : float, default 10000.0

    Returns
    -------
    RopeScaling
        ``inv_freq`` equal to :func:`posenc.rope.rope_frequencies`, ``attention_factor`` 1.0.

    References
    ----------
    Hugging Face ``_compute_default_rope_parameters``.
    """
    return RopeScaling(rope_frequencies(head_dim, base), 1.0)


def linear_scaling(head_dim: int, *, factor: float, base: float = 10000.0) -> RopeScaling:
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

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(head_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    Chen et al. (2023), "Extending Context Window of Large Language Models via
    Positional Interpolation"; Hugging Face ``_compute_linear_scaling_rope_parameters``.
    """
    factor = _factor(factor)
    return RopeScaling(rope_frequencies(head_dim, base) / factor, 1.0)


def ntk_scaling(head_dim: int, *, factor: float, base: float = 10000.0) -> RopeScaling:
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

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(head_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    bloc97 (2023), "NTK-Aware Scaled RoPE", as described by Peng et al. (2024, ICLR)
    under "NTK-aware" interpolation.
    """
    head_dim = check_int("head_dim", head_dim, minimum=4, even=True)
    factor = _factor(factor)
    base = check_float("base", base, greater_than=1.0)
    new_base = base * factor ** (head_dim / (head_dim - 2))
    return RopeScaling(rope_frequencies(head_dim, new_base), 1.0)


def dynamic_ntk_scaling(
    head_dim: int, *, factor: float, seq_len: int, original_max_position: int, base: float = 10000.0
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

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(head_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    Hugging Face ``_compute_dynamic_ntk_parameters`` (credited there to
    /u/bloc97 and /u/emozilla); Peng et al. (2024, ICLR), "Dynamic Scaling".
    """
    head_dim = check_int("head_dim", head_dim, minimum=4, even=True)
    factor = _factor(factor)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    base = check_float("base", base, greater_than=1.0)
    length = max(seq_len, original_max_position)
    new_base = base * ((factor * length / original_max_position) - (factor - 1)) ** (
        head_dim / (head_dim - 2)
    )
    return RopeScaling(rope_frequencies(head_dim, new_base), 1.0)


def yarn_attention_factor(*, factor: float) -> float:
    r"""YaRN's temperature :math:`\sqrt{1/t} = 0.1 \ln s + 1` (1.0 for :math:`s \le 1`).

    Parameters
    ----------
    factor : float
        The scale ``s > 0``.

    Returns
    -------
    float

    References
    ----------
    Peng et al. (2024, ICLR), the attention scaling of YaRN; Hugging Face ``get_mscale`` in
    ``_compute_yarn_parameters``.
    """
    factor = _factor(factor)
    if factor <= 1:
        return 1.0
    return 0.1 * math.log(factor) + 1.0


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
) -> RopeScaling:
    r"""YaRN ("NTK-by-parts" frequencies plus an attention temperature).

    With the ramp :math:`\gamma_i = \operatorname{clip}\bigl((i - \text{low})/(\text{high} - \text{low}), 0, 1\bigr)`
    over pair index ``i`` (see :func:`yarn_correction_range`; ``high`` is nudged
    by 0.001 when equal to ``low``), the frequencies blend extrapolation and
    interpolation:

    .. math::
        \theta_i' = \frac{\theta_i}{s}\,\gamma_i + \theta_i\,(1 - \gamma_i),

    so fast pairs (many turns in training) are kept and slow pairs are
    interpolated.  The attention factor is :func:`yarn_attention_factor`.

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
        Round the released ramp's edges outwards (ignored for ``ramp="paper"``).
    ramp : {"released", "paper"}, default "released"
        Which ramp (see above).

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(head_dim // 2,)``) and ``attention_factor``,
        :func:`yarn_attention_factor` of ``factor``.

    References
    ----------
    Peng et al. (2024, ICLR), "YaRN: Efficient Context Window Extension of Large
    Language Models", section 3.2 (the paper's ramp); Hugging Face
    ``_compute_yarn_parameters`` (the released ramp).
    """
    factor = _factor(factor)
    ramp = check_choice("ramp", ramp, ("released", "paper"))
    if ramp == "paper":
        head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
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
        return RopeScaling(inv_freq, yarn_attention_factor(factor=factor))
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
    return RopeScaling(inv_freq, yarn_attention_factor(factor=factor))


def llama3_scaling(
    head_dim: int,
    *,
    factor: float,
    original_max_position: int,
    base: float = 10000.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
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
        Band edges, ``0 < low_freq_factor < high_freq_factor``.

    Returns
    -------
    RopeScaling
        ``inv_freq`` (float64, shape ``(head_dim // 2,)``) and ``attention_factor``, always 1.0.

    References
    ----------
    Meta Llama 3.1 ``apply_scaling``; Hugging Face ``_compute_llama3_parameters``.
    """
    factor = _factor(factor)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    low_freq_factor = check_float("low_freq_factor", low_freq_factor, positive=True)
    high_freq_factor = check_float("high_freq_factor", high_freq_factor, positive=True)
    if high_freq_factor <= low_freq_factor:
        raise ValueError(
            f"high_freq_factor: expected a value greater than low_freq_factor = {low_freq_factor}, "
            f"got {high_freq_factor}"
        )
    theta = rope_frequencies(head_dim, base)
    low_freq_wavelen = original_max_position / low_freq_factor
    high_freq_wavelen = original_max_position / high_freq_factor
    wavelen = 2 * math.pi / theta
    scaled = np.where(wavelen > low_freq_wavelen, theta / factor, theta)
    smooth = (original_max_position / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return RopeScaling(np.where(is_medium, smoothed, scaled), 1.0)


#: The methods by ``rope_type``, as Hugging Face's ``ROPE_INIT_FUNCTIONS``: ``"default"``,
#: ``"linear"`` (position interpolation), ``"dynamic"`` (dynamic NTK), ``"yarn"`` and
#: ``"llama3"`` are Hugging Face's names; ``"ntk"`` (static NTK-aware scaling,
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
        "llama3": llama3_scaling,
    }
)


def rope_scaling(head_dim: int, *, rope_type: str, **params) -> RopeScaling:
    r"""The frequencies of the method named ``rope_type``, from :data:`ROPE_SCALING_FUNCTIONS`.

    ``rope_scaling(128, rope_type="yarn", factor=8.0, original_max_position=4096)`` is
    ``yarn_scaling(128, factor=8.0, original_max_position=4096)``: the keyword arguments
    are passed on unchanged, so a Hugging Face ``rope_scaling`` config reads as one call
    once its keys are renamed (``original_max_position_embeddings`` to
    ``original_max_position``, ``rope_theta`` to ``base``).

    Parameters
    ----------
    head_dim : int
        Positive even head width.
    rope_type : {"default", "linear", "ntk", "dynamic", "yarn", "llama3"}
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
