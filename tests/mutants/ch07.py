"""Mutants of chapter 7 (``chapters/07_today.md``); see ``mutants/__init__.py``."""

from mutants import Mutant

#: Proportional RoPE computed with the partial-rotary convention: the exponent over the
#: rotated width ``2n`` instead of the whole head.
_PROPORTIONAL_OVER_ROTATED_WIDTH = """
import posenc.scaling as _scaling

def proportional_scaling(head_dim, *, base=10000.0, factor=1.0, partial_rotary_factor=1.0):
    n = int(partial_rotary_factor * head_dim // 2)
    freqs = np.zeros(head_dim // 2)
    freqs[:n] = rope_frequencies(2 * n, base)
    return _scaling.RopeScaling(freqs / factor, 1.0)
"""

#: M-RoPE whose planes take the frequency of their index within their own axis' planes.
_MROPE_PER_SECTION = """
import posenc.mrope as _mrope

def _per_section_table(position_ids, head_dim, *, mrope_section, mrope_interleaved=False, inv_freq=None,
                       base=10000.0, attention_factor=1.0, dtype="float64"):
    axes = _mrope.mrope_axes(head_dim, mrope_section=mrope_section, mrope_interleaved=mrope_interleaved)
    pos = np.asarray(position_ids, dtype=float)
    out = np.empty(pos.shape[1:] + (head_dim // 2,), dtype=complex)
    for axis in range(3):
        planes = np.flatnonzero(axes == axis)
        out[..., planes] = np.exp(1j * pos[axis][..., None] * rope_frequencies(2 * planes.size, base))
    return out * attention_factor

_mrope.mrope_table = _per_section_table
"""

#: Text tokens whose height position is one more than their time and width positions.
_MROPE_UNEQUAL_TEXT = """
_mrope_position_ids = mrope_position_ids

def mrope_position_ids(*args, **kwargs):
    found = _mrope_position_ids(*args, **kwargs)
    shifted = found.position_ids.copy()
    shifted[1] += 1
    return found._replace(position_ids=shifted)
"""

#: The naive design: RoPE on the up-projected content keys (and the content queries) in
#: the materialised scores, which the absorbed form cannot reproduce.
_MLA_ROTATED_CONTENT = """
_mla_scores = mla_scores

def mla_scores(q, c_kv, k_rope, positions, *, w_uk, softmax_scale, absorb=False, **kwargs):
    scores = _mla_scores(q, c_kv, k_rope, positions, w_uk=w_uk, softmax_scale=softmax_scale, absorb=absorb,
                         **kwargs)
    if absorb:
        return scores
    nope = w_uk.shape[-1]
    k_nope = np.einsum("tr,rhn->htn", c_kv, w_uk)
    q_nope = q[..., :nope]
    plain = q_nope @ np.swapaxes(k_nope, -1, -2)
    rotated = apply_rope(q_nope, positions) @ np.swapaxes(apply_rope(k_nope, positions), -1, -2)
    return scores + (rotated - plain) * softmax_scale
"""

#: RoPE on the content queries and the up-projected content keys in both paths: the absorbed
#: path materialises the keys to rotate them, so the two paths still agree, on offsets only.
_MLA_ROTATED_CONTENT_BOTH_PATHS = _MLA_ROTATED_CONTENT.replace("    if absorb:\n        return scores\n", "")

#: A ``llama3`` reader that ignores the configuration's ``high_freq_factor`` and uses
#: Llama 3.1's 4 (Scout sets 1, which removes the blended band).
_LLAMA3_DEFAULT_HIGH_FREQ = """
import posenc.scaling as _scaling

_llama3 = _scaling.ROPE_SCALING_FUNCTIONS["llama3"]

def _llama3_default_band(head_dim, **options):
    options["high_freq_factor"] = 4.0
    return _llama3(head_dim, **options)

_scaling.ROPE_SCALING_FUNCTIONS = {**_scaling.ROPE_SCALING_FUNCTIONS, "llama3": _llama3_default_band}
"""

