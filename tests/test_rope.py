"""RoPE: posenc.rope's public functions, the cos/sin table and its fast path, per-sequence
positions, and axial 2D RoPE."""

import threading
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc._rope_kernel as kernel
import posenc.rope as rope_module
from helpers import raises_named
from posenc import (
    apply_rope,
    apply_rope_2d,
    apply_rope_complex,
    interleave_permutation,
    rope_angles,
    rope_decay_curve,
    rope_frequencies,
    rope_rotation_matrix,
    rope_table,
    sinusoidal_encoding,
)
from posenc.scaling import yarn_scaling

LAYOUTS = ["interleaved", "half"]
DTYPES = [np.float16, np.float32, np.float64]


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


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
    with raises_named(exc, name):
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


# --------------------------------------------------------------------------------------
# `rope_table`, the `table=` argument of `apply_rope`, and its private blocked fast path.
#
# The fast path (`posenc._rope_kernel.rotate_blocked`) is an implementation detail: it must give
# the readable path's bits exactly, on every shape, layout, dtype and memory layout.


def _readable(monkeypatch, *args, **kwargs):
    """apply_rope with the fast path switched off."""
    with monkeypatch.context() as m:
        m.setattr(kernel, "blocked_applies", lambda x, table: False)
        return apply_rope(*args, **kwargs)


def _blocked(monkeypatch, *args, block, **kwargs):
    """apply_rope through the fast path, with tiny blocks so that one call has many."""
    calls = []
    original = kernel.rotate_blocked

    def spy(*a):
        calls.append(1)
        return original(*a)

    with monkeypatch.context() as m:
        m.setattr(kernel, "BLOCKED_MIN_SIZE", 1)
        m.setattr(kernel, "BLOCK_ELEMS", {"interleaved": block, "half": block})
        m.setattr(kernel, "rotate_blocked", spy)
        out = apply_rope(*args, **kwargs)
    assert calls, "the fast path was not taken"
    return out


