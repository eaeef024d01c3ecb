r"""Chapter 6's experiment: train at one length, evaluate at up to 8 times that length.

Every scheme of :mod:`posenc.model` is trained on sequences of ``train_len`` symbols
from one order-2 Markov chain (:mod:`posenc.markov`), with several seeds, and evaluated
on one fixed sample of fresh sequences of ``train_len * max(eval_multiples)`` symbols:

- "within": the first ``train_len`` targets of every sequence of the sample, at every
  evaluation length (the same tokens for every length; for a model whose computation
  does not depend on the length read, the causal mask makes this loss the same at every
  length, so only the context-extension methods can change it);
- "beyond": the targets at positions ``train_len .. train_len * k - 1`` of the first
  ``long_sequences`` sequences, read as prefixes of ``train_len * k`` symbols.

Losses are stored per sequence, next to the optimal loss on the same tokens, so that
:func:`summarize` and :func:`difference` can give the excess over the optimum with an
interval over both the training seeds (a t interval) and the evaluation sequences (a
bootstrap), see :func:`summarize`. The
trained RoPE models are also evaluated with the frequencies of position interpolation,
NTK-aware scaling and YaRN (the released code's ramp and the paper's) at the longer
lengths, without retraining, and, as a control, at the training length with the
positions shuffled.

Run ``python -m posenc.experiment --help`` for a larger configuration than the book's;
it prints progress on stderr and writes a CSV table and a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, replace

import numpy as np

from ._checks import _show, as_int_array, check_choice, check_float, check_int
from .markov import make_chain, optimal_nll, sample_sequences
from .model import (
    SCHEMES,
    ModelConfig,
    batch_loss_and_grads,
    forward,
    init_params,
    log_softmax,
    position_terms,
    stack_params,
    unstack_params,
)
from .scaling import rope_scaling

__all__ = [
    "ExperimentConfig",
    "learning_rate",
    "Results",
    "Claim",
    "train",
    "train_batch",
    "heldout_steps",
    "heldout_sample",
    "evaluate",
    "run_experiment",
    "reevaluate",
    "summarize",
    "difference",
    "check_claims",
    "book_claims",
    "format_table",
    "read_run",
    "read_results",
    "write_losses",
    "plot_results",
    "main",
]

#: RoPE models are also evaluated with these frequencies (no retraining): PI, NTK-aware,
#: and YaRN (frequencies and attention temperature) with the released code's ramp and
#: with the paper's ramp (:func:`posenc.scaling.yarn_scaling`, ``ramp=``).
ROPE_VARIANTS = ("rope+pi", "rope+ntk", "rope+yarn-released", "rope+yarn-paper")

#: Chapter 6's configuration trained four times longer, recorded once (it costs four times
#: the chapter's budget) with ``python -m posenc.experiment --book --steps <4 x steps>
#: --out posenc/data/book-4x``; read it with :func:`read_run`.
BOOK_4X = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "book-4x")

#: Plain RoPE trained at 256 symbols (heads of 16, d = 64, 3 seeds, float64, 2000 steps), where
#: YaRN's ramp keeps plane 0 whole, evaluated at 256, 512 and 1024 with PI, NTK-aware and both
#: YaRN ramps; recorded once with ``python -m posenc.experiment --schemes rope --seeds 3
#: --train-len 256 --multiples 1,2,4 --eval-sequences 128 --long-sequences 16 --steps 2000
#: --dtype float64 --out posenc/data/yarn-L256``; read it with :func:`read_run`.
BOOK_YARN_L256 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "yarn-L256")

#: Seed 0 of every scheme of :data:`BOOK_RUN` retrained in float64 under OpenBLAS's default
#: kernel and forced to others, each compared with the record (``drift.csv``), written by
#: ``python benchmarks/kernel-drift/collect.py posenc/data/kernel-drift/drift.csv``.
BOOK_KERNEL_DRIFT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "kernel-drift", "drift.csv")

#: Chapter 6's configuration (:meth:`ExperimentConfig.book`), 5 seeds in float64, recorded once
#: with ``python -m posenc.experiment --book --fresh-eval-seeds 1,2 --out posenc/data/book``
#: (per-sequence losses in ``losses.npz``; the same models on two fresh evaluation samples in
#: ``losses-eval1.npz`` and ``losses-eval2.npz``); read it with :func:`read_results`.
BOOK_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "book")

#: The regions of an evaluation sequence that losses are reported on.
REGIONS = ("within", "beyond")


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines a run; two equal configurations give identical results.

    Parameters
    ----------
    schemes : tuple of str
        Positional schemes to train (names from ``posenc.model.SCHEMES``).
    seeds : tuple of int
        One trained model per scheme and seed.
    train_len : int
        Symbols per training sequence, ``L_train``.
    eval_multiples : tuple of int
        Evaluation lengths as multiples of ``train_len`` (1 first).
    eval_sequences : int
        Evaluation sequences; the first ``train_len`` targets of every one are the
        "within" tokens, scored at every evaluation length.
    long_sequences : int
        How many of them (the first ones) are also read at the longer lengths: the
        "beyond" tokens (at most ``eval_sequences``).
    eval_seed : int
        Seed of the evaluation sample (the same for every scheme, seed and length).
    steps, batch, lr, warmup, clip : training settings (Adam, linear warm-up then cosine
        decay, gradient clipping by global norm).
    heldout_every : int
        Steps between two measurements of the held-out loss during training (the
        convergence curve; see :func:`heldout_sample`).
    n_symbols, concentration, chain_seed : the Markov chain.
    d_model, n_heads, d_ff, rope_base : the model (see :class:`posenc.model.ModelConfig`).
    workers : int
        Processes to train in (results do not depend on it).
    dtype : {"float64", "float32"}
        Precision of the training computation (parameters, activations, gradients and
        Adam's moments); the trained parameters are returned in float64. float32 is faster
        (``make bench`` measures by how much). In either precision the results are
        reproducible on the same BLAS kernel only: another kernel rounds differently and
        training amplifies the differences (in float64 too; chapter 6 shows by how much).
        The book uses float64.
    """

    schemes: tuple = SCHEMES
    seeds: tuple = (0, 1, 2)
    train_len: int = 32
    eval_multiples: tuple = (1, 2, 4, 8)
    eval_sequences: int = 512
    long_sequences: int = 32
    eval_seed: int = 0
    steps: int = 1000
    batch: int = 16
    lr: float = 1e-2
    warmup: int = 50
    clip: float = 1.0
    heldout_every: int = 100
    n_symbols: int = 8
    concentration: float = 0.1
    chain_seed: int = 0
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 64
    rope_base: float = 10000.0
    workers: int = 2
    dtype: str = "float64"

    def __post_init__(self):
        # Every field is checked here, so a bad value fails before any work starts.
        schemes = _check_tuple("schemes", self.schemes)
        for s in schemes:
            check_choice("schemes", s, SCHEMES)
        if len(set(schemes)) != len(schemes):
            raise ValueError(f"schemes: {schemes!r}; expected no scheme twice")
        seeds = tuple(check_int("seeds", s, minimum=0) for s in _check_tuple("seeds", self.seeds))
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds: {seeds!r}; expected distinct seeds")
        check_int("train_len", self.train_len, minimum=4)
        multiples = tuple(
            check_int("eval_multiples", m, minimum=1) for m in _check_tuple("eval_multiples", self.eval_multiples)
        )
        if multiples[0] != 1 or any(b <= a for a, b in zip(multiples, multiples[1:])):
            raise ValueError(
                f"eval_multiples: {multiples!r}; expected increasing positive integers starting with 1"
            )
        check_int("eval_sequences", self.eval_sequences, minimum=1)
        check_int("long_sequences", self.long_sequences, minimum=1)
        if self.long_sequences > self.eval_sequences:
            raise ValueError(
                f"long_sequences: {self.long_sequences}; expected at most eval_sequences = {self.eval_sequences}"
            )
        check_int("eval_seed", self.eval_seed, minimum=0)
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, positive=True)
        check_int("warmup", self.warmup, minimum=0)
        check_float("clip", self.clip, positive=True)
        check_int("heldout_every", self.heldout_every, minimum=1)
        check_int("n_symbols", self.n_symbols, minimum=2)
        check_float("concentration", self.concentration, positive=True)
        check_int("chain_seed", self.chain_seed, minimum=0)
        check_int("workers", self.workers, minimum=1)
        check_choice("dtype", self.dtype, ("float64", "float32"))
        object.__setattr__(self, "schemes", schemes)
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "eval_multiples", multiples)
        # d_model, n_heads, d_ff and rope_base are checked by the model's own configuration
        self.model_config(schemes[0])

    @classmethod
    def book(cls) -> ExperimentConfig:
        """The chapter's configuration: 5 schemes x 5 seeds, heads of width 16, lengths 1x to 8x (32 to 256),
        float64. Trained once by the command line into :data:`BOOK_RUN`; the chapter retrains part of it.

        Two worker processes, except under Pyodide (``sys.platform == "emscripten"``: the
        chapter's Run controls in the reader's browser), which has no processes: there it
        trains in one (the results do not depend on ``workers``).
        """
        return cls(seeds=(0, 1, 2, 3, 4), steps=2000, d_model=64, eval_sequences=512, long_sequences=32,
                   heldout_every=200, dtype="float64", workers=1 if sys.platform == "emscripten" else 2)

    def model_config(self, scheme: str) -> ModelConfig:
        return ModelConfig(
            vocab=self.n_symbols + 1,
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            scheme=scheme,
            max_len=self.train_len * max(self.eval_multiples),
            rope_base=self.rope_base,
        )


