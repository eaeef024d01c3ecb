r"""Decoupled RoPE in multi-head latent attention (MLA), DeepSeek-V2 and DeepSeek-V3.

MLA caches one compressed latent :math:`c_n \in \mathbb{R}^{r}` per token instead of the
keys and values of every head; head ``h``'s key content is :math:`k_n^{(h)} = W_{UK}^{(h)\top} c_n`.
Without positions the score :math:`q_m^{(h)\top} W_{UK}^{(h)\top} c_n` lets the
up-projection be *absorbed* into the query (:math:`(W_{UK}^{(h)} q_m^{(h)})^\top c_n`),
so attention runs on the cache directly. RoPE between the two factors,
:math:`q^\top R_{n-m} W_{UK}^\top c_n`, puts a matrix that depends on both positions in
the middle, and no position-independent matrix can be absorbed. DeepSeek's fix keeps
the compressed part free of position and adds a separate *decoupled* slice: each head's
query has ``qk_nope_head_dim`` coordinates without RoPE and ``qk_rope_head_dim`` with it,
and one key slice of ``qk_rope_head_dim`` coordinates, computed from the hidden state
and shared by all heads, carries RoPE and is cached beside the latent:

.. math::
    s_{mn}^{(h)} = \bigl(q_{m,\text{nope}}^{(h)\top} k_{n,\text{nope}}^{(h)}
                 + (R_m q_{m,\text{rope}}^{(h)})^\top (R_n k_{n,\text{rope}})\bigr)\,\sigma .

With YaRN the temperature goes into the softmax scale :math:`\sigma` (which multiplies
the position-free part too) instead of the cos/sin table (:func:`mla_softmax_scale`).

Shapes and conventions follow Hugging Face transformers 5.24.0,
``models/deepseek_v3/modeling_deepseek_v3.py`` (``DeepseekV3Attention``,
``yarn_get_mscale``, ``yarn_apply_mscale``) and ``models/deepseek_v2``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_float_array, check_bool, check_choice, check_float, check_int
from .rope import LAYOUTS, apply_rope

__all__ = ["mla_softmax_scale", "mla_scores"]


def mla_softmax_scale(qk_head_dim: int, *, factor: float = 1.0, mscale_all_dim: float = 0.0) -> float:
    r"""DeepSeek's softmax scale: :math:`\sigma = d_{qk}^{-1/2}\,(0.1\, m_\text{all} \ln s + 1)^2`.

    ``d_qk`` is the query/key head width (``qk_nope_head_dim + qk_rope_head_dim``, 192 in
    DeepSeek-V3). With YaRN (``factor`` :math:`s > 1`) and a non-zero ``mscale_all_dim``
    :math:`m_\text{all}` the temperature is squared into the scale: it multiplies every
    score, the position-free part included, while the cos/sin table carries
    :func:`posenc.scaling.yarn_attention_factor` of ``mscale`` and ``mscale_all_dim``
    (1 for DeepSeek-V3, whose two are equal). Otherwise :math:`\sigma = d_{qk}^{-1/2}`.

    Parameters
    ----------
    qk_head_dim : int
        Query/key head width, ``>= 1``.
    factor : float, default 1.0
        YaRN's scale ``s > 0`` (40 in DeepSeek-V3); leave 1.0 for a model without YaRN
        (Hugging Face skips the rule for ``rope_type="default"``).
    mscale_all_dim : float, default 0.0
        :math:`m_\text{all} \ge 0`; 0 (or absent in the config) disables the rule.

    Returns
    -------
    float

    References
    ----------
    DeepSeek-AI (2024), "DeepSeek-V2: A Strong, Economical, and Efficient
    Mixture-of-Experts Language Model", arXiv:2405.04434, section 2.1.3 and appendix B
    (long-context extension); Hugging Face transformers 5.24.0,
    ``yarn_apply_mscale`` in ``models/deepseek_v3/modeling_deepseek_v3.py``.
    """
    qk_head_dim = check_int("qk_head_dim", qk_head_dim, minimum=1)
    factor = check_float("factor", factor, positive=True)
    mscale_all_dim = check_float("mscale_all_dim", mscale_all_dim, minimum=0.0)
    scale = qk_head_dim ** -0.5
    if mscale_all_dim and factor > 1:
        mscale = 0.1 * mscale_all_dim * math.log(factor) + 1.0
        scale = scale * mscale * mscale
    return scale


def mla_scores(
    q,
    c_kv,
    k_rope,
    positions,
    *,
    w_uk,
    softmax_scale: float,
    inv_freq=None,
    base: float = 10000.0,
    attention_factor: float = 1.0,
    layout: str = "interleaved",
    absorb: bool = False,
) -> np.ndarray:
    r"""MLA's attention logits with decoupled RoPE (before the mask and the softmax).

    Head ``h``'s query ``q[..., h, m, :]`` is split into its position-free part (the first
    ``qk_nope_head_dim = w_uk.shape[-1]`` coordinates, as DeepSeek's code splits it) and
    its RoPE part (the last ``qk_rope_head_dim = k_rope.shape[-1]``). The key of token
    ``n`` for head ``h`` is the up-projected latent ``c_kv[..., n, :] @ w_uk[:, h, :]``
    followed by the shared ``k_rope[..., n, :]``; the RoPE parts of queries and keys are
    rotated with :func:`posenc.rope.apply_rope` at ``positions``, and the score is the
    dot product times ``softmax_scale``.

    With ``absorb=True`` the up-projection is applied to the query instead,
    :math:`(W_{UK}^{(h)} q_{\text{nope}}^{(h)})^\top c_n`, and the scores are computed
    against the latents themselves: equal up to rounding, because the position-free part
    has no rotation in the middle.

    Parameters
    ----------
    q : array_like of float, shape (..., H, T, qk_nope_head_dim + qk_rope_head_dim)
        Queries of ``H`` heads.
    c_kv : array_like of float, shape (..., T, kv_lora_rank)
        The cached latents (after DeepSeek's ``kv_a_layernorm``).
    k_rope : array_like of float, shape (..., T, qk_rope_head_dim)
        The shared RoPE key slice, before rotation.
    positions : array_like of real, shape (T,)
        Positions of the ``T`` tokens (queries and keys alike).
    w_uk : array_like of float, shape (kv_lora_rank, H, qk_nope_head_dim)
        Key up-projection per head (the key rows of Hugging Face's ``kv_b_proj.weight``,
        transposed).
    softmax_scale : float
        :math:`\sigma > 0`, for example :func:`mla_softmax_scale`.
    inv_freq : array_like of float, shape (qk_rope_head_dim / 2,), optional
        RoPE frequencies; defaults to :func:`posenc.rope.rope_frequencies` with ``base``.
    base : float, default 10000.0
    attention_factor : float, default 1.0
        Factor on cos and sin (YaRN's, for DeepSeek's ``mscale``/``mscale_all_dim``).
    layout : {"interleaved", "half"}, default "interleaved"
        Pairs of the RoPE slices: ``(2i, 2i+1)`` for DeepSeek-V3's ``rope_interleave=True``
        (its default) and DeepSeek-V2, ``(i, i + d/2)`` otherwise.
    absorb : bool, default False
        Compute the position-free part with the up-projection absorbed into the query.

    Returns
    -------
    numpy.ndarray of float64, shape (..., H, T, T)
        ``scores[..., h, m, n]``, query ``m`` against key ``n``.

    References
    ----------
    DeepSeek-AI (2024), "DeepSeek-V2", arXiv:2405.04434, section 2.1.3 (decoupled rotary
    position embedding, Eqs. 14-19); Hugging Face transformers 5.24.0,
    ``DeepseekV3Attention.forward`` and ``expand_kv``.
    """
    q = as_float_array("q", q, min_ndim=3).astype(np.float64)
    c_kv = as_float_array("c_kv", c_kv, min_ndim=2).astype(np.float64)
    k_rope = as_float_array("k_rope", k_rope, min_ndim=2).astype(np.float64)
    w_uk = as_float_array("w_uk", w_uk, min_ndim=3).astype(np.float64)
    softmax_scale = check_float("softmax_scale", softmax_scale, positive=True)
    layout = check_choice("layout", layout, LAYOUTS)
    absorb = check_bool("absorb", absorb)
    n_heads, n_tokens = q.shape[-3], q.shape[-2]
    if w_uk.ndim != 3 or w_uk.shape[:2] != (c_kv.shape[-1], n_heads):
        raise ValueError(
            f"w_uk: expected shape (kv_lora_rank, H, qk_nope_head_dim) = ({c_kv.shape[-1]}, {n_heads}, ...), "
            f"got {w_uk.shape}"
        )
    nope, rope = w_uk.shape[-1], k_rope.shape[-1]
    if q.shape[-1] != nope + rope:
        raise ValueError(
            f"q: expected a last dimension of qk_nope_head_dim + qk_rope_head_dim = {nope} + {rope}, got shape {q.shape}"
        )
    for name, arr in (("c_kv", c_kv), ("k_rope", k_rope)):
        if arr.shape[:-1] != q.shape[:-3] + (n_tokens,):
            raise ValueError(f"{name}: expected leading shape {q.shape[:-3] + (n_tokens,)} to match q, got {arr.shape}")
    q_nope, q_rope = q[..., :nope], q[..., nope:]
    q_rot = apply_rope(q_rope, positions, inv_freq=inv_freq, base=base, layout=layout,
                       attention_factor=attention_factor)
    k_rot = apply_rope(k_rope, positions, inv_freq=inv_freq, base=base, layout=layout,
                       attention_factor=attention_factor)
    if absorb:
        q_latent = np.einsum("...htn,rhn->...htr", q_nope, w_uk)
        content = q_latent @ np.swapaxes(c_kv, -1, -2)[..., None, :, :]
    else:
        k_nope = np.einsum("...tr,rhn->...htn", c_kv, w_uk)
        content = q_nope @ np.swapaxes(k_nope, -1, -2)
    position = q_rot @ np.swapaxes(k_rot, -1, -2)[..., None, :, :]
    return (content + position) * softmax_scale
