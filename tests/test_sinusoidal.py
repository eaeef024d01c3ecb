import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from helpers import raises_named

from posenc import (
    interleave_permutation,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    tensor2tensor_encoding,
    tensor2tensor_frequencies,
)


def test_sinusoidal_frequencies_definition():
    d = 16
    i = np.arange(d // 2)
    np.testing.assert_allclose(sinusoidal_frequencies(d), 10000.0 ** (-2 * i / d), rtol=1e-14)
    assert sinusoidal_frequencies(d)[0] == 1.0
    assert sinusoidal_frequencies(d).dtype == np.float64


def test_encoding_matches_paper_formula():
    pe = sinusoidal_encoding(50, 8)
    p = np.arange(50)[:, None]
    i = np.arange(4)[None, :]
    np.testing.assert_allclose(pe[:, 0::2], np.sin(p / 10000 ** (2 * i / 8)), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(pe[:, 1::2], np.cos(p / 10000 ** (2 * i / 8)), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(sinusoidal_encoding(np.arange(50), 8), pe)


def test_norm_is_sqrt_half_d():
    pe = sinusoidal_encoding(np.array([0.0, 3.5, 1e4]), 12)
    np.testing.assert_allclose(np.sum(pe**2, axis=1), 6.0, rtol=1e-14)


@given(st.floats(-1e4, 1e4), st.floats(-1e3, 1e3), st.sampled_from([2, 4, 8, 64]))
def test_sinusoidal_shift_matrix_moves_encoding(p, k, d):
    lhs = sinusoidal_encoding(np.array([p + k]), d)[0]
    rhs = sinusoidal_shift_matrix(k, d) @ sinusoidal_encoding(np.array([p]), d)[0]
    np.testing.assert_allclose(lhs, rhs, atol=1e-9)


@given(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3))
def test_sinusoidal_shift_matrix_group_laws(j, k):
    d = 8
    mj, mk = sinusoidal_shift_matrix(j, d), sinusoidal_shift_matrix(k, d)
    np.testing.assert_allclose(mj @ mk, sinusoidal_shift_matrix(j + k, d), atol=1e-9)
    np.testing.assert_allclose(mk.T @ mk, np.eye(d), atol=1e-12)


def test_dot_product_depends_on_offset_only():
    pe = sinusoidal_encoding(40, 16)
    gram = pe @ pe.T
    omega = sinusoidal_frequencies(16)
    for off in range(-5, 6):
        diag = np.diagonal(gram, offset=off)
        np.testing.assert_allclose(diag, np.cos(omega * off).sum(), atol=1e-12)


def test_interleave_permutation():
    np.testing.assert_array_equal(interleave_permutation(6), [0, 3, 1, 4, 2, 5])
    with raises_named(ValueError, "dim"):
        interleave_permutation(5)


def test_tensor2tensor_layout_and_grid():
    d = 8
    omega = tensor2tensor_frequencies(d)
    np.testing.assert_allclose(omega, 1e4 ** (-np.arange(4) / 3), rtol=1e-14)
    assert omega[-1] == pytest.approx(1e-4, rel=1e-14)
    t2t = tensor2tensor_encoding(10, d)
    ang = np.arange(10)[:, None] * omega
    np.testing.assert_allclose(t2t, np.concatenate([np.sin(ang), np.cos(ang)], 1), rtol=1e-14)
    # Same information up to a fixed permutation, when the frequency grids agree.
    perm = interleave_permutation(d)
    inter = t2t[:, perm]
    np.testing.assert_allclose(inter[:, 0::2], np.sin(ang), rtol=1e-14)
    # min_timescale multiplies the grid, as tensor2tensor does.
    np.testing.assert_allclose(tensor2tensor_frequencies(d, min_timescale=2.0, max_timescale=8.0),
                               2.0 * 4.0 ** (-np.arange(4) / 3), rtol=1e-14)
    # d = 2: tensor2tensor clamps the divisor d/2 - 1 = 0 to 1, leaving the one frequency min_timescale.
    np.testing.assert_array_equal(tensor2tensor_frequencies(2), [1.0])
    np.testing.assert_array_equal(tensor2tensor_frequencies(2, min_timescale=2.0, max_timescale=8.0), [2.0])


def test_log_form_against_power_form():
    """What the docstring of sinusoidal_frequencies says about its log form, at d = 512: within
    about 14 units in the last place of the power form, its ratios no more equal than the power form's."""
    d = 512
    log_form = sinusoidal_frequencies(d)
    power_form = 10000.0 ** (-2 * np.arange(d // 2) / d)
    ulps = np.abs(log_form - power_form) / np.spacing(power_form)
    assert 8 <= ulps.max() <= 16
    spread = {name: np.ptp(w[1:] / w[:-1]) / np.spacing(w[1] / w[0]) for name, w in (("log", log_form), ("power", power_form))}
    assert spread["power"] <= 4 < 12 <= spread["log"] <= 24


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: sinusoidal_frequencies(7), ValueError, "d_model"),
        (lambda: sinusoidal_frequencies(0), ValueError, "d_model"),
        (lambda: sinusoidal_frequencies(8.0), TypeError, "d_model"),
        (lambda: sinusoidal_frequencies(8, base=1.0), ValueError, "base"),
        (lambda: sinusoidal_frequencies(8, base=float("nan")), ValueError, "base"),
        (lambda: sinusoidal_encoding(0, 8), ValueError, "positions"),
        (lambda: sinusoidal_encoding(np.array([0.0, np.inf]), 8), ValueError, "positions"),
        (lambda: sinusoidal_encoding(np.array([[0.0, 1.0], [2.0, np.nan]]), 8), ValueError, "positions"),
        (lambda: sinusoidal_encoding(["a"], 8), TypeError, "positions"),
        (lambda: sinusoidal_shift_matrix(np.nan, 8), ValueError, "k"),
        (lambda: tensor2tensor_frequencies(8, min_timescale=5.0, max_timescale=2.0), ValueError, "max_timescale"),
    ],
)
def test_sinusoidal_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()