def book_claims() -> tuple:
    """The comparisons chapter 6 asserts about the book's configuration, as :class:`Claim` objects.

    Each is a finding by the chapter's rule: the whole 95% interval (:func:`summarize`) of the
    difference lies on the claimed side. ``tests/test_experiment.py`` checks that every
    one also holds on fresh evaluation tokens.
    """
    schemes = ("nope", "sinusoidal", "learned", "rope", "alibi")
    variants = ("rope+pi", "rope+ntk", "rope+yarn-released", "rope+yarn-paper")
    c = []
    # at the training length no ranking is claimed: the differences are below the convergence
    # criterion's 0.01 nats (chapter 6, "Did training converge?")
    # at the training length every model beats the bigram loss
    c += [Claim(n, "bigram", 32, "within") for n in schemes]
    # the control: with shuffled positions every model is worse than the bigram loss
    c += [Claim("bigram", f"{n} (shuffled positions)", 32, "within")
          for n in ("sinusoidal", "learned", "rope", "alibi")]
    # past the training length: ALiBi stays within 0.1 nats of the optimum and is best at 8x
    c += [Claim("alibi", "optimum", L, "beyond", below=0.1) for L in (64, 128, 256)]
    c += [Claim("alibi", n, 256, "beyond") for n in schemes + variants if n != "alibi"]
    # NoPE degrades gradually; sinusoidal, learned and RoPE fail at once
    c += [Claim("nope", n, L, "beyond") for n in ("sinusoidal", "learned", "rope") for L in (64, 256)]
    c += [Claim("unigram", n, 64, "beyond") for n in ("sinusoidal", "learned")]
    c += [Claim("unigram", "rope", 256, "beyond")]
    # context extension on the new positions: every method beats plain RoPE at 8x; YaRN's
    # released ramp beats the other three at every length
    c += [Claim(v, "rope", 256, "beyond") for v in variants]
    c += [Claim("rope+yarn-released", v, L, "beyond") for v in ("rope+pi", "rope+ntk", "rope+yarn-paper")
          for L in (64, 128, 256)]
    # the paper's ramp is near PI, but better at 2x and 4x
    c += [Claim("rope+yarn-paper", "rope+pi", L, "beyond") for L in (64, 128)]
    # inside the trained window at 8x: NTK-aware does least damage, then YaRN (released), then the
    # paper's ramp and PI; PI without fine-tuning is worse than the bigram loss there
    c += [Claim("rope+ntk", "rope+yarn-released", 256, "within"),
          Claim("rope+ntk", "rope+pi", 256, "within"),
          Claim("rope+yarn-released", "rope+yarn-paper", 256, "within"),
          Claim("rope+yarn-released", "rope+pi", 256, "within"),
          Claim("bigram", "rope+pi", 256, "within")]
    return tuple(c)


def _check_tuple(name: str, value) -> tuple:
    """A non-empty tuple (a list is accepted and converted); a string is not a sequence here."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise TypeError(f"{name}: {_show(value)}; expected a non-empty tuple")
    if len(value) == 0:
        raise ValueError(f"{name}: (); expected a non-empty tuple")
    return tuple(value)


def learning_rate(step: int, config: ExperimentConfig) -> float:
    """The schedule: linear warm-up to ``config.lr`` over ``config.warmup`` steps, then cosine decay.

    Parameters
    ----------
    step : int
        Training step, from 1 to ``config.steps``.
    config : ExperimentConfig

    Returns
    -------
    float
        ``lr * step / warmup`` for ``step <= warmup``, then
        ``lr * (1 + cos(pi * (step - warmup) / (steps - warmup))) / 2``, which reaches 0 at
        the last step.
    """
    step = check_int("step", step, minimum=1)
    if step <= config.warmup:
        return config.lr * step / config.warmup
    frac = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * 0.5 * (1 + math.cos(math.pi * frac))


def _clip_by_global_norm(grads: dict, clip: float) -> None:
    """Scale each model's gradients (in place) so that their joint Euclidean norm is at most ``clip``.

    ``grads`` holds stacked gradients (leading model axis); every model has its own norm.
    """
    sq = sum(np.sum((g * g).reshape(len(g), -1), axis=1) for g in grads.values())
    norm = np.sqrt(sq)
    if np.any(norm > clip):
        scale = np.where(norm > clip, clip / norm, 1.0)
        for g in grads.values():
            g *= scale.reshape((-1,) + (1,) * (g.ndim - 1)).astype(g.dtype)


def _adam(params, grads, state, lr, t, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step (Kingma and Ba, 2015) on every parameter, in place; ``state`` holds the moments."""
    for k in params:
        m, v = state.setdefault(k, (np.zeros_like(params[k]), np.zeros_like(params[k])))
        m *= b1
        m += (1 - b1) * grads[k]
        v *= b2
        v += (1 - b2) * grads[k] ** 2
        params[k] -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)


def _check_config(config) -> None:
    if not isinstance(config, ExperimentConfig):
        raise TypeError(f"config: expected an ExperimentConfig, got {type(config).__name__}")


def heldout_steps(config: ExperimentConfig) -> np.ndarray:
    """The steps after which the held-out loss is measured: every ``heldout_every`` steps and the last."""
    _check_config(config)
    return np.unique(np.append(np.arange(config.heldout_every, config.steps + 1, config.heldout_every), config.steps))


def heldout_sample(config: ExperimentConfig) -> tuple:
    """Held-out sequences for the convergence curve, and the optimal loss on them.

    Returns
    -------
    (sequences, optimum) : numpy.ndarray of shape (64, train_len + 1) and float
        64 sequences of ``train_len`` symbols, drawn from a stream used by neither the
        training batches nor the evaluation sample, and the mean optimal loss on them.
    """
    _check_config(config)
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
    seq = sample_sequences(chain, 64, config.train_len, np.random.default_rng([config.chain_seed, 5]))
    return seq, float(optimal_nll(chain, seq).mean())


