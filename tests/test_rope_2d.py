"""Axial 2D RoPE (Heo et al. 2024): the score depends only on the (row, column) offset."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc import apply_rope, apply_rope_2d, rope_frequencies


def _score(q, k, rq, cq, rk, ck, base=100.0):
    return float(apply_rope_2d(q[None], [rq], [cq], base=base)[0] @ apply_rope_2d(k[None], [rk], [ck], base=base)[0])


@given(
    seed=st.integers(0, 2**16),
    pos=st.tuples(*[st.integers(-50, 50)] * 4),
    shift=st.tuples(st.integers(-300, 300), st.integers(-300, 300)),
)
def test_score_depends_only_on_the_row_and_column_offsets(seed, pos, shift):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 16))
    rq, cq, rk, ck = pos
    dr, dc = shift
    a = _score(q, k, rq, cq, rk, ck)
    b = _score(q, k, rq + dr, cq + dc, rk + dr, ck + dc)
    assert a == pytest.approx(b, rel=1e-9, abs=1e-9)


def test_planes_follow_heo_et_al_column_planes_first_then_row_planes():
    d = 8
    theta = rope_frequencies(d // 2, 100.0)  # theta_t = 100^(-4t/d)
    np.testing.assert_allclose(theta, 100.0 ** (-np.arange(0, d, 4)[: d // 4] / d))
    x = np.random.default_rng(0).standard_normal((3, d))
    rows, cols = np.array([0.0, 2.0, 5.0]), np.array([1.0, 3.0, 7.0])
    out = apply_rope_2d(x, rows, cols)
    inv = np.concatenate([theta, np.zeros(d // 4)])  # column planes only
    only_cols = apply_rope(x, cols, inv_freq=inv)
    np.testing.assert_allclose(out[:, : d // 2], only_cols[:, : d // 2], atol=1e-12)
    inv = np.concatenate([np.zeros(d // 4), theta])
    only_rows = apply_rope(x, rows, inv_freq=inv)
    np.testing.assert_allclose(out[:, d // 2:], only_rows[:, d // 2:], atol=1e-12)


def test_the_row_offset_and_the_column_offset_are_not_confused():
    """A 1D RoPE on the flattened index r*W + c gives offset (1, 1-W) the same score as (0, 1)."""
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 16))
    W = 8
    near = _score(q, k, 3, 2, 3, 1)  # key one column to the left
    wrap = _score(q, k, 3, 0, 2, W - 1)  # key at the end of the previous row: flat offset 1 too
    flat = [float(apply_rope(q[None], [a])[0] @ apply_rope(k[None], [b])[0]) for a, b in ((3 * W + 2, 3 * W + 1), (3 * W, 2 * W + W - 1))]
    assert flat[0] == pytest.approx(flat[1], rel=1e-9)
    assert abs(near - wrap) > 1e-3


def test_norm_dtype_and_shape_kept_and_batched_positions():
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 8)).astype(np.float32)
    rows = np.arange(6) // 3
    cols = np.arange(6) % 3
    out = apply_rope_2d(x, rows, cols)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5)
    per = np.stack([apply_rope_2d(x[b], rows, cols) for b in range(2)])
    np.testing.assert_array_equal(apply_rope_2d(x, np.broadcast_to(rows, (2, 1, 6)), np.broadcast_to(cols, (2, 1, 6))), per)


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: apply_rope_2d(np.zeros((2, 6)), [0, 1], [0, 1]), ValueError, "divisible by 4"),
        (lambda: apply_rope_2d(np.zeros((2, 8)), [0, 1, 2], [0, 1]), ValueError, "rows"),
        (lambda: apply_rope_2d(np.zeros((2, 8)), [0, 1], [0, np.nan]), ValueError, "cols"),
        (lambda: apply_rope_2d(np.zeros((2, 8)), [0, 1], [0, 1], base=1.0), ValueError, "base"),
        (lambda: apply_rope_2d(np.zeros((2, 8), dtype=int), [0, 1], [0, 1]), TypeError, "x"),
    ],
)
def test_bad_input_is_rejected(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
