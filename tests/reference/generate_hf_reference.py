"""Generate ``hf_reference.json``: values computed by the production implementations.

This script is *not* run by the test suite: it needs PyTorch and Hugging Face
``transformers``, which posenc does not depend on.  It was run with torch 2.13.0 (CPU)
and transformers 5.24.0 to record what those libraries compute for the conventions
posenc reproduces; ``tests/test_reference.py`` and ``tests/test_reference_models.py``
compare posenc against the recorded numbers.  To refresh it (a venv outside the
repository; the CPU wheel of torch, not a CUDA build)::

    python3.11 -m venv /tmp/ref && /tmp/ref/bin/pip install torch==2.13.0 transformers==5.24.0 numpy
    /tmp/ref/bin/python tests/reference/generate_hf_reference.py

Everything here calls the libraries' own functions (``ROPE_INIT_FUNCTIONS``, the models'
rotary-embedding modules, ``get_rope_index``, ``apply_rotary_pos_emb``, Llama 4's and
DeepSeek's attention modules, the configs' layer patterns, ``masking_utils``); nothing is
re-implemented. Where a value is computed inside a module's forward pass (Llama 4's query
temperature, DeepSeek's queries and latents), it is read from the module: by a forward hook
on a submodule, or by an attention function registered through ``AttentionInterface`` that
records the queries it receives.
"""

from __future__ import annotations

import copy
import json
import pathlib

import numpy as np
import torch
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply
from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply
from transformers.models.t5.modeling_t5 import T5Attention

OUT = pathlib.Path(__file__).with_name("hf_reference.json")


def rope_case(rope_type, head_dim, base, max_position_embeddings, seq_len=None, **params):
    n_heads = 4
    rope_parameters = {"rope_type": rope_type, "rope_theta": base, **params}
    config = LlamaConfig(
        hidden_size=head_dim * n_heads,
        num_attention_heads=n_heads,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope_parameters,
    )
    if rope_type == "default":  # not in ROPE_INIT_FUNCTIONS: each model computes it (Phi-3's reads partial_rotary_factor)
        inv_freq, attention_factor = Phi3RotaryEmbedding.compute_default_rope_parameters(config, "cpu")
    else:
        inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)
    return {
        "rope_type": rope_type,
        "head_dim": head_dim,
        "base": base,
        "max_position_embeddings": max_position_embeddings,
        "seq_len": seq_len,
        "params": params,
        "inv_freq": inv_freq.double().tolist(),
        "attention_factor": float(attention_factor),
    }


# ---------------------------------------------------------------------------------------
# Chapter 7: today's models. Each record keeps the inputs the library was given and what it
# returned, read from its own modules.

SECTIONS = ("configs", "mrope", "llama4_temperature", "layer_patterns", "masks", "mla", "partial_rotation")


def _plain(value):
    """A config's ``to_dict()`` made JSON-safe (tuples to lists, other objects to strings)."""
    return json.loads(json.dumps(value, default=str))


def config_case(name, config_cls, rotary_cls, kwargs, seq_len=None):
    """A model's config and the frequencies its rotary module holds, per layer type."""
    config = config_cls(**copy.deepcopy(kwargs))
    rotary = rotary_cls(config)
    if seq_len is not None:  # run the forward pass once: dynamic and longrope update their frequencies
        x = torch.zeros(1, 1, dtype=torch.float32)
        position_ids = torch.arange(seq_len)[None]
        if getattr(rotary, "layer_types", None):
            for layer_type in rotary.layer_types:
                rotary(x, position_ids, layer_type)
        else:
            rotary(x, position_ids)
    layers = {}
    if getattr(rotary, "layer_types", None) and isinstance(rotary.rope_type, dict):
        for layer_type in rotary.layer_types:
            if hasattr(rotary, f"{layer_type}_inv_freq"):
                layers[layer_type] = {"inv_freq": getattr(rotary, f"{layer_type}_inv_freq").double().tolist(),
                                      "attention_factor": float(getattr(rotary, f"{layer_type}_attention_scaling"))}
    else:
        layers["null"] = {"inv_freq": rotary.inv_freq.double().tolist(), "attention_factor": float(rotary.attention_scaling)}
    return {"name": name, "config_json": _plain({"model_type": config_cls.model_type, **kwargs}),
            "config_to_dict": _plain(config.to_dict()), "seq_len": seq_len, "layers": layers}


