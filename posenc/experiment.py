r"""Chapter 6's experiment: train at one length, evaluate at up to 8 times that length.

Every scheme of :mod:`posenc.model` is trained on sequences of ``train_len`` symbols
from one order-2 Markov chain (:mod:`posenc.markov`), with several seeds, and evaluated
on fresh sequences of ``train_len * k`` symbols for each multiple ``k``. The loss is
reported over all predicted positions and over the positions beyond ``train_len`` alone
(the part that is new), next to the optimal loss on the same tokens. The trained RoPE
models are also evaluated with the frequencies of position interpolation, NTK-aware
scaling and YaRN at the longer lengths, without retraining, and, as a control, at the
training length with the positions shuffled.

Run ``python -m posenc.experiment --help`` for a larger configuration than the book's;
it prints progress on stderr and writes a CSV table and a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import os
import sys
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ._checks import _show, check_choice, check_float, check_int
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

__all__ = ["ExperimentConfig", "learning_rate", "train", "train_batch", "evaluate", "run_experiment", "summarize", "plot_results", "main"]

#: RoPE models are also evaluated with these frequencies (no retraining): PI, NTK-aware,
#: YaRN (frequencies and attention temperature), and YaRN's frequencies alone.
ROPE_VARIANTS = ("rope+pi", "rope+ntk", "rope+yarn", "rope+yarn-freq")


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
    eval_tokens : int
        Predicted symbols per evaluation length and model.
    steps, batch, lr, warmup, clip : training settings (Adam, linear warm-up then cosine
        decay, gradient clipping by global norm).
    n_symbols, concentration, chain_seed : the Markov chain.
    d_model, n_heads, d_ff, rope_base : the model (see :class:`posenc.model.ModelConfig`).
    workers : int
        Processes to train in (results do not depend on it).
    dtype : {"float64", "float32"}
        Precision of the training computation (parameters, activations, gradients and
        Adam's moments); the trained parameters are returned in float64. float32 is about
        twice as fast, but its results depend on the BLAS kernel (training amplifies the
        rounding differences); float64's do not, to about 1e-10, and the book uses it.
    """

    schemes: tuple = SCHEMES
    seeds: tuple = (0, 1, 2)
    train_len: int = 32
    eval_multiples: tuple = (1, 2, 4, 8)
    eval_tokens: int = 8192
    steps: int = 1000
    batch: int = 16
    lr: float = 1e-2
    warmup: int = 50
    clip: float = 1.0
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
        check_int("eval_tokens", self.eval_tokens, minimum=1)
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, positive=True)
        check_int("warmup", self.warmup, minimum=0)
        check_float("clip", self.clip, positive=True)
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
    def book(cls) -> "ExperimentConfig":
        """The chapter's configuration: 5 schemes x 3 seeds, lengths 1x to 8x (32 to 256).

        Two worker processes, except under Pyodide (``sys.platform == "emscripten"``: the
        chapter's Run controls in the reader's browser), which has no processes: there the
        same configuration trains in one (the results do not depend on ``workers``).
        """
        return cls(steps=600, eval_tokens=4096, workers=1 if sys.platform == "emscripten" else 2)

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
    """
    if not isinstance(config, ExperimentConfig):
        raise TypeError(f"config: expected an ExperimentConfig, got {type(config).__name__}")
    models = _check_models(models)
    configs = tuple(config.model_config(scheme) for scheme, _ in models)
    seeds = [seed for _, seed in models]
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
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
    return [{k: v.astype(np.float64) for k, v in p.items()} for p in unstack_params(params)], losses


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
    """Train one model; returns ``(params, losses)`` with the loss of every step."""
    (params,), losses = train_batch(config, [(scheme, seed)])
    return params, losses[0]


def _nll(params, seq, mc, **kwargs):
    logits, _ = forward(params, seq[:, :-1], mc, **kwargs)
    return -np.take_along_axis(log_softmax(logits), seq[:, 1:, None], axis=-1)[..., 0]


# The rope_type of posenc.scaling.rope_scaling behind each variant (rope+yarn-freq drops
# YaRN's attention factor).
_VARIANT_ROPE_TYPES = {"rope+pi": "linear", "rope+ntk": "ntk", "rope+yarn": "yarn", "rope+yarn-freq": "yarn"}


def _variant_frequencies(variant: str, mc: ModelConfig, factor: float, train_len: int):
    if factor == 1.0:
        return None, 1.0
    rope_type = _VARIANT_ROPE_TYPES[variant]
    params = {"factor": factor, "base": mc.rope_base}
    if rope_type == "yarn":
        params["original_max_position"] = train_len  # YaRN's ramp is set by the training length
    inv_freq, attention_factor = rope_scaling(mc.head_dim, rope_type=rope_type, **params)
    return inv_freq, 1.0 if variant == "rope+yarn-freq" else attention_factor


def evaluate(config: ExperimentConfig, scheme: str, seed: int, params) -> list:
    """Evaluation rows of one trained model at every length (and its RoPE variants)."""
    chain = make_chain(config.n_symbols, concentration=config.concentration, seed=config.chain_seed)
    mc = config.model_config(scheme)
    rows = []
    L = config.train_len
    for k in config.eval_multiples:
        length = L * k
        n_seq = max(1, config.eval_tokens // length)
        # the same evaluation tokens for every scheme and seed at a given length
        seq = sample_sequences(chain, n_seq, length, np.random.default_rng([config.chain_seed, 7, length]))
        floor = optimal_nll(chain, seq)
        variants = [(scheme, None, 1.0)]
        if scheme == "rope":
            variants += [(v,) + _variant_frequencies(v, mc, float(k), L) for v in ROPE_VARIANTS]
        for name, inv_freq, factor in variants:
            nll = _nll(params, seq, mc, inv_freq=inv_freq, attention_factor=factor)
            row = {
                "scheme": name,
                "seed": seed,
                "eval_len": length,
                "multiple": k,
                "loss_all": float(nll.mean()),
                "loss_beyond": float(nll[:, L:].mean()) if k > 1 else float("nan"),
                # the targets inside the trained window (what an extension method may damage)
                "loss_within": float(nll[:, :L].mean()),
                "floor_all": float(floor.mean()),
                "floor_beyond": float(floor[:, L:].mean()) if k > 1 else float("nan"),
                "floor_within": float(floor[:, :L].mean()),
                "n_tokens": int(nll.size),
            }
            rows.append(row)
        if k == 1 and scheme in ("rope", "sinusoidal", "learned", "alibi"):
            # control: the same model with the positions of each evaluation shuffled
            perm = np.random.default_rng([seed, 11]).permutation(length)
            nll = _nll(params, seq, mc, positions=perm.astype(np.float64))
            rows.append({
                "scheme": f"{scheme} (shuffled positions)", "seed": seed, "eval_len": length, "multiple": 1,
                "loss_all": float(nll.mean()), "loss_beyond": float("nan"), "loss_within": float(nll[:, :L].mean()),
                "floor_all": float(floor.mean()), "floor_beyond": float("nan"),
                "floor_within": float(floor[:, :L].mean()), "n_tokens": int(nll.size),
            })
    return rows


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
    """Train one stack and evaluate each of its models: ``[((scheme, seed), rows), ...]``."""
    config, models = args
    with _one_blas_thread():
        trained, losses = train_batch(config, models)
        out = []
        for (scheme, seed), params, loss in zip(models, trained, losses):
            rows = evaluate(config, scheme, seed, params)
            for r in rows:
                r["final_train_loss"] = float(loss[-50:].mean())
            out.append(((scheme, seed), rows))
    return out


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


def run_experiment(config: ExperimentConfig, *, progress=None) -> list:
    """Train and evaluate every (scheme, seed); returns the rows in a fixed order.

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
    list of dict
        One row per (scheme or RoPE variant, seed, evaluation length), plus the
        shuffled-position controls: ``scheme, seed, eval_len, multiple, loss_all,
        loss_beyond, loss_within, floor_all, floor_beyond, floor_within, n_tokens,
        final_train_loss`` ("beyond": the targets at positions ``>= train_len``; "within":
        those below it).
    """
    if not isinstance(config, ExperimentConfig):
        raise TypeError(f"config: expected an ExperimentConfig, got {type(config).__name__}")
    jobs = [(config, models) for models in _stacks(config)]
    by_model = {}

    def collect(done):
        for (scheme, seed), rows in done:
            by_model[scheme, seed] = rows
            if progress:
                progress(f"trained {scheme} seed {seed}")

    if config.workers > 1 and len(jobs) > 1:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        with ctx.Pool(min(config.workers, len(jobs)), initializer=_keep_freed_memory) as pool:
            for done in pool.imap(_train_and_evaluate, jobs):
                collect(done)
    else:
        for job in jobs:
            collect(_train_and_evaluate(job))
    return [r for s in config.schemes for seed in config.seeds for r in by_model[s, seed]]


def summarize(rows: list) -> list:
    """Mean and spread over seeds per (scheme, evaluation length).

    Returns
    -------
    list of dict
        ``scheme, eval_len, multiple, n_seeds, loss_all_mean, loss_all_std,
        loss_beyond_mean, loss_beyond_std, loss_within_mean, loss_within_std, floor_all,
        floor_beyond, floor_within`` (std over seeds, with ``ddof=1``; NaN for a single
        seed).
    """
    keys = []
    for r in rows:
        key = (r["scheme"], r["eval_len"])
        if key not in keys:
            keys.append(key)
    out = []
    for scheme, length in keys:
        sel = [r for r in rows if r["scheme"] == scheme and r["eval_len"] == length]
        a = np.array([r["loss_all"] for r in sel])
        b = np.array([r["loss_beyond"] for r in sel])
        w = np.array([r["loss_within"] for r in sel])
        n = len(sel)
        out.append({
            "scheme": scheme, "eval_len": length, "multiple": sel[0]["multiple"], "n_seeds": n,
            "loss_all_mean": float(a.mean()), "loss_all_std": float(a.std(ddof=1)) if n > 1 else float("nan"),
            "loss_beyond_mean": float(b.mean()), "loss_beyond_std": float(b.std(ddof=1)) if n > 1 else float("nan"),
            "loss_within_mean": float(w.mean()), "loss_within_std": float(w.std(ddof=1)) if n > 1 else float("nan"),
            "floor_all": sel[0]["floor_all"], "floor_beyond": sel[0]["floor_beyond"],
            "floor_within": sel[0]["floor_within"],
        })
    return out


def plot_results(summary: list, *, which: str = "loss_beyond", ax=None, schemes=None):
    """Loss against evaluation length, one line per scheme with its spread over seeds.

    Parameters
    ----------
    summary : list of dict
        From :func:`summarize`.
    which : {"loss_beyond", "loss_all"}
    ax : matplotlib Axes, optional
    schemes : sequence of str, optional
        Which schemes to draw (default: all but the shuffled controls).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    which = check_choice("which", which, ("loss_beyond", "loss_all"))
    if ax is None:
        _, ax = plt.subplots()
    names = schemes or [s for s in dict.fromkeys(r["scheme"] for r in summary) if "shuffled" not in s]
    styles = ["-o", "--s", "-.^", ":v", "-D", "--P", "-.X", ":*"]
    for i, name in enumerate(names):
        rs = [r for r in summary if r["scheme"] == name and not (which == "loss_beyond" and r["multiple"] == 1)]
        x = [r["eval_len"] for r in rs]
        y = np.array([r[f"{which}_mean"] for r in rs])
        e = np.array([r[f"{which}_std"] for r in rs])
        ax.errorbar(x, y, yerr=e, fmt=styles[i % len(styles)], capsize=3, label=name, lw=1.6, ms=5)
    floor_key = "floor_beyond" if which == "loss_beyond" else "floor_all"
    ref = [r for r in summary if r["scheme"] == names[0] and not np.isnan(r[floor_key])]
    ax.plot([r["eval_len"] for r in ref], [r[floor_key] for r in ref], color="0.3", ls=":", lw=1.5,
            label="optimum on the same tokens")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("evaluation length (symbols)")
    ax.set_ylabel("loss (nats per symbol)")
    return ax


