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


# ---------------------------------------------------------------------------------------
# Chapter 7: today's models, recorded from their transformers 5.24.0 modules.

def _layers(result):
    return {"null" if key is None else key: value for key, value in result.items()}


@pytest.mark.parametrize("case", DATA["configs"], ids=[c["name"] for c in DATA["configs"]])
@pytest.mark.parametrize("form", ["config_json", "config_to_dict"])
def test_rope_from_config_matches_the_models_rotary_modules(case, form):
    ours = _layers(rope_from_config(case[form], seq_len=case["seq_len"]))
    assert set(ours) == set(case["layers"])
    for layer_type, ref in case["layers"].items():
        np.testing.assert_allclose(ours[layer_type].inv_freq, ref["inv_freq"], rtol=F32, atol=0)
        assert ours[layer_type].attention_factor == pytest.approx(ref["attention_factor"], rel=1e-12)


def _config(name):
    return next(c for c in DATA["configs"] if c["name"] == name)


def test_recorded_precedence_rules_are_the_ones_that_matter():
    """The records decide between readings that give different numbers, so the test above can fail."""
    # Phi-3: the top-level original length (4096) wins over rope_parameters' (2048).
    phi = _config("Phi-3.5-mini shape (longrope, top-level original length)")
    params = dict(phi["config_json"]["rope_parameters"])
    wrong = rope_scaling(96, rope_type="longrope", short_factor=params["short_factor"],
                         long_factor=params["long_factor"], original_max_position=2048, max_position=131072)
    assert abs(wrong.attention_factor - phi["layers"]["null"]["attention_factor"]) > 0.01
    # past the switch the long factors are used: the frequencies differ from the short ones by up to 40x
    short = np.array(phi["layers"]["null"]["inv_freq"])
    long = np.array(_config("Phi-3.5-mini shape, past the switch")["layers"]["null"]["inv_freq"])
    assert np.max(short / long) > 30
    # Gemma 3 with a per-layer-type truncate=False: Hugging Face reads truncate at the top (True).
    gemma = _config("Gemma 3 shape, global yarn with truncate=False inside")
    ignored = yarn_scaling(256, factor=8.0, original_max_position=16384, base=1e6, truncate=False)
    assert np.max(np.abs(ignored.inv_freq / gemma["layers"]["full_attention"]["inv_freq"] - 1)) > 1e-3
    # Gemma 4: the global layers are 512 wide, proportional, a quarter of the planes non-zero.
    full = np.array(_config("Gemma 4 (local default 256, global proportional 512)")["layers"]["full_attention"]["inv_freq"])
    assert full.shape == (256,) and np.count_nonzero(full) == 64


@pytest.mark.parametrize("case", DATA["mrope"]["get_rope_index"],
                         ids=[f"{c['model']}-{len(c['mm_token_type_ids'])}-{c['second_per_grid_ts']}"
                              for c in DATA["mrope"]["get_rope_index"]])
def test_mrope_positions_match_get_rope_index(case):
    ours = mrope_position_ids(
        case["mm_token_type_ids"], image_grid_thw=case["image_grid_thw"], video_grid_thw=case["video_grid_thw"],
        spatial_merge_size=case["spatial_merge_size"],
        tokens_per_second=case["tokens_per_second"] if case["model"] == "qwen2.5-vl" else None,
        second_per_grid_ts=case["second_per_grid_ts"], split_video_frames=case["model"] == "qwen3-vl")
    np.testing.assert_array_equal(ours.position_ids, case["position_ids"])
    assert ours.rope_delta == case["rope_delta"]


def test_mrope_records_tell_the_variants_apart():
    records = DATA["mrope"]["get_rope_index"]
    plain, halved = records[2], records[3]  # Qwen2.5-VL, one second per grid, then half a second
    assert plain["position_ids"] != halved["position_ids"]
    qwen3 = records[-1]
    types = np.array(qwen3["mm_token_type_ids"])
    assert plain["position_ids"] != mrope_position_ids(types, image_grid_thw=qwen3["image_grid_thw"],
                                                       video_grid_thw=[[1, 4, 4]] * 3).position_ids.tolist()


