r"""Layers that see positions differently: local and global attention, layers without RoPE.

Production models no longer give every layer the same positional treatment:

* Gemma 2, 3 and 4 alternate *local* layers, which attend within a sliding window and use
  RoPE with a small base, and *global* layers, which attend to the whole context with a
  larger base (Gemma 3), or with proportional RoPE on a wider head (Gemma 4)
  (:func:`local_global_layer_types`, :func:`sliding_window_causal_mask`; the per-layer-type
  frequencies come from :func:`posenc.scaling.rope_from_config`).
* Llama 4 interleaves RoPE layers restricted to chunks of 8192 tokens with global layers
  that have *no* positional encoding at all (NoPE), one in four (:func:`rope_layers`,
  :func:`llama4_layer_types`, :func:`chunked_causal_mask`); its NoPE layers multiply the
  queries by a temperature that grows with the logarithm of the position
  (:func:`query_temperature`). SmolLM3 uses the same ``no_rope_layers`` fields.

Everything follows the config classes and masks of Hugging Face transformers 5.24.0
(``models/gemma2``, ``models/gemma3``, ``models/gemma4``, ``models/llama4``,
``models/smollm3``, ``masking_utils``).
"""

from __future__ import annotations

import numpy as np

from ._checks import _show, as_int_array, as_position_array, check_bool, check_float, check_int
from .attention import relative_positions

__all__ = [
    "rope_layers",
    "llama4_layer_types",
    "local_global_layer_types",
    "sliding_window_causal_mask",
    "chunked_causal_mask",
    "query_temperature",
]


def rope_layers(num_hidden_layers: int, *, no_rope_layers=None, no_rope_layer_interval: int = 4) -> np.ndarray:
    r"""Which layers apply RoPE, as Llama 4's and SmolLM3's configs define them.

    The config field ``no_rope_layers`` holds, despite its name, a 1 for every layer that
    *uses* RoPE and a 0 for a NoPE layer. When it is absent, every
    ``no_rope_layer_interval``-th layer (layers ``k - 1, 2k - 1, ...``, counting from 0) is
    a NoPE layer: ``int((i + 1) % k != 0)``.

    Parameters
    ----------
    num_hidden_layers : int
        Number of layers ``L >= 1``.
    no_rope_layers : array_like of {0, 1}, optional
        The config's list, one flag per layer (Hugging Face's config rejects a list of
        another length, through its ``layer_types``). An empty list counts as absent, as
        in Hugging Face.
    no_rope_layer_interval : int, default 4
        ``k >= 1``, used when ``no_rope_layers`` is absent.

    Returns
    -------
    numpy.ndarray of bool, shape (num_hidden_layers,)
        True where the layer applies RoPE.

    References
    ----------
    Hugging Face transformers 5.24.0, ``Llama4TextConfig.__post_init__`` and
    ``SmolLM3Config.__post_init__``; ``Llama4TextAttention.use_rope``.
    """
    n = check_int("num_hidden_layers", num_hidden_layers, minimum=1)
    k = check_int("no_rope_layer_interval", no_rope_layer_interval, minimum=1)
    if no_rope_layers is None or len(no_rope_layers) == 0:
        return (np.arange(1, n + 1) % k) != 0
    flags = as_int_array("no_rope_layers", no_rope_layers)
    if flags.shape != (n,) or not np.isin(flags, (0, 1)).all():
        raise ValueError(
            f"no_rope_layers: expected num_hidden_layers = {n} flags, each 0 (NoPE) or 1 (RoPE), "
            f"got {_show(no_rope_layers)}"
        )
    return flags.astype(bool)


