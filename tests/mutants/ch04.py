"""Mutants of chapter 4 (``chapters/04_rope.md``); see ``mutants/__init__.py``."""

from mutants import Mutant, NotClaim

_OFFSET_CELL = "np.testing.assert_allclose(scores, closed, rtol=1e-9, atol=1e-9)"
_KV_CELL = "np.testing.assert_allclose(np.array(decoded), full, atol=1e-12)"
_LOOP_CELL = "assert rope_decay_curve([0], head_dim)[0] == (N + 1) / 2"
_EXTREMAL_CELL = "np.testing.assert_allclose(score_star, bound_star, rtol=1e-10)"
_CORR_CELL = "assert abs(s_corr.mean() - expected_corr([r0])[0]) < 5 * se_corr"
_AXIAL_CELL = "np.testing.assert_allclose(apply_rope_2d(q2[None], [r_], [c_])[0], expected_2d(q2, r_, c_), atol=1e-12)"

#: apply_rope_complex replaced in the chapter's namespace by a faulty rotation ({fault}).
_COMPLEX = """
import posenc.rope as _rope

def apply_rope_complex(x, positions, **kw):
    p = np.asarray(positions, dtype=float)
    return {body}
"""

#: rope_decay_curve with the partial sums {partial} in place of Z_1 .. Z_N.
_DECAY = """
def rope_decay_curve(distances, head_dim, *, base=10000.0):
    e = np.exp(1j * np.asarray(distances, dtype=float)[:, None] * rope_frequencies(head_dim, base)[None, :])
    return np.abs({partial}).mean(axis=1)
"""
_SHIFTED = "np.cumsum(e, axis=1) - e"  # Z_0 .. Z_(N-1)
_FROM_ONE = "np.cumsum(e, axis=1) - e[:, :1]"  # the sums start at l = 1

_ROPE_WRAP = """
import posenc.rope as _rope

def apply_rope(x, positions=None, **kw):
    {body}
"""

_AXIAL = """
import posenc.rope as _rope

def apply_rope_2d(x, rows, cols, **kw):
    return _rope.apply_rope_2d(x, {rows}, {cols}, **kw)
"""

