import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from helpers import raises_named

from posenc import (
    alibi_bias,
    alibi_bias_bloom,
    alibi_slopes,
    causal_mask,
    scaled_dot_product_attention,
    softmax,
    t5_relative_bias,
    t5_relative_position_bucket,
)


def reference_get_slopes(n):
    """Press et al.'s published rule, written out from the paper's description."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + reference_get_slopes(2 * closest)[0::2][: n - closest]


def test_slopes_power_of_two():
    np.testing.assert_allclose(alibi_slopes(8), 2.0 ** -np.arange(1, 9), rtol=1e-15)
    np.testing.assert_allclose(alibi_slopes(16)[:2], [2**-0.5, 2**-1.0], rtol=1e-15)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 12, 20, 24, 40, 71, 96, 100])
def test_slopes_match_reference_rule(n):
    np.testing.assert_allclose(alibi_slopes(n), reference_get_slopes(n), rtol=1e-14)


def test_slopes_for_12_heads_explicitly():
    expected = [2.0**-k for k in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    np.testing.assert_allclose(alibi_slopes(12), expected, rtol=1e-15)


def test_bias_values_and_kv_alignment():
    b = alibi_bias(1, 2, 4)
    m = 2.0**-8
    np.testing.assert_array_equal(b[0], [[-2 * m, -m, 0.0, -np.inf], [-3 * m, -2 * m, -m, 0.0]])
    assert not np.signbit(b[0, 0, 2])  # +0.0, not -0.0
    nb = alibi_bias(1, 3, causal=False)
    np.testing.assert_array_equal(nb[0], -m * np.abs(np.subtract.outer(np.arange(3), np.arange(3))))


@given(st.integers(1, 20), st.integers(1, 12), st.integers(0, 5))
def test_causal_rows_equal_bloom_up_to_constant(n_heads, n_q, extra):
    n_k = n_q + extra
    ours = alibi_bias(n_heads, n_q, n_k)
    bloom = alibi_bias_bloom(n_heads, n_k)
    mask = causal_mask(n_q, n_k)
    bloom_masked = np.where(mask, bloom, -np.inf)
    with np.errstate(invalid="ignore"):  # -inf - -inf above the diagonal, masked out next
        diff = np.where(mask, ours - bloom_masked, np.nan)
    # each row differs by a constant (-m_h * i)
    np.testing.assert_allclose(np.nanmax(diff, -1), np.nanmin(diff, -1), rtol=0, atol=1e-9)
    np.testing.assert_allclose(softmax(ours), softmax(bloom_masked), rtol=1e-9, atol=1e-15)


def test_alibi_in_attention():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 6, 8))
    out, w = scaled_dot_product_attention(x, x, x, bias=alibi_bias(4, 6))
    assert np.all(w[:, np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] == 0)


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: alibi_slopes(0), ValueError, "n_heads"),
        (lambda: alibi_slopes(8.0), TypeError, "n_heads"),
        (lambda: alibi_bias(8, 4, 3), ValueError, "n_keys"),
        (lambda: alibi_bias(8, 0), ValueError, "n_queries"),
        (lambda: alibi_bias(8, 4, causal="yes"), TypeError, "causal"),
        (lambda: alibi_bias_bloom(8, 0), ValueError, "n_keys"),
    ],
)
def test_alibi_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()


def test_t5_bucket_known_values():
    rel = np.array([-200, -128, -100, -16, -8, -7, -1, 0, 1, 7, 8, 16, 100, 128, 200])
    b = t5_relative_position_bucket(rel)
    # exact buckets for |r| < 8, log buckets above, last bucket at and beyond 128
    assert list(b[[4, 5, 6, 7, 8, 9]]) == [8, 7, 1, 0, 17, 23]
    assert b[0] == b[1] == 15 and b[-1] == b[-2] == 31
    uni = t5_relative_position_bucket(rel, bidirectional=False)
    assert list(uni[rel > 0]) == [0] * int((rel > 0).sum())
    assert uni[0] == 31


def _bucket_exact(r, n, max_distance):
    """The log bucket of distance r >= 0 in exact integer arithmetic, no logarithm involved.

    With m = n // 2 exact buckets, r >= m gets m + nu for the largest nu with
    nu <= ln(r/m) / ln(max_distance/m) * (n - m), i.e. r^(n-m) * m^nu >= m^(n-m) * max_distance^nu.
    """
    m, k = n // 2, n - n // 2
    if r < m:
        return r
    nu = 0
    while nu < n and r**k * m ** (nu + 1) >= m**k * max_distance ** (nu + 1):
        nu += 1
    return min(m + nu, n - 1)


@pytest.mark.parametrize("cfg", [(16, 128), (32, 128), (8, 20), (32, 256)])
def test_t5_bucket_edges_match_exact_arithmetic(cfg):
    # Every distance up to 4096, including the edges r = 16, 32, 64 that sit exactly on a
    # threshold (encoder: (r/8)^8 = 16^nu), against integer arithmetic: independent of any
    # platform's float32 log, so the test means the same on every CPU.
    n, max_distance = cfg
    r = np.arange(0, 4097)
    got = t5_relative_position_bucket(-r, bidirectional=False, num_buckets=n, max_distance=max_distance)
    want = np.array([_bucket_exact(int(x), n, max_distance) for x in r])
    np.testing.assert_array_equal(got, want)
    if cfg == (16, 128):  # the encoder's half: the three edges on a threshold start their bucket
        assert [int(got[x]) for x in (15, 16, 31, 32, 63, 64)] == [9, 10, 11, 12, 13, 14]


@given(st.booleans(), st.sampled_from([(32, 128), (16, 64), (64, 256), (8, 20)]))
def test_t5_bucket_range_and_monotonicity(bidirectional, cfg):
    num_buckets, max_distance = cfg
    rel = np.arange(-3 * max_distance, 3 * max_distance + 1)
    b = t5_relative_position_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets,
                                    max_distance=max_distance)
    assert b.min() >= 0 and b.max() < num_buckets
    past = b[rel <= 0][::-1]  # distance 0, 1, 2, ... into the past
    assert np.all(np.diff(past) >= 0)
    if bidirectional:
        future = b[rel > 0]
        assert np.all(np.diff(future) >= 0) and future.min() >= num_buckets // 2


def test_t5_bias_gathers_table():
    table = np.arange(32 * 2, dtype=float).reshape(32, 2)
    bias = t5_relative_bias(table, 3, 5)
    assert bias.shape == (2, 3, 5)
    rel = np.arange(5)[None, :] - (np.arange(3)[:, None] + 2)
    np.testing.assert_array_equal(bias[1], table[t5_relative_position_bucket(rel), 1])


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: t5_relative_position_bucket([0.5]), TypeError, "relative_position"),
        (lambda: t5_relative_position_bucket([0], num_buckets=2), ValueError, "num_buckets"),
        (lambda: t5_relative_position_bucket([0], max_distance=8), ValueError, "max_distance"),
        (lambda: t5_relative_position_bucket([0], bidirectional=1), TypeError, "bidirectional"),
        (lambda: t5_relative_bias(np.zeros(4), 2), ValueError, "bucket_values"),
        (lambda: t5_relative_bias(np.zeros((32, 2)), 3, 2), ValueError, "n_keys"),
    ],
)
def test_t5_rejects_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()


def _alibi_bias_one_shot(n_heads, n_queries, n_keys, causal):
    """The formula alibi_bias used before it wrote its output block by block."""
    offset = np.arange(n_keys)[None, :] - (np.arange(n_queries)[:, None] + n_keys - n_queries)
    slopes = alibi_slopes(n_heads)[:, None, None]
    bias = np.multiply(slopes, offset[None] if causal else np.abs(offset)[None], dtype=np.float64)
    if causal:
        np.copyto(bias, -np.inf, where=(offset > 0)[None])
    else:
        np.subtract(0.0, bias, out=bias)
    return bias


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("n_heads, n_q, n_k", [(1, 1, 1), (5, 7, 7), (12, 40, 300), (3, 300, 300),
                                               (2, 5, 10000)])
def test_bias_written_block_by_block_is_bitwise_the_one_shot_formula(n_heads, n_q, n_k, causal):
    # (2, 5, 10000): n_keys above the block size, so every query row is its own block
    ours = alibi_bias(n_heads, n_q, n_k, causal=causal)
    expected = _alibi_bias_one_shot(n_heads, n_q, n_k, causal)
    assert ours.dtype == np.float64 and ours.shape == expected.shape
    # bit for bit: the same bytes, so also the sign of every zero
    assert ours.tobytes() == expected.tobytes()