def write_csv(rows: list, path: str) -> None:
    """Write rows (from :func:`run_experiment` or :func:`summarize`) to a CSV file."""
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
    """The output directory, checked without creating anything: a directory or creatable."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise argparse.ArgumentTypeError(f"{path!r} exists and is not a directory")
        probe = path
    else:
        probe = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(probe):
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            raise argparse.ArgumentTypeError(f"{path!r} cannot be created ({probe!r} is not a directory)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{path!r}: no permission to write in {probe!r}")
    return path


def main(argv=None) -> int:
    """The command line: ``python -m posenc.experiment --out results/``.

    Every argument is checked (and the configuration built) before any work starts; a
    bad one prints a single ``error:`` line on stderr and exits with status 2, writing
    nothing. The CSV files are written only after every model is trained and evaluated.
    """
    default = ExperimentConfig()
    parser = _Parser(
        prog="python -m posenc.experiment",
        description="Train small attention models with each positional scheme at one length and "
        "evaluate them at longer ones (chapter 6 of Positional Encodings, executable). Writes "
        "results.csv and summary.csv into --out, and loss_vs_length.png when matplotlib is "
        "installed (otherwise the figure is skipped, with a note on stderr).",
    )
    parser.add_argument("--out", required=True, type=_writable_directory,
                        help="directory for results.csv, summary.csv and the figure (created if absent)")
    parser.add_argument("--schemes", type=_scheme_list, default=default.schemes, metavar="LIST",
                        help="comma-separated, from " + ", ".join(SCHEMES) + " (default: all)")
    parser.add_argument("--seeds", type=_positive_int, default=5, metavar="N",
                        help="number of seeds, 0..N-1 (default: %(default)s)")
    parser.add_argument("--train-len", type=_positive_int, default=default.train_len, metavar="L",
                        help="training length in symbols, at least 4 (default: %(default)s)")
    parser.add_argument("--multiples", type=_int_list, default=(1, 2, 4, 8, 16), metavar="LIST",
                        help="evaluation lengths as multiples of --train-len, increasing and starting "
                        "with 1 (default: 1,2,4,8,16)")
    parser.add_argument("--eval-tokens", type=_positive_int, default=default.eval_tokens, metavar="N",
                        help="predicted symbols per evaluation length (default: %(default)s)")
    parser.add_argument("--steps", type=_positive_int, default=default.steps, metavar="N",
                        help="training steps (default: %(default)s)")
    parser.add_argument("--workers", type=_positive_int, default=os.cpu_count() or 1, metavar="N",
                        help="processes to train in; results do not depend on it (default: the number "
                        "of CPUs, %(default)s here)")
    parser.add_argument("--dtype", choices=("float64", "float32"), default=default.dtype,
                        help="precision of the training computation; float32 is about twice as fast "
                        "(make bench), but its results change with the BLAS kernel (by up to 0.1 nats "
                        "beyond the training length) where float64's agree to 1e-10 (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        config = replace(
            default,
            schemes=args.schemes,
            seeds=tuple(range(args.seeds)),
            train_len=args.train_len,
            eval_multiples=args.multiples,
            eval_tokens=args.eval_tokens,
            steps=args.steps,
            workers=args.workers,
            dtype=args.dtype,
        )
    except (TypeError, ValueError) as exc:
        message = str(exc)
        field_name = message.split(":", 1)[0]
        option = {"eval_multiples": "multiples", "seeds": "seeds", "schemes": "schemes", "steps": "steps",
                  "train_len": "train-len", "eval_tokens": "eval-tokens", "workers": "workers"}.get(field_name)
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
    rows = run_experiment(config, progress=progress)
    summary = summarize(rows)
    os.makedirs(args.out, exist_ok=True)
    write_csv(rows, os.path.join(args.out, "results.csv"))
    write_csv(summary, os.path.join(args.out, "summary.csv"))
    written = "results.csv, summary.csv"
    if matplotlib is not None:
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        plot_results(summary, which="loss_all", ax=axes[0])
        plot_results(summary, which="loss_beyond", ax=axes[1])
        axes[0].set_title("all positions")
        axes[1].set_title(f"positions beyond L_train = {config.train_len}")
        axes[1].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "loss_vs_length.png"), dpi=150)
        written += " and loss_vs_length.png"
    print(f"wrote {written} to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
