import math

import numpy as np
import pytest
from helpers import raises_named
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import (
    ROPE_SCALING_FUNCTIONS,
    RopeScaling,
    default_scaling,
    dynamic_ntk_scaling,
    linear_scaling,
    llama3_scaling,
    ntk_scaling,
    rope_frequencies,
    rope_scaling,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_scaling,
)

dims = st.sampled_from([8, 16, 64, 128])
bases = st.sampled_from([10000.0, 500000.0, 1e6])


@given(dims, bases)
def test_factor_one_gives_default(d, base):
    default = rope_frequencies(d, base)
    for inv, att in (
        linear_scaling(d, factor=1.0, base=base),
        ntk_scaling(d, factor=1.0, base=base),
        dynamic_ntk_scaling(d, factor=1.0, seq_len=2048, original_max_position=2048, base=base),  # (beyond L0 the dynamic base grows even at s = 1)
        yarn_scaling(d, factor=1.0, original_max_position=4096, base=base),
        llama3_scaling(d, factor=1.0, original_max_position=8192, base=base),
    ):
        np.testing.assert_allclose(inv, default, rtol=1e-12)
        assert att == 1.0


def test_linear_divides():
    inv, att = linear_scaling(64, factor=4.0)
    np.testing.assert_allclose(inv, rope_frequencies(64) / 4, rtol=1e-15)
    assert att == 1.0


@given(dims, st.floats(1.0, 64.0))
def test_ntk_keeps_fastest_and_interpolates_slowest(d, s):
    inv, _ = ntk_scaling(d, factor=s)
    theta = rope_frequencies(d)
    assert inv[0] == 1.0
    np.testing.assert_allclose(inv[-1], theta[-1] / s, rtol=1e-10)


def test_dynamic_below_and_above_original():
    d, s, L0 = 64, 4.0, 2048
    np.testing.assert_allclose(dynamic_ntk_scaling(d, factor=s, seq_len=100, original_max_position=L0).inv_freq, rope_frequencies(d), rtol=1e-15)
    np.testing.assert_allclose(dynamic_ntk_scaling(d, factor=s, seq_len=L0, original_max_position=L0).inv_freq, rope_frequencies(d), rtol=1e-15)
    # at L = s * L0... the base factor is (s*s - (s-1))
    expected_base = 10000.0 * (s * 2 - (s - 1)) ** (d / (d - 2))
    np.testing.assert_allclose(dynamic_ntk_scaling(d, factor=s, seq_len=2 * L0, original_max_position=L0).inv_freq, rope_frequencies(d, expected_base), rtol=1e-14)


def test_yarn_correction_range_formula_and_clamps():
    d, L0, b = 128, 4096, 10000.0
    dim = lambda beta: d * math.log(L0 / (2 * math.pi * beta)) / (2 * math.log(b))
    assert yarn_correction_range(d, original_max_position=L0) == (math.floor(dim(32)), math.ceil(dim(1)))
    low, high = yarn_correction_range(d, original_max_position=L0, truncate=False)
    assert low == pytest.approx(dim(32)) and high == pytest.approx(dim(1))
    assert yarn_correction_range(16, original_max_position=64)[0] == 0  # negative low clamps to 0
    assert yarn_correction_range(8, original_max_position=10**9)[1] == 7  # high clamps to d - 1 (unclamped: 8)
    assert yarn_correction_range(8, original_max_position=10**9, truncate=False)[1] == 7


def test_yarn_blend_and_temperature():
    d, s, L0 = 128, 16.0, 4096
    inv, att = yarn_scaling(d, factor=s, original_max_position=L0)
    theta = rope_frequencies(d)
    low, high = yarn_correction_range(d, original_max_position=L0)
    assert att == pytest.approx(0.1 * math.log(16) + 1)
    np.testing.assert_allclose(inv[:low], theta[:low], rtol=1e-15)  # fast pairs extrapolate
    np.testing.assert_allclose(inv[high:], theta[high:] / s, rtol=1e-15)  # slow pairs interpolate
    assert np.all(inv <= theta) and np.all(inv >= theta / s - 1e-18)
    assert yarn_attention_factor(factor=0.5) == 1.0