def record_configs():
    from transformers import (DeepseekV3Config, Gemma3TextConfig, Gemma4TextConfig, GptOssConfig, Llama4TextConfig,
                              Phi3Config, Qwen2VLTextConfig, Qwen3Config, SmolLM3Config)
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssRotaryEmbedding
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    from transformers.models.llama4.modeling_llama4 import Llama4TextRotaryEmbedding
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding
    from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding
    from transformers.models.smollm3.modeling_smollm3 import SmolLM3RotaryEmbedding

    def factors(n, top):
        return [float(v) for v in 1.0 + (top - 1.0) * (np.arange(n) / (n - 1)) ** 2]

    small = dict(num_hidden_layers=4, intermediate_size=64, vocab_size=128)
    llama31 = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                   rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
                                        high_freq_factor=4.0, original_max_position_embeddings=8192), **small)
    phi35 = dict(hidden_size=3072, num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=131072,
                 original_max_position_embeddings=4096,  # top level: wins over the 2048 below (Phi-3's rule)
                 rope_parameters=dict(rope_type="longrope", rope_theta=10000.0, short_factor=factors(48, 1.2),
                                      long_factor=factors(48, 40.0), original_max_position_embeddings=2048), **small)
    phi4mini = dict(hidden_size=3072, num_attention_heads=24, num_key_value_heads=8, max_position_embeddings=131072,
                    original_max_position_embeddings=4096,
                    rope_parameters=dict(rope_type="longrope", rope_theta=10000.0, partial_rotary_factor=0.75,
                                         short_factor=factors(48, 1.1), long_factor=factors(48, 30.0)), **small)
    gemma3 = dict(hidden_size=1152, num_attention_heads=4, num_key_value_heads=1, head_dim=256,
                  max_position_embeddings=131072, layer_types=["sliding_attention"] * 5 + ["full_attention"],
                  rope_parameters={"sliding_attention": dict(rope_type="default", rope_theta=10000.0),
                                   "full_attention": dict(rope_type="linear", factor=8.0, rope_theta=1000000.0)},
                  num_hidden_layers=6, intermediate_size=64, vocab_size=128)
    gemma3_yarn = copy.deepcopy(gemma3)  # a per-layer-type truncate=False, which Hugging Face does not read
    gemma3_yarn["rope_parameters"]["full_attention"] = dict(rope_type="yarn", factor=8.0, rope_theta=1000000.0,
                                                            original_max_position_embeddings=16384, truncate=False)
    gemma4 = dict(hidden_size=1536, num_attention_heads=8, num_key_value_heads=1, head_dim=256, global_head_dim=512,
                  max_position_embeddings=131072, layer_types=["sliding_attention"] * 5 + ["full_attention"],
                  rope_parameters={"sliding_attention": dict(rope_type="default", rope_theta=10000.0),
                                   "full_attention": dict(rope_type="proportional", partial_rotary_factor=0.25,
                                                          rope_theta=1000000.0)},
                  num_hidden_layers=6, intermediate_size=64, vocab_size=128)
    deepseek_v3 = dict(hidden_size=7168, num_attention_heads=128, num_key_value_heads=128, q_lora_rank=1536,
                       kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                       max_position_embeddings=163840,
                       rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=40.0, beta_fast=32.0,
                                            beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
                                            original_max_position_embeddings=4096), **small)
    gpt_oss = dict(hidden_size=2880, num_attention_heads=64, num_key_value_heads=8, head_dim=64,
                   max_position_embeddings=131072,
                   rope_parameters=dict(rope_type="yarn", rope_theta=150000.0, factor=32.0, beta_fast=32.0,
                                        beta_slow=1.0, truncate=False, original_max_position_embeddings=4096), **small)
    llama4 = dict(hidden_size=5120, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                  max_position_embeddings=10485760, attention_chunk_size=8192,
                  rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=16.0, low_freq_factor=1.0,
                                       high_freq_factor=1.0, original_max_position_embeddings=8192), **small)
    qwen3 = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                 max_position_embeddings=131072,
                 rope_parameters=dict(rope_type="yarn", rope_theta=1000000.0, factor=4.0,
                                      original_max_position_embeddings=32768), **small)
    qwen2vl = dict(hidden_size=3584, num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768,
                   rope_parameters=dict(rope_type="default", rope_theta=1000000.0, mrope_section=[16, 24, 24]), **small)
    smollm3 = dict(hidden_size=2048, num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=65536,
                   rope_parameters=dict(rope_type="default", rope_theta=5000000.0), **small)
    dynamic = dict(hidden_size=2048, num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=4096,
                   rope_parameters=dict(rope_type="dynamic", rope_theta=10000.0, factor=2.0), **small)
    return [
        config_case("Llama 3.1 (llama3)", LlamaConfig, LlamaRotaryEmbedding, llama31),
        config_case("Phi-3.5-mini shape (longrope, top-level original length)", Phi3Config, Phi3RotaryEmbedding, phi35),
        config_case("Phi-3.5-mini shape, past the switch", Phi3Config, Phi3RotaryEmbedding, phi35, seq_len=4100),
        config_case("Phi-4-mini shape (longrope, partial 0.75)", Phi3Config, Phi3RotaryEmbedding, phi4mini),
        config_case("Phi-4-mini shape, past the switch", Phi3Config, Phi3RotaryEmbedding, phi4mini, seq_len=9000),
        config_case("Gemma 3 (local default, global linear 8)", Gemma3TextConfig, Gemma3RotaryEmbedding, gemma3),
        config_case("Gemma 3 shape, global yarn with truncate=False inside", Gemma3TextConfig, Gemma3RotaryEmbedding,
                    gemma3_yarn),
        config_case("Gemma 4 (local default 256, global proportional 512)", Gemma4TextConfig,
                    Gemma4TextRotaryEmbedding, gemma4),
        config_case("DeepSeek-V3 (yarn, mscale)", DeepseekV3Config, DeepseekV3RotaryEmbedding, deepseek_v3),
        config_case("gpt-oss (yarn, truncate False)", GptOssConfig, GptOssRotaryEmbedding, gpt_oss),
        config_case("Llama 4 Scout (llama3, low = high)", Llama4TextConfig, Llama4TextRotaryEmbedding, llama4),
        config_case("Qwen3 with yarn", Qwen3Config, Qwen3RotaryEmbedding, qwen3),
        config_case("Qwen2-VL text (mrope_section)", Qwen2VLTextConfig, Qwen2VLRotaryEmbedding, qwen2vl),
        config_case("SmolLM3 (NoPE layers)", SmolLM3Config, SmolLM3RotaryEmbedding, smollm3),
        config_case("Llama with dynamic NTK, at 10000 tokens", LlamaConfig, LlamaRotaryEmbedding, dynamic,
                    seq_len=10000),
    ]


