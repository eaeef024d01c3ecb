"""Multimodal RoPE: positions, layouts, the reduction to RoPE on text (against HF in test_reference)."""

import numpy as np
import pytest
from helpers import raises_named
from hypothesis import given
from hypothesis import strategies as st

from posenc import MRopePositions, apply_mrope, apply_rope, mrope_axes, mrope_position_ids, mrope_table

QWEN2 = [16, 24, 24]
QWEN3 = [24, 20, 20]


def test_text_positions_are_ordinary_positions():
    got = mrope_position_ids(np.zeros(9, dtype=int))
    assert isinstance(got, MRopePositions)
    np.testing.assert_array_equal(got.position_ids, np.tile(np.arange(9), (3, 1)))
    assert got.rope_delta == 0


def test_an_image_by_hand():
    """Two text tokens, an image of (1, 4, 6) patches merged 2x2 (2 rows of 3), one text token."""
    got = mrope_position_ids([0, 0, 1, 1, 1, 1, 1, 1, 0], image_grid_thw=[[1, 4, 6]])
    np.testing.assert_array_equal(got.position_ids, [[0, 1, 2, 2, 2, 2, 2, 2, 5],
                                                     [0, 1, 2, 2, 2, 3, 3, 3, 5],
                                                     [0, 1, 2, 3, 4, 2, 3, 4, 5]])
    assert got.rope_delta == 6 - 9  # the next token, index 9, is at position 6


def test_video_time_steps():
    """Qwen2-VL counts frames; Qwen2.5-VL counts time: 4 tokens/s, half a second per grid -> step 2."""
    types = [0] + [2] * 3 + [0]  # a video of 3 temporal patches of one merged token each
    grid = [[3, 2, 2]]
    assert mrope_position_ids(types, video_grid_thw=grid).position_ids[0].tolist() == [0, 1, 2, 3, 2]
    timed = mrope_position_ids(types, video_grid_thw=grid, tokens_per_second=4, second_per_grid_ts=[0.5])
    assert timed.position_ids[0].tolist() == [0, 1, 3, 5, 2]  # text resumes after max(h, w), not after time
    thirds = mrope_position_ids(types, video_grid_thw=grid, tokens_per_second=4, second_per_grid_ts=[1 / 3])
    assert thirds.position_ids[0].tolist() == [0, 1, 2, 3, 2]  # floor(0), floor(1.33), floor(2.67)


def test_qwen3_splits_a_video_into_frames():
    types = [0] + [2] * 4 + [0, 0] + [2] * 4 + [0]  # a timestamp (2 text tokens) between the two frames
    got = mrope_position_ids(types, video_grid_thw=[[2, 4, 4]], split_video_frames=True)
    assert got.position_ids[0].tolist() == [0, 1, 1, 1, 1, 3, 4, 5, 5, 5, 5, 7]
    with raises_named(ValueError, "video_grid_thw"):  # without the split, one run has 4 tokens, the grid 8
        mrope_position_ids(types, video_grid_thw=[[2, 4, 4]])


def test_axes_of_the_two_layouts():
    sectioned = mrope_axes(128, mrope_section=QWEN2)
    np.testing.assert_array_equal(np.bincount(sectioned), QWEN2)
    assert np.all(np.diff(sectioned) >= 0)  # time on the fastest planes, width on the slowest
    interleaved = mrope_axes(128, mrope_section=QWEN3, mrope_interleaved=True)
    np.testing.assert_array_equal(np.bincount(interleaved), QWEN3)
    assert interleaved[:6].tolist() == [0, 1, 2, 0, 1, 2] and interleaved[60:].tolist() == [0, 0, 0, 0]
    for axis in range(3):  # every axis gets planes from the fastest tenth and from the slowest third
        planes = np.flatnonzero(interleaved == axis)
        assert planes.min() < 6 and planes.max() > 40


@given(st.lists(st.integers(0, 5000), min_size=1, max_size=12), st.booleans())
def test_equal_positions_on_three_axes_are_rope(positions, interleaved):
    """The reduction of M-RoPE to RoPE on text, for both layouts."""
    x = np.random.default_rng(len(positions)).normal(size=(2, len(positions), 128))
    section = QWEN3 if interleaved else QWEN2
    ours = apply_mrope(x, np.tile(positions, (3, 1)), mrope_section=section, mrope_interleaved=interleaved, base=1e6)
    np.testing.assert_allclose(ours, apply_rope(x, positions, base=1e6, layout="half"), rtol=0, atol=1e-12)


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-50, 50), st.booleans())
def test_scores_depend_on_position_differences_only(dt, dh, dw, interleaved):
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 5, 128))
    pos = rng.integers(0, 100, size=(3, 5))
    section = QWEN3 if interleaved else QWEN2

    def scores(p):
        return apply_mrope(q, p, mrope_section=section, mrope_interleaved=interleaved) @ apply_mrope(
            k, p, mrope_section=section, mrope_interleaved=interleaved).T

    shifted = pos + np.array([[dt], [dh], [dw]])
    np.testing.assert_allclose(scores(shifted), scores(pos), atol=1e-10)