MUTANTS = [
    Mutant(
        id="offset-nonlinear-position",
        claim="rotated by a non-linear function of the position",
        cell=_OFFSET_CELL,
        fault="apply_rope_complex rotates position p by the angles of p + 1e-6 p^2",
        patch=_COMPLEX.format(body="_rope.apply_rope_complex(x, p + 1e-6 * p**2, **kw)"),
    ),
    Mutant(
        id="offset-wrong-sign",
        claim="rotated by $-m\\theta_i$ (the wrong sign)",
        cell=_OFFSET_CELL,
        fault="apply_rope_complex rotates by -m theta_i",
        patch=_COMPLEX.format(body="_rope.apply_rope_complex(x, -p, **kw)"),
    ),
    Mutant(
        id="offset-wrong-pairs",
        claim="or paired the wrong coordinates",
        cell=_OFFSET_CELL,
        fault="the rotation pairs coordinates (i, i + d/2) instead of (2i, 2i + 1)",
        patch=_COMPLEX.format(body="_rope.apply_rope(x, p, layout='half')"),
    ),
    Mutant(
        id="offset-additive-encoding",
        claim="An additive encoding fails the same test.",
        cell=_OFFSET_CELL,
        fault="the sinusoidal encoding added to q and k instead of the rotation",
        patch=_COMPLEX.format(body="x + sinusoidal_encoding(p, np.shape(x)[-1])"),
    ),
    Mutant(
        id="offset-wrong-sign-comment",
        claim="A wrong-sign rotation (by -m theta_i) is still offset-only, but fails the closed form.",
        cell=_OFFSET_CELL,
        fault="apply_rope_complex rotates by -m theta_i",
        patch=_COMPLEX.format(body="_rope.apply_rope_complex(x, -p, **kw)"),
    ),
    Mutant(
        id="norm-scaling-bug",
        claim="It catches scaling bugs only",
        cell="np.testing.assert_allclose(np.linalg.norm(apply_rope(x64, far, layout=layout), axis=1)",
        fault="apply_rope multiplies its output by 1.001",
        patch=_ROPE_WRAP.format(body="return 1.001 * _rope.apply_rope(x, positions, **kw)"),
    ),
    Mutant(
        id="kv-cache-batch-length",
        claim="it would fail if `apply_rope` depended on the length of the batch it is given or on other tokens",
        cell=_KV_CELL,
        fault="apply_rope scales the positions by 1 + 0.001 (T - 1), T the length of the batch it is given",
        patch=_ROPE_WRAP.format(body="x = np.asarray(x)\n    p = np.asarray(positions, dtype=float) * (1 + 1e-3 * (x.shape[-2] - 1))\n"
                                "    return _rope.apply_rope(x, p, **kw)"),
    ),
    Mutant(
        id="kv-cache-other-tokens",
        claim="it would fail if `apply_rope` depended on the length of the batch it is given or on other tokens",
        cell=_KV_CELL,
        fault="apply_rope adds 0.001 times the mean of the tokens it is given",
        patch=_ROPE_WRAP.format(body="return _rope.apply_rope(x, positions, **kw) + 1e-3 * np.asarray(x).mean(axis=-2, keepdims=True)"),
    ),
    Mutant(
        id="abel-identity-misindexed",
        claim="it would fail if the identity were mis-indexed, with $Z_{j-1}$ in place of $Z_j$",
        cell="np.testing.assert_allclose(phases @ h, -Z @ (h_ext[1:] - h_ext[:-1]), atol=1e-9)",
        fault="the identity computed with Z_0 .. Z_(N-1)",
        replace=(("Z = np.cumsum(phases, axis=1)", "Z = np.cumsum(phases, axis=1)", "Z = np.cumsum(phases, axis=1) - phases"),),
    ),
    Mutant(
        id="decay-curve-shifted-sums-loop",
        claim="would each fail if `rope_decay_curve` summed the wrong partial sums",
        cell=_LOOP_CELL,
        fault="rope_decay_curve averages |Z_0| .. |Z_(N-1)|",
        patch=_DECAY.format(partial=_SHIFTED),
    ),
    Mutant(
        id="decay-curve-from-one-loop",
        claim="would each fail if `rope_decay_curve` summed the wrong partial sums",
        cell=_LOOP_CELL,
        fault="rope_decay_curve's partial sums start at l = 1",
        patch=_DECAY.format(partial=_FROM_ONE),
    ),
    Mutant(
        id="decay-curve-shifted-sums-extremal",
        claim="would each fail if `rope_decay_curve` summed the wrong partial sums",
        cell=_EXTREMAL_CELL,
        fault="rope_decay_curve averages |Z_0| .. |Z_(N-1)|",
        patch=_DECAY.format(partial=_SHIFTED),
    ),
    Mutant(
        id="decay-curve-from-one-extremal",
        claim="would each fail if `rope_decay_curve` summed the wrong partial sums",
        cell=_EXTREMAL_CELL,
        fault="rope_decay_curve's partial sums start at l = 1",
        patch=_DECAY.format(partial=_FROM_ONE),
    ),
    Mutant(
        id="expected-score-wrong-base",
        claim="would fail if `apply_rope` rotated with a wrong base or frequency grid (base 500,",
        cell=_CORR_CELL,
        fault="apply_rope's default base is 500",
        patch=_ROPE_WRAP.format(body="kw.setdefault('base', 500.0)\n    return _rope.apply_rope(x, positions, **kw)"),
    ),
    Mutant(
        id="expected-score-grid-off-by-one",
        claim="or the exponents $2i + 2$ in place of $2i$, passed to `apply_rope`",
        cell=_CORR_CELL,
        fault="apply_rope turns plane i with base^(-(2i + 2)/d), the grid shifted by one plane",
        patch=_ROPE_WRAP.format(
            body="d = np.shape(x)[-1]\n"
            "    kw.setdefault('inv_freq', 10000.0 ** (-(2 * np.arange(d // 2) + 2) / d))\n"
            "    return _rope.apply_rope(x, positions, **kw)"
        ),
    ),
    Mutant(
        id="expected-score-rope-frequencies-off-by-one",
        claim="or computed by `rope_frequencies` itself)",
        cell=_CORR_CELL,
        fault="rope_frequencies returns base^(-(2i + 2)/d) everywhere (in posenc.rope, so apply_rope rotates "
              "with that grid, in the package and in the chapter's namespace)",
        patch="""
import posenc
import posenc.rope as _rope

_rope.rope_frequencies = lambda head_dim, base=10000.0: base ** (-(np.arange(0, head_dim, 2) + 2.0) / head_dim)
posenc.rope_frequencies = rope_frequencies = _rope.rope_frequencies
""",
    ),
    Mutant(
        id="expected-score-slowest-plane-unrotated",
        claim="or left its slowest plane unrotated",
        cell=_CORR_CELL,
        fault="apply_rope leaves the slowest plane (theta_(d/2-1)) unrotated",
        patch=_ROPE_WRAP.format(
            body="d = np.shape(x)[-1]\n"
            "    kw.setdefault('inv_freq', np.r_[_rope.rope_frequencies(d)[:-1], 0.0])\n"
            "    return _rope.apply_rope(x, positions, **kw)"
        ),
    ),
    Mutant(
        id="expected-score-base-500-comment",
        claim="the test can fail: apply_rope with a wrong frequency grid (base 500) misses the formula at offset 100",
        cell=_CORR_CELL,
        fault="apply_rope's default base is 500",
        patch=_ROPE_WRAP.format(body="kw.setdefault('base', 500.0)\n    return _rope.apply_rope(x, positions, **kw)"),
    ),
    Mutant(
        id="axial-ignores-rows",
        claim="an implementation that ignored the rows (or the columns)",
        cell=_AXIAL_CELL,
        fault="apply_rope_2d puts every patch in row 0",
        patch=_AXIAL.format(rows="np.zeros(np.shape(rows))", cols="cols"),
    ),
    Mutant(
        id="axial-ignores-columns",
        claim="an implementation that ignored the rows (or the columns)",
        cell=_AXIAL_CELL,
        fault="apply_rope_2d puts every patch in column 0",
        patch=_AXIAL.format(rows="rows", cols="np.zeros(np.shape(cols))"),
    ),
    Mutant(
        id="axial-1d-frequencies",
        claim="or turned the planes with the 1D frequencies",
        cell=_AXIAL_CELL,
        fault="apply_rope_2d turns its planes with base^(-2j/d), the first d/4 frequencies of 1D RoPE",
        patch="""
def apply_rope_2d(x, rows, cols, *, base=100.0):
    x = np.asarray(x, dtype=float)
    half = x.shape[-1] // 2
    theta = rope_frequencies(x.shape[-1], base)[: x.shape[-1] // 4]
    out = np.empty_like(x)
    out[..., :half] = apply_rope_complex(x[..., :half], cols, inv_freq=theta)
    out[..., half:] = apply_rope_complex(x[..., half:], rows, inv_freq=theta)
    return out
""",
    ),
]

NOT_CLAIMS = [
    NotClaim(
        text="The proposition rules out only this naive rotation of the values",
        why="says what prop-rope-values excludes, not what a check detects",
    ),
]