def llama4_layer_types(
    num_hidden_layers: int,
    *,
    no_rope_layers=None,
    no_rope_layer_interval: int = 4,
    attention_chunk_size: int | None = 8192,
) -> tuple:
    r"""Llama 4's layer types: RoPE layers attend within chunks, NoPE layers globally.

    A layer is ``"chunked_attention"`` when it uses RoPE (:func:`rope_layers`) and
    ``attention_chunk_size`` is set, and ``"full_attention"`` otherwise: with the defaults,
    three chunked RoPE layers, then one global NoPE layer ("iRoPE").

    Parameters
    ----------
    num_hidden_layers : int
        Number of layers ``L >= 1`` (48 for Llama 4 Scout and Maverick).
    no_rope_layers : array_like of {0, 1}, optional
        See :func:`rope_layers`.
    no_rope_layer_interval : int, default 4
    attention_chunk_size : int or None, default 8192
        Chunk length of the local layers; None makes every layer global.

    Returns
    -------
    tuple of str, length num_hidden_layers
        ``"chunked_attention"`` or ``"full_attention"`` per layer.

    References
    ----------
    Hugging Face transformers 5.24.0, ``Llama4TextConfig.__post_init__`` (``layer_types``).
    """
    use_rope = rope_layers(num_hidden_layers, no_rope_layers=no_rope_layers,
                           no_rope_layer_interval=no_rope_layer_interval)
    if attention_chunk_size is not None:
        check_int("attention_chunk_size", attention_chunk_size, minimum=1)
    return tuple("chunked_attention" if r and attention_chunk_size is not None else "full_attention"
                 for r in use_rope)


def local_global_layer_types(
    num_hidden_layers: int, *, sliding_window_pattern: int, last_global: bool = False
) -> tuple:
    r"""Gemma's local/global pattern: every ``sliding_window_pattern``-th layer is global.

    Layer ``i`` (from 0) is ``"full_attention"`` when ``(i + 1) % k == 0`` and
    ``"sliding_attention"`` otherwise: ``k = 2`` alternates (Gemma 2), ``k = 6`` gives five
    local layers per global one (Gemma 3, Gemma 4 31B), ``k = 5`` four (Gemma 4 E2B, in
    Google DeepMind's ``gemma`` library). transformers' ``Gemma4TextConfig`` also forces the
    last layer to be global (``last_global=True``).

    Parameters
    ----------
    num_hidden_layers : int
        Number of layers ``L >= 1``.
    sliding_window_pattern : int
        ``k >= 1``.
    last_global : bool, default False
        Make the last layer global whatever ``k`` says (Gemma 4).

    Returns
    -------
    tuple of str, length num_hidden_layers

    References
    ----------
    Hugging Face transformers 5.24.0, ``Gemma2Config``, ``Gemma3TextConfig`` and
    ``Gemma4TextConfig`` (``layer_types``); Gemma Team (2025), "Gemma 3 Technical Report",
    arXiv:2503.19786, section 2.
    """
    n = check_int("num_hidden_layers", num_hidden_layers, minimum=1)
    k = check_int("sliding_window_pattern", sliding_window_pattern, minimum=1)
    last_global = check_bool("last_global", last_global)
    types_ = ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n)]
    if last_global:
        types_[-1] = "full_attention"
    return tuple(types_)


def sliding_window_causal_mask(n_queries: int, n_keys: int | None = None, *, sliding_window: int) -> np.ndarray:
    r"""Boolean mask of a local layer: each query sees itself and the ``sliding_window - 1`` keys before it.

    Key ``j`` is visible to the query at position ``i`` when :math:`i - W < j \le i`
    (``W`` = ``sliding_window``). Queries are aligned to the last keys as in
    :func:`posenc.attention.causal_mask`.

    Parameters
    ----------
    n_queries : int
        Number of queries, ``T_q >= 1``.
    n_keys : int, optional
        Number of keys, ``T_k >= T_q``; defaults to ``n_queries``.
    sliding_window : int
        ``W >= 1`` (4096 in Gemma 2, 1024 in Gemma 3, 512 or 1024 in Gemma 4).

    Returns
    -------
    numpy.ndarray of bool, shape (T_q, T_k)
        True where the query may attend to the key.

    References
    ----------
    Hugging Face transformers 5.24.0, ``masking_utils.sliding_window_causal_mask_function``
    (``kv_idx > q_idx - sliding_window`` and ``kv_idx <= q_idx``).
    """
    window = check_int("sliding_window", sliding_window, minimum=1)
    offset = relative_positions(n_queries, n_keys)  # j - i
    return (offset <= 0) & (offset > -window)