def test_llama3_bands():
    d, s, L0 = 128, 8.0, 8192
    inv, _ = llama3_scaling(d, factor=s, original_max_position=L0, base=500000.0)
    theta = rope_frequencies(d, 500000.0)
    wavelen = 2 * np.pi / theta
    high = wavelen < L0 / 4
    low = wavelen > L0 / 1
    mid = ~high & ~low
    np.testing.assert_array_equal(inv[high], theta[high])
    np.testing.assert_allclose(inv[low], theta[low] / s, rtol=1e-15)
    assert mid.any()
    assert np.all((inv[mid] < theta[mid]) & (inv[mid] > theta[mid] / s))


@pytest.mark.parametrize("lf, hf", [(1.0, 4.0), (2.0, 8.0)])
def test_llama3_continuous_across_band_edges(lf, hf):
    """Sweep the original length L0 so that one wavelength crosses each band edge.

    Just past the high edge (L0 > hf * wavelength) the pair is unchanged; just below
    the low edge (L0 < lf * wavelength) it is divided by s; in between the smooth
    factor moves it monotonically, continuously (steps of O(1/L0)) from one to the
    other. A wrong band test or smoothing formula would jump by up to 1 - 1/s.
    """
    d, base, s, i = 128, 500000.0, 8.0, 40
    theta = rope_frequencies(d, base)[i]
    wavelen = 2 * np.pi / theta

    def value(L0):
        inv, _ = llama3_scaling(d, factor=s, original_max_position=int(L0), base=base, low_freq_factor=lf, high_freq_factor=hf)
        return inv[i]

    near = [np.arange(int(e) - 50, int(e) + 50) for e in (lf * wavelen, hf * wavelen)]
    between = np.linspace(lf * wavelen, hf * wavelen, 200).astype(int)
    lengths = np.unique(np.concatenate(near + [between]))
    values = np.array([value(L0) for L0 in lengths])
    assert np.all(values[lengths > hf * wavelen] == theta)
    np.testing.assert_allclose(values[lengths < lf * wavelen], theta / s, rtol=1e-15)
    assert np.all(np.diff(values) >= 0)
    for block in near:  # consecutive integers across each edge: no jump
        steps = np.diff([value(L0) for L0 in block])
        assert np.max(steps) / theta < 2.0 / (lf * wavelen)
    medium = (lengths > lf * wavelen) & (lengths < hf * wavelen)
    assert np.all((values[medium] > theta / s) & (values[medium] < theta))


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: linear_scaling(64, factor=0.0), ValueError, "factor"),
        (lambda: linear_scaling(64, factor=float("inf")), ValueError, "factor"),
        (lambda: linear_scaling(64, factor="2"), TypeError, "factor"),
        (lambda: linear_scaling(63, factor=2.0), ValueError, "head_dim"),
        (lambda: ntk_scaling(2, factor=2.0), ValueError, "head_dim"),
        (lambda: ntk_scaling(64, factor=-1.0), ValueError, "factor"),
        (lambda: dynamic_ntk_scaling(64, factor=2.0, seq_len=0, original_max_position=2048), ValueError, "seq_len"),
        (lambda: dynamic_ntk_scaling(64, factor=2.0, seq_len=10, original_max_position=0), ValueError, "original_max_position"),
        (lambda: dynamic_ntk_scaling(64, factor=2.0, seq_len=10.5, original_max_position=2048), TypeError, "seq_len"),
        (lambda: yarn_scaling(64, factor=2.0, original_max_position=4096, beta_fast=1.0, beta_slow=32.0), ValueError, "beta_fast"),
        (lambda: yarn_scaling(64, factor=2.0, original_max_position=4096, beta_slow=0.0), ValueError, "beta_slow"),
        (lambda: yarn_scaling(64, factor=2.0, original_max_position=4096, truncate="no"), TypeError, "truncate"),
        (lambda: yarn_scaling(64, factor=0.0, original_max_position=4096), ValueError, "factor"),
        (lambda: llama3_scaling(64, factor=8.0, original_max_position=8192, low_freq_factor=4.0, high_freq_factor=4.0), ValueError, "high_freq_factor"),
        (lambda: llama3_scaling(64, factor=8.0, original_max_position=8192, low_freq_factor=0.0), ValueError, "low_freq_factor"),
        (lambda: llama3_scaling(64, factor=8.0, original_max_position=-1), ValueError, "original_max_position"),
    ],
)
def test_scaling_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()