def record_mrope():
    """Qwen2-VL, Qwen2.5-VL and Qwen3-VL: get_rope_index, then the rotary module and the rotation."""
    from transformers import (Qwen2_5_VLConfig, Qwen2_5_VLModel, Qwen2VLConfig, Qwen2VLModel, Qwen3VLConfig,
                              Qwen3VLModel)
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding
    from transformers.models.qwen2_vl.modeling_qwen2_vl import apply_rotary_pos_emb as qwen2vl_apply
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding
    from transformers.models.qwen3_vl.modeling_qwen3_vl import apply_rotary_pos_emb as qwen3vl_apply

    def tiny(cfg_cls, model_cls, **vision):
        cfg = cfg_cls(text_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=1,
                                       num_key_value_heads=1, intermediate_size=16, vocab_size=64),
                      vision_config=dict(depth=1, hidden_size=16, embed_dim=16, num_heads=1, out_hidden_size=32,
                                         intermediate_size=16, **vision))
        return model_cls(cfg)

    TEXT, IMAGE, VIDEO = 0, 1, 2
    records = []
    torch.manual_seed(0)
    qwen2 = tiny(Qwen2VLConfig, Qwen2VLModel)
    qwen25 = tiny(Qwen2_5_VLConfig, Qwen2_5_VLModel, tokens_per_second=4)
    qwen3 = tiny(Qwen3VLConfig, Qwen3VLModel)
    # text, image (1, 4, 6), text, video (3, 4, 4), text; merge 2
    seq = [TEXT] * 3 + [IMAGE] * 6 + [TEXT] * 2 + [VIDEO] * 12 + [TEXT] * 2
    # a tall image (1, 8, 2) and a long thin video (5, 2, 2): time runs past the text that follows
    seq_tall = [TEXT] * 2 + [IMAGE] * 4 + [TEXT] * 1 + [VIDEO] * 5 + [TEXT] * 3
    # Qwen3-VL: every frame of the video (3, 4, 4) is its own run, timestamps in text between
    seq3 = [TEXT] * 3 + [IMAGE] * 6 + [TEXT] * 2 + ([TEXT] * 2 + [VIDEO] * 4) * 3 + [TEXT] * 2
    cases = [
        ("qwen2-vl", qwen2, seq, [[1, 4, 6]], [[3, 4, 4]], None),
        ("qwen2-vl", qwen2, seq_tall, [[1, 8, 2]], [[5, 2, 2]], None),
        ("qwen2.5-vl", qwen25, seq, [[1, 4, 6]], [[3, 4, 4]], None),
        ("qwen2.5-vl", qwen25, seq, [[1, 4, 6]], [[3, 4, 4]], [0.5]),
        ("qwen2.5-vl", qwen25, seq, [[1, 4, 6]], [[3, 4, 4]], [1.0 / 3.0]),
        ("qwen2.5-vl", qwen25, seq_tall, [[1, 8, 2]], [[5, 2, 2]], [0.7]),
        ("qwen3-vl", qwen3, seq3, [[1, 4, 6]], [[3, 4, 4]], None),
    ]
    for name, model, types, images, videos, seconds in cases:
        kwargs = {}
        if seconds is not None:
            kwargs["second_per_grid_ts"] = torch.tensor(seconds)  # float32, as the processor returns it
        tt = torch.tensor([types])
        position_ids, delta = model.get_rope_index(torch.zeros_like(tt), tt, image_grid_thw=torch.tensor(images),
                                                   video_grid_thw=torch.tensor(videos), **kwargs)
        records.append({"model": name, "mm_token_type_ids": types, "image_grid_thw": images, "video_grid_thw": videos,
                        "second_per_grid_ts": seconds,
                        "tokens_per_second": model.config.vision_config.to_dict().get("tokens_per_second"),
                        "spatial_merge_size": model.config.vision_config.spatial_merge_size,
                        "position_ids": position_ids[:, 0].tolist(), "rope_delta": int(delta)})

    # The rotation: the rotary modules' recomposed cos/sin and apply_rotary_pos_emb, head 128.
    rotations = []
    rng = np.random.default_rng(7)
    for name, cfg_cls, rotary_cls, apply, section, positions in (
        ("qwen2-vl", Qwen2VLConfig, Qwen2VLRotaryEmbedding, qwen2vl_apply, [16, 24, 24], records[0]["position_ids"]),
        ("qwen3-vl", Qwen3VLConfig, Qwen3VLTextRotaryEmbedding, qwen3vl_apply, [24, 20, 20], records[-1]["position_ids"]),
    ):
        text = dict(hidden_size=256, num_attention_heads=2, num_key_value_heads=1, head_dim=128, num_hidden_layers=1,
                    intermediate_size=16, vocab_size=64,
                    rope_parameters=dict(rope_type="default", rope_theta=1000000.0, mrope_section=section,
                                         **({"mrope_interleaved": True} if name == "qwen3-vl" else {})))
        cfg = cfg_cls(text_config=text).text_config
        rotary = rotary_cls(cfg)
        pos = torch.tensor(positions)[:, None, :]  # (3, 1, T)
        n_tokens = pos.shape[-1]
        q = rng.normal(size=(1, 1, n_tokens, 128))
        qt = torch.tensor(q)
        cos, sin = rotary(qt, pos)
        q_embed, _ = apply(qt, qt, cos, sin)
        rotations.append({"model": name, "mrope_section": section, "rope_theta": 1000000.0, "position_ids": positions,
                          "q": q.tolist(), "q_embed": q_embed.numpy().tolist()})
    return {"get_rope_index": records, "rotation": rotations}


