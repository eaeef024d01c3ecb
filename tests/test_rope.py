import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc import (
    apply_rope,
    apply_rope_complex,
    interleave_permutation,
    rope_angles,
    rope_decay_curve,
    rope_frequencies,
    rope_rotation_matrix,
)

seeds = st.integers(0, 2**31 - 1)
dims = st.sampled_from([2, 4, 8, 16, 64])


def test_frequencies():
    np.testing.assert_allclose(rope_frequencies(8), 1 / 10000 ** (np.arange(0, 8, 2) / 8), rtol=1e-15)
    np.testing.assert_allclose(rope_frequencies(4, base=500000.0), [1.0, 500000.0**-0.5], rtol=1e-15)


def test_interleaved_rotation_by_hand():
    x = np.array([[1.0, 0.0, 0.0, 1.0]])
    theta = rope_frequencies(4)
    out = apply_rope(x, [2.0])
    a0, a1 = 2 * theta
    np.testing.assert_allclose(out[0], [np.cos(a0), np.sin(a0), -np.sin(a1), np.cos(a1)], rtol=1e-15)


def test_half_layout_by_hand():
    x = np.array([[1.0, 0.0, 0.0, 1.0]])  # pairs (x0, x2) = (1, 0) and (x1, x3) = (0, 1)
    theta = rope_frequencies(4)
    a0, a1 = 3 * theta
    out = apply_rope(x, [3], layout="half")
    np.testing.assert_allclose(out[0], [np.cos(a0), -np.sin(a1), np.sin(a0), np.cos(a1)], rtol=1e-15)


@given(dims, seeds, st.floats(-1e4, 1e4), st.floats(-1e4, 1e4))
def test_relative_property(d, seed, m, n):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(1, d)), rng.normal(size=(1, d))
    for layout in ("interleaved", "half"):
        lhs = apply_rope(q, [m], layout=layout) @ apply_rope(k, [n], layout=layout).T
        rhs = q @ apply_rope(k, [n - m], layout=layout).T
        np.testing.assert_allclose(lhs, rhs, rtol=1e-7, atol=1e-7 * d)


@given(dims, seeds)
def test_norm_preserved(d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 5, d))
    pos = rng.uniform(-1e5, 1e5, size=5)
    for layout in ("interleaved", "half"):
        np.testing.assert_allclose(np.linalg.norm(apply_rope(x, pos, layout=layout), axis=-1),
                                   np.linalg.norm(x, axis=-1), rtol=1e-12)


@given(dims, seeds)
def test_layouts_differ_by_fixed_permutation(d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 6, d))
    pos = rng.integers(0, 5000, size=6)
    perm = interleave_permutation(d)
    inv = np.argsort(perm)
    # half-layout vector y: y[..., perm] is the same pairs, interleaved.
    np.testing.assert_allclose(apply_rope(x, pos, layout="half")[..., perm],
                               apply_rope(x[..., perm], pos, layout="interleaved"), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(apply_rope(x, pos, layout="interleaved")[..., inv],
                               apply_rope(x[..., inv], pos, layout="half"), rtol=1e-12, atol=1e-12)


def test_layouts_are_not_interchangeable():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 8))
    assert not np.allclose(apply_rope(x, np.arange(4), layout="half"), apply_rope(x, np.arange(4)))


@given(dims, seeds)
def test_complex_equals_real(d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 4, d))
    pos = rng.uniform(-1e3, 1e3, size=4)
    np.testing.assert_allclose(apply_rope_complex(x, pos), apply_rope(x, pos), rtol=1e-12, atol=1e-12)


@given(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3))
def test_rotation_matrix_laws(m, n):
    d = 8
    rm, rn = rope_rotation_matrix(m, d), rope_rotation_matrix(n, d)
    np.testing.assert_allclose(rm.T @ rn, rope_rotation_matrix(n - m, d), atol=1e-9)
    np.testing.assert_allclose(rm.T @ rm, np.eye(d), atol=1e-12)
    x = np.arange(1.0, d + 1)
    np.testing.assert_allclose(apply_rope(x[None], [m])[0], rm @ x, atol=1e-9)


def test_dtype_kept_and_float32_accuracy_at_large_positions():
    rng = np.random.default_rng(4)
    x64 = rng.normal(size=(3, 128))
    x32 = x64.astype(np.float32)
    pos = np.array([1e6, 1e6 + 1, 123456789.0])
    out32 = apply_rope(x32, pos)
    assert out32.dtype == np.float32
    ref = apply_rope(x32.astype(np.float64), pos)
    # accurate to float32 rounding: a few ulp of the vector's scale
    assert np.max(np.abs(out32 - ref)) < 8 * np.finfo(np.float32).eps * np.abs(x32).max()
    # naive float32 angles are wildly off at this position
    ang32 = (pos[:, None].astype(np.float32) * rope_frequencies(128).astype(np.float32))
    assert np.max(np.abs(np.cos(ang32) - np.cos(rope_angles(pos, 128)))) > 1e-2
    assert apply_rope_complex(x32, pos).dtype == np.float32


def test_attention_factor_scales():
    x = np.ones((2, 4))
    np.testing.assert_allclose(apply_rope(x, [0, 1], attention_factor=1.5), 1.5 * apply_rope(x, [0, 1]))


def test_custom_inv_freq():
    x = np.ones((2, 4))
    inv = rope_frequencies(4) / 2
    np.testing.assert_allclose(apply_rope(x, [0, 2], inv_freq=inv), apply_rope(x, [0, 1]), atol=1e-15)


def test_decay_curve_starts_at_mean_index_and_decays():
    c = rope_decay_curve([0.0], 8)
    np.testing.assert_allclose(c, [np.mean(np.arange(1, 5))], rtol=1e-14)
    curve = rope_decay_curve(np.arange(0, 1000, 50), 128)
    assert curve[0] > 5 * curve[-1]


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: rope_frequencies(3), ValueError, "head_dim"),
        (lambda: rope_frequencies(8, base=0.5), ValueError, "base"),
        (lambda: apply_rope(np.zeros((2, 3)), [0, 1]), ValueError, "x"),
        (lambda: apply_rope(np.zeros(4), [0]), ValueError, "x"),
        (lambda: apply_rope(np.zeros((2, 4), int), [0, 1]), TypeError, "x"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, 1, 2]), ValueError, "positions"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, np.nan]), ValueError, "positions"),
        (lambda: apply_rope(np.zeros((2, 4)), [[0, 1]]), ValueError, "positions"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, 1], layout="neox"), ValueError, "layout"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, 1], attention_factor=0.0), ValueError, "attention_factor"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, 1], inv_freq=np.ones(3)), ValueError, "inv_freq"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, 1], inv_freq=[1.0, np.inf]), ValueError, "inv_freq"),
        (lambda: apply_rope_complex(np.zeros((2, 4)), [0]), ValueError, "positions"),
        (lambda: rope_rotation_matrix(np.inf, 4), ValueError, "position"),
        (lambda: rope_decay_curve([0.0], 5), ValueError, "head_dim"),
    ],
)
def test_rope_rejects_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_any_memory_layout_gives_the_same_rotation(dtype):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, 3, 8)).astype(dtype)
    pos = np.arange(5)
    for view in (x.transpose(1, 0, 2), x.transpose(1, 0, 2)[..., ::-1], np.asfortranarray(x[0])):
        p = pos[: view.shape[-2]]
        for layout in ("interleaved", "half"):
            out = apply_rope(view, p, layout=layout)
            assert out.dtype == dtype and out.shape == view.shape
            np.testing.assert_array_equal(out, apply_rope(np.ascontiguousarray(view), p, layout=layout))
