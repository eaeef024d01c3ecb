"""Per-sequence positions, as production code passes them (issue: left padding, packing, caches).

`apply_rope`, `apply_rope_complex`, `rope_angles` and `sinusoidal_encoding` accept positions
of any shape that broadcasts against the token axes; a batched call must equal the
per-sequence calls stacked, bit for bit, and a left-padded batch must rotate every real
token exactly as the unpadded sequence does.
"""

import threading
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc.rope as rope_module
from posenc import apply_rope, apply_rope_complex, rope_angles, rope_table, sinusoidal_encoding
from posenc.scaling import yarn_scaling

DTYPES = [np.float16, np.float32, np.float64]
LAYOUTS = ["interleaved", "half"]


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


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
        inv_freq, factor = yarn_scaling(d, 4.0, 64)
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
    assert not [name for name, value in vars(rope_module).items()
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
    with pytest.raises(ValueError, match="positions: " + words if "shape" in words else words):
        fn(np.zeros((2, 3, 4, 8)), positions)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(2, 3, 8), (4, 5000, 64)])  # plain and blocked paths
def test_non_finite_x_is_rejected_on_every_path(layout, shape):
    x = np.zeros(shape, dtype=np.float32)
    x[-1, -1, -1] = np.nan
    with pytest.raises(ValueError, match="x: expected finite values"):
        apply_rope(x, np.arange(shape[-2]), layout=layout)
    x[-1, -1, -1] = np.inf
    with pytest.raises(ValueError, match="x: expected finite values"):
        apply_rope(x, np.arange(shape[-2])[None, :], layout=layout)
