"""The public API: every name importable from its module and from the package."""

import importlib
import inspect

import pytest

import posenc

TABLE = {
    "sinusoidal": ["sinusoidal_frequencies", "sinusoidal_encoding", "sinusoidal_shift_matrix"],
    "learned": ["LearnedPositionalEmbedding"],
    "rope": ["rope_frequencies", "rope_table", "apply_rope", "apply_rope_complex", "apply_rope_2d", "apply_partial_rope"],
    "alibi": ["alibi_slopes", "alibi_bias"],
    "relative": ["t5_relative_position_bucket"],
    "scaling": ["RopeScaling", "ROPE_SCALING_FUNCTIONS", "rope_scaling", "default_scaling", "linear_scaling", "ntk_scaling",
                "dynamic_ntk_scaling", "yarn_scaling", "yarn_correction_range", "yarn_attention_factor", "llama3_scaling",
                "longrope_scaling", "longrope_attention_factor", "proportional_scaling", "rope_from_config"],
    "mrope": ["MRopePositions", "mrope_position_ids", "mrope_axes", "mrope_table", "apply_mrope"],
    "layers": ["rope_layers", "llama4_layer_types", "local_global_layer_types", "sliding_window_causal_mask",
               "chunked_causal_mask", "query_temperature"],
    "mla": ["mla_softmax_scale", "mla_scores"],
    "attention": ["softmax", "scaled_dot_product_attention", "causal_mask"],
    "interactive": ["interactive_figure", "InteractiveFigure"],
    "markov": ["MarkovChain", "make_chain", "sample_sequences", "entropy_rate", "bigram_entropy", "unigram_entropy", "optimal_nll"],
    "model": ["ModelConfig", "init_params", "loss_and_grads"],
    "experiment": ["ExperimentConfig", "run_experiment", "summarize", "plot_results"],
}

SIGNATURES = {
    "sinusoidal_frequencies": "(d_model, base=10000.0)",
    "sinusoidal_encoding": "(positions, d_model, base=10000.0)",
    "sinusoidal_shift_matrix": "(k, d_model, base=10000.0)",
    "rope_frequencies": "(head_dim, base=10000.0)",
    "apply_rope": "(x, positions=None, *, inv_freq=None, base=10000.0, layout='interleaved', attention_factor=1.0, "
                  "table=None)",
    "rope_table": "(positions, head_dim, *, inv_freq=None, base=10000.0, attention_factor=1.0, "
                  "dtype='float64')",
    "apply_rope_complex": "(x, positions, *, inv_freq=None, base=10000.0)",
    "apply_rope_2d": "(x, rows, cols, *, base=100.0)",
    "alibi_slopes": "(n_heads)",
    "alibi_bias": "(n_heads, n_queries, n_keys=None, *, causal=True)",
    "t5_relative_position_bucket": "(relative_position, *, bidirectional=True, num_buckets=32, max_distance=128)",
    "rope_scaling": "(head_dim, *, rope_type, **params)",
    "default_scaling": "(head_dim, *, base=10000.0, partial_rotary_factor=1.0)",
    "linear_scaling": "(head_dim, *, factor, base=10000.0, partial_rotary_factor=1.0)",
    "ntk_scaling": "(head_dim, *, factor, base=10000.0, partial_rotary_factor=1.0)",
    "dynamic_ntk_scaling": "(head_dim, *, factor, seq_len, original_max_position, base=10000.0, "
                           "partial_rotary_factor=1.0)",
    "yarn_scaling": "(head_dim, *, factor, original_max_position, base=10000.0, beta_fast=32.0, beta_slow=1.0, "
                    "truncate=True, ramp='released', attention_factor=None, mscale=None, mscale_all_dim=None, "
                    "partial_rotary_factor=1.0)",
    "yarn_correction_range": "(head_dim, *, original_max_position, base=10000.0, beta_fast=32.0, beta_slow=1.0, "
                             "truncate=True)",
    "yarn_attention_factor": "(*, factor, mscale=None, mscale_all_dim=None)",
    "llama3_scaling": "(head_dim, *, factor, original_max_position, base=10000.0, low_freq_factor=1.0, "
                      "high_freq_factor=4.0, partial_rotary_factor=1.0)",
    "longrope_scaling": "(head_dim, *, short_factor, long_factor, original_max_position, base=10000.0, factor=None, "
                        "max_position=None, attention_factor=None, seq_len=None, partial_rotary_factor=1.0)",
    "longrope_attention_factor": "(*, factor, original_max_position)",
    "proportional_scaling": "(head_dim, *, base=10000.0, factor=1.0, partial_rotary_factor=1.0)",
    "rope_from_config": "(config, *, seq_len=None)",
    "apply_partial_rope": "(x, positions, *, inv_freq, layout='half', attention_factor=1.0)",
    "mrope_position_ids": "(mm_token_type_ids, *, image_grid_thw=None, video_grid_thw=None, spatial_merge_size=2, "
                          "tokens_per_second=None, second_per_grid_ts=None, split_video_frames=False)",
    "mrope_axes": "(head_dim, *, mrope_section, mrope_interleaved=False)",
    "mrope_table": "(position_ids, head_dim, *, mrope_section, mrope_interleaved=False, inv_freq=None, base=10000.0, "
                   "attention_factor=1.0, dtype='float64')",
    "apply_mrope": "(x, position_ids, *, mrope_section, mrope_interleaved=False, inv_freq=None, base=10000.0, "
                   "attention_factor=1.0)",
    "rope_layers": "(num_hidden_layers, *, no_rope_layers=None, no_rope_layer_interval=4)",
    "llama4_layer_types": "(num_hidden_layers, *, no_rope_layers=None, no_rope_layer_interval=4, "
                          "attention_chunk_size=8192)",
    "local_global_layer_types": "(num_hidden_layers, *, sliding_window_pattern, last_global=False)",
    "sliding_window_causal_mask": "(n_queries, n_keys=None, *, sliding_window)",
    "chunked_causal_mask": "(n_queries, n_keys=None, *, attention_chunk_size)",
    "query_temperature": "(positions, *, floor_scale=8192, attn_scale=0.1)",
    "mla_softmax_scale": "(qk_head_dim, *, factor=1.0, mscale_all_dim=0.0)",
    "mla_scores": "(q, c_kv, k_rope, positions, *, w_uk, softmax_scale, inv_freq=None, base=10000.0, "
                  "attention_factor=1.0, layout='interleaved', absorb=False)",
    "softmax": "(x, axis=-1)",
    "scaled_dot_product_attention": "(q, k, v, *, bias=None, mask=None)",
    "causal_mask": "(n_queries, n_keys=None)",
    "LearnedPositionalEmbedding": "(max_len, d_model, *, std=0.02, seed=0)",
}


@pytest.mark.parametrize("module,name", [(m, n) for m, names in TABLE.items() for n in names])
def test_importable_from_module_and_package(module, name):
    mod = importlib.import_module(f"posenc.{module}")
    assert getattr(mod, name) is getattr(posenc, name)
    assert name in posenc.__all__


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures_are_the_documented_ones(name):
    sig = inspect.signature(getattr(posenc, name))
    plain = sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
                        return_annotation=inspect.Signature.empty)
    assert str(plain) == SIGNATURES[name]


@pytest.mark.parametrize("name", [n for n in posenc.__all__ if callable(getattr(posenc, n))])
def test_every_public_function_has_a_numpy_docstring(name):
    doc = inspect.getdoc(getattr(posenc, name))
    assert doc and ("Returns" in doc or "Parameters" in doc), name
