r"""Multimodal RoPE (M-RoPE): three position axes, time, height and width, for text, images and video.

Qwen2-VL gives every token three positions :math:`(t, h, w)`. A text token at position
:math:`m` gets :math:`(m, m, m)`; the tokens of an image or a video after the vision
encoder (a grid of ``T x H x W`` patches, ``H`` and ``W`` divided by the spatial merge
size) get the grid coordinates plus the position where the grid starts, and the text
after the grid resumes after the largest of its height and width
(:func:`mrope_position_ids`). Each of the ``d/2`` rotation planes of a head then turns
with one of the three positions (:func:`mrope_axes`): in Qwen2-VL's *sectioned* layout
the planes are cut into three contiguous blocks (``mrope_section``, ``[16, 24, 24]`` for a
head of 128), in Qwen3-VL's *interleaved* layout the axes alternate ``t, h, w, t, h, w, ...``
so that every axis gets high and low frequencies. With equal positions on the three axes
(text) both are ordinary RoPE.

Everything follows Hugging Face transformers 5.24.0 (``models/qwen2_vl``,
``models/qwen2_5_vl``, ``models/qwen3_vl``): ``get_rope_index`` and
``get_vision_position_ids`` for the positions, the rotary embeddings'
``recomposition_frequencies`` for the layouts; the rotation itself is Llama's
``rotate_half`` (``layout="half"`` of :func:`posenc.rope.apply_rope`). Angles are float64
here, float32 there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    _show,
    as_int_array,
    as_position_array,
    broadcast_positions,
    check_bool,
    check_float,
    check_int,
)
from .rope import _check_x, apply_rope, rope_table

__all__ = ["MRopePositions", "mrope_position_ids", "mrope_axes", "mrope_table", "apply_mrope"]

# Token types of Hugging Face's mm_token_type_ids: text, image, video.
TEXT, IMAGE, VIDEO = 0, 1, 2


class MRopePositions(NamedTuple):
    r"""The 3D positions of a sequence and the offset of the text that follows it.

    Parameters
    ----------
    position_ids : numpy.ndarray of int64, shape (3, T)
        Time, height and width position of every token.
    rope_delta : int
        ``position_ids.max() + 1 - T``: a token generated at sequence index ``n >= T``
        gets the position ``n + rope_delta`` on all three axes (Hugging Face's
        ``mrope_position_deltas``).
    """

    position_ids: np.ndarray
    rope_delta: int


MRopePositions.position_ids.__doc__ = "Time, height and width positions, int64 of shape (3, T)."
MRopePositions.rope_delta.__doc__ = "position_ids.max() + 1 - T, the offset of generated tokens."


def _grids(name: str, grids) -> np.ndarray:
    if grids is None:
        return np.zeros((0, 3), dtype=np.int64)
    arr = as_int_array(name, grids)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name}: expected an array of shape (N, 3), one (t, h, w) row per item, got {_show(arr)}")
    if np.any(arr < 1):
        raise ValueError(f"{name}: expected positive grid sizes, got a minimum of {arr.min()}")
    return arr


def mrope_position_ids(
    mm_token_type_ids,
    *,
    image_grid_thw=None,
    video_grid_thw=None,
    spatial_merge_size: int = 2,
    tokens_per_second: float | None = None,
    second_per_grid_ts=None,
    split_video_frames: bool = False,
) -> MRopePositions:
    r"""The (time, height, width) positions of a text, image and video sequence.

    The sequence is read as runs of one token type. A text run of ``n`` tokens starting at
    position ``p`` gets :math:`(p + k, p + k, p + k)`, ``k = 0 .. n-1``, and moves ``p`` to
    ``p + n``. An image or video run takes the next grid ``(t, h, w)`` of its kind; with
    ``H = h // m`` and ``W = w // m`` (``m`` = ``spatial_merge_size``) its ``t H W`` tokens,
    in time-major, then row, then column order, get

    .. math:: (p + \lfloor \tau \iota \rfloor,\; p + r,\; p + c), \qquad
              \tau = 0..t-1,\ r = 0..H-1,\ c = 0..W-1,

    and ``p`` moves to :math:`p + \max(H, W)`. The time step :math:`\iota` is 1 for Qwen2-VL
    and for images; for the videos of Qwen2.5-VL it is ``tokens_per_second *
    second_per_grid_ts[v]`` (seconds of video per temporal patch), computed in float32 and
    truncated as Hugging Face does, so the time axis counts absolute time. Qwen3-VL
    (``split_video_frames=True``) cuts each video of ``t`` frames into ``t`` grids of one
    frame, each its own run (its processor puts a timestamp in text between frames).

    Note that in transformers 5.24.0 the text after a grid resumes at
    :math:`p + \max(H, W)`, not after the largest time position, so a video's later time
    positions may exceed the positions of the text that follows it.

    Parameters
    ----------
    mm_token_type_ids : array_like of int, shape (T,)
        0 for a text token, 1 for an image token, 2 for a video token (one sequence; a
        batch is this function row by row, the grids taken in order).
    image_grid_thw, video_grid_thw : array_like of int, shape (N, 3), optional
        ``(t, h, w)`` patch grids of the images and videos, in order of appearance; each
        run of image (video) tokens must have ``t * (h // m) * (w // m)`` tokens.
    spatial_merge_size : int, default 2
        ``m``: patches merged along each spatial axis before the language model.
    tokens_per_second : float, optional
        Qwen2.5-VL's ``vision_config.tokens_per_second``: when given, the time step of
        video ``v`` is ``tokens_per_second * second_per_grid_ts[v]``.
    second_per_grid_ts : array_like of float, shape (N_videos,), optional
        Seconds per temporal patch of each video; 1 when omitted (Hugging Face's default).
    split_video_frames : bool, default False
        Qwen3-VL: one grid per frame.

    Returns
    -------
    MRopePositions
        ``position_ids`` (int64, shape (3, T)) and ``rope_delta``.

    References
    ----------
    Wang et al. (2024), "Qwen2-VL: Enhancing Vision-Language Model's Perception of the
    World at Any Resolution", arXiv:2409.12191 (M-RoPE); Bai et al. (2025), "Qwen2.5-VL
    Technical Report", arXiv:2502.13923 (absolute time); Hugging Face transformers 5.24.0,
    ``Qwen2VLModel.get_rope_index``, ``Qwen2_5_VLModel.get_rope_index``,
    ``Qwen3VLModel.get_rope_index`` and ``get_vision_position_ids``.
    """
    types_ = as_int_array("mm_token_type_ids", mm_token_type_ids)
    if types_.ndim != 1 or types_.size == 0:
        raise ValueError(f"mm_token_type_ids: expected a non-empty 1-D array, got {_show(types_)}")
    if not np.isin(types_, (TEXT, IMAGE, VIDEO)).all():
        raise ValueError(f"mm_token_type_ids: expected values 0 (text), 1 (image) or 2 (video), got {np.unique(types_)}")
    images = _grids("image_grid_thw", image_grid_thw)
    videos = _grids("video_grid_thw", video_grid_thw)
    merge = check_int("spatial_merge_size", spatial_merge_size, minimum=1)
    split = check_bool("split_video_frames", split_video_frames)
    if tokens_per_second is not None:
        tokens_per_second = check_float("tokens_per_second", tokens_per_second, positive=True)
    if second_per_grid_ts is None:
        seconds = np.ones(len(videos), dtype=np.float32)
    else:
        if tokens_per_second is None:
            raise ValueError("second_per_grid_ts: given without tokens_per_second, which Qwen2.5-VL's time step needs")
        seconds = as_position_array("second_per_grid_ts", second_per_grid_ts, ndim=1).astype(np.float32)
        if seconds.shape != (len(videos),) or np.any(seconds <= 0):
            raise ValueError(
                f"second_per_grid_ts: expected {len(videos)} positive values, one per video, got {_show(second_per_grid_ts)}"
            )
    steps = {IMAGE: [1.0] * len(images), VIDEO: [1.0] * len(videos)}
    if tokens_per_second is not None:
        steps[VIDEO] = [np.float32(tokens_per_second) * s for s in seconds]
    if split:  # Qwen3-VL: t grids of one frame each
        # np.repeat takes its counts as Python ints: an int64 array cannot be cast to the
        # int32 index type of a 32-bit platform (Pyodide's wasm32, where the chapters run).
        steps[VIDEO] = [step for step, (t, _, _) in zip(steps[VIDEO], videos) for _ in range(t)]
        videos = np.repeat(np.concatenate([np.ones((len(videos), 1), np.int64), videos[:, 1:]], axis=1),
                           videos[:, 0].tolist(), axis=0)
    grids = {IMAGE: images, VIDEO: videos}

    edges = np.flatnonzero(np.diff(types_)) + 1
    runs = [(int(types_[a]), a, b) for a, b in zip(np.r_[0, edges], np.r_[edges, types_.size])]
    used = {IMAGE: 0, VIDEO: 0}
    for kind, a, b in runs:  # all checks before any work
        if kind == TEXT:
            continue
        name = "image_grid_thw" if kind == IMAGE else "video_grid_thw"
        if used[kind] >= len(grids[kind]):
            raise ValueError(f"{name}: expected a grid for every run of {name[:5]} tokens, got {len(grids[kind])}")
        t, h, w = grids[kind][used[kind]]
        expected = t * (h // merge) * (w // merge)
        if b - a != expected:
            raise ValueError(
                f"{name}: grid {used[kind]} (t, h, w) = ({t}, {h}, {w}) with spatial_merge_size {merge} has "
                f"{expected} tokens, but its run in mm_token_type_ids (indices {a} to {b - 1}) has {b - a}"
            )
        used[kind] += 1
    for kind, name in ((IMAGE, "image_grid_thw"), (VIDEO, "video_grid_thw")):
        if used[kind] != len(grids[kind]):
            raise ValueError(f"{name}: expected {used[kind]} grids, one per run of tokens, got {len(grids[kind])}")

    out = np.empty((3, types_.size), dtype=np.int64)
    pos = 0
    used = {IMAGE: 0, VIDEO: 0}
    for kind, a, b in runs:
        if kind == TEXT:
            out[:, a:b] = pos + np.arange(b - a)
            pos += b - a
            continue
        t, h, w = grids[kind][used[kind]]
        step = steps[kind][used[kind]]
        used[kind] += 1
        time = (np.arange(t, dtype=np.float32) * np.float32(step)).astype(np.int64)  # torch .long() truncates
        tt, hh, ww = np.meshgrid(time, np.arange(h // merge), np.arange(w // merge), indexing="ij")
        out[:, a:b] = np.stack([tt.ravel(), hh.ravel(), ww.ravel()]) + pos
        pos += max(h, w) // merge
    return MRopePositions(out, int(out.max()) + 1 - types_.size)


def mrope_axes(head_dim: int, *, mrope_section, mrope_interleaved: bool = False) -> np.ndarray:
    r"""Which position (0 = time, 1 = height, 2 = width) turns each rotation plane.

    Sectioned (Qwen2-VL, Qwen2.5-VL): planes ``0 .. s_0-1`` follow time, the next ``s_1``
    height, the last ``s_2`` width; a low plane index is a high frequency, so time gets the
    fastest planes and width the slowest. Interleaved (Qwen3-VL): plane ``i`` follows
    height when ``i % 3 == 1`` and ``i < 3 s_1``, width when ``i % 3 == 2`` and
    ``i < 3 s_2``, and time otherwise, so every axis gets planes across the spectrum.

    Parameters
    ----------
    head_dim : int
        Positive even head width ``d``.
    mrope_section : sequence of 3 int
        ``(s_0, s_1, s_2)``, non-negative with ``s_0 + s_1 + s_2 = d/2``
        (``[16, 24, 24]`` for Qwen2-VL and Qwen2.5-VL, ``[24, 20, 20]`` for Qwen3-VL).
    mrope_interleaved : bool, default False
        Qwen3-VL's layout.

    Returns
    -------
    numpy.ndarray of int64, shape (head_dim // 2,)

    References
    ----------
    Hugging Face transformers 5.24.0, ``Qwen2VLRotaryEmbedding.recomposition_frequencies``
    (sectioned) and ``Qwen3VLTextRotaryEmbedding.recomposition_frequencies`` (interleaved).
    """
    head_dim = check_int("head_dim", head_dim, minimum=2, even=True)
    section = as_int_array("mrope_section", mrope_section)
    interleaved = check_bool("mrope_interleaved", mrope_interleaved)
    if section.shape != (3,) or np.any(section < 0) or section.sum() != head_dim // 2:
        raise ValueError(
            f"mrope_section: expected three non-negative plane counts summing to head_dim / 2 = {head_dim // 2}, "
            f"got {section.tolist() if section.ndim == 1 else _show(section)}"
        )
    if not interleaved:
        return np.repeat(np.arange(3, dtype=np.int64), section.tolist())  # Python ints: see mrope_position_ids
    axes = np.zeros(head_dim // 2, dtype=np.int64)
    for axis in (1, 2):
        axes[axis:3 * section[axis]:3] = axis
    return axes


def mrope_table(
    position_ids,
    head_dim: int,
    *,
    mrope_section,
    mrope_interleaved: bool = False,
    inv_freq=None,
    base: float = 10000.0,
    attention_factor: float = 1.0,
    dtype="float64",
) -> np.ndarray:
    r"""M-RoPE's cos/sin table: plane ``i`` of token ``n`` turns by ``position_ids[a_i, n] * theta_i``.

    ``a_i`` is :func:`mrope_axes`; the table is :func:`posenc.rope.rope_table` of each axis'
    positions, plane by plane, for :func:`posenc.rope.apply_rope` with ``table=`` and
    ``layout="half"`` (as Hugging Face, which concatenates the selected cos and sin twice
    and applies ``rotate_half``).

    Parameters
    ----------
    position_ids : array_like of real, shape (3, ...)
        Time, height and width positions, for example :func:`mrope_position_ids`'s
        ``position_ids`` of shape (3, T), or (3, B, 1, T) for queries of shape (B, H, T, d).
    head_dim : int
        Positive even head width.
    mrope_section : sequence of 3 int
        See :func:`mrope_axes`.
    mrope_interleaved : bool, default False
        Qwen3-VL's layout.
    inv_freq : array_like of float, shape (head_dim / 2,), optional
        Frequencies; defaults to :func:`posenc.rope.rope_frequencies` with ``base``.
    base : float, default 10000.0
        Used only when ``inv_freq`` is None (1000000 for Qwen2-VL and Qwen3-VL).
    attention_factor : float, default 1.0
    dtype : dtype, default float64
        As in :func:`posenc.rope.rope_table`.

    Returns
    -------
    numpy.ndarray of complex, shape position_ids.shape[1:] + (head_dim // 2,)

    References
    ----------
    Hugging Face transformers 5.24.0, ``Qwen2VLRotaryEmbedding.forward`` and
    ``Qwen3VLTextRotaryEmbedding.forward``.
    """
    axes = mrope_axes(head_dim, mrope_section=mrope_section, mrope_interleaved=mrope_interleaved)
    pos = as_position_array("position_ids", position_ids)
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(f"position_ids: expected shape (3, ...), one row per axis (t, h, w), got {pos.shape}")
    tables = rope_table(pos, head_dim, inv_freq=inv_freq, base=base, attention_factor=attention_factor, dtype=dtype)
    out = tables[0].copy()  # out[..., i] = tables[axes[i], ..., i]
    for axis in (1, 2):
        planes = axes == axis
        out[..., planes] = tables[axis][..., planes]
    return out


def apply_mrope(
    x,
    position_ids,
    *,
    mrope_section,
    mrope_interleaved: bool = False,
    inv_freq=None,
    base: float = 10000.0,
    attention_factor: float = 1.0,
) -> np.ndarray:
    r"""Rotate queries or keys with M-RoPE: :func:`mrope_table` applied with ``layout="half"``.

    Parameters
    ----------
    x : array_like of float, shape (..., T, head_dim)
        Queries or keys.
    position_ids : array_like of real, shape (3, T) or (3,) + a shape broadcastable to x.shape[:-1]
        Time, height and width positions.
    mrope_section : sequence of 3 int
        See :func:`mrope_axes`.
    mrope_interleaved : bool, default False
        Qwen3-VL's layout.
    inv_freq : array_like of float, shape (head_dim / 2,), optional
    base : float, default 10000.0
    attention_factor : float, default 1.0

    Returns
    -------
    numpy.ndarray, shape and dtype of ``x``

    References
    ----------
    Hugging Face transformers 5.24.0, ``models/qwen2_vl/modeling_qwen2_vl.py``
    (``apply_rotary_pos_emb`` with the recomposed cos and sin) and
    ``models/qwen3_vl/modeling_qwen3_vl.py``.
    """
    x = _check_x(x)
    pos = as_position_array("position_ids", position_ids)
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(f"position_ids: expected shape (3, ...), one row per axis (t, h, w), got {pos.shape}")
    broadcast_positions("position_ids", pos[0], x.shape[:-1])
    table = mrope_table(pos, x.shape[-1], mrope_section=mrope_section, mrope_interleaved=mrope_interleaved,
                        inv_freq=inv_freq, base=base, attention_factor=attention_factor, dtype=x.dtype)
    return apply_rope(x, layout="half", table=table)
