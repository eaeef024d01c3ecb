"""The public API: every name importable from its module, the encodings' also from the package."""

import importlib
import inspect
import pkgutil

import pytest

import posenc

#: The export rule of posenc/__init__.py: the public names (``__all__``) of these modules are
#: importable from the package itself; those of the others (the book's tooling and chapter 6's
#: experiment) are imported from their modules. A new module must be put on one side.
REEXPORTED = {"attention", "sinusoidal", "learned", "rope", "alibi", "relative", "scaling", "mrope", "layers", "mla", "precision"}
BY_MODULE = {"markov", "model", "experiment", "interactive", "plotting", "book"}
MODULES = sorted(info.name for info in pkgutil.iter_modules(posenc.__path__) if not info.name.startswith("_"))


def test_every_module_is_on_one_side_of_the_export_rule():
    assert REEXPORTED.isdisjoint(BY_MODULE)
    assert set(MODULES) == REEXPORTED | BY_MODULE


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_is_importable_as_documented(module):
    """Every name of a module's ``__all__`` exists there; the re-exported ones are the same object
    in the package, and the package's ``__all__`` holds nothing else."""
    mod = importlib.import_module(f"posenc.{module}")
    for name in mod.__all__:
        assert hasattr(mod, name), f"posenc.{module}.__all__ names {name!r}, which the module lacks"
        if module in REEXPORTED:
            assert name in posenc.__all__, f"posenc.{module}.{name} is not in posenc.__all__"
            assert getattr(posenc, name) is getattr(mod, name), f"posenc.{name} is not posenc.{module}.{name}"


def test_the_package_exports_exactly_the_reexported_modules():
    reexported = {name for module in REEXPORTED for name in importlib.import_module(f"posenc.{module}").__all__}
    assert len(posenc.__all__) == len(set(posenc.__all__))
    assert set(posenc.__all__) == reexported
    public = {name for name in vars(posenc) if not name.startswith("_")} - set(MODULES)
    assert public == reexported, f"names in the package outside its __all__: {sorted(public - reexported)}"


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
