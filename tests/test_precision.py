"""posenc.precision: rounding to bfloat16, checked against the nearest value found by search."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import raises_named
from posenc import round_to_bfloat16


def _nearest_bfloat16(x: float) -> float:
    """The nearest bfloat16 to the float32 value of x, ties to even, by search over the two neighbours."""
    f = float(np.float32(x))
    if f == 0.0:
        return f
    m, e = np.frexp(abs(f))  # f = m 2^e, 0.5 <= m < 1; bfloat16 keeps 8 significant bits
    scaled = m * 2**8
    lo, hi = np.floor(scaled), np.ceil(scaled)
    if scaled - lo < hi - scaled or (scaled - lo == hi - scaled and lo % 2 == 0):
        q = lo
    else:
        q = hi
    return float(np.copysign(q * 2.0 ** (e - 8), f))


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, allow_infinity=False, width=64))
def test_nearest_value_ties_to_even(x):
    if x != 0 and abs(x) < 2.0**-120:  # subnormal bfloat16 range: the search above assumes normal numbers
        return
    assert round_to_bfloat16(x) == _nearest_bfloat16(x)


def test_known_values_and_ties():
    assert round_to_bfloat16([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-7)]).tolist() == [1.0, 1.0, 1 + 2**-6, -(1 + 2**-7)]
    assert round_to_bfloat16(3.4e38).tolist() == np.inf  # beyond the largest bfloat16 (a float32 still)
    out = round_to_bfloat16(np.zeros((2, 3), dtype=np.float32))
    assert out.dtype == np.float64 and out.shape == (2, 3)


def test_relative_error_at_most_2_to_the_minus_8():
    x = np.random.default_rng(0).uniform(-2000, 2000, 10_000)
    r = round_to_bfloat16(x)
    mant, _ = np.frexp(r)
    assert np.all(mant * 2**8 == np.round(mant * 2**8))  # 8 significant bits
    assert np.all(np.abs(r - x.astype(np.float32)) <= 2.0**-8 * np.abs(x) * (1 + 1e-6))


@pytest.mark.parametrize("bad, exc", [([1.0, np.nan], ValueError), ([np.inf], ValueError),
                                      (["a"], TypeError), (np.array([1 + 1j]), TypeError)])
def test_bad_input_names_x(bad, exc):
    with raises_named(exc, "x"):
        round_to_bfloat16(bad)
