r"""A synthetic task where order matters and the optimal loss is known: an order-2 Markov chain.

Each symbol depends on the two symbols before it,
:math:`p(x_t \mid x_{t-2}, x_{t-1})`, with transition rows drawn from a Dirichlet
distribution (small concentration: peaked, so that knowing the context helps a lot).
A sequence starts with a beginning-of-sequence token (``BOS``, the integer
``n_symbols``) followed by a pair drawn from the chain's stationary distribution, so
every position is statistically alike and the process is the same at any length: a
model that has learned the rule can apply it at any position, which is what makes
length generalisation measurable.

Three reference losses bound what a next-token model can reach (in nats):

- :func:`unigram_entropy`: predicting from symbol frequencies alone;
- :func:`bigram_entropy`: knowing only the current symbol (no position needed to find
  it: it is the input at the same position);
- :func:`entropy_rate`: knowing the previous two symbols, the optimum, which needs the
  model to find the token one position back.

:func:`optimal_nll` gives the optimal per-token loss on a given sample, the floor to
compare a model with on the same tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_float_array, as_int_array, check_float, check_int

__all__ = [
    "MarkovChain",
    "make_chain",
    "sample_sequences",
    "entropy_rate",
    "bigram_entropy",
    "unigram_entropy",
    "optimal_nll",
]


@dataclass(frozen=True)
class MarkovChain:
    """An order-2 Markov chain over ``n_symbols`` symbols.

    Parameters
    ----------
    transition : numpy.ndarray of float64, shape (V, V, V)
        ``transition[a, b, c] = p(x_t = c | x_{t-2} = a, x_{t-1} = b)``; rows sum to one.
    stationary : numpy.ndarray of float64, shape (V, V)
        Stationary distribution of consecutive pairs ``(x_{t-1}, x_t)``.
    """

    transition: np.ndarray
    stationary: np.ndarray

    def __post_init__(self):
        trans = as_float_array("transition", self.transition)
        if trans.ndim != 3 or trans.shape[0] < 2 or len(set(trans.shape)) != 1:
            raise ValueError(f"transition: shape {trans.shape}; expected (V, V, V) with V >= 2")
        if np.any(trans < 0) or not np.allclose(trans.sum(axis=-1), 1.0, rtol=0, atol=1e-9):
            raise ValueError("transition: rows that are not probability vectors; expected non-negative "
                             "entries summing to 1 along the last axis")
        pair = as_float_array("stationary", self.stationary)
        if pair.shape != trans.shape[:2]:
            raise ValueError(f"stationary: shape {pair.shape}; expected {trans.shape[:2]}")
        if np.any(pair < 0) or abs(pair.sum() - 1.0) > 1e-9:
            raise ValueError(f"stationary: total {pair.sum():.6g}; expected non-negative entries summing to 1")
        object.__setattr__(self, "transition", trans.astype(np.float64))
        object.__setattr__(self, "stationary", pair.astype(np.float64))

    @property
    def n_symbols(self) -> int:
        return self.transition.shape[0]

    @property
    def bos(self) -> int:
        """The beginning-of-sequence token, ``n_symbols``."""
        return self.transition.shape[0]


def make_chain(n_symbols: int = 8, *, concentration: float = 0.1, seed: int = 0) -> MarkovChain:
    """Draw a random order-2 chain and compute its stationary pair distribution.

    Parameters
    ----------
    n_symbols : int, default 8
        Alphabet size ``V >= 2`` (the ``BOS`` token is extra).
    concentration : float, default 0.1
        Dirichlet concentration of every transition row (> 0; small means peaked).
    seed : int, default 0
        Seed of the generator that draws the chain.

    Returns
    -------
    MarkovChain
    """
    n_symbols = check_int("n_symbols", n_symbols, minimum=2)
    concentration = check_float("concentration", concentration, positive=True)
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    trans = rng.dirichlet(np.full(n_symbols, concentration), size=(n_symbols, n_symbols))
    # Pair chain: (a, b) -> (b, c) with probability trans[a, b, c]; power iteration.
    pair = np.full((n_symbols, n_symbols), 1.0 / n_symbols**2)
    for _ in range(10_000):
        new = np.einsum("ab,abc->bc", pair, trans)
        if np.max(np.abs(new - pair)) < 1e-15:
            pair = new
            break
        pair = new
    else:  # pragma: no cover - Dirichlet chains mix quickly
        raise RuntimeError("stationary distribution did not converge")
    return MarkovChain(trans, pair / pair.sum())


def sample_sequences(chain: MarkovChain, n_sequences: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """Sample sequences ``[BOS, x_0, ..., x_{length-1}]``.

    Parameters
    ----------
    chain : MarkovChain
    n_sequences : int
        Number of sequences ``>= 1``.
    length : int
        Symbols per sequence, ``>= 2``.
    rng : numpy.random.Generator
        The source of randomness (seeded by the caller).

    Returns
    -------
    numpy.ndarray of int64, shape (n_sequences, length + 1)
        Column 0 is ``BOS``; ``(x_0, x_1)`` is drawn from the stationary pair law.
    """
    if not isinstance(chain, MarkovChain):
        raise TypeError(f"chain: expected a MarkovChain, got {type(chain).__name__}")
    n_sequences = check_int("n_sequences", n_sequences, minimum=1)
    length = check_int("length", length, minimum=2)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    V = chain.n_symbols
    out = np.empty((n_sequences, length + 1), dtype=np.int64)
    out[:, 0] = chain.bos
    pairs = rng.choice(V * V, size=n_sequences, p=chain.stationary.ravel())
    out[:, 1], out[:, 2] = np.divmod(pairs, V)
    cum = np.cumsum(chain.transition, axis=-1)
    for t in range(3, length + 1):
        u = rng.random(n_sequences)
        rows = cum[out[:, t - 2], out[:, t - 1]]
        out[:, t] = np.minimum((u[:, None] > rows).sum(axis=1), V - 1)
    return out


def _entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=axis)


def entropy_rate(chain: MarkovChain) -> float:
    r""":math:`H(X_t \mid X_{t-2}, X_{t-1})` under the stationary law, in nats: the optimal loss.

    Parameters
    ----------
    chain : MarkovChain

    Returns
    -------
    float
    """
    return float(np.sum(chain.stationary * _entropy(chain.transition)))


def bigram_entropy(chain: MarkovChain) -> float:
    r""":math:`H(X_t \mid X_{t-1})`: the best loss knowing only the current symbol.

    Parameters
    ----------
    chain : MarkovChain

    Returns
    -------
    float
    """
    cond = np.einsum("ab,abc->bc", chain.stationary, chain.transition)  # p(x_{t-1}=b, x_t=c)
    marg = cond.sum(axis=1, keepdims=True)
    return float(np.sum(marg[:, 0] * _entropy(cond / marg)))


def unigram_entropy(chain: MarkovChain) -> float:
    r""":math:`H(X_t)`: the best loss from symbol frequencies alone.

    Parameters
    ----------
    chain : MarkovChain

    Returns
    -------
    float
    """
    return float(_entropy(chain.stationary.sum(axis=0)))


def optimal_nll(chain: MarkovChain, sequences) -> np.ndarray:
    """Per-token loss of the true model on given sequences: the floor on these very tokens.

    Parameters
    ----------
    chain : MarkovChain
    sequences : array_like of int, shape (N, L + 1)
        Sequences from :func:`sample_sequences` (``BOS`` first).

    Returns
    -------
    numpy.ndarray of float64, shape (N, L)
        ``-log p(x_t | context)``: the stationary marginal for ``x_0``, the stationary
        conditional for ``x_1`` and the transition for every later symbol.
    """
    seq = as_int_array("sequences", sequences)
    if seq.ndim != 2 or seq.shape[1] < 3:
        raise ValueError(f"sequences: expected shape (N, L + 1) with L >= 2, got {seq.shape}")
    V = chain.n_symbols
    if np.any(seq[:, 0] != chain.bos) or np.any(seq[:, 1:] < 0) or np.any(seq[:, 1:] >= V):
        raise ValueError("sequences: expected BOS in column 0 and symbols in [0, n_symbols) after it")
    x = seq[:, 1:]
    out = np.empty(x.shape, dtype=np.float64)
    first = chain.stationary.sum(axis=1)  # law of x_0
    out[:, 0] = -np.log(first[x[:, 0]])
    out[:, 1] = -np.log(chain.stationary[x[:, 0], x[:, 1]] / first[x[:, 0]])
    out[:, 2:] = -np.log(chain.transition[x[:, :-2], x[:, 1:-1], x[:, 2:]])
    return out