def train_batch(config: ExperimentConfig, models) -> tuple:
    """Train several models at once, as one computation along a leading model axis.

    Each model is trained exactly as :func:`train` would train it alone (its own
    initialisation and its own training batches, drawn from the seed), bit for bit: the
    stack shares the work of every step, not the numbers.

    Parameters
    ----------
    config : ExperimentConfig
    models : sequence of (str, int)
        ``(scheme, seed)`` pairs whose parameters have the same shapes (any schemes but
        ``"learned"`` together, or ``"learned"`` alone).

    Returns
    -------
    params : list of dict
        The trained parameters of each model.
    losses : numpy.ndarray, shape (len(models), config.steps)
        Each model's training loss at every step.
    heldout : numpy.ndarray, shape (len(models), len(heldout_steps(config)))
        Each model's excess loss over the optimum on :func:`heldout_sample`, after each of
        :func:`heldout_steps` (the convergence curve).
    """
    if not isinstance(config, ExperimentConfig):
        raise TypeError(f"config: expected an ExperimentConfig, got {type(config).__name__}")
    models = _check_models(models)
    configs = tuple(config.model_config(scheme) for scheme, _ in models)
    seeds = [seed for _, seed in models]
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
    held_seq, held_opt = heldout_sample(config)
    checkpoints = set(heldout_steps(config).tolist())
    heldout = []
    params = stack_params([init_params(mc, seed) for mc, seed in zip(configs, seeds)])
    params = {k: v.astype(config.dtype) for k, v in params.items()}
    terms = position_terms(configs, np.arange(config.train_len, dtype=np.float64), dtype=config.dtype)
    data_rngs = {seed: np.random.default_rng([seed, 1]) for seed in dict.fromkeys(seeds)}  # one stream per seed
    state: dict = {}
    losses = np.empty((len(models), config.steps))
    for step in range(1, config.steps + 1):
        batch = {seed: sample_sequences(chain, config.batch, config.train_len, rng) for seed, rng in data_rngs.items()}
        seq = np.stack([batch[seed] for seed in seeds])  # (M, batch, train_len + 1)
        loss, grads = batch_loss_and_grads(params, seq[..., :-1], seq[..., 1:], configs, terms=terms)
        _clip_by_global_norm(grads, config.clip)
        _adam(params, grads, state, learning_rate(step, config), step)
        losses[:, step - 1] = loss
        if step in checkpoints:  # the held-out curve, each model in float64
            heldout.append([float(_nll({k: v.astype(np.float64) for k, v in p.items()}, held_seq, mc).mean())
                            - held_opt for p, mc in zip(unstack_params(params), configs)])
    trained = [{k: v.astype(np.float64) for k, v in p.items()} for p in unstack_params(params)]
    return trained, losses, np.array(heldout).T


def _check_models(models) -> tuple:
    if isinstance(models, (str, bytes)) or not isinstance(models, (list, tuple)) or not models:
        raise TypeError(f"models: {_show(models)}; expected a non-empty list of (scheme, seed) pairs")
    out = []
    for item in models:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise TypeError(f"models: {_show(item)} is not a (scheme, seed) pair")
        out.append((check_choice("models", item[0], SCHEMES), check_int("models", item[1], minimum=0)))
    if len({s == "learned" for s, _ in out}) > 1:
        raise ValueError(f"models: {out!r}; a learned table is trained only with learned tables (other shapes)")
    if len(set(out)) != len(out):
        raise ValueError(f"models: {out!r}; expected no model twice")
    return tuple(out)


def train(config: ExperimentConfig, scheme: str, seed: int) -> tuple:
    """Train one model (a stack of one, see :func:`train_batch`).

    Returns
    -------
    params : dict
        The trained parameters.
    losses : numpy.ndarray, shape (steps,)
        The training loss of every step.
    heldout : numpy.ndarray, shape (len(heldout_steps(config)),)
        The excess of the loss over the optimum on :func:`heldout_sample`, after each of
        :func:`heldout_steps`.
    """
    (params,), losses, heldout = train_batch(config, [(scheme, seed)])
    return params, losses[0], heldout[0]


def _nll(params, seq, mc, **kwargs):
    logits, _ = forward(params, seq[:, :-1], mc, **kwargs)
    return -np.take_along_axis(log_softmax(logits), seq[:, 1:, None], axis=-1)[..., 0]


# The rope_type of posenc.scaling.rope_scaling behind each variant (the two YaRN variants
# differ in the ramp).
_VARIANT_ROPE_TYPES = {"rope+pi": "linear", "rope+ntk": "ntk", "rope+yarn-released": "yarn",
                       "rope+yarn-paper": "yarn"}


def _variant_frequencies(variant: str, mc: ModelConfig, factor: float, train_len: int):
    if factor == 1.0:
        return None, 1.0
    rope_type = _VARIANT_ROPE_TYPES[variant]
    params = {"factor": factor, "base": mc.rope_base}
    if rope_type == "yarn":
        params["original_max_position"] = train_len  # YaRN's ramp is set by the training length
        params["ramp"] = "paper" if variant == "rope+yarn-paper" else "released"
    return rope_scaling(mc.head_dim, rope_type=rope_type, **params)


def evaluation_sample(config: ExperimentConfig) -> np.ndarray:
    """The evaluation sequences: ``eval_sequences`` rows of ``BOS`` and ``train_len * max(eval_multiples)`` symbols.

    Drawn from ``config.eval_seed`` alone, so every scheme, seed and length is scored on
    the same tokens.
    """
    _check_config(config)
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
    length = config.train_len * max(config.eval_multiples)
    rng = np.random.default_rng([config.chain_seed, 7, config.eval_seed])
    return sample_sequences(chain, config.eval_sequences, length, rng)


