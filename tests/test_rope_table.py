"""`rope_table`, the `table=` argument of `apply_rope`, and its private blocked fast path.

The fast path (`posenc.rope._rotate_blocked`) is an implementation detail: it must give
the readable path's bits exactly, on every shape, layout, dtype and memory layout.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc.rope as rope_module
from posenc import apply_rope, rope_angles, rope_table
from posenc.scaling import yarn_scaling

LAYOUTS = ["interleaved", "half"]


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def _readable(monkeypatch, *args, **kwargs):
    """apply_rope with the fast path switched off."""
    with monkeypatch.context() as m:
        m.setattr(rope_module, "_blocked_applies", lambda x, table: False)
        return apply_rope(*args, **kwargs)


def _blocked(monkeypatch, *args, block, **kwargs):
    """apply_rope through the fast path, with tiny blocks so that one call has many."""
    calls = []
    original = rope_module._rotate_blocked

    def spy(*a):
        calls.append(1)
        return original(*a)

    with monkeypatch.context() as m:
        m.setattr(rope_module, "_BLOCKED_MIN_SIZE", 1)
        m.setattr(rope_module, "_BLOCK_ELEMS", {"interleaved": block, "half": block})
        m.setattr(rope_module, "_rotate_blocked", spy)
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
        inv_freq, factor = yarn_scaling(d, 4.0, 64)
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
        with pytest.raises(ValueError, match=r"^x: expected finite values"):
            _blocked(monkeypatch, y, np.arange(50), layout=layout, block=16)
    # finite values whose sum overflows are accepted: the exact test decides
    big = np.full((3, 50, 8), 3e38, dtype=np.float32)
    with monkeypatch.context() as m:
        m.setattr(rope_module, "_BLOCKED_MIN_SIZE", 1)
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
    with pytest.raises(exc, match=rf"^{name}: "):
        call()