def _f32_angle_bound(positions, x):
    """Error of a rotation whose angles ``p * theta`` and cos/sin are float32 (Hugging Face's).

    theta (<= 1) carries a relative error of at most 2 ulp, the product one more, cos and sin
    one each: |angle error| <= 3 * 2**-24 * max|p| and the rotated pair moves by at most
    (that + 2 * 2**-24) * |pair|.
    """
    return (3 * np.max(np.abs(positions)) + 2) * 2.0**-24 * 2 * np.max(np.abs(x))


@pytest.mark.parametrize("case", DATA["mrope"]["rotation"], ids=[c["model"] for c in DATA["mrope"]["rotation"]])
def test_apply_mrope_matches_qwen_rotary_modules(case):
    q = np.array(case["q"])
    interleaved = case["model"] == "qwen3-vl"
    ours = apply_mrope(q, case["position_ids"], mrope_section=case["mrope_section"], mrope_interleaved=interleaved,
                       base=case["rope_theta"])
    tol = _f32_angle_bound(case["position_ids"], q)
    np.testing.assert_allclose(ours, case["q_embed"], atol=tol, rtol=0)
    other = apply_mrope(q, case["position_ids"], mrope_section=case["mrope_section"], mrope_interleaved=not interleaved,
                        base=case["rope_theta"])
    assert np.max(np.abs(other - np.array(case["q_embed"]))) > 100 * tol


@pytest.mark.parametrize("case", DATA["llama4_temperature"],
                         ids=[f"F{c['floor_scale']}-a{c['attn_scale']}-past{c['past_tokens']}"
                              for c in DATA["llama4_temperature"]])
def test_query_temperature_matches_llama4_attention(case):
    ours = query_temperature(case["positions"], floor_scale=case["floor_scale"], attn_scale=case["attn_scale"])
    np.testing.assert_allclose(ours, case["temperature"], rtol=2 * 2.0**-23, atol=0)  # float32 log1p there
    assert len(set(case["temperature"])) > 1  # the record crosses at least one step
    # the temperature follows the sequence index (cache included), not a restart at 0
    if case["past_tokens"]:
        restarted = query_temperature(np.arange(len(case["positions"])), floor_scale=case["floor_scale"],
                                      attn_scale=case["attn_scale"])
        assert not np.allclose(restarted, case["temperature"])


@pytest.mark.parametrize("case", DATA["layer_patterns"],
                         ids=[f"{c['model']}-{c['kwargs']}" for c in DATA["layer_patterns"]])
def test_layer_patterns_match_the_configs(case):
    kwargs = dict(case["kwargs"])
    n = kwargs.pop("num_hidden_layers")
    if case["model"] in ("llama4", "smollm3"):
        chunk = kwargs.pop("attention_chunk_size", 8192)
        np.testing.assert_array_equal(rope_layers(n, **kwargs), np.array(case["no_rope_layers"], dtype=bool))
        if case["model"] == "llama4":
            assert list(llama4_layer_types(n, attention_chunk_size=chunk, **kwargs)) == case["layer_types"]
    else:
        pattern = 2 if case["model"] == "gemma2" else 6
        ours = local_global_layer_types(n, sliding_window_pattern=pattern, last_global=case["model"] == "gemma4")
        assert list(ours) == case["layer_types"]


@pytest.mark.parametrize("case", DATA["masks"], ids=[f"{c['kind']}{c['size']}-{c['n_queries']}x{c['n_keys']}"
                                                     for c in DATA["masks"]])
def test_masks_match_masking_utils(case):
    if case["kind"] == "sliding":
        ours = sliding_window_causal_mask(case["n_queries"], case["n_keys"], sliding_window=case["size"])
    else:
        ours = chunked_causal_mask(case["n_queries"], case["n_keys"], attention_chunk_size=case["size"])
    np.testing.assert_array_equal(ours, case["mask"])


def _mla_inputs(case):
    cfg = case["config"]
    nope, rope, v, rank = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"], cfg["kv_lora_rank"]
    heads = cfg["num_attention_heads"]
    w = np.array(case["kv_b_proj_weight"]).reshape(heads, nope + v, rank)[:, :nope, :]  # (H, nope, rank)
    inv_freq, attention_factor = rope_from_config(cfg)[None]
    params = cfg["rope_parameters"]
    scale = mla_softmax_scale(nope + rope, factor=params["factor"], mscale_all_dim=params["mscale_all_dim"])
    layout = "interleaved" if cfg.get("rope_interleave", True) else "half"
    return dict(q=np.array(case["q"]), c_kv=np.array(case["c_kv"]), k_rope=np.array(case["k_rope"]),
                positions=case["positions"], w_uk=w.transpose(2, 0, 1), inv_freq=inv_freq,
                attention_factor=attention_factor, softmax_scale=scale, layout=layout)