def _per_sequence(params, seq, mc, start: int, **kwargs) -> np.ndarray:
    """Mean loss of each sequence over its targets from ``start`` on, computed in chunks of
    about 2048 tokens (so that the (batch, heads, T, T) scores stay small)."""
    step = max(1, 2048 // (seq.shape[1] - 1))
    return np.concatenate([_nll(params, seq[i : i + step], mc, **kwargs)[:, start:].mean(axis=1)
                           for i in range(0, len(seq), step)])


def evaluate(config: ExperimentConfig, scheme: str, seed: int, params, sample=None) -> dict:
    """Per-sequence losses of one trained model (and its RoPE variants) on the evaluation sample.

    Parameters
    ----------
    config : ExperimentConfig
    scheme : str
    seed : int
        The training seed (it seeds the shuffled-position control).
    params : dict
        The trained parameters.
    sample : numpy.ndarray, optional
        The evaluation sequences (default :func:`evaluation_sample` of ``config``).

    Returns
    -------
    dict
        ``(name, multiple, region) -> numpy.ndarray`` of per-sequence mean losses, in
        nats: region ``"within"`` (the first ``train_len`` targets, ``eval_sequences``
        values) at every multiple, ``"beyond"`` (targets ``train_len .. train_len * k - 1``,
        ``long_sequences`` values) at every multiple above 1. ``name`` is the scheme, a
        RoPE variant, or ``"<scheme> (shuffled positions)"`` (multiple 1, within).
    """
    _check_config(config)
    check_choice("scheme", scheme, config.schemes)
    check_int("seed", seed, minimum=0)
    seq = evaluation_sample(config) if sample is None else as_int_array("sample", sample)
    expected = (config.eval_sequences, config.train_len * max(config.eval_multiples) + 1)
    if seq.shape != expected:
        raise ValueError(f"sample: shape {seq.shape}; expected {expected} (see evaluation_sample)")
    mc = config.model_config(scheme)
    L = config.train_len
    out = {}
    short = seq[:, : L + 1]
    base = _per_sequence(params, short, mc, 0)
    variants = list(ROPE_VARIANTS) if scheme == "rope" else []
    for k in config.eval_multiples:
        # Within the trained window: a causal model scores the first L targets from the first
        # L inputs only, so this is the 1x loss unless the frequencies depend on k.
        out[(scheme, k, "within")] = base
        for v in variants:
            inv_freq, factor = _variant_frequencies(v, mc, float(k), L)
            out[(v, k, "within")] = (
                base if inv_freq is None else
                _per_sequence(params, short, mc, 0, inv_freq=inv_freq, attention_factor=factor)
            )
        if k == 1:
            continue
        long = seq[: config.long_sequences, : L * k + 1]
        for name in [scheme] + variants:
            inv_freq, factor = (None, 1.0) if name == scheme else _variant_frequencies(name, mc, float(k), L)
            out[(name, k, "beyond")] = _per_sequence(params, long, mc, L, inv_freq=inv_freq,
                                                     attention_factor=factor)
    if scheme in ("rope", "sinusoidal", "learned", "alibi"):
        # control: the same model with the positions of each evaluation shuffled
        perm = np.random.default_rng([seed, 11]).permutation(L)
        out[(f"{scheme} (shuffled positions)", 1, "within")] = _per_sequence(
            params, short, mc, 0, positions=perm.astype(np.float64)
        )
    return out


@dataclass(frozen=True)
class Results:
    """Everything a run measured, per sequence, so that intervals can be computed later.

    Attributes
    ----------
    config : ExperimentConfig
    losses : dict
        ``(name, multiple, region) -> numpy.ndarray`` of shape ``(n_seeds, n_sequences)``:
        each trained seed's mean loss on each evaluation sequence (see :func:`evaluate`).
    optimum : dict
        ``(multiple, region) -> numpy.ndarray`` of shape ``(n_sequences,)``: the optimal
        loss on the same tokens.
    train_loss : dict
        ``scheme -> numpy.ndarray`` of shape ``(n_seeds, steps)``: the training loss of
        every step.
    heldout : dict
        ``scheme -> numpy.ndarray`` of shape ``(n_seeds, len(heldout_steps(config)))``:
        the excess over the optimum on :func:`heldout_sample` during training.
    params : dict
        ``(scheme, seed) -> parameters`` of the trained models (for :func:`reevaluate`).
    """

    config: ExperimentConfig
    losses: dict
    optimum: dict
    train_loss: dict
    heldout: dict
    params: dict

    @property
    def names(self) -> list:
        """The evaluated names, in order (schemes, RoPE variants, then the shuffled controls)."""
        return list(dict.fromkeys(name for name, _, _ in self.losses))

    def excess(self, name: str, multiple: int, region: str) -> np.ndarray:
        """Per-seed, per-sequence excess over the optimum on the same tokens, ``(n_seeds, n_sequences)``."""
        return self.losses[(name, multiple, region)] - self.optimum[(multiple, region)][None]

    def rows(self) -> list:
        """One row per (name, seed, evaluation length): the means over the evaluation sequences."""
        out = []
        L = self.config.train_len
        for name in self.names:
            for i, seed in enumerate(self.config.seeds):
                for k in self.config.eval_multiples:
                    if (name, k, "within") not in self.losses:
                        continue
                    row = {"scheme": name, "seed": seed, "eval_len": L * k, "multiple": k}
                    for region in REGIONS:
                        key = (name, k, region)
                        row[f"loss_{region}"] = float(self.losses[key][i].mean()) if key in self.losses else math.nan
                        row[f"optimum_{region}"] = (
                            float(self.optimum[(k, region)].mean()) if key in self.losses else math.nan
                        )
                    base = name.split("+")[0].split(" ")[0]
                    row["final_train_loss"] = float(self.train_loss[base][i, -50:].mean())
                    out.append(row)
        return out


def _stacks(config: ExperimentConfig) -> list:
    """The models to train together: per seed, every scheme but ``"learned"`` (their
    parameters have one shape, and they share the seed's training batches); the learned
    tables of every seed in one more stack."""
    shared = [s for s in config.schemes if s != "learned"]
    stacks = [[(s, seed) for s in shared] for seed in config.seeds] if shared else []
    if "learned" in config.schemes:
        stacks.append([("learned", seed) for seed in config.seeds])
    return stacks


def _train_and_evaluate(args):
    """Train one stack and evaluate each of its models:
    ``[((scheme, seed), evaluations, losses, heldout, params), ...]``."""
    config, models = args
    with _one_blas_thread():
        trained, losses, heldout = train_batch(config, models)
        return [((scheme, seed), evaluate(config, scheme, seed, params), loss, held, params)
                for (scheme, seed), params, loss, held in zip(models, trained, losses, heldout)]


def _evaluate_models(args):
    """Evaluate trained models again (:func:`reevaluate`), in the same form."""
    config, models = args
    with _one_blas_thread():
        return [((scheme, seed), evaluate(config, scheme, seed, params), None, None, params)
                for scheme, seed, params in models]


def _openblas_threads():
    """``(get, set)`` for the thread count of NumPy's own OpenBLAS (the scipy-openblas of
    NumPy's wheels), or None when NumPy was built otherwise."""
    import ctypes
    import glob

    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "libscipy_openblas*.so*"))):
        try:
            lib = ctypes.CDLL(path)
            return lib.scipy_openblas_get_num_threads64_, lib.scipy_openblas_set_num_threads64_
        except (OSError, AttributeError):
            continue
    return None


@contextlib.contextmanager
def _one_blas_thread():
    """Run the block with NumPy's OpenBLAS on one thread, then restore the thread count.

    Training multiplies matrices of a few dozen rows, thousands of times: a second BLAS
    thread only adds synchronisation (on a busy machine, 20 times the single-thread time
    was measured), and the workers of :func:`run_experiment` already use the cores.
    Without a recognised OpenBLAS the block runs unchanged.
    """
    threads = _openblas_threads()
    if threads is None:
        yield
        return
    get, set_ = threads
    before = get()
    set_(1)
    try:
        yield
    finally:
        set_(before)