#: A ``yarn`` reader that ignores ``truncate=False`` and rounds the ramp's ends to whole planes.
_YARN_ALWAYS_TRUNCATED = """
import posenc.scaling as _scaling

_yarn = _scaling.ROPE_SCALING_FUNCTIONS["yarn"]

def _yarn_rounded(head_dim, **options):
    options["truncate"] = True
    return _yarn(head_dim, **options)

_scaling.ROPE_SCALING_FUNCTIONS = {**_scaling.ROPE_SCALING_FUNCTIONS, "yarn": _yarn_rounded}
"""

#: LongRoPE's attention factor with the logarithm of the extended length s L0 instead of L0.
_LONGROPE_FACTOR_OVER_EXTENDED = """
import math
import posenc.scaling as _scaling

def longrope_attention_factor(*, factor, original_max_position):
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(factor * original_max_position))

_scaling.longrope_attention_factor = longrope_attention_factor
"""

MUTANTS = [
    Mutant(
        id="llama3-ignores-high-freq-factor",
        claim="That cell fails if a reader of Scout's row ignored its `high_freq_factor` of 1",
        cell="assert scout_kept + scout_divided == 64",
        at="def spectrum_row",
        fault="the llama3 rope type always uses high_freq_factor = 4 (Llama 3.1's), whatever the configuration says",
        patch=_LLAMA3_DEFAULT_HIGH_FREQ,
    ),
    Mutant(
        id="yarn-ignores-truncate-false",
        claim="or if gpt-oss's ramp were rounded to whole planes",
        cell="assert scout_kept + scout_divided == 64",
        at="def spectrum_row",
        fault="the yarn rope type always rounds the ramp's ends (truncate=True), ignoring gpt-oss's truncate=False",
        patch=_YARN_ALWAYS_TRUNCATED,
    ),
    Mutant(
        id="longrope-factor-log-of-extended-length",
        claim="The hidden check under the plane-by-plane cell fails if the factor took the logarithm of another length",
        cell="for computed in (longrope.attention_factor, phi3_attention):",
        at="la2_128k = np.array(",
        fault="longrope_attention_factor = sqrt(1 + ln s / ln(s L0)) instead of sqrt(1 + ln s / ln L0)",
        patch=_LONGROPE_FACTOR_OVER_EXTENDED,
    ),
    Mutant(
        id="proportional-exponent-over-rotated-width",
        claim="it fails if `proportional_scaling` took its exponent over the rotated width",
        cell="np.testing.assert_array_equal(gemma4_global[:64], full[:64])",
        fault="proportional RoPE's frequencies b^(-2i/(2n)) (partial-rotary convention) instead of b^(-2i/d)",
        patch=_PROPORTIONAL_OVER_ROTATED_WIDTH,
    ),
    Mutant(
        id="mrope-frequency-per-section",
        claim="The check would fail if `apply_mrope` gave a plane the frequency of its index within its own section",
        cell="text_only = mrope_position_ids(np.zeros(40, dtype=int)).position_ids",
        fault="mrope_table gives each axis the frequencies of a head as wide as its own planes",
        patch=_MROPE_PER_SECTION,
    ),
    Mutant(
        id="mrope-unequal-text-positions",
        claim="or if text tokens did not get equal positions on the three axes",
        cell="text_only = mrope_position_ids(np.zeros(40, dtype=int)).position_ids",
        fault="text tokens get height position m + 1 (time and width m)",
        patch=_MROPE_UNEQUAL_TEXT,
    ),
    Mutant(
        id="mla-rope-on-content-keys",
        claim="The agreement would fail if the rotation were applied to the up-projected content keys",
        cell="materialised = mla_scores(q_mla, latents, k_rope, pos, w_uk=w_uk, softmax_scale=scale)",
        fault="the materialised scores rotate the content queries and the up-projected content keys",
        patch=_MLA_ROTATED_CONTENT,
    ),
    Mutant(
        id="mla-rope-on-content-keys-in-both-paths",
        claim="it fails if the content keys were rotated in both paths",
        cell="direct = scale * np.einsum(",
        at="n_heads, rank, d_nope, d_rope, n_tok = 4, 16, 8, 4, 12",
        fault="both paths rotate the content queries and the up-projected content keys (the absorbed path "
        "materialises them), so they agree with each other and depend on offsets only",
        patch=_MLA_ROTATED_CONTENT_BOTH_PATHS,
    ),
]