def _pair_norms(x, layout):
    """|pair i| of every vector: pairs (i, i + d/2) or (2i, 2i+1)."""
    return np.hypot(*np.split(x, 2, axis=-1)) if layout == "half" else np.hypot(x[..., ::2], x[..., 1::2])


@pytest.mark.parametrize("case", DATA["mla"], ids=[f"{c['model']}-interleave{c['config'].get('rope_interleave')}"
                                                   for c in DATA["mla"]])
def test_mla_matches_deepseek_attention(case):
    inputs = _mla_inputs(case)
    assert inputs["softmax_scale"] == pytest.approx(case["softmax_scale"], rel=1e-14)
    assert inputs["attention_factor"] == pytest.approx(case["attention_factor"], rel=1e-14)
    n = len(case["positions"])
    mask = np.where(np.tril(np.ones((n, n), dtype=bool)), 0.0, -np.inf)
    reference = np.array(case["probabilities"])
    # Hugging Face's angles and cos/sin are float32 (DeepSeek-V2 rotates q and k in float32 too):
    # each plane's product moves by at most |q_i| |k_i| (3 max|p| + 4) 2**-24 (see _f32_angle_bound),
    # a score by sigma times the sum over planes, and a softmax output by at most half the largest
    # score change (its Jacobian's rows sum to 2 p (1 - p) <= 1/2 in absolute value).
    q_pairs = _pair_norms(inputs["q"][..., -inputs["k_rope"].shape[-1]:], inputs["layout"])
    k_pairs = _pair_norms(inputs["k_rope"], inputs["layout"])
    score_bound = inputs["softmax_scale"] * inputs["attention_factor"] ** 2 * np.max(q_pairs @ k_pairs.T) * (
        3 * max(case["positions"]) + 4) * 2.0**-24
    tol = score_bound / 2
    for absorb in (False, True):
        ours = softmax(mla_scores(**inputs, absorb=absorb) + mask)
        np.testing.assert_allclose(ours, reference, atol=tol, rtol=0)
    wrong_layout = dict(inputs, layout="half" if inputs["layout"] == "interleaved" else "interleaved")
    wrong_scale = dict(inputs, softmax_scale=(len(case["q"][0][0])) ** -0.5)  # the temperature left out
    for wrong in (wrong_layout, wrong_scale):
        assert np.max(np.abs(softmax(mla_scores(**wrong) + mask) - reference)) > 100 * tol


@pytest.mark.parametrize("case", DATA["partial_rotation"], ids=[c["model"] for c in DATA["partial_rotation"]])
def test_partial_rotation_matches_the_models(case):
    q = np.array(case["q"])
    head_dim, p, base = case["head_dim"], case["partial_rotary_factor"], case["rope_theta"]
    tol = _f32_angle_bound(case["positions"], q)
    if case["model"] == "gemma4-full":
        inv_freq = proportional_scaling(head_dim, base=base, partial_rotary_factor=p).inv_freq
        ours = apply_rope(q, case["positions"], inv_freq=inv_freq, layout="half")
        wrong = apply_partial_rope(q, case["positions"], inv_freq=default_scaling(
            head_dim, base=base, partial_rotary_factor=p).inv_freq)
    else:
        layout = "half" if case["model"] == "phi3" else "interleaved"
        inv_freq = default_scaling(head_dim, base=base, partial_rotary_factor=p).inv_freq
        ours = apply_partial_rope(q, case["positions"], inv_freq=inv_freq, layout=layout)
        wrong = apply_partial_rope(q, case["positions"], inv_freq=inv_freq,
                                   layout="interleaved" if layout == "half" else "half")
    np.testing.assert_allclose(ours, case["q_embed"], atol=tol, rtol=0)
    assert np.max(np.abs(wrong - np.array(case["q_embed"]))) > 100 * tol