def _keep_freed_memory() -> None:
    """Ask glibc's ``malloc`` to keep the memory a training step frees, for the next step.

    Every step allocates and frees the same arrays of a few megabytes; by default glibc
    returns them to the system (it trims the heap) and the next step faults the pages in
    again, which costs about as much as the arithmetic in float64 (``make bench``
    measures it). Called only in the worker processes of :func:`run_experiment`, which
    exit after training, never in the caller's process; without glibc it does nothing.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):
        return
    if mallopt is not None:
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's malloc.h
        mallopt(M_MMAP_THRESHOLD, 32 << 20)  # arrays up to 32 MiB come from the heap ...
        mallopt(M_TRIM_THRESHOLD, 1 << 30)  # ... which keeps up to 1 GiB of freed memory


def _map(function, jobs, workers, progress, verb) -> dict:
    """Run the jobs (in ``workers`` processes if more than one); ``(scheme, seed) -> output``."""
    by_model = {}

    def collect(done):
        for out in done:
            by_model[out[0]] = out[1:]
            if progress:
                progress(f"{verb} {out[0][0]} seed {out[0][1]}")

    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        with ctx.Pool(min(workers, len(jobs)), initializer=_keep_freed_memory) as pool:
            for done in pool.imap(function, jobs):
                collect(done)
    else:
        for job in jobs:
            collect(function(job))
    return by_model


def run_experiment(config: ExperimentConfig, *, progress=None) -> Results:
    """Train and evaluate every (scheme, seed).

    The models are trained in stacks (:func:`train_batch`: every scheme of a seed at
    once, and the learned tables together), which gives each model exactly the result it
    would have alone; with ``config.workers > 1`` the stacks are shared among as many
    processes.

    Parameters
    ----------
    config : ExperimentConfig
    progress : callable, optional
        Called with a short message after each trained model (for example ``print`` to
        stderr).

    Returns
    -------
    Results
        Per-sequence losses of every scheme, RoPE variant and shuffled-position control,
        with the optimum on the same tokens; :func:`summarize` turns them into means and
        intervals.
    """
    _check_config(config)
    by_model = _map(_train_and_evaluate, [(config, models) for models in _stacks(config)], config.workers,
                    progress, "trained")
    train_loss = {s: np.stack([by_model[s, seed][1] for seed in config.seeds]) for s in config.schemes}
    heldout = {s: np.stack([by_model[s, seed][2] for seed in config.seeds]) for s in config.schemes}
    return _collect(config, by_model, train_loss, heldout)


def reevaluate(results: Results, eval_seed: int, *, progress=None) -> Results:
    """The same trained models scored on another evaluation sample (``eval_seed``).

    Parameters
    ----------
    results : Results
        From :func:`run_experiment`.
    eval_seed : int
        Seed of the new evaluation sample (see :func:`evaluation_sample`).
    progress : callable, optional

    Returns
    -------
    Results
        As from :func:`run_experiment` with ``eval_seed`` in the configuration, without
        retraining.
    """
    _check_results(results)
    config = replace(results.config, eval_seed=check_int("eval_seed", eval_seed, minimum=0))
    jobs = [(config, [(s, seed, results.params[(s, seed)]) for s in config.schemes]) for seed in config.seeds]
    by_model = _map(_evaluate_models, jobs, config.workers, progress, "evaluated")
    return _collect(config, by_model, results.train_loss, results.heldout)


def _collect(config, by_model, train_loss, heldout) -> Results:
    """Results from ``(scheme, seed) -> (evaluations, losses, heldout, params)``, in the
    configuration's order of schemes and seeds."""
    losses, params = {}, {}
    for scheme in config.schemes:
        for seed in config.seeds:
            evals, _, _, trained = by_model[scheme, seed]
            for key, value in evals.items():
                losses.setdefault(key, []).append(value)
            params[(scheme, seed)] = trained
    losses = {key: np.stack(v) for key, v in losses.items()}
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
    floor = optimal_nll(chain, evaluation_sample(config))
    L = config.train_len
    optimum = {}
    for k in config.eval_multiples:
        optimum[(k, "within")] = floor[:, :L].mean(axis=1)
        if k > 1:
            optimum[(k, "beyond")] = floor[: config.long_sequences, L : L * k].mean(axis=1)
    return Results(config, losses, optimum, train_loss, heldout, params)


def _bootstrap_weights(n_seeds: int, n_sequences: int, n_boot: int, seed: int):
    """Resampling weights: ``(n_boot, n_seeds)`` seed counts and ``(n_boot, n_sequences)`` sequence counts."""
    rng = np.random.default_rng([seed, n_seeds, n_sequences])
    seeds = rng.multinomial(n_seeds, np.full(n_seeds, 1.0 / n_seeds), size=n_boot) / n_seeds
    sequences = rng.multinomial(n_sequences, np.full(n_sequences, 1.0 / n_sequences), size=n_boot) / n_sequences
    return seeds, sequences


def _t_quantile(p: float, df: int) -> float:
    """Quantile ``p`` (above 1/2) of Student's t distribution with ``df`` degrees of freedom.

    The density is integrated from 0 (Simpson's rule on a substitution that maps the
    half-line to [0, pi/2)) and the result inverted by bisection; accurate to about 1e-8,
    checked against the printed tables by the tests.
    """
    from math import gamma, pi, sqrt

    c = gamma((df + 1) / 2) / (sqrt(df * pi) * gamma(df / 2))

    def cdf(x):
        # x = sqrt(df) tan(u): the integrand c (1 + tan^2 u)^{-(df+1)/2} sqrt(df) sec^2 u = c sqrt(df) cos^{df-1} u
        top = np.arctan(x / sqrt(df))
        u = np.linspace(0.0, top, 2001)
        f = np.cos(u) ** (df - 1)
        h = top / 2000
        return 0.5 + c * sqrt(df) * h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())

    lo, hi = 0.0, 1e3
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def _interval(values: np.ndarray, n_boot: int, seed: int, level: float) -> tuple:
    """Mean of a ``(n_seeds, n_sequences)`` table and its interval over seeds and tokens.

    The rule: ``mean +- t * sqrt(s_seed^2 / n + v_seq)``, with ``t`` the ``(1 + level)/2``
    quantile of Student's t with ``n - 1`` degrees of freedom (``n`` seeds), ``s_seed`` the
    standard deviation of the seeds' means (every seed is scored on the same sequences, so
    this is the spread between trained models), and ``v_seq`` the bootstrap variance of the
    seed-averaged mean when the sequences are resampled (whole sequences, with replacement:
    the tokens of one sequence are not independent), which is the sampling error of the
    evaluation tokens. The seed level is the classical t interval (a percentile bootstrap
    over a few seeds would be about [min, max] of their means, too narrow); using ``n - 1``
    degrees of freedom for the token part too makes the interval a little wider than
    needed. The same sequence replicates serve every table of the same shape, so the
    intervals of differences are paired. With one seed only the token part is left, as a
    percentile bootstrap interval.
    """
    n = values.shape[0]
    _, w_seq = _bootstrap_weights(n, values.shape[1], n_boot, seed)
    boot = w_seq @ values.mean(axis=0)  # (n_boot,): the seed-averaged mean over resampled sequences
    mean = float(values.mean())
    if n == 1:
        lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
        return mean, float(lo), float(hi)
    seed_means = values.mean(axis=1)
    half = _t_quantile((1 + level) / 2, n - 1) * math.sqrt(seed_means.var(ddof=1) / n + boot.var(ddof=1))
    return mean, mean - half, mean + half


def _check_results(results):
    if not isinstance(results, Results):
        raise TypeError(f"results: expected the Results of run_experiment, got {type(results).__name__}")