def test_yarn_paper_ramp_against_a_hand_computation():
    """Head width 8, L0 = 32, s = 8: pair 0 turns 32 / (2 pi) = 5.0929582 times in training.

    By hand: gamma_0 = (32 - 5.0929582) / (32 - 1) = 0.8679691, so the ratio is
    gamma_0 / 8 + (1 - gamma_0) = 0.1084961 + 0.1320309 = 0.2405270. Pairs 1-3 turn
    0.509, 0.051 and 0.005 times (<= beta_slow = 1): ratio 1/8. The released ramp keeps
    pair 0 (its rounded lower edge is floor(iota(32)) = floor(-1.18) -> 0).
    """
    paper, att = yarn_scaling(8, factor=8.0, original_max_position=32, ramp="paper")
    released, att_released = yarn_scaling(8, factor=8.0, original_max_position=32)
    theta = rope_frequencies(8)
    np.testing.assert_allclose(paper / theta, [0.2405270, 0.125, 0.125, 0.125], atol=5e-7)
    np.testing.assert_array_equal(released / theta, [1.0, 0.125, 0.125, 0.125])
    assert att == att_released == pytest.approx(0.1 * math.log(8) + 1)


def test_yarn_paper_ramp_is_linear_in_turns_and_agrees_outside_the_band():
    d, s, L0 = 128, 8.0, 4096
    theta = rope_frequencies(d)
    turns = L0 * theta / (2 * math.pi)
    paper = yarn_scaling(d, factor=s, original_max_position=L0, ramp="paper").inv_freq / theta
    released = yarn_scaling(d, factor=s, original_max_position=L0).inv_freq / theta
    fast, slow = turns >= 32, turns <= 1
    assert fast.any() and slow.any()
    np.testing.assert_array_equal(paper[fast], 1.0)
    np.testing.assert_allclose(paper[slow], 1 / s, rtol=1e-15)
    np.testing.assert_array_equal(paper[fast], released[fast])
    np.testing.assert_allclose(paper[slow], released[slow], rtol=1e-15)
    mid = ~fast & ~slow
    # inside the band the extrapolated share (ratio - 1/s) / (1 - 1/s) is (turns - 1) / 31
    np.testing.assert_allclose((paper[mid] - 1 / s) / (1 - 1 / s), (turns[mid] - 1) / 31, rtol=1e-12)
    assert np.max(np.abs(paper[mid] - released[mid])) > 0.01  # the two ramps really differ
    assert yarn_scaling(d, factor=1.0, original_max_position=L0, ramp="paper").inv_freq == pytest.approx(theta, rel=1e-15)


@pytest.mark.parametrize(
    "kwargs, exc",
    [({"ramp": "turns"}, ValueError), ({"ramp": "paper", "beta_fast": 1.0, "beta_slow": 2.0}, ValueError),
     ({"ramp": None}, ValueError)],
)
def test_yarn_ramp_rejects_bad_input(kwargs, exc):
    name = "beta_fast" if "beta_fast" in kwargs else "ramp"
    with raises_named(exc, name):
        yarn_scaling(8, factor=2.0, original_max_position=32, **kwargs)


# One call per registered rope_type, with parameters away from the defaults where a method has any.
REGISTRY_CASES = {
    "default": dict(base=500000.0),
    "linear": dict(factor=4.0, base=500000.0),
    "ntk": dict(factor=8.0, base=10000.0),
    "dynamic": dict(factor=4.0, seq_len=5000, original_max_position=2048, base=10000.0),
    "yarn": dict(factor=16.0, original_max_position=4096, base=10000.0, beta_fast=16.0, beta_slow=2.0,
                 truncate=False, ramp="paper"),
    "llama3": dict(factor=8.0, original_max_position=8192, base=500000.0, low_freq_factor=2.0, high_freq_factor=8.0),
}


