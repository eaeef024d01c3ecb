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
    longrope_attention_factor,
    longrope_scaling,
    ntk_scaling,
    proportional_scaling,
    rope_frequencies,
    rope_from_config,
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
        (lambda: llama3_scaling(64, factor=8.0, original_max_position=8192, low_freq_factor=4.0, high_freq_factor=2.0), ValueError, "high_freq_factor"),
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
    "longrope": dict(short_factor=np.linspace(1.0, 1.5, 64), long_factor=np.linspace(1.0, 30.0, 64),
                     original_max_position=4096, max_position=131072, seq_len=5000, base=10000.0),
    "proportional": dict(partial_rotary_factor=0.25, base=1e6),
}


def test_registry_names_are_hugging_faces_rope_types_plus_ntk():
    assert set(ROPE_SCALING_FUNCTIONS) == {"default", "linear", "dynamic", "yarn", "longrope", "llama3",
                                           "proportional", "ntk"}
    assert set(REGISTRY_CASES) == set(ROPE_SCALING_FUNCTIONS)
    with pytest.raises(TypeError):
        ROPE_SCALING_FUNCTIONS["mine"] = linear_scaling  # read-only: no hidden state to mutate


@pytest.mark.parametrize("rope_type", sorted(REGISTRY_CASES))
def test_every_registered_method_equals_its_direct_call(rope_type):
    direct = {"default": default_scaling, "linear": linear_scaling, "ntk": ntk_scaling,
              "dynamic": dynamic_ntk_scaling, "yarn": yarn_scaling, "llama3": llama3_scaling,
              "longrope": longrope_scaling, "proportional": proportional_scaling}[rope_type]
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
        (dict(rope_type="su", factor=2.0), ValueError, "rope_type", "expected one of 'default', .*'proportional', got 'su'"),
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


# --- partial_rotary_factor, longrope, proportional, YaRN's temperature options (transformers 5.x)

PARTIAL_CASES = {
    "default": dict(base=10000.0),
    "linear": dict(factor=4.0),
    "ntk": dict(factor=4.0),
    "dynamic": dict(factor=2.0, seq_len=9000, original_max_position=2048),
    "yarn": dict(factor=8.0, original_max_position=4096, truncate=False),
    "llama3": dict(factor=8.0, original_max_position=8192, base=500000.0),
    "longrope": dict(short_factor=np.linspace(1, 2, 24), long_factor=np.linspace(1, 9, 24), original_max_position=4096,
                     max_position=65536, seq_len=5000),
}


