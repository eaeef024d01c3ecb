"""apply_partial_rope: partial_rotary_factor as Hugging Face's models apply it (against HF in test_reference)."""

import numpy as np
import pytest
from helpers import raises_named
from hypothesis import given
from hypothesis import strategies as st

from posenc import apply_partial_rope, apply_rope, rope_frequencies


@given(st.sampled_from([(16, 4), (32, 12), (80, 32), (64, 64)]), st.sampled_from(["half", "interleaved"]))
def test_partial_rope_rotates_the_first_slice_only(dims, layout):
    head_dim, rotary = dims
    x = np.random.default_rng(head_dim).normal(size=(2, 5, head_dim))
    positions = np.array([0, 3, 9, 27, 81])
    inv_freq = rope_frequencies(rotary, 500.0)
    out = apply_partial_rope(x, positions, inv_freq=inv_freq, layout=layout)
    np.testing.assert_array_equal(out[..., rotary:], x[..., rotary:])
    np.testing.assert_array_equal(out[..., :rotary], apply_rope(x[..., :rotary], positions, inv_freq=inv_freq,
                                                                 layout=layout))
    # scores depend on offsets only: shifting every position leaves them unchanged
    q = apply_partial_rope(x[0], positions + 7, inv_freq=inv_freq, layout=layout)
    k = apply_partial_rope(x[1], positions + 7, inv_freq=inv_freq, layout=layout)
    np.testing.assert_allclose(q @ k.T, out[0] @ out[1].T, atol=1e-10)


@pytest.mark.parametrize("kwargs, exc, name", [
    (dict(inv_freq=np.ones(9)), ValueError, "inv_freq"),
    (dict(inv_freq=np.ones((2, 2))), ValueError, "inv_freq"),
    (dict(inv_freq=np.ones(4), layout="neox"), ValueError, "layout"),
    (dict(inv_freq=np.ones(4), attention_factor=0.0), ValueError, "attention_factor"),
])
def test_partial_rope_rejects_bad_input(kwargs, exc, name):
    with raises_named(exc, name):
        apply_partial_rope(np.zeros((3, 16)), np.arange(3), **kwargs)


def test_partial_rope_rejects_bad_x():
    with raises_named(ValueError, "x"):
        apply_partial_rope(np.zeros((3, 15)), np.arange(3), inv_freq=np.ones(2))