def test_registry_names_are_hugging_faces_rope_types_plus_ntk():
    assert set(ROPE_SCALING_FUNCTIONS) == {"default", "linear", "dynamic", "yarn", "llama3", "ntk"}
    assert set(REGISTRY_CASES) == set(ROPE_SCALING_FUNCTIONS)
    with pytest.raises(TypeError):
        ROPE_SCALING_FUNCTIONS["mine"] = linear_scaling  # read-only: no hidden state to mutate


@pytest.mark.parametrize("rope_type", sorted(REGISTRY_CASES))
def test_every_registered_method_equals_its_direct_call(rope_type):
    direct = {"default": default_scaling, "linear": linear_scaling, "ntk": ntk_scaling,
              "dynamic": dynamic_ntk_scaling, "yarn": yarn_scaling, "llama3": llama3_scaling}[rope_type]
    assert ROPE_SCALING_FUNCTIONS[rope_type] is direct
    params = REGISTRY_CASES[rope_type]
    got = rope_scaling(128, rope_type=rope_type, **params)
    expected = direct(128, **params)
    assert isinstance(got, RopeScaling) and isinstance(expected, RopeScaling)
    assert got.inv_freq.dtype == np.float64 and got.inv_freq.shape == (64,)
    np.testing.assert_array_equal(got.inv_freq, expected.inv_freq)
    assert got.attention_factor == expected.attention_factor
    if rope_type != "default":  # the parameters reach the method: the result is not the default one
        assert not np.array_equal(got.inv_freq, rope_frequencies(128, params["base"]))


def test_rope_scaling_is_a_named_pair():
    result = yarn_scaling(128, factor=8.0, original_max_position=4096)
    inv_freq, attention_factor = result
    assert inv_freq is result.inv_freq and attention_factor == result.attention_factor
    assert result._fields == ("inv_freq", "attention_factor")
    assert attention_factor == yarn_attention_factor(factor=8.0) == pytest.approx(0.1 * math.log(8) + 1)
    np.testing.assert_array_equal(default_scaling(64).inv_freq, rope_frequencies(64))
    assert default_scaling(64).attention_factor == 1.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: linear_scaling(64, 2.0),
        lambda: ntk_scaling(64, 2.0),
        lambda: dynamic_ntk_scaling(64, 2.0, 10, 2048),
        lambda: yarn_scaling(64, 2.0, 4096),
        lambda: llama3_scaling(64, 8.0, 8192),
        lambda: yarn_correction_range(64, 4096),
        lambda: yarn_attention_factor(2.0),
        lambda: default_scaling(64, 10000.0),
        lambda: rope_scaling(64, "linear"),
    ],
)
def test_only_the_head_width_is_positional(call):
    with pytest.raises(TypeError, match="positional argument"):
        call()


@pytest.mark.parametrize(
    "kwargs, exc, name, detail",
    [
        (dict(rope_type="longrope", factor=2.0), ValueError, "rope_type", "expected one of 'default', .*'llama3', got 'longrope'"),
        (dict(rope_type=None), ValueError, "rope_type", "expected one of"),
        (dict(rope_type="linear", factor=2.0, original_max_position=4096), TypeError, "original_max_position",
         "not a parameter of rope_type 'linear' .*expected some of: factor, base"),
        (dict(rope_type="default", factor=2.0), TypeError, "factor", "not a parameter of rope_type 'default'"),
        (dict(rope_type="yarn", factor=2.0), TypeError, "original_max_position", "required by rope_type 'yarn'"),
        (dict(rope_type="dynamic", factor=2.0, original_max_position=2048), TypeError, "seq_len", "required"),
        (dict(rope_type="llama3", original_max_position=8192), TypeError, "factor", "required"),
        (dict(rope_type="linear", factor=-2.0), ValueError, "factor", "expected a number > 0"),
    ],
)
def test_rope_scaling_rejects_bad_input(kwargs, exc, name, detail):
    with raises_named(exc, name, detail):
        rope_scaling(64, **kwargs)


def test_scaling_names_are_public():
    for name in ("RopeScaling", "ROPE_SCALING_FUNCTIONS", "rope_scaling", "default_scaling"):
        assert getattr(posenc, name) is getattr(posenc.scaling, name)
        assert name in posenc.__all__ and name in posenc.scaling.__all__