@pytest.mark.parametrize("rope_type", sorted(PARTIAL_CASES))
@given(st.sampled_from([(128, 0.375), (64, 0.75), (80, 0.6), (256, 0.1875)]))
def test_partial_rotary_is_the_method_on_the_rotated_width(rope_type, case):
    """Every method but proportional: p of the head is rotated with the frequencies of width int(d p)."""
    head_dim, p = case
    params = dict(PARTIAL_CASES[rope_type])
    width = int(head_dim * p)
    if rope_type == "longrope":
        params["short_factor"] = np.linspace(1, 2, width // 2)
        params["long_factor"] = np.linspace(1, 9, width // 2)
    partial = rope_scaling(head_dim, rope_type=rope_type, partial_rotary_factor=p, **params)
    narrow = rope_scaling(width, rope_type=rope_type, **params)
    assert partial.inv_freq.shape == (width // 2,)
    np.testing.assert_array_equal(partial.inv_freq, narrow.inv_freq)
    assert partial.attention_factor == narrow.attention_factor
    assert not np.allclose(partial.inv_freq, rope_scaling(head_dim, rope_type=rope_type, **{
        **params, **({"short_factor": np.linspace(1, 2, head_dim // 2), "long_factor": np.linspace(1, 9, head_dim // 2)}
                     if rope_type == "longrope" else {})}).inv_freq[: width // 2])


@given(st.sampled_from([16, 64, 256, 512]), st.floats(0.0, 1.0), st.sampled_from([1.0, 8.0]))
def test_proportional_keeps_the_fast_planes_of_the_whole_head(head_dim, p, factor):
    inv, att = proportional_scaling(head_dim, base=1e6, factor=factor, partial_rotary_factor=p)
    n = int(p * head_dim // 2)
    assert inv.shape == (head_dim // 2,) and att == 1.0
    np.testing.assert_allclose(inv[:n], rope_frequencies(head_dim, 1e6)[:n] / factor, rtol=1e-15)
    assert np.all(inv[n:] == 0.0)
    if 2 <= n < head_dim // 2:  # the exponent is over the whole head, not the rotated width (partial rotary's)
        assert inv[n - 1] * factor > 1.01 * rope_frequencies(2 * n, 1e6)[-1]


def test_proportional_with_every_plane_is_linear_scaling():
    np.testing.assert_array_equal(proportional_scaling(128, factor=4.0).inv_freq, linear_scaling(128, factor=4.0).inv_freq)
    assert np.count_nonzero(proportional_scaling(512, base=1e6, partial_rotary_factor=0.25).inv_freq) == 64  # Gemma 4


def test_longrope_switches_at_the_original_length():
    short, long = np.linspace(1.0, 1.2, 32), np.linspace(1.0, 40.0, 32)
    theta = rope_frequencies(64)

    def at(seq_len):
        return longrope_scaling(64, short_factor=short, long_factor=long, original_max_position=4096,
                                max_position=131072, seq_len=seq_len).inv_freq

    for seq_len in (None, 1, 4095, 4096):
        np.testing.assert_allclose(at(seq_len), theta / short, rtol=1e-15)
    for seq_len in (4097, 131072, 10**6):
        np.testing.assert_allclose(at(seq_len), theta / long, rtol=1e-15)
    ones = np.ones(32)
    same = longrope_scaling(64, short_factor=ones, long_factor=ones, original_max_position=4096, factor=1.0)
    np.testing.assert_allclose(same.inv_freq, theta, rtol=1e-15)
    assert same.attention_factor == 1.0


def test_longrope_attention_factor_precedence():
    kw = dict(short_factor=np.ones(48), long_factor=np.ones(48), original_max_position=4096)
    derived = longrope_scaling(96, max_position=131072, **kw).attention_factor  # Phi-3.5-mini: 32x
    assert derived == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))  # 1.1902
    assert derived == longrope_attention_factor(factor=32.0, original_max_position=4096)
    assert longrope_scaling(96, max_position=131072, factor=16.0, **kw).attention_factor == pytest.approx(
        math.sqrt(1 + math.log(16) / math.log(4096)))  # an explicit factor wins over the ratio
    assert longrope_scaling(96, max_position=131072, factor=16.0, attention_factor=1.5, **kw).attention_factor == 1.5
    assert longrope_scaling(96, attention_factor=1.5, **kw).attention_factor == 1.5  # nothing else needed
    assert longrope_scaling(96, max_position=2048, **kw).attention_factor == 1.0  # factor < 1


def test_yarn_temperature_options():
    base = dict(factor=40.0, original_max_position=4096)
    plain = yarn_scaling(64, **base)
    assert plain.attention_factor == pytest.approx(0.1 * math.log(40) + 1)
    # DeepSeek-V3: equal mscale and mscale_all_dim cancel (the temperature moves to the softmax scale)
    for m in (1.0, 0.707):
        assert yarn_scaling(64, mscale=m, mscale_all_dim=m, **base).attention_factor == 1.0
    ratio = yarn_scaling(64, mscale=1.0, mscale_all_dim=0.5, **base).attention_factor
    assert ratio == pytest.approx((0.1 * math.log(40) + 1) / (0.05 * math.log(40) + 1))
    # one of the two alone, or a zero, is ignored, as in Hugging Face
    for extra in (dict(mscale=0.8), dict(mscale_all_dim=0.8), dict(mscale=0.0, mscale_all_dim=1.0)):
        assert yarn_scaling(64, **extra, **base).attention_factor == plain.attention_factor
    explicit = yarn_scaling(64, attention_factor=1.2, mscale=1.0, mscale_all_dim=0.5, **base)
    assert explicit.attention_factor == 1.2
    np.testing.assert_array_equal(explicit.inv_freq, plain.inv_freq)  # the temperature leaves the frequencies


def test_llama3_with_equal_band_edges_has_no_smooth_band():
    """Llama 4 Scout: low_freq_factor = high_freq_factor = 1: planes are either kept or divided."""
    theta = rope_frequencies(128, 500000.0)
    inv, _ = llama3_scaling(128, factor=16.0, original_max_position=8192, base=500000.0,
                            low_freq_factor=1.0, high_freq_factor=1.0)
    long = 2 * np.pi / theta > 8192
    assert long.any() and (~long).any()
    np.testing.assert_allclose(inv[long], theta[long] / 16, rtol=1e-15)
    np.testing.assert_array_equal(inv[~long], theta[~long])


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: linear_scaling(64, factor=2.0, partial_rotary_factor=0.0), ValueError, "partial_rotary_factor"),
        (lambda: linear_scaling(64, factor=2.0, partial_rotary_factor=1.5), ValueError, "partial_rotary_factor"),
        (lambda: linear_scaling(64, factor=2.0, partial_rotary_factor=0.3), ValueError, "partial_rotary_factor"),  # 19
        (lambda: default_scaling(64, partial_rotary_factor="half"), TypeError, "partial_rotary_factor"),
        (lambda: ntk_scaling(64, factor=2.0, partial_rotary_factor=0.05), ValueError, "partial_rotary_factor"),  # 3 < 4
        (lambda: proportional_scaling(64, partial_rotary_factor=-0.1), ValueError, "partial_rotary_factor"),
        (lambda: proportional_scaling(64, partial_rotary_factor=1.1), ValueError, "partial_rotary_factor"),
        (lambda: proportional_scaling(63), ValueError, "head_dim"),
        (lambda: proportional_scaling(64, factor=0.0), ValueError, "factor"),
        (lambda: longrope_scaling(64, short_factor=np.ones(31), long_factor=np.ones(32), original_max_position=4096,
                                  factor=2.0), ValueError, "short_factor"),
        (lambda: longrope_scaling(64, short_factor=np.ones(32), long_factor=-np.ones(32), original_max_position=4096,
                                  factor=2.0), ValueError, "long_factor"),
        (lambda: longrope_scaling(64, short_factor=np.ones(32), long_factor=np.ones(32), original_max_position=4096),
         ValueError, "factor"),
        (lambda: longrope_scaling(64, short_factor=np.ones(32), long_factor=np.ones(32), original_max_position=1,
                                  factor=2.0), ValueError, "original_max_position"),
        (lambda: longrope_scaling(64, short_factor=np.ones(32), long_factor=np.ones(32), original_max_position=4096,
                                  factor=2.0, seq_len=0), ValueError, "seq_len"),
        (lambda: longrope_scaling(64, short_factor=np.ones(32), long_factor=np.ones(32), original_max_position=4096,
                                  attention_factor=0.0), ValueError, "attention_factor"),
        (lambda: longrope_scaling(64, short_factor=np.ones(32), long_factor=np.ones(32), original_max_position=4096,
                                  max_position=1.5), TypeError, "max_position"),
        (lambda: longrope_attention_factor(factor=2.0, original_max_position=1), ValueError, "original_max_position"),
        (lambda: yarn_scaling(64, factor=2.0, original_max_position=4096, attention_factor=-1.0), ValueError,
         "attention_factor"),
        (lambda: yarn_scaling(64, factor=2.0, original_max_position=4096, mscale=-1.0), ValueError, "mscale"),
        (lambda: yarn_attention_factor(factor=2.0, mscale_all_dim="1"), TypeError, "mscale_all_dim"),
    ],
)
def test_new_scaling_options_reject_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()


# --- rope_from_config: a transformers 5.x config dict

GEMMA3 = {"head_dim": 256, "max_position_embeddings": 131072,
          "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
          "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                              "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}


def test_rope_from_config_flat_and_nested():
    flat = rope_from_config({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
                             "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                 "original_max_position_embeddings": 8192}})
    assert list(flat) == [None]
    np.testing.assert_array_equal(flat[None].inv_freq, llama3_scaling(128, factor=8.0, original_max_position=8192,
                                                                      base=500000.0).inv_freq)
    nested = rope_from_config(GEMMA3)
    assert list(nested) == ["sliding_attention", "full_attention"]
    np.testing.assert_array_equal(nested["sliding_attention"].inv_freq, rope_frequencies(256, 10000.0))
    np.testing.assert_array_equal(nested["full_attention"].inv_freq, rope_frequencies(256, 1e6) / 8)
    nope = dict(GEMMA3, rope_parameters=dict(GEMMA3["rope_parameters"], full_attention=None))
    assert rope_from_config(nope)["full_attention"] is None


def test_rope_from_config_reads_hugging_faces_defaults():
    # top-level partial_rotary_factor, legacy "type", DeepSeek's qk_rope_head_dim, Gemma 4's global width
    cfg = {"head_dim": 128, "partial_rotary_factor": 0.5, "rope_parameters": {"type": "default", "rope_theta": 1e4}}
    np.testing.assert_array_equal(rope_from_config(cfg)[None].inv_freq, rope_frequencies(64))
    mla = {"head_dim": 999, "qk_rope_head_dim": 64, "rope_parameters": {"rope_type": "default", "rope_theta": 1e4}}
    assert rope_from_config(mla)[None].inv_freq.shape == (32,)
    gemma4 = {"model_type": "gemma4_text", "head_dim": 256, "layer_types": ["sliding_attention", "full_attention"],
              "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                                  "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                     "rope_theta": 1e6}}}
    assert rope_from_config(gemma4)["full_attention"].inv_freq.shape == (256,)  # 512 wide by default
    assert rope_from_config(dict(gemma4, global_head_dim=384))["full_attention"].inv_freq.shape == (192,)
    # yarn without factor: max_position_embeddings / original; dynamic at its initial length
    yarn = {"head_dim": 64, "max_position_embeddings": 32768,
            "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": None,
                                "original_max_position_embeddings": 4096}}
    assert rope_from_config(yarn)[None].attention_factor == pytest.approx(0.1 * math.log(8) + 1)
    dynamic = {"head_dim": 64, "max_position_embeddings": 2048,
               "rope_parameters": {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 4.0}}
    np.testing.assert_array_equal(rope_from_config(dynamic)[None].inv_freq, rope_frequencies(64))
    np.testing.assert_array_equal(rope_from_config(dynamic, seq_len=4096)[None].inv_freq,
                                  dynamic_ntk_scaling(64, factor=4.0, seq_len=4096, original_max_position=2048).inv_freq)


@pytest.mark.parametrize(
    "config, exc, name, detail",
    [
        ([1, 2], TypeError, "config", "expected a mapping"),
        ({"rope_scaling": {"type": "linear", "factor": 2.0}, "rope_theta": 1e4}, ValueError, "config",
         ".*4.x config"),
        ({"text_config": {}}, ValueError, "config", ".*text_config"),
        ({"head_dim": 64, "rope_parameters": "default"}, TypeError, "rope_parameters", "expected a dict"),
        ({"rope_parameters": {"rope_type": "default", "rope_theta": 1e4}}, ValueError, "config", "expected 'head_dim'"),
        ({"head_dim": 64, "rope_parameters": {"rope_type": "default"}}, ValueError, "rope_parameters",
         "expected a 'rope_theta'"),
        ({"head_dim": 64, "rope_parameters": {"rope_type": "ntk", "rope_theta": 1e4}}, ValueError, "rope_parameters",
         "expected a 'rope_type' among"),
        ({"head_dim": 64, "rope_parameters": {"rope_type": "linear", "rope_theta": 1e4}}, ValueError,
         "rope_parameters", "rope_type 'linear' requires 'factor'"),
        ({"head_dim": 64, "rope_parameters": {"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0}}, ValueError,
         "config", "rope_type 'dynamic' requires 'max_position_embeddings'"),
        ({"head_dim": 64, "rope_parameters": {"rope_type": "linear", "rope_theta": 1.0, "factor": 2.0}}, ValueError,
         "rope_parameters", "base: expected a number > 1.0"),
        (dict(GEMMA3, rope_parameters=dict(GEMMA3["rope_parameters"], full_attention=[1])), TypeError,
         "rope_parameters['full_attention']", "expected a dict"),
        (dict(GEMMA3, rope_parameters=dict(GEMMA3["rope_parameters"],
                                           full_attention={"rope_type": "llama3", "rope_theta": 1e4, "factor": 8.0})),
         ValueError, "rope_parameters['full_attention']", "rope_type 'llama3' requires 'low_freq_factor'"),
        (dict(GEMMA3, per_layer_config={"0": {"head_dim": 128}}), ValueError, "config['per_layer_config']",
         "expected one head width per layer type"),
    ],
)
def test_rope_from_config_rejects_bad_input(config, exc, name, detail):
    with raises_named(exc, name, detail):
        rope_from_config(config)


def test_rope_from_config_rejects_a_bad_seq_len():
    with raises_named(ValueError, "seq_len"):
        rope_from_config(GEMMA3, seq_len=0)