@settings(max_examples=150, deadline=None)
@given(
    lead=st.lists(st.integers(1, 4), min_size=0, max_size=2),
    length=st.integers(1, 40),
    half=st.integers(1, 12),
    block=st.integers(1, 300),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from([np.float32, np.float64]),
    view=st.sampled_from(["contiguous", "reversed", "transposed", "fortran"]),
    scaled=st.booleans(),
)
def test_fast_path_gives_the_readable_paths_bits(lead, length, half, block, seed, layout, dtype, view, scaled):
    rng = np.random.default_rng(seed)
    d = 2 * half
    x = rng.standard_normal((*lead, length, d)).astype(dtype)
    x[rng.random(x.shape) < 0.05] = -0.0  # signed zeros survive
    if view == "reversed":
        x = x[..., ::-1]
    elif view == "transposed" and x.ndim >= 3:
        x = np.swapaxes(x, 0, -2)
    elif view == "fortran":
        x = np.asfortranarray(x)
    pos = rng.integers(-50, 100000, size=x.shape[-2]) + rng.random(x.shape[-2]) * scaled
    opts = {}
    if scaled and d >= 4:
        inv_freq, factor = yarn_scaling(d, factor=4.0, original_max_position=64)
        opts = {"inv_freq": inv_freq, "attention_factor": factor}
    table = rope_table(pos, d, dtype=x.dtype, **opts)
    with pytest.MonkeyPatch.context() as mp:
        fast = _blocked(mp, x, table=table, layout=layout, block=block)
        slow = _readable(mp, x, pos, layout=layout, **opts)
    _same_bits(fast, slow)
    # a table with leading axes of length 1 (positions of shape (1, T)) takes the same path
    if x.ndim >= 3:
        with pytest.MonkeyPatch.context() as mp:
            _same_bits(_blocked(mp, x, table=table[None], layout=layout, block=block), slow)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_path_at_production_size_and_batched_positions(monkeypatch, layout, dtype):
    """The default block sizes on a large input; per-sequence positions stacked."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 1100, 64)).astype(dtype)
    pos = np.arange(1100) + 17
    fast = apply_rope(x, pos, layout=layout)
    _same_bits(fast, _readable(monkeypatch, x, pos, layout=layout))
    position_ids = np.stack([pos, pos + 5])[:, None, :]  # (B, 1, T): the readable path
    batched = apply_rope(x, position_ids, layout=layout)
    _same_bits(batched[0], fast[0])
    _same_bits(batched[1], apply_rope(x[1], pos + 5, layout=layout))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_fast_path_rejects_non_finite_x_in_any_block(monkeypatch, layout):
    x = np.zeros((3, 50, 8), dtype=np.float32)
    for where, value in [((0, 0, 0), np.nan), ((2, 49, 7), np.inf), ((1, 20, 3), -np.inf)]:
        y = x.copy()
        y[where] = value
        with raises_named(ValueError, "x", r"expected finite values"):
            _blocked(monkeypatch, y, np.arange(50), layout=layout, block=16)
    # finite values whose sum overflows are accepted: the exact test decides
    big = np.full((3, 50, 8), 3e38, dtype=np.float32)
    with monkeypatch.context() as m:
        m.setattr(kernel, "BLOCKED_MIN_SIZE", 1)
        assert np.isfinite(apply_rope(big, np.zeros(50), layout=layout)).all()


def test_rope_table_is_cos_and_sin_rounded_once():
    pos = np.array([0.0, 1.0, 2.5, 1e6])
    angles = rope_angles(pos, 8)
    t64 = rope_table(pos, 8)
    assert t64.dtype == np.complex128 and t64.shape == (4, 4)
    np.testing.assert_array_equal(t64.real, np.cos(angles))
    np.testing.assert_array_equal(t64.imag, np.sin(angles))
    t32 = rope_table(pos, 8, dtype=np.float32)
    assert t32.dtype == np.complex64
    np.testing.assert_array_equal(t32, t64.astype(np.complex64))
    assert rope_table(pos, 8, dtype=np.float16).dtype == np.complex64
    scaled = rope_table(pos, 8, attention_factor=1.5)
    np.testing.assert_array_equal(scaled.real, np.cos(angles) * 1.5)
    assert rope_table(np.zeros((2, 1, 3)), 8).shape == (2, 1, 3, 4)


def test_a_float64_table_is_accepted_for_float32_x():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 10, 8)).astype(np.float32)
    pos = np.arange(10)
    _same_bits(apply_rope(x, table=rope_table(pos, 8)), apply_rope(x, pos))


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: rope_table([0, 1], 3), ValueError, "head_dim"),
        (lambda: rope_table([0, 1], 4.0), TypeError, "head_dim"),
        (lambda: rope_table([0, np.nan], 4), ValueError, "positions"),
        (lambda: rope_table(["a"], 4), TypeError, "positions"),
        (lambda: rope_table([0, 1], 4, base=1.0), ValueError, "base"),
        (lambda: rope_table([0, 1], 4, inv_freq=np.ones(3)), ValueError, "inv_freq"),
        (lambda: rope_table([0, 1], 4, attention_factor=-1.0), ValueError, "attention_factor"),
        (lambda: rope_table([0, 1], 4, dtype=np.int32), TypeError, "dtype"),
        (lambda: rope_table([0, 1], 4, dtype="no such dtype"), TypeError, "dtype"),
        (lambda: apply_rope(np.zeros((2, 4))), TypeError, "positions"),
        (lambda: apply_rope(np.zeros((2, 4)), [0, 1], table=rope_table([0, 1], 4)), ValueError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=rope_table([0, 1], 4), attention_factor=2.0), ValueError,
         "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=np.ones((2, 2))), TypeError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=rope_table([0, 1], 4, dtype=np.float32)), TypeError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=rope_table([0, 1, 2], 4)), ValueError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=rope_table([0, 1], 8)), ValueError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=rope_table(np.zeros((3, 2)), 4)), ValueError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=rope_table([0, 1], 4)[0]), ValueError, "table"),
        (lambda: apply_rope(np.zeros((2, 4)), table=np.full((2, 2), np.nan + 0j)), ValueError, "table"),
    ],
)
def test_rope_table_and_table_argument_reject_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()


# --------------------------------------------------------------------------------------
# Per-sequence positions, as production code passes them (issue: left padding, packing, caches).
#
# `apply_rope`, `apply_rope_complex`, `rope_angles` and `sinusoidal_encoding` accept positions
# of any shape that broadcasts against the token axes; a batched call must equal the
# per-sequence calls stacked, bit for bit, and a left-padded batch must rotate every real
# token exactly as the unpadded sequence does.


@given(
    batch=st.integers(1, 4),
    heads=st.integers(1, 3),
    length=st.integers(1, 9),
    half=st.integers(1, 8),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(LAYOUTS + ["complex"]),
    dtype=st.sampled_from(DTYPES),
    scaled=st.booleans(),
)
def test_batched_call_equals_the_per_sequence_calls_stacked(batch, heads, length, half, seed, layout, dtype, scaled):
    rng = np.random.default_rng(seed)
    d = 2 * half
    x = rng.standard_normal((batch, heads, length, d)).astype(dtype)
    position_ids = rng.integers(0, 5000, size=(batch, length))
    opts = {}
    if scaled:
        inv_freq, factor = yarn_scaling(d, factor=4.0, original_max_position=64)
        opts = {"inv_freq": inv_freq, "attention_factor": factor}
    if layout == "complex":
        opts.pop("attention_factor", None)

        def call(xx, pp):
            return apply_rope_complex(xx, pp, **opts)
    else:

        def call(xx, pp):
            return apply_rope(xx, pp, layout=layout, **opts)

    batched = call(x, position_ids[:, None, :])
    stacked = np.stack([call(x[b], position_ids[b]) for b in range(batch)])
    _same_bits(batched, stacked)
    # (B, H, T) positions, one row per head too, give the same as well
    _same_bits(call(x, np.broadcast_to(position_ids[:, None, :], (batch, heads, length))), stacked)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_left_padding_rotates_every_real_token_as_the_unpadded_sequence(layout, dtype):
    """Hugging Face style: attention_mask [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]] and
    position_ids = cumsum(mask) - 1 with padded slots set to 1."""
    rng = np.random.default_rng(3)
    lengths = [3, 5]
    T, H, d = 5, 2, 16
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    position_ids = np.cumsum(mask, axis=1) - 1
    position_ids[mask == 0] = 1
    assert position_ids.tolist() == [[1, 1, 0, 1, 2], [0, 1, 2, 3, 4]]
    seqs = [rng.standard_normal((H, n, d)).astype(dtype) for n in lengths]
    padded = np.zeros((2, H, T, d), dtype=dtype)
    for b, (n, seq) in enumerate(zip(lengths, seqs)):
        padded[b, :, T - n:] = seq
    out = apply_rope(padded, position_ids[:, None, :], layout=layout)
    for b, (n, seq) in enumerate(zip(lengths, seqs)):
        alone = apply_rope(seq, np.arange(n), layout=layout)
        _same_bits(np.ascontiguousarray(out[b, :, T - n:]), alone)
    # and the shared 1-D positions would be wrong for the padded sequence
    shared = apply_rope(padded, np.arange(T), layout=layout)
    assert not np.array_equal(shared[0, :, T - 3:], apply_rope(seqs[0], np.arange(3), layout=layout))


def test_a_kept_table_gives_the_same_bits_as_positions():
    """A caller that reuses the cos/sin table keeps it (there is no module-level cache)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 300, 16)).astype(np.float32)
    pos = np.arange(300)
    table = rope_table(pos, 16, dtype=x.dtype)
    for layout in LAYOUTS:
        _same_bits(apply_rope(x, table=table, layout=layout), apply_rope(x, pos, layout=layout))
    a = apply_rope(x, pos)
    pos[5] = 1000  # the caller mutates its array: a new call sees the new value
    b = apply_rope(x, pos)
    assert not np.array_equal(a[:, 5], b[:, 5]) and np.array_equal(a[:, 6], b[:, 6])
    _same_bits(apply_rope(x, table=table), a)  # the kept table is the caller's, unchanged
    lock = type(threading.Lock())
    assert not [name for module in (rope_module, kernel) for name, value in vars(module).items()
                if isinstance(value, (lock, OrderedDict)) or name in ("_CIS_CACHE", "_CIS_LOCK")]


