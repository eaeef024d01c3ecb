r"""A small causal attention language model in NumPy, with hand-derived gradients.

The model of chapter 6's experiment: token embedding, two causal multi-head attention
layers with residual connections, a ReLU feed-forward block after the second, and an
unembedding. No layer normalisation (the gradients stay short enough to derive by
hand, and the tests check every one of them against finite differences). The position
scheme is pluggable and uses `posenc`'s own implementations:

``"nope"``
    no positional information (only the causal mask);
``"sinusoidal"``
    :func:`posenc.sinusoidal.sinusoidal_encoding` added to the token embeddings;
``"learned"``
    a learned table of ``max_len`` rows added to the embeddings (rows never reached in
    training keep their initial values);
``"rope"``
    :func:`posenc.rope.apply_rope` on queries and keys of every head, with frequencies that
    can be replaced at evaluation (``inv_freq``, ``attention_factor``: position
    interpolation, NTK-aware scaling, YaRN from :mod:`posenc.scaling`);
``"alibi"``
    :func:`posenc.alibi.alibi_bias` added to the scores of every layer.

Parameters live in a plain ``dict`` of arrays; :func:`loss_and_grads` returns the mean
next-token loss and a dict of gradients with the same keys. Everything is float64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._checks import as_int_array, check_choice, check_float, check_int
from .alibi import alibi_slopes
from .rope import apply_rope, rope_frequencies
from .sinusoidal import sinusoidal_encoding

__all__ = ["SCHEMES", "ModelConfig", "init_params", "log_softmax", "forward", "loss_and_grads"]

SCHEMES = ("nope", "sinusoidal", "learned", "rope", "alibi")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the model.

    Parameters
    ----------
    vocab : int
        Number of input tokens (symbols plus ``BOS``); the output predicts the first
        ``vocab - 1`` (the symbols).
    d_model : int
        Width; a multiple of ``n_heads`` with an even head width.
    n_heads : int
        Heads per attention layer.
    d_ff : int
        Width of the feed-forward block.
    scheme : str
        One of ``SCHEMES`` (``"nope"``, ``"sinusoidal"``, ``"learned"``, ``"rope"``, ``"alibi"``).
    max_len : int
        Rows of the learned table (``scheme="learned"``); positions must stay below it.
    rope_base : float
        RoPE base (``scheme="rope"``).
    """

    vocab: int = 9
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 64
    scheme: str = "rope"
    max_len: int = 256
    rope_base: float = 10000.0

    def __post_init__(self):
        check_int("vocab", self.vocab, minimum=2)
        check_int("d_model", self.d_model, minimum=2)
        check_int("n_heads", self.n_heads, minimum=1)
        check_int("d_ff", self.d_ff, minimum=1)
        check_int("max_len", self.max_len, minimum=1)
        check_choice("scheme", self.scheme, SCHEMES)
        check_float("rope_base", self.rope_base, greater_than=1.0)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"d_model: {self.d_model} must be a multiple of n_heads = {self.n_heads} "
                "with an even head width"
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def init_params(config: ModelConfig, seed: int) -> dict:
    """Random initial parameters (normal, scaled by 1/sqrt(fan-in); biases zero).

    Parameters
    ----------
    config : ModelConfig
    seed : int
        Seed of the initialisation.

    Returns
    -------
    dict of str to numpy.ndarray
        ``E`` (vocab, d); per layer ``l``: ``Wq{l}``, ``Wk{l}``, ``Wv{l}``, ``Wo{l}``
        (d, d); ``W1`` (d, d_ff), ``b1`` (d_ff,), ``W2`` (d_ff, d), ``b2`` (d,); ``U``
        (d, vocab - 1), ``c`` (vocab - 1,); and ``P`` (max_len, d) for ``"learned"``.
    """
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config: expected a ModelConfig, got {type(config).__name__}")
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    d, f = config.d_model, config.d_ff
    p = {"E": rng.normal(0.0, 1.0, (config.vocab, d))}
    for layer in (0, 1):
        for name in ("Wq", "Wk", "Wv", "Wo"):
            p[f"{name}{layer}"] = rng.normal(0.0, d**-0.5, (d, d))
    p["W1"] = rng.normal(0.0, d**-0.5, (d, f))
    p["b1"] = np.zeros(f)
    p["W2"] = rng.normal(0.0, f**-0.5, (f, d))
    p["b2"] = np.zeros(d)
    p["U"] = rng.normal(0.0, d**-0.5, (d, config.vocab - 1))
    p["c"] = np.zeros(config.vocab - 1)
    if config.scheme == "learned":
        p["P"] = rng.normal(0.0, 0.1, (config.max_len, d))
    return p