def record_llama4_temperature():
    """The query temperature of a NoPE layer, read from the queries Llama4TextAttention passes on."""
    from transformers import Llama4TextConfig
    from transformers.cache_utils import DynamicCache
    from transformers.modeling_utils import AttentionInterface
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention

    captured = {}

    def capture(module, query, key, value, attention_mask, **kwargs):
        captured["q"] = query.detach().clone()
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1], value.shape[-1], dtype=query.dtype), None

    AttentionInterface.register("posenc_capture", capture)
    records = []
    for floor_scale, attn_scale, past, n_tokens in ((4, 0.1, 0, 40), (8192, 0.1, 8180, 30), (3, 0.25, 5, 20)):
        cfg = Llama4TextConfig(hidden_size=16, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                               num_hidden_layers=4, intermediate_size=16, intermediate_size_mlp=16,
                               floor_scale=floor_scale, attn_scale=attn_scale)
        cfg._attn_implementation = "posenc_capture"
        torch.manual_seed(0)
        attention = Llama4TextAttention(cfg, 3).double()  # layer 3: a NoPE layer
        assert not attention.use_rope
        hidden = torch.randn(1, n_tokens, 16, dtype=torch.float64)
        cache = None
        if past:
            cache = DynamicCache(config=cfg)
            zeros = torch.zeros(1, 1, past, 8, dtype=torch.float64)
            cache.update(zeros, zeros, 3)
        attention(hidden, position_embeddings=None, attention_mask=None, cache=cache)
        q = attention.q_proj(hidden).view(1, n_tokens, -1, 8).transpose(1, 2)
        ratio = (captured["q"] / q)[0, 0, :, 0]
        records.append({"floor_scale": floor_scale, "attn_scale": attn_scale, "past_tokens": past,
                        "positions": list(range(past, past + n_tokens)), "temperature": ratio.tolist()})
    return records


