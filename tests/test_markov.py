"""posenc.markov: the task's reference losses are right, and the sampler follows the chain."""

import numpy as np
import pytest

from posenc.markov import (
    MarkovChain,
    bigram_entropy,
    entropy_rate,
    make_chain,
    optimal_nll,
    sample_sequences,
    unigram_entropy,
)


def test_chain_is_a_chain_and_its_pair_law_is_stationary():
    ch = make_chain(6, concentration=0.3, seed=4)
    np.testing.assert_allclose(ch.transition.sum(axis=-1), 1.0)
    np.testing.assert_allclose(ch.stationary.sum(), 1.0)
    np.testing.assert_allclose(np.einsum("ab,abc->bc", ch.stationary, ch.transition), ch.stationary, atol=1e-13)
    assert ch.bos == 6 and ch.n_symbols == 6


def test_reference_losses_are_ordered_and_match_samples():
    ch = make_chain(8, seed=0)
    h2, h1, h0 = entropy_rate(ch), bigram_entropy(ch), unigram_entropy(ch)
    assert 0 < h2 < h1 < h0 <= np.log(8) + 1e-12
    seq = sample_sequences(ch, 4000, 40, np.random.default_rng(0))
    nll = optimal_nll(ch, seq)
    # the empirical optimum from position 2 on estimates the entropy rate (standard error ~ 0.005)
    assert abs(nll[:, 2:].mean() - h2) < 0.03
    # empirical bigram statistics of the samples match the chain
    x = seq[:, 1:]
    counts = np.zeros((8, 8))
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    np.testing.assert_allclose(counts / counts.sum(), ch.stationary, atol=0.01)


def test_sampling_is_seeded():
    ch = make_chain(5, seed=1)
    a = sample_sequences(ch, 10, 20, np.random.default_rng(5))
    b = sample_sequences(ch, 10, 20, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    assert np.all(a[:, 0] == ch.bos) and a.shape == (10, 21)


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: make_chain(1), ValueError, "n_symbols"),
        (lambda: make_chain(4, concentration=0.0), ValueError, "concentration"),
        (lambda: sample_sequences("chain", 1, 3, np.random.default_rng(0)), TypeError, "chain"),
        (lambda: sample_sequences(make_chain(3), 1, 1, np.random.default_rng(0)), ValueError, "length"),
        (lambda: sample_sequences(make_chain(3), 1, 3, 0), TypeError, "rng"),
        (lambda: optimal_nll(make_chain(3), [[3, 0, 5]]), ValueError, "sequences"),
        (lambda: optimal_nll(make_chain(3), [[0, 0, 1]]), ValueError, "sequences"),
    ],
)
def test_bad_input_is_rejected(call, exc, name):
    with pytest.raises(exc, match=rf"^{name}: "):
        call()


def test_markov_chain_type():
    assert isinstance(make_chain(3), MarkovChain)


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        ({"transition": np.full((2, 2), 0.5)}, ValueError, "transition"),
        ({"transition": np.full((2, 2, 2), 0.4)}, ValueError, "transition"),
        ({"transition": "uniform"}, TypeError, "transition"),
        ({"stationary": np.full((3, 3), 0.25)}, ValueError, "stationary"),
        ({"stationary": np.full((2, 2), 0.3)}, ValueError, "stationary"),
        ({"stationary": np.array([[0.5, 0.75], [0.0, -0.25]])}, ValueError, "stationary"),
    ],
)
def test_markov_chain_fields_are_checked(kwargs, exc, name):
    good = {"transition": np.full((2, 2, 2), 0.5), "stationary": np.full((2, 2), 0.25)}
    MarkovChain(**good)  # the valid chain is accepted
    with pytest.raises(exc, match=rf"^{name}: "):
        MarkovChain(**{**good, **kwargs})