def chunked_causal_mask(n_queries: int, n_keys: int | None = None, *, attention_chunk_size: int) -> np.ndarray:
    r"""Boolean mask of Llama 4's chunked layers: causal attention within chunks of ``C`` tokens.

    Key ``j`` is visible to the query at position ``i`` when :math:`j \le i` and
    :math:`\lfloor j / C \rfloor = \lfloor i / C \rfloor`: the first token of a chunk sees
    only itself, whatever came before. Queries are aligned to the last keys as in
    :func:`posenc.attention.causal_mask` (no left padding).

    Parameters
    ----------
    n_queries : int
        Number of queries, ``T_q >= 1``.
    n_keys : int, optional
        Number of keys, ``T_k >= T_q``; defaults to ``n_queries``.
    attention_chunk_size : int
        ``C >= 1`` (8192 in Llama 4).

    Returns
    -------
    numpy.ndarray of bool, shape (T_q, T_k)

    References
    ----------
    Hugging Face transformers 5.24.0, ``masking_utils.chunked_causal_mask_function``
    (``kv_idx // chunk_size == q_idx // chunk_size`` and ``kv_idx <= q_idx``).
    """
    chunk = check_int("attention_chunk_size", attention_chunk_size, minimum=1)
    offset = relative_positions(n_queries, n_keys)  # j - i
    n_keys = offset.shape[1]
    i = np.arange(n_queries)[:, None] + (n_keys - n_queries)
    j = np.arange(n_keys)[None, :]
    return (offset <= 0) & (i // chunk == j // chunk)


def query_temperature(positions, *, floor_scale: float = 8192, attn_scale: float = 0.1) -> np.ndarray:
    r"""Llama 4's temperature for the queries of its NoPE layers.

    .. math:: \tau(n) = 1 + \alpha \ln\Bigl(1 + \Bigl\lfloor \frac{n + 1}{F} \Bigr\rfloor\Bigr)

    with ``F`` = ``floor_scale`` and :math:`\alpha` = ``attn_scale``: 1 for the first
    ``F - 1`` positions, then a step every ``F`` tokens, growing like :math:`\alpha \ln(n/F)`.
    The query at position ``n`` is multiplied by :math:`\tau(n)` before the scores, which
    sharpens the softmax of a layer without positions as the context, and with it the
    number of keys competing, grows (Nakanishi (2025), "Scalable-Softmax Is Superior for
    Attention", arXiv:2501.19399, which Hugging Face's code cites, motivates a scale
    growing with :math:`\ln n`).

    Parameters
    ----------
    positions : array_like of real, any shape
        Token positions ``n >= 0``; Hugging Face uses the index of the token in the
        sequence (``arange(T)`` plus the number of tokens already in the cache), not
        ``position_ids``.
    floor_scale : float, default 8192
        ``F > 0``.
    attn_scale : float, default 0.1
        :math:`\alpha \ge 0`.

    Returns
    -------
    numpy.ndarray of float64, shape of ``positions``

    References
    ----------
    Hugging Face transformers 5.24.0, ``Llama4TextAttention.forward``
    (``attn_temperature_tuning``; float32 there); ``Llama4TextConfig`` (``floor_scale``,
    ``attn_scale``).
    """
    pos = as_position_array("positions", positions)
    if np.any(pos < 0):
        raise ValueError(f"positions: expected positions >= 0, got a minimum of {pos.min()}")
    floor_scale = check_float("floor_scale", floor_scale, positive=True)
    attn_scale = check_float("attn_scale", attn_scale, minimum=0.0)
    return np.log1p(np.floor((pos + 1.0) / floor_scale)) * attn_scale + 1.0
