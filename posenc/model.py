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

Parameters live in a plain ``dict`` of arrays; :func:`forward` returns the logits (and the
mean next-token loss when given targets), :func:`loss_and_grads` the loss and a dict of
gradients with the same keys.

Training runs many small models (schemes x seeds). :func:`batch_forward` and
:func:`batch_loss_and_grads` compute a *stack* of them at once, along a leading model axis
(:func:`stack_params`): any schemes whose parameters have one shape (all but
``"learned"``, or learned tables together), each with its own position terms
(:func:`position_terms`, computed once per set of positions). Each model's numbers are
exactly those it has alone; :func:`forward` and :func:`loss_and_grads` are the stack of
one. The computation runs in the parameters' dtype, float64 (the default) or float32;
angles and frequencies are computed in float64 either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._checks import as_int_array, check_choice, check_float, check_int
from .alibi import alibi_slopes
from .rope import apply_rope, rope_frequencies, rope_table
from .sinusoidal import sinusoidal_encoding

__all__ = [
    "SCHEMES",
    "ModelConfig",
    "init_params",
    "log_softmax",
    "forward",
    "loss_and_grads",
    "stack_params",
    "unstack_params",
    "PositionTerms",
    "position_terms",
    "batch_forward",
    "batch_loss_and_grads",
]

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


def stack_params(params_list) -> dict:
    """Stack the parameters of several models along a new leading model axis.

    Parameters
    ----------
    params_list : sequence of dict
        Parameters from :func:`init_params`, all with the same keys and shapes.

    Returns
    -------
    dict of str to numpy.ndarray
        The same keys; each array has shape ``(M,) + shape`` for ``M`` models.
    """
    if isinstance(params_list, dict) or not isinstance(params_list, (list, tuple)) or not params_list:
        raise TypeError(f"params_list: expected a non-empty list of parameter dicts, got {type(params_list).__name__}")
    keys = set(params_list[0])
    for i, p in enumerate(params_list):
        if not isinstance(p, dict) or set(p) != keys:
            raise ValueError(f"params_list: model {i} does not have the keys of model 0 ({sorted(keys)})")
        for k in keys:
            if np.shape(p[k]) != np.shape(params_list[0][k]):
                raise ValueError(
                    f"params_list: {k} of model {i} has shape {np.shape(p[k])}, model 0's {np.shape(params_list[0][k])}"
                )
    return {k: np.stack([p[k] for p in params_list]) for k in params_list[0]}


def unstack_params(params: dict) -> list:
    """The inverse of :func:`stack_params`: one dict of (copied) arrays per model."""
    n = len(next(iter(params.values())))
    return [{k: v[i].copy() for k, v in params.items()} for i in range(n)]


def _stack_key(config: ModelConfig) -> tuple:
    """Models can share a stack when their parameters have the same keys and shapes."""
    learned = config.scheme == "learned"
    return (config.vocab, config.d_model, config.n_heads, config.d_ff, learned, config.max_len if learned else None)


class PositionTerms(NamedTuple):
    """What the position schemes of a stack of ``M`` models contribute, for one set of positions.

    Computed once by :func:`position_terms` and passed to every forward and backward
    pass with these positions (the caller owns the cache). A scheme that does not use a
    term gets its neutral value, so one computation serves a stack of mixed schemes:
    zeros for ``encoding``, the identity rotation ``1 + 0i`` for ``rope``, the bare
    causal mask for ``bias``.
    """

    positions: np.ndarray  # (T,) float64
    learned_rows: np.ndarray | None  # (T,) int rows of the learned table, when the stack is "learned"
    encoding: np.ndarray | None  # (M, 1, T, d) added to the embeddings (sinusoidal), else None
    rope: np.ndarray | None  # (M, 1, 1, T, dh/2) complex cos/sin table (posenc.rope_table), else None
    bias: np.ndarray  # (M, 1, H, T, T) the causal mask (-inf above the diagonal) plus ALiBi's -m_h (i - j)