def summarize(results: Results, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> dict:
    """Means and intervals, keyed by ``(name, eval_len)``.

    The interval of a mean over ``n`` seeds is ``mean +- t * sqrt(s_seed^2 / n + v_seq)``:
    ``t`` the ``(1 + level)/2`` quantile of Student's t with ``n - 1`` degrees of freedom,
    ``s_seed`` the standard deviation of the seeds' means, ``v_seq`` the bootstrap
    variance of the mean over resampled evaluation sequences (one seed: the percentile
    bootstrap interval over sequences alone).

    Parameters
    ----------
    results : Results
        From :func:`run_experiment`.
    n_boot : int, default 2000
        Bootstrap replicates of the evaluation sequences.
    seed : int, default 0
        Seed of the bootstrap.
    level : float, default 0.95
        Coverage of the percentile intervals.

    Returns
    -------
    dict
        ``(name, eval_len) -> dict`` with ``multiple``, ``n_seeds``, and for each region
        (``within``; ``beyond`` above 1x): ``loss_<region>`` (mean over seeds and
        sequences), ``optimum_<region>`` (the optimal loss on the same tokens),
        ``excess_<region>`` (their difference), ``excess_<region>_lo`` and ``_hi`` (its
        interval), and ``excess_<region>_seeds`` (each seed's excess).
    """
    _check_results(results)
    n_boot = check_int("n_boot", n_boot, minimum=10)
    seed = check_int("seed", seed, minimum=0)
    level = check_float("level", level, positive=True)
    if level >= 1:
        raise ValueError(f"level: {level!r}; expected a coverage between 0 and 1")
    L = results.config.train_len
    out = {}
    for (name, k, region), values in results.losses.items():
        entry = out.setdefault((name, L * k), {"multiple": k, "n_seeds": values.shape[0]})
        excess = results.excess(name, k, region)
        mean, lo, hi = _interval(excess, n_boot, seed, level)
        entry[f"loss_{region}"] = float(values.mean())
        entry[f"optimum_{region}"] = float(results.optimum[(k, region)].mean())
        entry[f"excess_{region}"] = mean
        entry[f"excess_{region}_lo"] = lo
        entry[f"excess_{region}_hi"] = hi
        entry[f"excess_{region}_seeds"] = tuple(float(v) for v in excess.mean(axis=1))
    return out


def _operand(results: Results, x, k: int, region: str, eval_len: int, which: str) -> np.ndarray:
    if isinstance(x, str):
        if x == "optimum":
            return results.optimum[(k, region)][None]
        if (x, k, region) not in results.losses:
            raise ValueError(f"{which}: {x!r}; expected a name evaluated at {eval_len} ({region}), "
                             "'optimum' or a number")
        return results.losses[(x, k, region)]
    return np.asarray(check_float(which, x))


def difference(results: Results, a, b, eval_len: int, region: str, *, n_boot: int = 2000,
               seed: int = 0, level: float = 0.95) -> tuple:
    """Loss of ``a`` minus loss of ``b`` on the same tokens, with its paired interval (as :func:`summarize`'s).

    Parameters
    ----------
    results : Results
    a, b : str or float
        An evaluated name (a scheme, a RoPE variant or a shuffled control), ``"optimum"``
        (the optimal loss on the same tokens) or a constant loss in nats (for example the
        bigram loss).
    eval_len : int
        Evaluation length (a multiple of the training length).
    region : {"within", "beyond"}
    n_boot, seed, level : as for :func:`summarize`.

    Returns
    -------
    (mean, lo, hi) : tuple of float
        Negative values mean that ``a`` has the lower loss. The interval is
        :func:`summarize`'s rule applied to the per-seed, per-sequence differences:
        paired by seed (a RoPE variant and plain RoPE share their trained models) and by
        sequence (both are scored on the same tokens).
    """
    _check_results(results)
    region = check_choice("region", region, REGIONS)
    L = results.config.train_len
    eval_len = check_int("eval_len", eval_len, minimum=L)
    k = eval_len // L
    if eval_len % L or (k, region) not in results.optimum:
        raise ValueError(f"eval_len: {eval_len} ({region}); expected a length that was evaluated, from "
                         f"{[L * m for m in results.config.eval_multiples if (m, region) in results.optimum]}")
    values = _operand(results, a, k, region, eval_len, "a") - _operand(results, b, k, region, eval_len, "b")
    if values.ndim < 2:
        raise ValueError(f"a: {a!r} and b: {b!r}; expected at least one evaluated name")
    values = np.broadcast_to(values, (len(results.config.seeds), values.shape[-1]))
    return _interval(values, n_boot, seed, level)


@dataclass(frozen=True)
class Claim:
    """A comparison the book asserts: the loss of ``a`` minus the loss of ``b`` is below ``below``.

    With ``below = 0`` (the default) the claim is "``a`` has a lower loss than ``b``" at
    ``eval_len`` on ``region``. It holds when the upper end of the interval of
    ``loss(a) - loss(b)`` (see :func:`difference`) is below ``below``: the whole
    interval, not only the mean, is on the claimed side. ``a`` and ``b`` are evaluated
    names, ``"optimum"``, or the chain's reference losses ``"bigram"`` and ``"unigram"``.
    """

    a: str
    b: str
    eval_len: int
    region: str
    below: float = 0.0

    def __str__(self):
        bound = "" if self.below == 0 else f" + {self.below:g}"
        return f"{self.region} @{self.eval_len}: {self.a} < {self.b}{bound}"


def check_claims(results: Results, claims, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list:
    """Evaluate claims: one ``(claim, (mean, lo, hi), holds)`` per claim, in order.

    Parameters
    ----------
    results : Results
    claims : sequence of Claim
    n_boot, seed, level : as for :func:`summarize`.
    """
    from .markov import bigram_entropy, unigram_entropy

    _check_results(results)
    config = results.config
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
    references = {"bigram": bigram_entropy(chain), "unigram": unigram_entropy(chain)}
    out = []
    for claim in claims:
        if not isinstance(claim, Claim):
            raise TypeError(f"claims: expected Claim objects, got {type(claim).__name__}")
        mean, lo, hi = difference(results, references.get(claim.a, claim.a), references.get(claim.b, claim.b),
                                  claim.eval_len, claim.region, n_boot=n_boot, seed=seed, level=level)
        out.append((claim, (mean, lo, hi), hi < claim.below))
    return out


def _check_summary(summary) -> None:
    if not isinstance(summary, dict) or not all(isinstance(k, tuple) and len(k) == 2 for k in summary):
        raise TypeError(f"summary: expected the dict of summarize(), keyed by (name, eval_len), got "
                        f"{type(summary).__name__}")


def format_table(summary: dict, names, region: str, *, lengths=None, decimals: int = 3) -> str:
    """The excess over the optimum with its interval, one line per name and one column per length.

    Parameters
    ----------
    summary : dict
        From :func:`summarize`.
    names : sequence of str
    region : {"within", "beyond"}
    lengths : sequence of int, optional
        The columns (default: every length evaluated on ``region``).
    decimals : int, default 3

    Returns
    -------
    str
        ``mean ± half-width`` per cell (``mean [lo, hi]`` where an interval is not
        symmetric: one seed); the last line is the optimum on the same tokens.
    """
    _check_summary(summary)
    region = check_choice("region", region, REGIONS)
    names = list(names)
    for n in names:
        if not any(key[0] == n for key in summary):
            raise ValueError(f"names: {n!r} is not in the summary; expected names from "
                             f"{list(dict.fromkeys(k[0] for k in summary))}")
    check_int("decimals", decimals, minimum=0)
    if lengths is None:
        lengths = sorted({L for (n, L), e in summary.items() if f"excess_{region}" in e and n in names})
    first = max(len(n) for n in names + ["optimum (loss)"]) + 1
    def text(e):
        m, lo, hi = (e[f"excess_{region}{x}"] for x in ("", "_lo", "_hi"))
        if abs((hi - m) - (m - lo)) <= 1e-9 * max(1.0, abs(m)):
            return f"{m:.{decimals}f} ± {(hi - lo) / 2:.{decimals}f}"
        return f"{m:.{decimals}f} [{lo:.{decimals}f}, {hi:.{decimals}f}]"

    cells = {(n, L): text(summary[(n, L)]) for n in names for L in lengths if (n, L) in summary}
    width = max([len(c) for c in cells.values()] + [decimals + 2]) + 2

    def cell(e):
        return text(e).rjust(width)

    lines = [f"{'excess, ' + region:{first}s}" + "".join(f"{'@' + str(L):>{width}s}" for L in lengths)]
    for n in names:
        lines.append(f"{n:{first}s}" + "".join(cell(summary[(n, L)]) if (n, L) in summary else " " * width
                                             for L in lengths))
    opt = {L: e[f"optimum_{region}"] for (n, L), e in summary.items() if f"optimum_{region}" in e}
    lines.append(f"{'optimum (loss)':{first}s}" + "".join(f"{opt[L]:{width}.{decimals}f}" for L in lengths))
    return "\n".join(lines)


def plot_results(summary: dict, *, region: str = "beyond", ax=None, schemes=None):
    """Excess loss over the optimum against evaluation length, with the intervals of :func:`summarize`.

    Parameters
    ----------
    summary : dict
        From :func:`summarize`.
    region : {"beyond", "within"}
    ax : matplotlib Axes, optional
    schemes : sequence of str, optional
        Which names to draw (default: all but the shuffled controls).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    _check_summary(summary)
    region = check_choice("region", region, REGIONS)
    if ax is None:
        _, ax = plt.subplots()
    names = schemes or [s for s in dict.fromkeys(n for n, _ in summary) if "shuffled" not in s]
    styles = ["-o", "--s", "-.^", ":v", "-D", "--P", "-.X", ":*"]
    key = f"excess_{region}"
    for i, name in enumerate(names):
        pts = sorted((L, e) for (n, L), e in summary.items() if n == name and key in e)
        x = [L for L, _ in pts]
        y = np.array([e[key] for _, e in pts])
        err = np.array([[e[key] - e[key + "_lo"] for _, e in pts], [e[key + "_hi"] - e[key] for _, e in pts]])
        ax.errorbar(x, y, yerr=err, fmt=styles[i % len(styles)], capsize=3, label=name, lw=1.6, ms=5)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({L for (_, L), e in summary.items() if key in e}))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("evaluation length (symbols)")
    # no line at 0 (the optimum): the chapter draws these on a log scale
    ax.set_ylabel("excess over the optimum (nats per symbol)")
    return ax


def _summary_rows(summary: dict) -> list:
    """The summary as flat rows (per-seed excesses joined by ``;``), every row with every column."""
    rows = []
    for (name, length), entry in summary.items():
        row = {"scheme": name, "eval_len": length}
        for region in REGIONS:
            for field_ in ("loss", "optimum", "excess", "excess_{}_lo", "excess_{}_hi", "excess_{}_seeds"):
                col = field_.format(region) if "{}" in field_ else f"{field_}_{region}"
                value = entry.get(col, math.nan)
                row[col] = ";".join(f"{v:.6f}" for v in value) if isinstance(value, tuple) else value
        row.update(multiple=entry["multiple"], n_seeds=entry["n_seeds"])
        rows.append(row)
    return rows


def _heldout_rows(results: Results) -> list:
    """The held-out curves as rows: ``scheme, seed, step, heldout_excess``."""
    steps = heldout_steps(results.config)
    return [{"scheme": scheme, "seed": seed, "step": int(step), "heldout_excess": float(v)}
            for scheme, curves in results.heldout.items()
            for seed, curve in zip(results.config.seeds, curves) for step, v in zip(steps, curve)]


def read_run(directory) -> tuple:
    """A run written by the command line: its configuration and its summary.

    Parameters
    ----------
    directory : str or path
        An ``--out`` directory of ``python -m posenc.experiment`` (``config.json`` and
        ``summary.csv``).

    Returns
    -------
    (ExperimentConfig, dict)
        The configuration, and the summary keyed by ``(name, eval_len)`` as
        :func:`summarize` gives it (numbers as floats; per-seed excesses as tuples).
    """
    directory = os.fspath(directory)
    with open(os.path.join(directory, "config.json")) as fh:
        fields = json.load(fh)
    config = ExperimentConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    summary = {}
    with open(os.path.join(directory, "summary.csv"), newline="") as fh:
        for row in csv.DictReader(fh):
            entry = {}
            for k, v in row.items():
                if k in ("scheme", "eval_len"):
                    continue
                if k.endswith("_seeds"):
                    if v:
                        entry[k] = tuple(float(x) for x in v.split(";"))
                elif k in ("multiple", "n_seeds"):
                    entry[k] = int(v)
                elif v not in ("", "nan"):
                    entry[k] = float(v)
            summary[(row["scheme"], int(row["eval_len"]))] = entry
    return config, summary


def write_losses(results: Results, path: str, *, curves: bool = True) -> None:
    """Write the per-sequence losses, the optima and (with ``curves``) the training and
    held-out curves of a run to a compressed NumPy archive, from which
    :func:`read_results` rebuilds the :class:`Results` (without the trained parameters).

    Keys: ``loss|<name>|<multiple>|<region>`` (``(n_seeds, n_sequences)``),
    ``optimum|<multiple>|<region>`` (``(n_sequences,)``), ``train|<scheme>`` and
    ``heldout|<scheme>`` (``(n_seeds, steps)`` and ``(n_seeds, checkpoints)``), all float64.
    A loss table identical to one stored before it (the "within" tokens of a scheme whose
    loss does not depend on the length read, by causality) is stored as
    ``same|<name>|<multiple>|<region>``, holding the earlier key.
    """
    _check_results(results)
    arrays, seen = {}, []
    for (n, k, r), v in results.losses.items():
        twin = next((key for key, w in seen if np.array_equal(v, w)), None)
        if twin is None:
            arrays[f"loss|{n}|{k}|{r}"] = np.asarray(v, dtype=np.float64)
            seen.append((f"loss|{n}|{k}|{r}", v))
        else:
            arrays[f"same|{n}|{k}|{r}"] = np.array(twin)
    arrays.update({f"optimum|{k}|{r}": np.asarray(v, dtype=np.float64) for (k, r), v in results.optimum.items()})
    if curves:
        arrays.update({f"train|{s}": np.asarray(v, dtype=np.float64) for s, v in results.train_loss.items()})
        arrays.update({f"heldout|{s}": np.asarray(v, dtype=np.float64) for s, v in results.heldout.items()})
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def read_results(directory, *, eval_seed=None) -> Results:
    """The :class:`Results` of a run written by the command line (``config.json`` and
    ``losses.npz``), without the trained parameters: :func:`summarize`, :func:`difference`
    and :func:`check_claims` accept it like a live run's.

    With ``eval_seed``, the same trained models scored on that evaluation sample
    (``losses-eval<eval_seed>.npz``, written with ``--fresh-eval-seeds``; the training
    and held-out curves are the run's own).
    """
    directory = os.fspath(directory)
    config, _ = read_run(directory)
    names = ["losses.npz"]
    if eval_seed is not None and eval_seed != config.eval_seed:
        config = replace(config, eval_seed=check_int("eval_seed", eval_seed, minimum=0))
        names.insert(0, f"losses-eval{eval_seed}.npz")
    losses, optimum, train_loss, heldout = {}, {}, {}, {}
    for i, name in enumerate(names):
        with np.load(os.path.join(directory, name)) as data:
            for key in data.files:
                kind, *rest = key.split("|")
                if kind in ("loss", "same", "optimum") and i > 0:
                    continue  # the fresh sample's scores, not the run's own
                if kind == "loss":
                    losses[(rest[0], int(rest[1]), rest[2])] = data[key]
                elif kind == "same":
                    _, n, k, r = str(data[key]).split("|")
                    losses[(rest[0], int(rest[1]), rest[2])] = losses[(n, int(k), r)]
                elif kind == "optimum":
                    optimum[(int(rest[0]), rest[1])] = data[key]
                elif kind == "train":
                    train_loss[rest[0]] = data[key]
                else:
                    heldout[rest[0]] = data[key]
    return Results(config, losses, optimum, train_loss, heldout, {})  # the archive keeps the run's order


def write_csv(rows: list, path: str) -> None:
    """Write rows (dicts with the same keys) to a CSV file."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (no usage block) and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}; expected a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}; expected a positive integer")
    return value


def _int_list(text: str) -> tuple:
    items = [t.strip() for t in text.split(",")]
    try:
        values = tuple(int(t) for t in items)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}; expected comma-separated integers such as 1,2,4,8") from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}; expected positive integers")
    return values