def test_rope_angles_and_sinusoidal_encoding_keep_the_shape_of_positions():
    pos = np.array([[0, 1, 2], [5, 6, 7]])
    ang = rope_angles(pos, 8)
    assert ang.shape == (2, 3, 4)
    np.testing.assert_array_equal(ang[1], rope_angles(pos[1], 8))
    pe = sinusoidal_encoding(pos, 8)
    assert pe.shape == (2, 3, 8)
    for b in range(2):
        np.testing.assert_array_equal(pe[b], sinusoidal_encoding(pos[b], 8))
    assert sinusoidal_encoding(np.array(4.0), 6).shape == (6,)
    np.testing.assert_array_equal(sinusoidal_encoding(np.array(4.0), 6), sinusoidal_encoding([4.0], 6)[0])


@pytest.mark.parametrize(
    "call",
    [
        lambda: apply_rope(np.zeros((2, 3, 4, 8)), np.zeros((3, 4))),  # (3, 4) vs (2, 3, 4): fine
    ],
)
def test_broadcastable_shapes_are_accepted(call):
    assert call().shape == (2, 3, 4, 8)


@pytest.mark.parametrize(
    "positions, words",
    [
        (np.zeros((2, 5)), r"shape \(2, 5\) does not broadcast against x.shape\[:-1\] = \(2, 3, 4\)"),
        (np.zeros((2, 1, 1, 4)), r"shape \(2, 1, 1, 4\) does not broadcast"),  # would enlarge x
        (np.zeros(5), r"expected 4 positions to match the sequence axis of x, got 5"),
    ],
)
@pytest.mark.parametrize("fn", [apply_rope, apply_rope_complex])
def test_shapes_that_do_not_broadcast_are_rejected_naming_both(fn, positions, words):
    with raises_named(ValueError, "positions", words):
        fn(np.zeros((2, 3, 4, 8)), positions)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(2, 3, 8), (4, 5000, 64)])  # plain and blocked paths
