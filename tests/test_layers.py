"""Local/global and NoPE layers: patterns, masks and Llama 4's temperature (against HF in test_reference)."""

import math

import numpy as np
import pytest
from helpers import raises_named
from hypothesis import given
from hypothesis import strategies as st

from posenc import (
    causal_mask,
    chunked_causal_mask,
    llama4_layer_types,
    local_global_layer_types,
    query_temperature,
    rope_layers,
    sliding_window_causal_mask,
)


def test_llama4_pattern():
    use_rope = rope_layers(48)
    assert use_rope.sum() == 36 and np.flatnonzero(~use_rope).tolist() == list(range(3, 48, 4))
    types = llama4_layer_types(48)
    assert [t for t, r in zip(types, use_rope) if r] == ["chunked_attention"] * 36
    assert [t for t, r in zip(types, use_rope) if not r] == ["full_attention"] * 12
    assert set(llama4_layer_types(8, attention_chunk_size=None)) == {"full_attention"}
    np.testing.assert_array_equal(rope_layers(3, no_rope_layers=[0, 1, 1]), [False, True, True])
    np.testing.assert_array_equal(rope_layers(3, no_rope_layers=[]), rope_layers(3))  # empty means absent


def test_gemma_patterns():
    assert local_global_layer_types(4, sliding_window_pattern=2) == (
        "sliding_attention", "full_attention", "sliding_attention", "full_attention")
    gemma3 = local_global_layer_types(26, sliding_window_pattern=6)
    assert [i for i, t in enumerate(gemma3) if t == "full_attention"] == [5, 11, 17, 23]
    assert local_global_layer_types(26, sliding_window_pattern=6, last_global=True)[-1] == "full_attention"


@given(st.integers(1, 20), st.integers(1, 25), st.integers(1, 8))
def test_sliding_window_sees_the_last_w_keys(n_queries, extra, window):
    n_keys = n_queries + extra - 1
    mask = sliding_window_causal_mask(n_queries, n_keys, sliding_window=window)
    i = np.arange(n_queries) + n_keys - n_queries
    np.testing.assert_array_equal(mask.sum(axis=1), np.minimum(window, i + 1))
    assert not (mask & ~causal_mask(n_queries, n_keys)).any()
    np.testing.assert_array_equal(sliding_window_causal_mask(n_queries, n_keys, sliding_window=n_keys),
                                  causal_mask(n_queries, n_keys))


@given(st.integers(1, 20), st.integers(1, 25), st.integers(1, 8))
def test_chunks_restart_at_every_multiple_of_c(n_queries, extra, chunk):
    n_keys = n_queries + extra - 1
    mask = chunked_causal_mask(n_queries, n_keys, attention_chunk_size=chunk)
    i = np.arange(n_queries) + n_keys - n_queries
    np.testing.assert_array_equal(mask.sum(axis=1), i % chunk + 1)  # a chunk's first token sees only itself
    assert not (mask & ~causal_mask(n_queries, n_keys)).any()
    np.testing.assert_array_equal(chunked_causal_mask(n_queries, n_keys, attention_chunk_size=n_keys),
                                  causal_mask(n_queries, n_keys))


def test_temperature_steps():
    tau = query_temperature(np.arange(3 * 8192), floor_scale=8192, attn_scale=0.1)
    assert np.all(tau[:8191] == 1.0)
    assert tau[8191] == pytest.approx(1 + 0.1 * math.log(2))  # (8191 + 1) // 8192 = 1
    assert tau[16383] == pytest.approx(1 + 0.1 * math.log(3))
    assert np.all(np.diff(tau) >= 0) and len(np.unique(tau)) == 4  # steps at 8191, 16383, 24575
    # growth like attn_scale * ln(n / F): at a million tokens, 1 + 0.1 ln(1 + 122)
    assert query_temperature(10**6 - 1) == pytest.approx(1 + 0.1 * math.log(1 + 10**6 // 8192))


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: rope_layers(0), ValueError, "num_hidden_layers"),
        (lambda: rope_layers(4, no_rope_layer_interval=0), ValueError, "no_rope_layer_interval"),
        (lambda: rope_layers(4, no_rope_layers=[1, 0, 1]), ValueError, "no_rope_layers"),
        (lambda: rope_layers(3, no_rope_layers=[1, 2, 1]), ValueError, "no_rope_layers"),
        (lambda: rope_layers(2, no_rope_layers=[1.0, 0.0]), TypeError, "no_rope_layers"),
        (lambda: llama4_layer_types(4, attention_chunk_size=0), ValueError, "attention_chunk_size"),
        (lambda: local_global_layer_types(4, sliding_window_pattern=0), ValueError, "sliding_window_pattern"),
        (lambda: local_global_layer_types(4, sliding_window_pattern=2, last_global=None), TypeError, "last_global"),
        (lambda: sliding_window_causal_mask(4, sliding_window=0), ValueError, "sliding_window"),
        (lambda: sliding_window_causal_mask(4, 3, sliding_window=2), ValueError, "n_keys"),
        (lambda: chunked_causal_mask(0, attention_chunk_size=2), ValueError, "n_queries"),
        (lambda: chunked_causal_mask(4, attention_chunk_size=2.0), TypeError, "attention_chunk_size"),
        (lambda: query_temperature([-1, 0]), ValueError, "positions"),
        (lambda: query_temperature([0], floor_scale=0), ValueError, "floor_scale"),
        (lambda: query_temperature([0], attn_scale=-0.1), ValueError, "attn_scale"),
    ],
)
def test_layers_reject_bad_input(call, exc, name):
    with raises_named(exc, name):
        call()