def _scheme_list(text: str) -> tuple:
    items = tuple(t.strip() for t in text.split(","))
    if not all(items):
        raise argparse.ArgumentTypeError(f"{text!r}; expected comma-separated names from {', '.join(SCHEMES)}")
    for t in items:
        if t not in SCHEMES:
            raise argparse.ArgumentTypeError(f"unknown scheme {t!r}; expected names from {', '.join(SCHEMES)}")
    return items


def _writable_directory(path: str) -> str:
    """The output directory, checked before any work: a directory where a file can be written,
    or one that can be created (its nearest existing parent is probed by creating and removing
    an empty directory there, since ``os.access`` says yes to root even on ``/proc``)."""
    if not path:
        raise argparse.ArgumentTypeError("expected a directory path, got an empty string")
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path!r} exists and is not a directory")
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise argparse.ArgumentTypeError(f"{path!r} cannot be created ({probe!r} is not a directory)")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".posenc-write-probe-", dir=probe))
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{path!r}: cannot write in {probe!r} ({exc.strerror})") from None
    return path


def main(argv=None) -> int:
    """The command line: ``python -m posenc.experiment --out results/``.

    Every argument is checked (and the configuration built) before any work starts; a
    bad one prints a single ``error:`` line on stderr and exits with status 2, writing
    nothing. The CSV files are written only after every model is trained and evaluated.
    """
    default = ExperimentConfig()
    book = ExperimentConfig.book()
    cli = {"seeds": 5, "multiples": (1, 2, 4, 8, 16), "workers": os.cpu_count() or 1}
    parser = _Parser(
        prog="python -m posenc.experiment",
        description="Train small attention models with each positional scheme at one length and "
        "evaluate them at longer ones (chapter 6 of Positional Encodings, executable). Writes "
        "config.json, results.csv and summary.csv into --out, and loss_vs_length.png when matplotlib "
        "is installed (otherwise the figure is skipped, with a note on stderr).",
    )
    parser.add_argument("--out", required=True, type=_writable_directory,
                        help="directory for config.json, results.csv, summary.csv and the figure (created if "
                        "absent)")
    parser.add_argument("--book", action="store_true",
                        help="start from chapter 6's configuration (ExperimentConfig.book(): "
                        f"{len(book.seeds)} seeds, heads of width {book.d_model // book.n_heads}, {book.steps} "
                        "steps, lengths 1x to 8x) instead of the defaults below; options given still apply "
                        "(default: off)")
    parser.add_argument("--schemes", type=_scheme_list, default=None, metavar="LIST",
                        help="comma-separated, from " + ", ".join(SCHEMES) + " (default: all)")
    parser.add_argument("--seeds", type=_positive_int, default=None, metavar="N",
                        help=f"number of seeds, 0..N-1 (default: {cli['seeds']})")
    parser.add_argument("--train-len", type=_positive_int, default=None, metavar="L",
                        help=f"training length in symbols, at least 4 (default: {default.train_len})")
    parser.add_argument("--multiples", type=_int_list, default=None, metavar="LIST",
                        help="evaluation lengths as multiples of --train-len, increasing and starting "
                        "with 1 (default: 1,2,4,8,16)")
    parser.add_argument("--eval-sequences", type=_positive_int, default=None, metavar="N",
                        help="evaluation sequences, whose first --train-len targets are scored at every "
                        f"length (default: {default.eval_sequences})")
    parser.add_argument("--long-sequences", type=_positive_int, default=None, metavar="N",
                        help="how many of them are also read at the longer lengths (default: "
                        f"{default.long_sequences}, or --eval-sequences if fewer)")
    parser.add_argument("--steps", type=_positive_int, default=None, metavar="N",
                        help=f"training steps (default: {default.steps})")
    parser.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                        help="processes to train in; results do not depend on it (default: the number "
                        f"of CPUs, {cli['workers']} here)")
    parser.add_argument("--dtype", choices=("float64", "float32"), default=None,
                        help="precision of the training computation; float32 is faster (make bench); "
                        "in either precision results are reproducible on the same BLAS kernel only "
                        f"(default: {default.dtype}, or the book's with --book)")
    parser.add_argument("--fresh-eval-seeds", type=_int_list, default=None, metavar="LIST",
                        help="also score the trained models on these other evaluation samples (seeds of "
                        "evaluation_sample) and write losses-eval<k>.npz for each, without retraining "
                        "(default: none)")
    args = parser.parse_args(argv)
    base = book if args.book else replace(default, seeds=tuple(range(cli["seeds"])),
                                          eval_multiples=cli["multiples"])
    given = {
        "schemes": args.schemes,
        "seeds": None if args.seeds is None else tuple(range(args.seeds)),
        "train_len": args.train_len,
        "eval_multiples": args.multiples,
        "eval_sequences": args.eval_sequences,
        "long_sequences": args.long_sequences,
        "steps": args.steps,
        "workers": cli["workers"] if args.workers is None else args.workers,
        "dtype": args.dtype,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if "long_sequences" not in given and "eval_sequences" in given:
        given["long_sequences"] = min(base.long_sequences, given["eval_sequences"])
    try:
        config = replace(base, **given)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        field_name = message.split(":", 1)[0]
        option = {"eval_multiples": "multiples", "seeds": "seeds", "schemes": "schemes", "steps": "steps",
                  "train_len": "train-len", "eval_sequences": "eval-sequences",
                  "long_sequences": "long-sequences", "workers": "workers"}.get(field_name)
        if option:
            message = f"argument --{option}:{message.split(':', 1)[1]}"
        parser.error(message)
    try:
        import matplotlib
    except ImportError:
        matplotlib = None
        print("matplotlib is not installed: the figure will be skipped (pip install matplotlib)",
              file=sys.stderr)
    n_jobs = len(config.schemes) * len(config.seeds)
    done = [0]

    def progress(msg):
        done[0] += 1
        print(f"[{done[0]}/{n_jobs}] {msg}", file=sys.stderr, flush=True)

    print(f"config: {asdict(config)}", file=sys.stderr)
    results = run_experiment(config, progress=progress)
    summary = summarize(results)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as fh:
        json.dump(asdict(config), fh, indent=1)
        fh.write("\n")
    write_csv(results.rows(), os.path.join(args.out, "results.csv"))
    write_csv(_summary_rows(summary), os.path.join(args.out, "summary.csv"))
    write_csv(_heldout_rows(results), os.path.join(args.out, "heldout.csv"))
    write_losses(results, os.path.join(args.out, "losses.npz"))
    written = "config.json, results.csv, summary.csv, heldout.csv, losses.npz"
    for k in args.fresh_eval_seeds or ():
        print(f"scoring the trained models on evaluation sample {k}", file=sys.stderr, flush=True)
        write_losses(reevaluate(results, k), os.path.join(args.out, f"losses-eval{k}.npz"), curves=False)
        written += f", losses-eval{k}.npz"
    if matplotlib is not None:
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        plot_results(summary, region="within", ax=axes[0])
        plot_results(summary, region="beyond", ax=axes[1])
        axes[0].set_title(f"the first L_train = {config.train_len} targets")
        axes[1].set_title(f"positions beyond L_train = {config.train_len}")
        axes[1].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "loss_vs_length.png"), dpi=150)
        written += " and loss_vs_length.png"
    print(f"wrote {written} to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