def position_terms(configs, positions, *, inv_freq=None, attention_factor: float = 1.0,
                   dtype="float64") -> PositionTerms:
    """The position terms of a stack of models (see :class:`PositionTerms`).

    Parameters
    ----------
    configs : sequence of ModelConfig
        One per model of the stack, all with the parameter shapes of the first.
    positions : array_like of float, shape (T,)
        Positions of the tokens; integers in ``[0, max_len)`` for ``"learned"``.
    inv_freq : array_like of float, shape (head_dim / 2,), optional
        RoPE frequencies replacing the default ones of every ``"rope"`` model.
    attention_factor : float, default 1.0
        RoPE's cos/sin factor (YaRN's temperature).
    dtype : {"float64", "float32"}
        The dtype of the parameters the terms will be used with.

    Returns
    -------
    PositionTerms
    """
    configs = _check_configs(configs)
    dtype = _check_dtype(dtype)
    positions = np.asarray(positions, dtype=np.float64)
    if positions.ndim != 1 or positions.size < 1:
        raise ValueError(f"positions: expected shape (T,) with T >= 1, got {positions.shape}")
    attention_factor = check_float("attention_factor", attention_factor, positive=True)
    c0 = configs[0]
    T, H, dh = positions.size, c0.n_heads, c0.head_dim
    schemes = [c.scheme for c in configs]
    learned_rows = None
    if schemes[0] == "learned":
        learned_rows = positions.astype(np.int64)
        if np.any(learned_rows != positions) or learned_rows.min() < 0 or learned_rows.max() >= c0.max_len:
            raise ValueError(
                f"positions: the learned table has rows 0..{c0.max_len - 1}; got positions up to "
                f"{positions.max():g} (integers required)"
            )
    encoding = None
    if "sinusoidal" in schemes:
        encoding = np.zeros((len(configs), 1, T, c0.d_model), dtype=dtype)
        for m, c in enumerate(configs):
            if c.scheme == "sinusoidal":
                encoding[m, 0] = sinusoidal_encoding(positions, c.d_model)
    rope = None
    if "rope" in schemes:
        identity = np.ones((T, dh // 2), dtype=np.complex128 if dtype == np.float64 else np.complex64)
        rope = np.stack([
            rope_table(positions, dh, inv_freq=rope_frequencies(dh, c.rope_base) if inv_freq is None else inv_freq,
                       attention_factor=attention_factor, dtype=dtype)
            if c.scheme == "rope" else identity
            for c in configs
        ])[:, None, None]
    mask = np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -np.inf)
    bias = np.broadcast_to(mask, (len(configs), H, T, T)).astype(dtype)
    for m, c in enumerate(configs):
        if c.scheme == "alibi":
            # -m_h (i - j) from the positions' offsets (equal to posenc.alibi_bias for 0..T-1)
            rel = positions[None, :] - positions[:, None]  # j - i
            bias[m] = alibi_slopes(H)[:, None, None] * rel[None] + mask
    return PositionTerms(positions, learned_rows, encoding, rope, bias[:, None])


def _check_configs(configs) -> tuple:
    if isinstance(configs, ModelConfig) or not isinstance(configs, (list, tuple)) or not configs:
        raise TypeError(f"configs: expected a non-empty sequence of ModelConfig, got {type(configs).__name__}")
    for c in configs:
        if not isinstance(c, ModelConfig):
            raise TypeError(f"configs: expected ModelConfig items, got {type(c).__name__}")
        if _stack_key(c) != _stack_key(configs[0]):
            raise ValueError(
                f"configs: {c.scheme!r} does not share the parameter shapes of {configs[0].scheme!r} "
                "(every size must agree, and a learned table is stacked only with learned tables)"
            )
    return tuple(configs)


def _check_dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype: {dtype!r}; expected float64 or float32")
    return dt


class AttentionCache(NamedTuple):
    """What one attention layer's backward pass needs from its forward pass."""

    h: np.ndarray  # (M, B*T, d) the layer's input
    q: np.ndarray  # (M, B, H, T, dh) queries (rotated, for RoPE) over sqrt(dh)
    k: np.ndarray  # (M, B, H, T, dh) keys (rotated, for RoPE)
    v: np.ndarray  # (M, B, H, T, dh) values
    a: np.ndarray  # (M, B, H, T, T) attention weights
    o: np.ndarray  # (M, B*T, d) the heads' outputs, merged, before Wo


class ForwardCache(NamedTuple):
    """What the backward pass needs from the forward pass, by name."""

    tokens: np.ndarray  # (M, B, T) int
    terms: PositionTerms  # what the position schemes add
    layer0: AttentionCache
    layer1: AttentionCache
    h2: np.ndarray  # (M, B*T, d) input of the feed-forward block
    u: np.ndarray  # (M, B*T, d_ff) its pre-activation
    r: np.ndarray  # (M, B*T, d_ff) relu(u)
    h3: np.ndarray  # (M, B*T, d) input of the unembedding


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


def _split(x, B, T, n_heads):  # (M, B*T, d) -> (M, B, H, T, dh)
    M, _, d = x.shape
    return x.reshape(M, B, T, n_heads, d // n_heads).transpose(0, 1, 3, 2, 4)


def _merge(x):  # (M, B, H, T, dh) -> (M, B*T, d)
    M, B, H, T, dh = x.shape
    return x.transpose(0, 1, 3, 2, 4).reshape(M, B * T, H * dh)


def _weight_grad(x, dy):  # sum over the rows of x^T dy: (M, N, a), (M, N, b) -> (M, a, b)
    return x.transpose(0, 2, 1) @ dy


def _attention_forward(h, p, layer, terms, B, T):
    """One causal multi-head attention layer of every model of the stack; h is (M, B*T, d)."""
    H = terms.bias.shape[2]
    q = _split(h @ p[f"Wq{layer}"], B, T, H)
    k = _split(h @ p[f"Wk{layer}"], B, T, H)
    v = _split(h @ p[f"Wv{layer}"], B, T, H)
    if terms.rope is not None:
        q = apply_rope(q, table=terms.rope)
        k = apply_rope(k, table=terms.rope)
    q = q / math.sqrt(q.shape[-1])  # the scores' scale, on the (smaller) queries
    s = q @ k.swapaxes(-1, -2)
    s += terms.bias  # the bias holds the mask (-inf) too
    s -= s.max(axis=-1, keepdims=True)
    a = np.exp(s, out=s)
    a /= a.sum(axis=-1, keepdims=True)
    o = _merge(a @ v)
    return o @ p[f"Wo{layer}"], AttentionCache(h, q, k, v, a, o)


def _attention_backward(dout, cache, p, layer, terms, grads):
    h, q, k, v, a, o = cache  # q: the rotated queries over sqrt(dh)
    grads[f"Wo{layer}"] = _weight_grad(o, dout)
    B, H, T = q.shape[1:4]
    do = _split(dout @ p[f"Wo{layer}"].swapaxes(-1, -2), B, T, H)
    da = do @ v.swapaxes(-1, -2)
    dv = a.swapaxes(-1, -2) @ do
    # through the softmax: ds_ij = a_ij (da_ij - sum_l da_il a_il), the sum a row-wise dot product
    ds = a * (da - np.einsum("...ij,...ij->...i", da, a)[..., None])
    dq = ds @ k / math.sqrt(q.shape[-1])
    dk = ds.swapaxes(-1, -2) @ q
    if terms.rope is not None:
        # q_rot = s R_m q, so dq = s R_m^T dq_rot = s R_{-m} dq_rot: the conjugate table.
        dq = apply_rope(dq, table=terms.rope.conj())
        dk = apply_rope(dk, table=terms.rope.conj())
    dq, dk, dv = _merge(dq), _merge(dk), _merge(dv)
    grads[f"Wq{layer}"] = _weight_grad(h, dq)
    grads[f"Wk{layer}"] = _weight_grad(h, dk)
    grads[f"Wv{layer}"] = _weight_grad(h, dv)
    return (dq @ p[f"Wq{layer}"].swapaxes(-1, -2) + dk @ p[f"Wk{layer}"].swapaxes(-1, -2)
            + dv @ p[f"Wv{layer}"].swapaxes(-1, -2))


def _check_tokens(tokens, configs, ndim):
    x = as_int_array("tokens", tokens)
    shape = "(models, batch, T)" if ndim == 3 else "(batch, T)"
    if x.ndim != ndim or x.shape[-1] < 1 or (ndim == 3 and x.shape[0] != len(configs)):
        raise ValueError(f"tokens: expected shape {shape} with T >= 1 and {len(configs)} models, got {x.shape}")
    vocab = configs[0].vocab
    if np.any(x < 0) or np.any(x >= vocab):
        raise ValueError(f"tokens: expected values in [0, {vocab}), got min {x.min()} max {x.max()}")
    return x


def _check_targets(targets, x, config):
    y = as_int_array("targets", targets)
    if y.shape != x.shape or np.any(y < 0) or np.any(y >= config.vocab - 1):
        raise ValueError(f"targets: expected shape {x.shape} with values in [0, {config.vocab - 1}), got {y.shape}")
    return y


def _terms_for(configs, x, params, positions, terms, inv_freq=None, attention_factor=1.0):
    """The caller's PositionTerms (checked against the tokens) or new ones."""
    dtype = params["E"].dtype
    T = x.shape[-1]
    if terms is None:
        if positions is None:
            positions = np.arange(T, dtype=np.float64)
        positions = np.asarray(positions, dtype=np.float64)
        if positions.shape != (T,):
            raise ValueError(f"positions: expected shape ({T},), got {positions.shape}")
        return position_terms(configs, positions, inv_freq=inv_freq, attention_factor=attention_factor, dtype=dtype)
    if not isinstance(terms, PositionTerms):
        raise TypeError(f"terms: expected the PositionTerms of position_terms, got {type(terms).__name__}")
    if positions is not None or inv_freq is not None or attention_factor != 1.0:
        raise ValueError("terms: expected either terms or positions (with inv_freq and attention_factor), got both")
    if terms.positions.shape != (T,) or terms.bias.shape[0] != len(configs) or terms.bias.dtype != dtype:
        raise ValueError(
            f"terms: computed for {terms.bias.shape[0]} models, {terms.positions.size} positions and "
            f"{terms.bias.dtype}; expected {len(configs)}, {T} and {dtype}"
        )
    return terms


def _forward(params, x, terms):
    """Logits of every model of the stack, (M, B, T, V), and the ForwardCache."""
    M, B, T = x.shape
    h = params["E"][np.arange(M)[:, None, None], x]  # (M, B, T, d)
    if terms.encoding is not None:
        h = h + terms.encoding
    if terms.learned_rows is not None:
        h = h + params["P"][:, None, terms.learned_rows]
    h0 = h.reshape(M, B * T, -1)
    out0, c0 = _attention_forward(h0, params, 0, terms, B, T)
    h1 = h0 + out0
    out1, c1 = _attention_forward(h1, params, 1, terms, B, T)
    h2 = h1 + out1
    u = h2 @ params["W1"] + params["b1"][:, None]
    r = np.maximum(u, 0.0)
    h3 = h2 + r @ params["W2"] + params["b2"][:, None]
    logits = h3 @ params["U"] + params["c"][:, None]
    return logits.reshape(M, B, T, -1), ForwardCache(x, terms, c0, c1, h2, u, r, h3)


def _cross_entropy(logp, y):
    """Mean of ``-logp`` at the targets, per model: (M, B, T, V), (M, B, T) -> (M,)."""
    picked = np.take_along_axis(logp, y[..., None], axis=-1)
    return -picked.reshape(len(picked), -1).mean(axis=1)


def _backward(params, cache, logp, y):
    """Gradients of every model's mean loss, stacked like ``params``."""
    M, B, T, V = logp.shape
    g = {}
    dlogits = np.exp(logp)  # softmax; minus one at the target, over the number of targets
    np.put_along_axis(dlogits, y[..., None], np.take_along_axis(dlogits, y[..., None], axis=-1) - 1.0, axis=-1)
    dlogits = dlogits.reshape(M, B * T, V) / (B * T)
    g["U"] = _weight_grad(cache.h3, dlogits)
    g["c"] = dlogits.sum(axis=1)
    dh3 = dlogits @ params["U"].swapaxes(-1, -2)
    g["W2"] = _weight_grad(cache.r, dh3)
    g["b2"] = dh3.sum(axis=1)
    du = (dh3 @ params["W2"].swapaxes(-1, -2)) * (cache.u > 0)
    g["W1"] = _weight_grad(cache.h2, du)
    g["b1"] = du.sum(axis=1)
    dh2 = dh3 + du @ params["W1"].swapaxes(-1, -2)
    dh1 = dh2 + _attention_backward(dh2, cache.layer1, params, 1, cache.terms, g)
    dh0 = dh1 + _attention_backward(dh1, cache.layer0, params, 0, cache.terms, g)
    # the embedding's gradient: a scatter-add of dh0 into the rows of the tokens
    onehot = (cache.tokens.reshape(M, B * T, 1) == np.arange(params["E"].shape[1])).astype(dh0.dtype)
    g["E"] = _weight_grad(onehot, dh0)
    if cache.terms.learned_rows is not None:
        gP = np.zeros_like(params["P"])
        np.add.at(gP, (slice(None), cache.terms.learned_rows), dh0.reshape(M, B, T, -1).sum(axis=1))
        g["P"] = gP
    return {k: g[k] for k in params}


def batch_forward(params: dict, tokens, configs, *, targets=None, positions=None, inv_freq=None,
                  attention_factor: float = 1.0, terms=None):
    """:func:`forward` for a stack of ``M`` models at once (one computation along a leading model axis).

    Parameters
    ----------
    params : dict
        Stacked parameters (:func:`stack_params`), arrays of shape ``(M,) + shape``,
        float64 or float32 (the computation runs in that dtype).
    tokens : array_like of int, shape (M, B, T)
        One batch per model.
    configs : sequence of ModelConfig, length M
        One per model; the schemes may differ, the parameter shapes may not.
    targets : array_like of int, shape (M, B, T), optional
    positions, inv_freq, attention_factor : as in :func:`forward`
    terms : PositionTerms, optional
        From :func:`position_terms`, computed once by the caller for these configs,
        positions and dtype; given instead of ``positions``, ``inv_freq`` and
        ``attention_factor``.

    Returns
    -------
    logits : numpy.ndarray, shape (M, B, T, vocab - 1)
    losses : numpy.ndarray of shape (M,), or None
        Each model's mean next-token loss; None without ``targets``.
    """
    configs = _check_configs(configs)
    x = _check_tokens(tokens, configs, 3)
    terms = _terms_for(configs, x, params, positions, terms, inv_freq, attention_factor)
    logits, cache = _forward(params, x, terms)
    if targets is None:
        return logits, None
    y = _check_targets(targets, x, configs[0])
    return logits, _cross_entropy(log_softmax(logits), y)


def batch_loss_and_grads(params: dict, tokens, targets, configs, *, positions=None, terms=None):
    """:func:`loss_and_grads` for a stack of ``M`` models at once.

    Every model's loss and gradients are those it would have alone (the test suite
    checks it, bit for bit): the stack shares the computation, not the numbers.

    Parameters
    ----------
    params : dict
        Stacked parameters, arrays of shape ``(M,) + shape``.
    tokens, targets : array_like of int, shape (M, B, T)
    configs : sequence of ModelConfig, length M
    positions : array_like of float, shape (T,), optional
    terms : PositionTerms, optional
        As in :func:`batch_forward`.

    Returns
    -------
    losses : numpy.ndarray, shape (M,)
        Each model's mean over its ``B * T`` predictions, in nats.
    grads : dict
        Same keys and shapes as ``params``.
    """
    configs = _check_configs(configs)
    x = _check_tokens(tokens, configs, 3)
    y = _check_targets(targets, x, configs[0])
    terms = _terms_for(configs, x, params, positions, terms)
    logits, cache = _forward(params, x, terms)
    logp = log_softmax(logits)
    return _cross_entropy(logp, y), _backward(params, cache, logp, y)


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
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config: expected a ModelConfig, got {type(config).__name__}")
    x = _check_tokens(tokens, (config,), 2)
    y = None if targets is None else _check_targets(targets, x, config)[None]
    logits, losses = batch_forward({k: v[None] for k, v in params.items()}, x[None], (config,), targets=y,
                                   positions=positions, inv_freq=inv_freq, attention_factor=attention_factor)
    return logits[0], None if losses is None else float(losses[0])


def loss_and_grads(params: dict, tokens, targets, config: ModelConfig, *, positions=None):
    """Mean next-token cross-entropy and its gradient with respect to every parameter.

    One model: :func:`batch_loss_and_grads` with a stack of one.

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
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config: expected a ModelConfig, got {type(config).__name__}")
    x = _check_tokens(tokens, (config,), 2)
    y = _check_targets(targets, x, config)
    losses, grads = batch_loss_and_grads({k: v[None] for k, v in params.items()}, x[None], y[None], (config,),
                                         positions=positions)
    return float(losses[0]), {k: g[0] for k, g in grads.items()}
