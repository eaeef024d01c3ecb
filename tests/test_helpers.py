"""The test helpers themselves: they must fail where they are meant to."""

import numpy as np
import pytest
from helpers import finite_difference_gradient, raises_named

from posenc import LearnedPositionalEmbedding, alibi_bias, apply_rope, rope_frequencies


def _without_name(call):
    """``call`` with its error message rewritten to name no parameter: the leading
    ``name: `` removed, the rest kept ("x: expected finite values" -> "expected finite values")."""
    def rewritten():
        try:
            call()
        except (ValueError, TypeError) as error:
            raise type(error)(str(error).split(": ", 1)[1]) from None
    return rewritten


# Real bad inputs of posenc, each with the parameter its message must name first.
CASES = [
    (lambda: apply_rope(np.array([[np.nan, 0.0]]), [0]), ValueError, "x"),
    (lambda: rope_frequencies(3), ValueError, "head_dim"),
    (lambda: alibi_bias(8, 4, causal="yes"), TypeError, "causal"),
    (lambda: LearnedPositionalEmbedding(8, 4).forward([0, 8]), ValueError, "positions"),
]


@pytest.mark.parametrize("call, exc, name", CASES)
def test_raises_named_accepts_the_real_message(call, exc, name):
    with raises_named(exc, name):
        call()


@pytest.mark.parametrize("call, exc, name", CASES)
def test_raises_named_fails_on_a_message_that_does_not_name_its_parameter(call, exc, name):
    with pytest.raises(AssertionError, match="Regex pattern did not match"):
        with raises_named(exc, name):
            _without_name(call)()


def test_the_unanchored_match_it_replaces_passes_on_such_a_message():
    # Why the helper exists: "x" occurs in "expected", so match="x" passes a message
    # that names no parameter, while the anchored helper fails on it.
    call = _without_name(CASES[0][0])
    with pytest.raises(ValueError, match="x"):
        call()
    with pytest.raises(AssertionError):
        with raises_named(ValueError, "x"):
            call()


def test_raises_named_fails_when_another_parameter_is_named_first():
    with pytest.raises(AssertionError):
        with raises_named(ValueError, "n_queries"):
            alibi_bias(8, 4, 3)  # "n_keys: ..."
    with pytest.raises(AssertionError):
        with raises_named(ValueError, "x"):  # "x" is a prefix of the name, not the name
            raise ValueError("xs: expected a list")


def test_raises_named_takes_the_name_literally():
    with raises_named(ValueError, "states[1]"):
        raise ValueError("states[1]: expected a list")
    with pytest.raises(AssertionError):
        with raises_named(ValueError, "a.b"):  # "." is not a wildcard
            raise ValueError("axb: expected a list")


def test_finite_difference_gradient_of_a_known_function():
    w = np.array([[0.5, -1.0], [2.0, 0.25]])
    before = w.copy()
    grad = finite_difference_gradient(lambda: np.sum(w**3) + w[0, 1] * w[1, 0], w)
    expected = 3 * before**2 + np.array([[0.0, before[1, 0]], [before[0, 1], 0.0]])
    np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(w, before)  # restored exactly
    assert not np.allclose(grad, 3 * before**2, rtol=1e-3)  # a wrong gradient is told apart