def record_layer_patterns():
    from transformers import Gemma2Config, Gemma3TextConfig, Gemma4TextConfig, Llama4TextConfig, SmolLM3Config

    records = []
    for kwargs in (dict(num_hidden_layers=48), dict(num_hidden_layers=10, attention_chunk_size=None),
                   dict(num_hidden_layers=9, no_rope_layer_interval=3),
                   dict(num_hidden_layers=6, no_rope_layers=[1, 0, 1, 1, 0, 1])):
        cfg = Llama4TextConfig(**kwargs)
        records.append({"model": "llama4", "kwargs": kwargs, "no_rope_layers": list(cfg.no_rope_layers),
                        "layer_types": list(cfg.layer_types)})
    for kwargs in (dict(num_hidden_layers=36), dict(num_hidden_layers=10, no_rope_layer_interval=3)):
        cfg = SmolLM3Config(**kwargs)
        records.append({"model": "smollm3", "kwargs": kwargs, "no_rope_layers": list(cfg.no_rope_layers),
                        "layer_types": list(cfg.layer_types)})
    for cls, name, sizes in ((Gemma2Config, "gemma2", (26, 42, 46)), (Gemma3TextConfig, "gemma3", (26, 34, 48, 62)),
                             (Gemma4TextConfig, "gemma4", (30, 35, 8))):
        for n in sizes:
            cfg = cls(num_hidden_layers=n)
            records.append({"model": name, "kwargs": {"num_hidden_layers": n}, "layer_types": list(cfg.layer_types)})
    return records


def record_masks():
    from transformers.masking_utils import chunked_causal_mask_function, sliding_window_causal_mask_function

    records = []
    for kind, size, n_queries, n_keys in (("sliding", 3, 9, 9), ("sliding", 4, 3, 10), ("chunked", 4, 11, 11),
                                          ("chunked", 3, 4, 13), ("sliding", 1, 5, 5), ("chunked", 1, 5, 5)):
        fn = (sliding_window_causal_mask_function(size) if kind == "sliding"
              else chunked_causal_mask_function(size, torch.tensor([0])))
        q_idx = torch.arange(n_keys - n_queries, n_keys)[:, None]
        kv_idx = torch.arange(n_keys)[None, :]
        mask = fn(torch.tensor(0), torch.tensor(0), q_idx, kv_idx)
        records.append({"kind": kind, "size": size, "n_queries": n_queries, "n_keys": n_keys,
                        "mask": mask.expand(n_queries, n_keys).tolist()})
    return records


def record_mla():
    """DeepSeek-V3 (both RoPE layouts) and DeepSeek-V2 attention: inputs read by hooks, probabilities returned."""
    from transformers import DeepseekV2Config, DeepseekV3Config
    from transformers.models.deepseek_v2.modeling_deepseek_v2 import DeepseekV2Attention, DeepseekV2RotaryEmbedding
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

    records = []
    for name, cfg_cls, attn_cls, rotary_cls, extra in (
        ("deepseek-v3", DeepseekV3Config, DeepseekV3Attention, DeepseekV3RotaryEmbedding, dict(rope_interleave=True)),
        ("deepseek-v3", DeepseekV3Config, DeepseekV3Attention, DeepseekV3RotaryEmbedding, dict(rope_interleave=False)),
        ("deepseek-v2", DeepseekV2Config, DeepseekV2Attention, DeepseekV2RotaryEmbedding, {}),
    ):
        kwargs = dict(hidden_size=36, num_attention_heads=3, num_key_value_heads=3, q_lora_rank=None, kv_lora_rank=12,
                      qk_nope_head_dim=6, qk_rope_head_dim=8, v_head_dim=5, max_position_embeddings=40 * 64,
                      num_hidden_layers=1, intermediate_size=16, moe_intermediate_size=16, vocab_size=64,
                      rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=40.0,
                                           original_max_position_embeddings=64, beta_fast=32.0, beta_slow=1.0,
                                           mscale=0.707 if name == "deepseek-v2" else 1.0,
                                           mscale_all_dim=0.707 if name == "deepseek-v2" else 1.0), **extra)
        cfg = cfg_cls(**copy.deepcopy(kwargs))
        cfg._attn_implementation = "eager"
        torch.manual_seed(3)
        attention = attn_cls(cfg, 0).double()
        rotary = rotary_cls(cfg)
        seen = {}
        for module in ("q_proj", "kv_a_layernorm", "kv_a_proj_with_mqa"):
            getattr(attention, module).register_forward_hook(
                lambda mod, inputs, out, module=module: seen.__setitem__(module, out.detach().clone()))
        n_tokens = 7
        hidden = torch.randn(1, n_tokens, 36, dtype=torch.float64)
        positions = torch.arange(n_tokens)[None] + 100
        position_embeddings = rotary(hidden, positions)
        mask = torch.full((n_tokens, n_tokens), float("-inf"), dtype=torch.float64).triu(1)[None, None]
        _, weights = attention(hidden, position_embeddings=position_embeddings, attention_mask=mask)
        rank = kwargs["kv_lora_rank"]
        records.append({
            "model": name, "config": _plain(kwargs), "positions": positions[0].tolist(),
            "q": seen["q_proj"][0].view(n_tokens, 3, -1).transpose(0, 1).tolist(),  # (H, T, nope + rope)
            "c_kv": seen["kv_a_layernorm"][0].tolist(),  # (T, rank)
            "k_rope": seen["kv_a_proj_with_mqa"][0, :, rank:].tolist(),  # (T, rope), before rotation
            "kv_b_proj_weight": attention.kv_b_proj.weight.detach().tolist(),  # (H * (nope + v), rank)
            "softmax_scale": float(attention.scaling),
            "attention_factor": float(rotary.attention_scaling),
            "probabilities": weights[0].detach().tolist(),  # (H, T, T)
        })
    return records


