"""Generate ``hf_reference.json``: values computed by the production implementations.

This script is *not* run by the test suite: it needs PyTorch and Hugging Face
``transformers``, which posenc does not depend on.  It was run once with
torch 2.13.0 (CPU) and transformers 5.23.0 to record what those libraries compute
for the conventions posenc reproduces; ``tests/test_reference.py`` compares posenc
against the recorded numbers.  To refresh it::

    python -m venv /tmp/ref && /tmp/ref/bin/pip install torch transformers numpy
    /tmp/ref/bin/python tests/reference/generate_hf_reference.py

Everything here calls the libraries' own functions; nothing is re-implemented.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import torch
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
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
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len) if rope_type != "default" else (
        1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim)), 1.0)
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
    }
    OUT.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT.name}: {len(cases)} rope cases")


if __name__ == "__main__":
    main()