def _split(x, n_heads):  # (B, T, d) -> (B, H, T, dh)
    B, T, d = x.shape
    return x.reshape(B, T, n_heads, d // n_heads).transpose(0, 2, 1, 3)


def _merge(x):  # (B, H, T, dh) -> (B, T, d)
    B, H, T, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * dh)


class AttentionCache(NamedTuple):
    """What one attention layer's backward pass needs from its forward pass."""

    h: np.ndarray  # (B, T, d) the layer's input
    q: np.ndarray  # (B, H, T, dh) queries (rotated, for RoPE)
    k: np.ndarray  # (B, H, T, dh) keys (rotated, for RoPE)
    v: np.ndarray  # (B, H, T, dh) values
    a: np.ndarray  # (B, H, T, T) attention weights
    o: np.ndarray  # (B, T, d) the heads' outputs, merged, before Wo


class ForwardCache(NamedTuple):
    """What :func:`loss_and_grads` needs from the forward pass, by name."""

    tokens: np.ndarray  # (B, T) int
    positions: np.ndarray  # (T,) float64
    rope: tuple | None  # (inv_freq, attention_factor) for "rope", else None
    layer0: AttentionCache
    layer1: AttentionCache
    h2: np.ndarray  # (B, T, d) input of the feed-forward block
    u: np.ndarray  # (B, T, d_ff) its pre-activation
    r: np.ndarray  # (B, T, d_ff) relu(u)
    h3: np.ndarray  # (B, T, d) input of the unembedding


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, ``z - log(sum(exp(z)))`` with ``z = logits - max``.

    Parameters
    ----------
    logits : numpy.ndarray of float, shape (..., V)

    Returns
    -------
    numpy.ndarray, shape (..., V)
    """
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _attention_forward(h, p, layer, config, positions, rope, bias):
    H = config.n_heads
    dh = config.head_dim
    q = _split(h @ p[f"Wq{layer}"], H)
    k = _split(h @ p[f"Wk{layer}"], H)
    v = _split(h @ p[f"Wv{layer}"], H)
    if rope is not None:
        inv_freq, factor = rope
        q = apply_rope(q, positions, inv_freq=inv_freq, attention_factor=factor)
        k = apply_rope(k, positions, inv_freq=inv_freq, attention_factor=factor)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh) + bias  # bias holds the mask (-inf) too
    s -= s.max(axis=-1, keepdims=True)
    a = np.exp(s)
    a /= a.sum(axis=-1, keepdims=True)
    o = _merge(a @ v)
    return o @ p[f"Wo{layer}"], AttentionCache(h, q, k, v, a, o)


def _attention_backward(dout, cache, p, layer, config, positions, rope, grads):
    h, q, k, v, a, o = cache
    H, dh = config.n_heads, config.head_dim
    grads[f"Wo{layer}"] = np.einsum("btd,bte->de", o, dout)
    do = _split(dout @ p[f"Wo{layer}"].T, H)
    da = do @ v.transpose(0, 1, 3, 2)
    dv = a.transpose(0, 1, 3, 2) @ do
    ds = a * (da - np.sum(da * a, axis=-1, keepdims=True)) / np.sqrt(dh)
    dq = ds @ k
    dk = ds.transpose(0, 1, 3, 2) @ q
    if rope is not None:
        # q_rot = s R_m q, so dq = s R_m^T dq_rot = s R_{-m} dq_rot.
        inv_freq, factor = rope
        neg = -np.asarray(positions, dtype=np.float64)
        dq = apply_rope(dq, neg, inv_freq=inv_freq, attention_factor=factor)
        dk = apply_rope(dk, neg, inv_freq=inv_freq, attention_factor=factor)
    dq, dk, dv = _merge(dq), _merge(dk), _merge(dv)
    grads[f"Wq{layer}"] = np.einsum("btd,bte->de", h, dq)
    grads[f"Wk{layer}"] = np.einsum("btd,bte->de", h, dk)
    grads[f"Wv{layer}"] = np.einsum("btd,bte->de", h, dv)
    return dq @ p[f"Wq{layer}"].T + dk @ p[f"Wk{layer}"].T + dv @ p[f"Wv{layer}"].T


def _check_inputs(tokens, config, positions):
    x = as_int_array("tokens", tokens)
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"tokens: expected shape (batch, T) with T >= 1, got {x.shape}")
    if np.any(x < 0) or np.any(x >= config.vocab):
        raise ValueError(f"tokens: expected values in [0, {config.vocab}), got min {x.min()} max {x.max()}")
    T = x.shape[1]
    if positions is None:
        positions = np.arange(T, dtype=np.float64)
    else:
        positions = np.asarray(positions, dtype=np.float64)
        if positions.shape != (T,):
            raise ValueError(f"positions: expected shape ({T},), got {positions.shape}")
    if config.scheme == "learned":
        pos_int = positions.astype(np.int64)
        if np.any(pos_int != positions) or pos_int.min() < 0 or pos_int.max() >= config.max_len:
            raise ValueError(
                f"positions: the learned table has rows 0..{config.max_len - 1}; got positions up to "
                f"{positions.max():g} (integers required)"
            )
    return x, positions


def forward(params: dict, tokens, config: ModelConfig, *, targets=None, positions=None, inv_freq=None,
            attention_factor: float = 1.0):
    """Logits of the next symbol at every position, and their loss when targets are given.

    Parameters
    ----------
    params : dict
        From :func:`init_params` (or trained).
    tokens : array_like of int, shape (B, T)
        Input tokens.
    config : ModelConfig
    targets : array_like of int, shape (B, T), optional
        The symbol to predict at each position, in ``[0, vocab - 1)``.
    positions : array_like of float, shape (T,), optional
        Positions of the tokens (default ``0 .. T-1``); a permutation gives the
        shuffled-position control.
    inv_freq : array_like of float, shape (head_dim / 2,), optional
        RoPE frequencies to use instead of the default ones (context extension).
    attention_factor : float, default 1.0
        RoPE's cos/sin factor (YaRN's temperature).

    Returns
    -------
    logits : numpy.ndarray, shape (B, T, vocab - 1)
    loss : float or None
        The mean next-token cross-entropy over all ``B * T`` targets, in nats; None
        without ``targets``.
    """
    logits, cache = _forward(params, tokens, config, positions=positions, inv_freq=inv_freq,
                             attention_factor=attention_factor)
    if targets is None:
        return logits, None
    y = _check_targets(targets, cache.tokens, config)
    return logits, _cross_entropy(log_softmax(logits), y)


def _check_targets(targets, x, config):
    y = as_int_array("targets", targets)
    if y.shape != x.shape or np.any(y < 0) or np.any(y >= config.vocab - 1):
        raise ValueError(f"targets: expected shape {x.shape} with values in [0, {config.vocab - 1}), got {y.shape}")
    return y


def _cross_entropy(logp, y):
    """Mean of ``-logp`` at the targets."""
    return -float(np.take_along_axis(logp, y[..., None], axis=-1).mean())


def _forward(params, tokens, config, *, positions=None, inv_freq=None, attention_factor=1.0):
    """:func:`forward`'s logits and the :class:`ForwardCache` of the backward pass."""
    x, positions = _check_inputs(tokens, config, positions)
    B, T = x.shape
    h = params["E"][x]
    if config.scheme == "sinusoidal":
        h = h + sinusoidal_encoding(positions, config.d_model)[None]
    elif config.scheme == "learned":
        h = h + params["P"][positions.astype(np.int64)][None]
    rope = None
    if config.scheme == "rope":
        freq = rope_frequencies(config.head_dim, config.rope_base) if inv_freq is None else np.asarray(inv_freq)
        rope = (freq, float(attention_factor))
    mask = np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -np.inf)
    if config.scheme == "alibi":
        # -m_h (i - j) from the positions' offsets (equal to posenc.alibi_bias for 0..T-1)
        rel = positions[None, :] - positions[:, None]  # j - i
        bias = alibi_slopes(config.n_heads)[:, None, None] * rel[None] + mask
    else:
        bias = mask
    h0 = h
    out0, c0 = _attention_forward(h0, params, 0, config, positions, rope, bias)
    h1 = h0 + out0
    out1, c1 = _attention_forward(h1, params, 1, config, positions, rope, bias)
    h2 = h1 + out1
    u = h2 @ params["W1"] + params["b1"]
    r = np.maximum(u, 0.0)
    h3 = h2 + r @ params["W2"] + params["b2"]
    logits = h3 @ params["U"] + params["c"]
    return logits, ForwardCache(x, positions, rope, c0, c1, h2, u, r, h3)