def record_partial_rotation():
    """Partial rotary as Phi-3 (rotate_half on the first slice) and GLM (interleaved pairs) apply it."""
    from transformers import GlmConfig
    from transformers.models.glm.modeling_glm import GlmRotaryEmbedding
    from transformers.models.glm.modeling_glm import apply_rotary_pos_emb as glm_apply
    from transformers.models.phi3.modeling_phi3 import apply_rotary_pos_emb as phi3_apply

    from transformers import Gemma4TextConfig
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
    from transformers.models.gemma4.modeling_gemma4 import apply_rotary_pos_emb as gemma4_apply

    rng = np.random.default_rng(11)
    records = []
    positions = torch.tensor([[0, 1, 2, 7, 30, 100]])
    for name, rotary, apply, head_dim in (
        ("phi3", Phi3RotaryEmbedding(LlamaConfig(hidden_size=64, num_attention_heads=2, head_dim=32,
                                                 rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                                                      partial_rotary_factor=0.5))), phi3_apply, 32),
        ("glm", GlmRotaryEmbedding(GlmConfig(hidden_size=64, num_attention_heads=2, head_dim=32,
                                             rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                                                  partial_rotary_factor=0.5))), glm_apply, 32),
    ):
        q = rng.normal(size=(1, 2, positions.shape[1], head_dim))
        qt = torch.tensor(q)
        cos, sin = rotary(qt, positions)
        q_embed, _ = apply(qt, qt, cos, sin)
        records.append({"model": name, "head_dim": head_dim, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
                        "positions": positions[0].tolist(), "q": q.tolist(), "q_embed": q_embed.numpy().tolist()})
    # Gemma 4's global layers: the whole head rotated, the last planes with frequency zero.
    cfg = Gemma4TextConfig(num_hidden_layers=6, head_dim=16, global_head_dim=32, hidden_size=64, num_attention_heads=2,
                           intermediate_size=16, vocab_size=64, vocab_size_per_layer_input=64)
    rotary = Gemma4TextRotaryEmbedding(cfg)
    q = rng.normal(size=(1, positions.shape[1], 2, 32))  # Gemma 4 rotates (B, T, H, d) with unsqueeze_dim=2
    cos, sin = rotary(torch.tensor(q), positions, "full_attention")
    q_embed = gemma4_apply(torch.tensor(q), cos, sin, unsqueeze_dim=2)
    records.append({"model": "gemma4-full", "head_dim": 32, "partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                    "positions": positions[0].tolist(), "q": np.swapaxes(q, 1, 2).tolist(),
                    "q_embed": q_embed.transpose(1, 2).numpy().tolist()})
    return records


def record_models():
    return {"configs": record_configs(), "mrope": record_mrope(), "llama4_temperature": record_llama4_temperature(),
            "layer_patterns": record_layer_patterns(), "masks": record_masks(), "mla": record_mla(),
            "partial_rotation": record_partial_rotation()}


