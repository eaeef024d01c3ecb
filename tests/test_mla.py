"""Decoupled RoPE in multi-head latent attention (against DeepSeek's modules in test_reference)."""

import math

import numpy as np
import pytest
from helpers import raises_named
from hypothesis import given
from hypothesis import strategies as st

from posenc import apply_rope, mla_scores, mla_softmax_scale


def _mla(seed, heads=3, tokens=6, rank=8, nope=6, rope=4):
    rng = np.random.default_rng(seed)
    return dict(q=rng.normal(size=(heads, tokens, nope + rope)), c_kv=rng.normal(size=(tokens, rank)),
                k_rope=rng.normal(size=(tokens, rope)), w_uk=rng.normal(size=(rank, heads, nope)))


@given(st.integers(0, 10**6), st.sampled_from(["interleaved", "half"]), st.integers(0, 10**5))
def test_absorbing_the_up_projection_changes_nothing(seed, layout, offset):
    args = _mla(seed)
    positions = np.arange(6) + offset
    plain = mla_scores(**args, positions=positions, softmax_scale=0.3, layout=layout)
    absorbed = mla_scores(**args, positions=positions, softmax_scale=0.3, layout=layout, absorb=True)
    np.testing.assert_allclose(absorbed, plain, rtol=1e-12, atol=1e-12)


def test_scores_by_hand_and_relative_positions():
    args = _mla(1)
    positions = np.arange(6)
    scores = mla_scores(**args, positions=positions, softmax_scale=0.25, base=100.0)
    h, m, n = 2, 4, 1
    k_nope = args["c_kv"][n] @ args["w_uk"][:, h, :]
    q_rot = apply_rope(args["q"][h, m:m + 1, 6:], [m], base=100.0)[0]
    k_rot = apply_rope(args["k_rope"][n:n + 1], [n], base=100.0)[0]
    assert scores[h, m, n] == pytest.approx(0.25 * (args["q"][h, m, :6] @ k_nope + q_rot @ k_rot), rel=1e-12)
    np.testing.assert_allclose(mla_scores(**args, positions=positions + 1000, softmax_scale=0.25, base=100.0),
                               scores, atol=1e-9)  # only offsets matter


def test_deepseek_v3_softmax_scale():
    assert mla_softmax_scale(192) == 192 ** -0.5
    assert mla_softmax_scale(192, factor=40.0) == 192 ** -0.5  # mscale_all_dim absent: no temperature
    assert mla_softmax_scale(192, factor=40.0, mscale_all_dim=1.0) == pytest.approx(
        192 ** -0.5 * (0.1 * math.log(40) + 1) ** 2)  # 1.369^2 = 1.874 times the plain scale
    assert mla_softmax_scale(192, factor=1.0, mscale_all_dim=1.0) == 192 ** -0.5


@pytest.mark.parametrize(
    "change, exc, name",
    [
        (dict(q=np.zeros((3, 6, 9))), ValueError, "q"),
        (dict(q=np.zeros((6, 10))), ValueError, "q"),
        (dict(c_kv=np.zeros((5, 8))), ValueError, "c_kv"),
        (dict(k_rope=np.zeros((5, 4))), ValueError, "k_rope"),
        (dict(w_uk=np.zeros((8, 2, 6))), ValueError, "w_uk"),
        (dict(w_uk=np.zeros((7, 3, 6))), ValueError, "w_uk"),
        (dict(softmax_scale=0.0), ValueError, "softmax_scale"),
        (dict(layout="rotate_half"), ValueError, "layout"),
        (dict(absorb="yes"), TypeError, "absorb"),
        (dict(positions=np.arange(5)), ValueError, "positions"),
        (dict(q=np.full((3, 6, 10), np.nan)), ValueError, "q"),
    ],
)
def test_mla_scores_reject_bad_input(change, exc, name):
    args = dict(_mla(0), positions=np.arange(6), softmax_scale=0.3)
    args.update(change)
    with raises_named(exc, name):
        mla_scores(**args)


@pytest.mark.parametrize("kwargs, exc, name", [
    (dict(qk_head_dim=0), ValueError, "qk_head_dim"),
    (dict(qk_head_dim=192, factor=0.0), ValueError, "factor"),
    (dict(qk_head_dim=192, mscale_all_dim=-1.0), ValueError, "mscale_all_dim"),
])
def test_softmax_scale_rejects_bad_input(kwargs, exc, name):
    with raises_named(exc, name):
        mla_softmax_scale(**kwargs)
