import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from helpers import finite_difference_gradient, raises_named

from posenc import LearnedPositionalEmbedding


def test_init_is_seeded_and_scaled():
    a = LearnedPositionalEmbedding(512, 16, seed=3)
    b = LearnedPositionalEmbedding(512, 16, seed=3)
    np.testing.assert_array_equal(a.weight, b.weight)
    assert abs(a.weight.std() - 0.02) < 0.002
    assert a.n_parameters == 512 * 16
    assert not np.array_equal(a.weight, LearnedPositionalEmbedding(512, 16, seed=4).weight)


def test_forward_is_a_gather_copy():
    emb = LearnedPositionalEmbedding(10, 3)
    pos = np.array([[0, 9, 9], [4, 4, 1]])
    y = emb.forward(pos)
    assert y.shape == (2, 3, 3)
    np.testing.assert_array_equal(y, emb.weight[pos])
    y[...] = 0
    assert emb.weight.any()


@given(st.lists(st.integers(0, 7), min_size=1, max_size=30), st.integers(0, 1000))
def test_backward_scatter_adds_repeats(positions, seed):
    emb = LearnedPositionalEmbedding(8, 4)
    g = np.random.default_rng(seed).normal(size=(len(positions), 4))
    emb.forward(positions)
    emb.backward(g)
    expected = np.zeros((8, 4))
    for p, row in zip(positions, g):
        expected[p] += row
    np.testing.assert_allclose(emb.grad, expected, rtol=1e-12, atol=1e-14)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    emb = LearnedPositionalEmbedding(6, 3, std=1.0)
    pos = np.array([[0, 1, 1, 5], [2, 1, 0, 0]])
    target = rng.normal(size=(2, 4, 3))

    def loss():
        return 0.5 * np.sum((emb.forward(pos) ** 2 - target) ** 2)

    y = emb.forward(pos)
    emb.zero_grad()
    emb.backward((y**2 - target) * 2 * y)
    numeric = finite_difference_gradient(loss, emb.weight)
    np.testing.assert_allclose(emb.grad, numeric, rtol=1e-6, atol=1e-8)
    assert np.all(emb.grad[[3, 4]] == 0)  # rows never used get no gradient


def test_accumulate_zero_and_step():
    emb = LearnedPositionalEmbedding(4, 2)
    w0 = emb.weight.copy()
    emb.forward([1])
    emb.backward(np.ones((1, 2)))
    emb.backward(np.ones((1, 2)))
    np.testing.assert_array_equal(emb.grad[1], [2.0, 2.0])
    emb.step(0.5)
    np.testing.assert_allclose(emb.weight[1], w0[1] - 1.0)
    np.testing.assert_array_equal(emb.weight[[0, 2, 3]], w0[[0, 2, 3]])
    emb.zero_grad()
    assert not emb.grad.any()


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda e: e.forward([0, 8]), ValueError, "positions"),
        (lambda e: e.forward([-1]), ValueError, "positions"),
        (lambda e: e.forward([0.0, 1.0]), TypeError, "positions"),
        (lambda e: (e.forward([0, 1]), e.backward(np.ones((3, 4)))), ValueError, "grad_out"),
        (lambda e: e.step(0.0), ValueError, "lr"),
        (lambda e: LearnedPositionalEmbedding(0, 4), ValueError, "max_len"),
        (lambda e: LearnedPositionalEmbedding(8, 4, std=-1.0), ValueError, "std"),
        (lambda e: LearnedPositionalEmbedding(8, 4.0), TypeError, "d_model"),
    ],
)
def test_learned_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call(LearnedPositionalEmbedding(8, 4))


def test_out_of_range_position_names_the_range_and_the_value():
    with raises_named(ValueError, "positions", r".*\[0, 8\).*got 8"):
        LearnedPositionalEmbedding(8, 4).forward([0, 8])


def test_backward_before_forward():
    with pytest.raises(RuntimeError, match="forward"):
        LearnedPositionalEmbedding(8, 4).backward(np.ones((1, 4)))