def main():
    cases = []
    cases.append(rope_case("default", 64, 10000.0, 2048))
    cases.append(rope_case("default", 128, 500000.0, 8192))
    for factor in (2.0, 4.0, 8.0):
        cases.append(rope_case("linear", 64, 10000.0, 2048, factor=factor))
    for seq_len in (512, 2048, 3000, 8192, 20000):
        cases.append(rope_case("dynamic", 64, 10000.0, 2048, seq_len=seq_len, factor=2.0))
        cases.append(rope_case("dynamic", 128, 10000.0, 4096, seq_len=seq_len, factor=4.0))
    yarn_settings = [
        dict(head_dim=64, base=10000.0, factor=4.0, original=4096),
        dict(head_dim=128, base=10000.0, factor=16.0, original=4096),
        dict(head_dim=128, base=10000.0, factor=32.0, original=2048),
        dict(head_dim=64, base=150000.0, factor=32.0, original=4096),  # gpt-oss shape
        dict(head_dim=128, base=1000000.0, factor=4.0, original=32768),  # Qwen-style
        dict(head_dim=16, base=10000.0, factor=8.0, original=64),  # tiny: clamps at 0
        dict(head_dim=8, base=10000.0, factor=2.0, original=1_000_000),  # tiny: clamps at d-1
        dict(head_dim=64, base=10000.0, factor=1.0, original=4096),
    ]
    for s in yarn_settings:
        for truncate in (True, False):
            for beta_fast, beta_slow in ((32.0, 1.0), (16.0, 2.0)):
                cases.append(
                    rope_case(
                        "yarn",
                        s["head_dim"],
                        s["base"],
                        s["original"] * 2,
                        factor=s["factor"],
                        original_max_position_embeddings=s["original"],
                        beta_fast=beta_fast,
                        beta_slow=beta_slow,
                        truncate=truncate,
                    )
                )
    llama3_settings = [
        dict(head_dim=128, base=500000.0, factor=8.0, original=8192, low=1.0, high=4.0),  # Llama 3.1
        dict(head_dim=64, base=500000.0, factor=32.0, original=8192, low=1.0, high=4.0),  # Llama 3.2 1B
        dict(head_dim=64, base=10000.0, factor=4.0, original=256, low=1.0, high=4.0),
        dict(head_dim=128, base=10000.0, factor=2.0, original=2048, low=2.0, high=8.0),
        dict(head_dim=32, base=10000.0, factor=1.0, original=1024, low=1.0, high=4.0),
    ]
    for s in llama3_settings:
        cases.append(
            rope_case(
                "llama3",
                s["head_dim"],
                s["base"],
                s["original"] * 4,
                factor=s["factor"],
                original_max_position_embeddings=s["original"],
                low_freq_factor=s["low"],
                high_freq_factor=s["high"],
            )
        )

    # LongRoPE (Phi-3.5-mini's shape: head 96, 4096 -> 131072; Phi-4-mini's: head 128, p = 0.75).
    # The per-plane factors are made up (smooth, positive); the rules are what is checked.
    def factors(n, top):
        return [float(v) for v in 1.0 + (top - 1.0) * (np.arange(n) / (n - 1)) ** 2]

    phi = dict(short_factor=factors(48, 1.2), long_factor=factors(48, 40.0), original_max_position_embeddings=4096)
    for seq_len in (None, 100, 4096, 4097, 131072):
        cases.append(rope_case("longrope", 96, 10000.0, 131072, seq_len=seq_len, **phi))
    cases.append(rope_case("longrope", 96, 10000.0, 131072, seq_len=5000, factor=16.0, **phi))  # factor wins
    cases.append(rope_case("longrope", 96, 10000.0, 131072, attention_factor=1.5, factor=16.0, **phi))
    cases.append(rope_case("longrope", 96, 10000.0, 2048, **phi))  # max < original: factor < 1, attention 1
    for seq_len in (None, 8000):
        cases.append(rope_case("longrope", 128, 10000.0, 131072, seq_len=seq_len, partial_rotary_factor=0.75, **phi))

    # Proportional (Gemma 4's global layers: head 512, p = 0.25, base 1e6), and its edge cases.
    for head_dim, p, factor in ((512, 0.25, 1.0), (256, 0.5, 8.0), (64, 1.0, 1.0), (10, 0.3, 2.0), (64, 0.0, 1.0)):
        cases.append(rope_case("proportional", head_dim, 1e6, 8192, partial_rotary_factor=p, factor=factor))

    # partial_rotary_factor with every other type.
    cases.append(rope_case("default", 128, 10000.0, 4096, partial_rotary_factor=0.75))
    cases.append(rope_case("default", 80, 10000.0, 2048, partial_rotary_factor=0.4))  # Phi-2's 32 of 80
    cases.append(rope_case("linear", 128, 10000.0, 4096, partial_rotary_factor=0.5, factor=4.0))
    cases.append(rope_case("dynamic", 64, 10000.0, 2048, seq_len=5000, partial_rotary_factor=0.25, factor=2.0))
    cases.append(rope_case("yarn", 128, 10000.0, 16384, partial_rotary_factor=0.75, factor=4.0,
                           original_max_position_embeddings=4096))
    cases.append(rope_case("llama3", 128, 500000.0, 32768, partial_rotary_factor=0.5, factor=8.0,
                           original_max_position_embeddings=8192, low_freq_factor=1.0, high_freq_factor=4.0))

    # YaRN's temperature options: DeepSeek-V3 (mscale = mscale_all_dim = 1), DeepSeek-V2 (0.707 both),
    # unequal ones, mscale alone (ignored), an explicit attention_factor (wins).
    deepseek = dict(factor=40.0, original_max_position_embeddings=4096, beta_fast=32.0, beta_slow=1.0)
    for extra in (dict(mscale=1.0, mscale_all_dim=1.0), dict(mscale=0.707, mscale_all_dim=0.707),
                  dict(mscale=1.0, mscale_all_dim=0.5), dict(mscale=0.8), dict(attention_factor=1.2, mscale=1.0,
                                                                                 mscale_all_dim=0.5)):
        cases.append(rope_case("yarn", 64, 10000.0, 163840, **deepseek, **extra))
    # Llama 4 Scout's llama3 parameters: low_freq_factor == high_freq_factor (no smooth band).
    cases.append(rope_case("llama3", 128, 500000.0, 10485760, factor=16.0, original_max_position_embeddings=8192,
                           low_freq_factor=1.0, high_freq_factor=1.0))

    # ALiBi slopes as BLOOM computes them (float32), one query row of ones mask.
    alibi = {}
    for n_heads in list(range(1, 33)) + [40, 48, 64, 71, 80, 96, 112, 128]:
        mask = torch.ones(1, 2)
        tensor = build_alibi_tensor(mask, n_heads, torch.float32)  # (heads, 1, 2): slope * [0, 1]
        alibi[str(n_heads)] = tensor[:, 0, 1].double().tolist()

    # T5 buckets (float32 log inside, as the library computes it).
    rel = torch.arange(-600, 601)
    t5 = []
    for bidirectional in (True, False):
        for num_buckets, max_distance in ((32, 128), (64, 256), (16, 64), (8, 20), (32, 16)):
            b = T5Attention._relative_position_bucket(
                rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
            )
            t5.append(
                {
                    "bidirectional": bidirectional,
                    "num_buckets": num_buckets,
                    "max_distance": max_distance,
                    "relative_position": rel.tolist(),
                    "bucket": b.tolist(),
                }
            )

    # Rotations: Hugging Face Llama (rotate_half) and GPT-J (rotate_every_two), float64 inputs.
    rng = np.random.default_rng(1234)
    head_dim, n_tokens = 16, 7
    x = rng.normal(size=(1, 2, n_tokens, head_dim))
    positions = np.array([0, 1, 2, 5, 11, 100, 1000])
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    freqs = torch.tensor(positions, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    xt = torch.tensor(x)
    llama_q, _ = llama_apply(xt, xt, emb.cos()[None], emb.sin()[None], unsqueeze_dim=1)
    # GPT-J: its own sin/cos table, (batch, seq, heads, dim) layout.
    table = create_sinusoidal_positions(1001, head_dim).double()
    sincos = table[torch.tensor(positions)][None]
    sin, cos = torch.split(sincos, head_dim // 2, dim=-1)
    gptj_q = gptj_apply(xt.permute(0, 2, 1, 3), sin, cos).permute(0, 2, 1, 3)

    data = {
        "generated_with": {"torch": torch.__version__, "transformers": transformers.__version__},
        "rope": cases,
        "alibi_slopes": alibi,
        "t5_buckets": t5,
        "rotation": {
            "x": x.tolist(),
            "positions": positions.tolist(),
            "llama_rotate_half": llama_q.numpy().tolist(),
            "gptj_rotate_every_two": gptj_q.numpy().tolist(),
        },
        **record_models(),
    }
    OUT.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT.name}: {len(cases)} rope cases; " + ", ".join(
        f"{k}: {len(v)}" for k, v in data.items() if k in SECTIONS))


if __name__ == "__main__":
    main()
