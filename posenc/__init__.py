"""posenc: positional encodings for transformers, in NumPy.

The companion package of the book *Positional Encodings, executable*.  One module
per idea:

- :mod:`posenc.attention`   scaled dot-product attention, softmax, causal masks
- :mod:`posenc.sinusoidal`  the sinusoidal encoding of Vaswani et al.
- :mod:`posenc.learned`     learned absolute position embeddings
- :mod:`posenc.rope`        rotary position embedding (RoFormer)
- :mod:`posenc.alibi`       attention with linear biases
- :mod:`posenc.relative`    T5's bucketed relative position bias
- :mod:`posenc.scaling`     RoPE context extension, every ``rope_type`` of Hugging Face 5.x, and configs
- :mod:`posenc.mrope`       multimodal RoPE: time, height and width positions (Qwen2-VL, Qwen3-VL)
- :mod:`posenc.layers`      local/global and NoPE layers (Gemma, Llama 4), their masks and temperature
- :mod:`posenc.mla`         decoupled RoPE in multi-head latent attention (DeepSeek-V2/V3)
- :mod:`posenc.precision`   rounding to bfloat16, to reproduce 16-bit production arithmetic

and, for the book and its experiment:

- :mod:`posenc.markov`      the experiment's task: an order-2 Markov chain with known optimal loss
- :mod:`posenc.model`       a small attention language model with hand-derived gradients
- :mod:`posenc.experiment`  train at one length, evaluate at longer ones (``python -m posenc.experiment``)
- :mod:`posenc.interactive` interactive figures for the static book (states chosen in the browser)
- :mod:`posenc.plotting`    the book's plot style and colours
- :mod:`posenc.book`        glue for the chapters' text and the display of posenc's own source

The export rule: every public name of the first eleven modules (their ``__all__``) is also
importable from the package itself (``from posenc import apply_rope``); the modules of the
second list are imported by name (``from posenc.experiment import run_experiment``).
``tests/test_package.py`` checks the rule against every module's ``__all__``.
"""

from .alibi import alibi_bias, alibi_bias_bloom, alibi_slopes
from .attention import causal_mask, relative_positions, scaled_dot_product_attention, softmax
from .layers import (
    chunked_causal_mask,
    llama4_layer_types,
    local_global_layer_types,
    query_temperature,
    rope_layers,
    sliding_window_causal_mask,
)
from .learned import LearnedPositionalEmbedding
from .mla import mla_scores, mla_softmax_scale
from .mrope import MRopePositions, apply_mrope, mrope_axes, mrope_position_ids, mrope_table
from .precision import round_to_bfloat16
from .relative import t5_relative_bias, t5_relative_position_bucket
from .rope import (
    apply_partial_rope,
    apply_rope,
    apply_rope_2d,
    apply_rope_complex,
    rope_angles,
    rope_decay_curve,
    rope_frequencies,
    rope_rotation_matrix,
    rope_table,
)
from .scaling import (
    ROPE_SCALING_FUNCTIONS,
    RopeScaling,
    default_scaling,
    dynamic_ntk_scaling,
    linear_scaling,
    llama3_scaling,
    longrope_attention_factor,
    longrope_scaling,
    ntk_scaling,
    proportional_scaling,
    rope_from_config,
    rope_scaling,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_scaling,
)
from .sinusoidal import (
    interleave_permutation,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    tensor2tensor_encoding,
    tensor2tensor_frequencies,
)

__version__ = "0.1.0"

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "relative_positions",
    "sinusoidal_frequencies",
    "sinusoidal_encoding",
    "sinusoidal_shift_matrix",
    "interleave_permutation",
    "tensor2tensor_frequencies",
    "tensor2tensor_encoding",
    "LearnedPositionalEmbedding",
    "rope_frequencies",
    "rope_angles",
    "rope_table",
    "apply_rope",
    "apply_rope_complex",
    "rope_rotation_matrix",
    "rope_decay_curve",
    "apply_rope_2d",
    "apply_partial_rope",
    "alibi_slopes",
    "alibi_bias",
    "alibi_bias_bloom",
    "t5_relative_position_bucket",
    "t5_relative_bias",
    "RopeScaling",
    "ROPE_SCALING_FUNCTIONS",
    "rope_scaling",
    "default_scaling",
    "linear_scaling",
    "ntk_scaling",
    "dynamic_ntk_scaling",
    "yarn_scaling",
    "yarn_correction_range",
    "yarn_attention_factor",
    "llama3_scaling",
    "longrope_scaling",
    "longrope_attention_factor",
    "proportional_scaling",
    "rope_from_config",
    "MRopePositions",
    "mrope_position_ids",
    "mrope_axes",
    "mrope_table",
    "apply_mrope",
    "rope_layers",
    "llama4_layer_types",
    "local_global_layer_types",
    "sliding_window_causal_mask",
    "chunked_causal_mask",
    "query_temperature",
    "mla_softmax_scale",
    "mla_scores",
    "round_to_bfloat16",
]