def test_table_shape_and_one_axis_per_plane():
    pos = np.array([[5, 6], [0, 1], [7, 9]])
    table = mrope_table(pos, 16, mrope_section=[2, 3, 3])
    assert table.shape == (2, 8) and table.dtype == np.complex128
    theta = 1e4 ** (-np.arange(0, 16, 2) / 16)
    axes = mrope_axes(16, mrope_section=[2, 3, 3])
    np.testing.assert_allclose(np.angle(table), np.angle(np.exp(1j * pos[axes].T * theta)), atol=1e-12)
    assert mrope_table(pos, 16, mrope_section=[2, 3, 3], dtype="float32").dtype == np.complex64


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        (dict(mm_token_type_ids=[0, 3]), ValueError, "mm_token_type_ids"),
        (dict(mm_token_type_ids=[0.0, 1.0]), TypeError, "mm_token_type_ids"),
        (dict(mm_token_type_ids=np.array([], dtype=int)), ValueError, "mm_token_type_ids"),
        (dict(mm_token_type_ids=[0, 1, 1, 1, 1], image_grid_thw=[1, 4, 4]), ValueError, "image_grid_thw"),
        (dict(mm_token_type_ids=[0, 1, 1, 1, 1], image_grid_thw=[[1, 4, 0]]), ValueError, "image_grid_thw"),
        (dict(mm_token_type_ids=[0, 1, 1, 1], image_grid_thw=[[1, 4, 4]]), ValueError, "image_grid_thw"),
        (dict(mm_token_type_ids=[0, 1, 1, 1, 1]), ValueError, "image_grid_thw"),
        (dict(mm_token_type_ids=[0, 1, 1, 1, 1], image_grid_thw=[[1, 4, 4], [1, 4, 4]]), ValueError, "image_grid_thw"),
        (dict(mm_token_type_ids=[0, 2], video_grid_thw=[[1, 2, 2]], second_per_grid_ts=[1.0]), ValueError,
         "second_per_grid_ts"),
        (dict(mm_token_type_ids=[0, 2], video_grid_thw=[[1, 2, 2]], tokens_per_second=2, second_per_grid_ts=[1, 2]),
         ValueError, "second_per_grid_ts"),
        (dict(mm_token_type_ids=[0, 2], video_grid_thw=[[1, 2, 2]], tokens_per_second=0), ValueError,
         "tokens_per_second"),
        (dict(mm_token_type_ids=[0], spatial_merge_size=0), ValueError, "spatial_merge_size"),
        (dict(mm_token_type_ids=[0], split_video_frames=1), TypeError, "split_video_frames"),
    ],
)
def test_positions_reject_bad_input(kwargs, exc, name):
    with raises_named(exc, name):
        mrope_position_ids(**kwargs)


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: mrope_axes(128, mrope_section=[16, 24, 23]), ValueError, "mrope_section"),
        (lambda: mrope_axes(128, mrope_section=[32, 32]), ValueError, "mrope_section"),
        (lambda: mrope_axes(127, mrope_section=[16, 24, 24]), ValueError, "head_dim"),
        (lambda: mrope_axes(128, mrope_section=QWEN2, mrope_interleaved="yes"), TypeError, "mrope_interleaved"),
        (lambda: mrope_table(np.zeros((2, 4)), 128, mrope_section=QWEN2), ValueError, "position_ids"),
        (lambda: apply_mrope(np.zeros(128), np.zeros((3, 1)), mrope_section=QWEN2), ValueError, "x"),
        (lambda: apply_mrope(np.zeros((4, 128)), np.zeros((3, 5)), mrope_section=QWEN2), ValueError, "position_ids"),
        (lambda: apply_mrope(np.zeros((4, 128)), np.zeros((2, 4)), mrope_section=QWEN2), ValueError, "position_ids"),
    ],
)
def test_rotation_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()


def test_repeat_counts_castable_on_32_bit_platforms(monkeypatch):
    """Counts given to np.repeat must be castable to a 32-bit index ('safe' rule), as in Pyodide (wasm32).

    On a 32-bit platform NumPy casts the counts to intp = int32 by the 'safe' rule, which an
    int64 array fails (the chapters' Run controls hit this); the strict repeat below applies
    that rule on any platform.
    """
    real = np.repeat

    def repeat_32_bit(a, repeats, axis=None):
        if isinstance(repeats, np.ndarray) and not np.can_cast(repeats.dtype, np.int32, casting="safe"):
            raise TypeError(f"Cannot cast array data from {repeats.dtype} to int32 according to the rule 'safe'")
        return real(a, repeats, axis=axis)

    monkeypatch.setattr(np, "repeat", repeat_32_bit)
    np.testing.assert_array_equal(mrope_axes(8, mrope_section=[2, 1, 1]), [0, 0, 1, 2])
    # two frames of 2 tokens each, a text token (Qwen3-VL's timestamp) between them
    found = mrope_position_ids([2, 2, 0, 2, 2], video_grid_thw=[[2, 2, 4]], split_video_frames=True)
    assert found.position_ids.shape == (3, 5)
