"""posenc against values recorded from the production implementations.

``tests/reference/hf_reference.json`` was produced by
``tests/reference/generate_hf_reference.py`` with torch 2.13.0 and transformers
5.24.0 (Hugging Face's ``ROPE_INIT_FUNCTIONS``, BLOOM's ``build_alibi_tensor``,
T5's ``_relative_position_bucket``, Llama's ``rotate_half`` and GPT-J's
``rotate_every_two``; for chapter 7 the models' rotary modules and configs, Qwen-VL's
``get_rope_index``, Llama 4's and DeepSeek's attention modules and ``masking_utils``).
Those libraries compute frequencies and angles in float32, so those comparisons use a
float32 tolerance, derived where it depends on the positions; integer positions, bucket
indices, layer patterns and masks must match exactly. Each comparison of a convention
also checks that a neighbouring wrong convention misses the record by far more than the
tolerance, so the tolerance cannot hide the difference the test is about.
"""

import json
import pathlib

import numpy as np
import pytest
from helpers import raises_named

from posenc import (
    alibi_slopes,
    apply_mrope,
    apply_partial_rope,
    apply_rope,
    chunked_causal_mask,
    default_scaling,
    llama4_layer_types,
    local_global_layer_types,
    mla_scores,
    mla_softmax_scale,
    mrope_position_ids,
    proportional_scaling,
    query_temperature,
    rope_from_config,
    rope_layers,
    rope_scaling,
    sliding_window_causal_mask,
    softmax,
    t5_relative_position_bucket,
    yarn_scaling,
)

DATA = json.loads((pathlib.Path(__file__).parent / "reference" / "hf_reference.json").read_text())
# float32 pow/exp in the reference accumulate a few ulp; 2e-6 is about 16 float32 ulp,
# far below any difference a wrong formula or an off-by-one in a band would make.
F32 = 2e-6


# Hugging Face's config keys, renamed to posenc's vocabulary (rope_theta is `base`).
_KEYS = {"original_max_position_embeddings": "original_max_position"}


def _ours(case):
    params = {_KEYS.get(k, k): v for k, v in case["params"].items()}
    if case["rope_type"] == "dynamic":  # HF's dynamic type reads L0 from max_position_embeddings
        params.update(seq_len=case["seq_len"], original_max_position=case["max_position_embeddings"])
    if case["rope_type"] == "longrope":  # the factor falls back on max_position_embeddings / original
        params.update(seq_len=case["seq_len"], max_position=case["max_position_embeddings"])
    return rope_scaling(case["head_dim"], rope_type=case["rope_type"], base=case["base"], **params)


def _as_config(case):
    """The case as the config dict rope_from_config reads (what LlamaConfig was given)."""
    return {"head_dim": case["head_dim"], "max_position_embeddings": case["max_position_embeddings"],
            "rope_parameters": {"rope_type": case["rope_type"], "rope_theta": case["base"], **case["params"]}}


def _id(case):
    return f"{case['rope_type']}-d{case['head_dim']}-b{case['base']:g}-" + "-".join(
        f"{k}{v}" for k, v in sorted(case["params"].items())
        if k not in ("original_max_position_embeddings", "short_factor", "long_factor")
    ) + (f"-L{case['seq_len']}" if case["seq_len"] else "")


@pytest.mark.parametrize("case", DATA["rope"], ids=[_id(c) for c in DATA["rope"]])
def test_rope_frequencies_match_transformers(case):
    for inv, att in (_ours(case), rope_from_config(_as_config(case), seq_len=case["seq_len"])[None]):
        np.testing.assert_allclose(inv, case["inv_freq"], rtol=F32, atol=0)
        assert att == pytest.approx(case["attention_factor"], rel=1e-15)


def test_reference_covers_every_method():
    assert {c["rope_type"] for c in DATA["rope"]} == {
        "default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"}
    with_partial = {c["rope_type"] for c in DATA["rope"] if c["params"].get("partial_rotary_factor", 1.0) != 1.0}
    assert with_partial == {"default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"}
    yarn_keys = set().union(*(c["params"] for c in DATA["rope"] if c["rope_type"] == "yarn"))
    assert {"attention_factor", "mscale", "mscale_all_dim", "truncate"} <= yarn_keys


@pytest.mark.parametrize("n_heads", sorted(DATA["alibi_slopes"], key=int))
def test_alibi_slopes_match_bloom(n_heads):
    np.testing.assert_allclose(alibi_slopes(int(n_heads)), DATA["alibi_slopes"][n_heads], rtol=F32)


@pytest.mark.parametrize("case", DATA["t5_buckets"],
                         ids=[f"bi{c['bidirectional']}-nb{c['num_buckets']}-md{c['max_distance']}" for c in DATA["t5_buckets"]])
def test_t5_buckets_match_transformers(case):
    kwargs = dict(bidirectional=case["bidirectional"], num_buckets=case["num_buckets"],
                  max_distance=case["max_distance"])
    n = case["num_buckets"] // 2 if case["bidirectional"] else case["num_buckets"]
    if case["max_distance"] <= n // 2:
        # transformers divides by log(1) = 0 here and returns garbage buckets; posenc refuses.
        assert min(case["bucket"]) < 0 or max(case["bucket"]) >= case["num_buckets"]
        with raises_named(ValueError, "max_distance"):
            t5_relative_position_bucket(np.array(case["relative_position"]), **kwargs)
        return
    ours = t5_relative_position_bucket(np.array(case["relative_position"]), **kwargs)
    np.testing.assert_array_equal(ours, case["bucket"])


def test_half_layout_matches_hf_rotate_half():
    r = DATA["rotation"]
    np.testing.assert_allclose(apply_rope(np.array(r["x"]), r["positions"], layout="half"),
                               r["llama_rotate_half"], rtol=1e-12, atol=1e-12)


def test_interleaved_layout_matches_gptj_rotate_every_two():
    # GPT-J builds its sin/cos table in float32, hence the looser tolerance (positions up to 1000).
    r = DATA["rotation"]
    ours = apply_rope(np.array(r["x"]), r["positions"], layout="interleaved")
    np.testing.assert_allclose(ours, r["gptj_rotate_every_two"], atol=1e-4)
    wrong = apply_rope(np.array(r["x"]), r["positions"], layout="half")
    assert np.max(np.abs(wrong - np.array(r["gptj_rotate_every_two"]))) > 0.1