def loss_and_grads(params: dict, tokens, targets, config: ModelConfig, *, positions=None):
    """Mean next-token cross-entropy and its gradient with respect to every parameter.

    Parameters
    ----------
    params : dict
    tokens : array_like of int, shape (B, T)
    targets : array_like of int, shape (B, T)
        The symbol to predict at each position, in ``[0, vocab - 1)``.
    config : ModelConfig
    positions : array_like of float, shape (T,), optional

    Returns
    -------
    loss : float
        Mean over all ``B * T`` predictions, in nats.
    grads : dict
        Same keys and shapes as ``params``.
    """
    logits, cache = _forward(params, tokens, config, positions=positions)
    y = _check_targets(targets, cache.tokens, config)
    x, positions, rope = cache.tokens, cache.positions, cache.rope
    B, T = x.shape
    logp = log_softmax(logits)
    loss = _cross_entropy(logp, y)
    g = {}
    dlogits = np.exp(logp)
    np.put_along_axis(dlogits, y[..., None], np.take_along_axis(dlogits, y[..., None], axis=-1) - 1.0, axis=-1)
    dlogits /= B * T
    g["U"] = np.einsum("btd,btv->dv", cache.h3, dlogits)
    g["c"] = dlogits.sum(axis=(0, 1))
    dh3 = dlogits @ params["U"].T
    g["W2"] = np.einsum("btf,btd->fd", cache.r, dh3)
    g["b2"] = dh3.sum(axis=(0, 1))
    du = (dh3 @ params["W2"].T) * (cache.u > 0)
    g["W1"] = np.einsum("btd,btf->df", cache.h2, du)
    g["b1"] = du.sum(axis=(0, 1))
    dh2 = dh3 + du @ params["W1"].T
    dh1 = dh2 + _attention_backward(dh2, cache.layer1, params, 1, config, positions, rope, g)
    dh0 = dh1 + _attention_backward(dh1, cache.layer0, params, 0, config, positions, rope, g)
    gE = np.zeros_like(params["E"])
    np.add.at(gE, x, dh0)
    g["E"] = gE
    if config.scheme == "learned":
        gP = np.zeros_like(params["P"])
        np.add.at(gP, positions.astype(np.int64), dh0.sum(axis=0))
        g["P"] = gP
    return loss, g
