import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from helpers import raises_named

from posenc import causal_mask, scaled_dot_product_attention, softmax


def test_softmax_matches_definition():
    x = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]])
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-15)
    np.testing.assert_allclose(softmax(x, axis=0), np.exp(x) / np.exp(x).sum(0), rtol=1e-15)


def test_softmax_large_logits_no_overflow():
    out = softmax(np.array([1000.0, 1001.0, 1002.0]))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, softmax(np.array([0.0, 1.0, 2.0])), rtol=1e-14)
    out = softmax(np.array([-1e308, 1e308]))
    np.testing.assert_array_equal(out, [0.0, 1.0])


def test_softmax_masked_entries_are_zero_and_dtype_kept():
    out = softmax(np.array([0.0, -np.inf, 0.0], dtype=np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [0.5, 0.0, 0.5])


@pytest.mark.parametrize(
    "x, exc, words",
    [
        (np.array([-np.inf, -np.inf]), ValueError, "a slice"),
        (np.array([np.nan, 1.0]), ValueError, ""),
        (np.array([np.inf, 1.0]), ValueError, ""),
        (np.array([1, 2]), TypeError, ""),
        (np.array(["a"]), TypeError, ""),
        (np.float64(1.0), ValueError, ""),
    ],
)
def test_softmax_rejects_bad_input(x, exc, words):
    with raises_named(exc, "x", words):
        softmax(x)


def test_softmax_rejects_bad_axis():
    with raises_named(ValueError, "axis"):
        softmax(np.zeros((2, 2)), axis=2)
    with raises_named(TypeError, "axis"):
        softmax(np.zeros((2, 2)), axis=1.0)


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=20), st.floats(-100, 100))
def test_softmax_shift_invariant(values, c):
    x = np.array(values)
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=1e-9, atol=1e-15)
    assert abs(softmax(x).sum() - 1) < 1e-12


def test_causal_mask_shapes_and_kv_alignment():
    np.testing.assert_array_equal(causal_mask(3), np.tril(np.ones((3, 3), bool)))
    m = causal_mask(2, 4)
    np.testing.assert_array_equal(m, [[1, 1, 1, 0], [1, 1, 1, 1]])
    # PyTorch's CausalVariant.LOWER_RIGHT example (shape (3, 4)), which the docstring names.
    np.testing.assert_array_equal(causal_mask(3, 4), [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]])


@pytest.mark.parametrize(
    "args, exc, name",
    [((0,), ValueError, "n_queries"), ((3, 2), ValueError, "n_keys"), ((2.0,), TypeError, "n_queries"),
     ((True,), TypeError, "n_queries"), ((2, "4"), TypeError, "n_keys")],
)
def test_causal_mask_rejects_bad_input(args, exc, name):
    with raises_named(exc, name):
        causal_mask(*args)


def test_attention_matches_formula():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
    bias = rng.normal(size=(3, 5))
    out, w = scaled_dot_product_attention(q, k, v, bias=bias)
    s = q @ np.swapaxes(k, -1, -2) / 2.0 + bias
    e = np.exp(s - s.max(-1, keepdims=True))
    w_ref = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(w, w_ref, rtol=1e-13)
    np.testing.assert_allclose(out, w_ref @ v, rtol=1e-12)
    assert out.shape == (2, 3, 6) and w.shape == (2, 3, 5)


def test_attention_mask_zeroes_weights():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3))
    _, w = scaled_dot_product_attention(x, x, x, mask=causal_mask(4))
    assert np.all(w[np.triu_indices(4, 1)] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0)


def test_attention_mask_equals_neg_inf_bias():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 3))
    m = causal_mask(5)
    a = scaled_dot_product_attention(x, x, x, mask=m)[0]
    b = scaled_dot_product_attention(x, x, x, bias=np.where(m, 0.0, -np.inf))[0]
    np.testing.assert_allclose(a, b, rtol=1e-14)


@given(st.integers(2, 7), st.integers(0, 2**31 - 1))
def test_attention_permutation_equivariance(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    p = rng.permutation(n)
    out, w = scaled_dot_product_attention(x, x, x)
    out_p, w_p = scaled_dot_product_attention(x[p], x[p], x[p])
    np.testing.assert_allclose(out_p, out[p], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w_p, w[p][:, p], rtol=1e-10, atol=1e-12)


def test_attention_errors_name_the_parameter():
    q = np.zeros((2, 4))
    with raises_named(ValueError, "k"):
        scaled_dot_product_attention(q, np.zeros((2, 3)), np.zeros((2, 4)))
    with raises_named(ValueError, "v"):
        scaled_dot_product_attention(q, q, np.zeros((3, 4)))
    with raises_named(ValueError, "bias"):
        scaled_dot_product_attention(q, q, q, bias=np.zeros((3, 3)))
    with raises_named(ValueError, "bias"):
        scaled_dot_product_attention(q, q, q, bias=np.zeros((2, 2, 2)))
    with raises_named(TypeError, "mask"):
        scaled_dot_product_attention(q, q, q, mask=np.ones((2, 2)))
    with raises_named(ValueError, "mask"):
        scaled_dot_product_attention(q, q, q, mask=np.ones((3, 3), bool))
    with raises_named(ValueError, "mask", r"some query"):
        scaled_dot_product_attention(q, q, q, mask=np.array([[True, False], [False, False]]))
    with raises_named(ValueError, "bias", r"some query"):
        scaled_dot_product_attention(q, q, q, bias=np.array([[0.0, 0.0], [-np.inf, -np.inf]]))
    with raises_named(ValueError, "q"):
        scaled_dot_product_attention(np.full((2, 4), np.nan), q, q)
    with raises_named(TypeError, "q"):
        scaled_dot_product_attention(np.zeros((2, 4), dtype=int), q, q)
    with raises_named(ValueError, "q"):
        scaled_dot_product_attention(np.zeros(4), q, q)


def test_relative_positions_alignment_and_errors():
    from posenc import relative_positions

    np.testing.assert_array_equal(relative_positions(2, 4), [[-2, -1, 0, 1], [-3, -2, -1, 0]])
    np.testing.assert_array_equal(relative_positions(3), np.subtract.outer(np.arange(3), np.arange(3)).T)
    assert relative_positions(3, 5).dtype == np.int64
    np.testing.assert_array_equal(causal_mask(3, 5), relative_positions(3, 5) <= 0)
    with raises_named(ValueError, "n_keys"):
        relative_positions(4, 3)
    with raises_named(TypeError, "n_queries"):
        relative_positions(2.5)


def test_kv_cache_rows_match_full_computation():
    """Queries aligned to the last keys: the cached rows are the last rows of the full matrix."""
    from posenc import alibi_bias, relative_positions, t5_relative_bias

    full = relative_positions(6)
    np.testing.assert_array_equal(relative_positions(2, 6), full[-2:])
    np.testing.assert_array_equal(alibi_bias(4, 2, 6), alibi_bias(4, 6)[:, -2:])
    table = np.random.default_rng(0).normal(size=(32, 3))
    np.testing.assert_array_equal(t5_relative_bias(table, 2, 6), t5_relative_bias(table, 6)[:, -2:])