def test_non_finite_x_is_rejected_on_every_path(layout, shape):
    x = np.zeros(shape, dtype=np.float32)
    x[-1, -1, -1] = np.nan
    with raises_named(ValueError, "x", r"expected finite values"):
        apply_rope(x, np.arange(shape[-2]), layout=layout)
    x[-1, -1, -1] = np.inf
    with raises_named(ValueError, "x", r"expected finite values"):
        apply_rope(x, np.arange(shape[-2])[None, :], layout=layout)


# --------------------------------------------------------------------------------------
# Axial 2D RoPE (Heo et al. 2024): the score depends only on the (row, column) offset.


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
        (lambda: apply_rope_2d(np.zeros((2, 6)), [0, 1], [0, 1]), ValueError, "x"),
        (lambda: apply_rope_2d(np.zeros((2, 8)), [0, 1, 2], [0, 1]), ValueError, "rows"),
        (lambda: apply_rope_2d(np.zeros((2, 8)), [0, 1], [0, np.nan]), ValueError, "cols"),
        (lambda: apply_rope_2d(np.zeros((2, 8)), [0, 1], [0, 1], base=1.0), ValueError, "base"),
        (lambda: apply_rope_2d(np.zeros((2, 8), dtype=int), [0, 1], [0, 1]), TypeError, "x"),
    ],
)
def test_rope_2d_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()
