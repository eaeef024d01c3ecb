"""Mutants of chapter 2 (``chapters/02_sinusoidal.md``); see ``mutants/__init__.py``.

Besides the sentences that the trigger words find, the chapter says what several other
checks establish ("finds exactly the family", "holds again after conjugating"); those checks
get mutants too, so that none of them is true by construction.
"""

from mutants import Mutant


def _cosines_on(frequencies: str) -> str:
    """A patch: posenc's encoding with its cosines recomputed on ``frequencies`` (an expression)."""
    return f"""
import posenc.sinusoidal as _sinusoidal

def sinusoidal_encoding(positions, d_model, base=10000.0):
    pe = _sinusoidal.sinusoidal_encoding(positions, d_model, base)
    pos = np.arange(positions, dtype=float) if isinstance(positions, int) else np.asarray(positions, dtype=float)
    pe[..., 1::2] = np.cos(pos[..., None] * ({frequencies}))
    return pe
"""


#: M_k with the sign of the sines flipped in block 3 (a rotation the wrong way in one plane).
_SHIFT_ONE_BLOCK_WRONG = """
import posenc.sinusoidal as _sinusoidal

def sinusoidal_shift_matrix(k, d_model, base=10000.0):
    m = _sinusoidal.sinusoidal_shift_matrix(k, d_model, base)
    m[6, 7], m[7, 6] = -m[6, 7], -m[7, 6]
    return m
"""

MUTANTS = [
    Mutant(
        id="gram-cosines-other-grid",
        claim="would fail if the sines and the cosines used different sets of frequencies",
        cell="np.testing.assert_allclose(np.diagonal(G, offset=k), value",
        fault="the cosines of the encoding on the grid 1.02 omega_i",
        patch=_cosines_on("1.02 * _sinusoidal.sinusoidal_frequencies(d_model, base)"),
    ),
    Mutant(
        id="shift-cosine-next-frequency",
        claim="The check of the shift theorem above catches that fault",
        cell="np.testing.assert_allclose(sinusoidal_encoding(p + k, d),",
        fault="each cosine of the encoding takes the frequency of the next pair (the last the first's)",
        patch=_cosines_on("np.roll(_sinusoidal.sinusoidal_frequencies(d_model, base), -1)"),
    ),
    Mutant(
        id="shift-one-block-reversed",
        claim="The check covers positions from 0 to $10^4$, fractional and negative offsets",
        cell="np.testing.assert_allclose(sinusoidal_encoding(p + k, d),",
        fault="M_k rotates plane 3 the wrong way (the signs of its sines flipped)",
        patch=_SHIFT_ONE_BLOCK_WRONG,
    ),
    Mutant(
        id="determinant-prediction-without-factor",
        claim="compares it with the value the proof predicts",
        cell="np.testing.assert_allclose(float(abs(det_ext).ln()), log_det_pred",
        fault="the predicted |det E| without the factor 2^(-d/2) of the blocks C",
        replace=(("log_det_pred = ", "log_det_pred = -8 * np.log(2) + ", "log_det_pred = "),),
    ),
    Mutant(
        id="commutant-wrong-block-form",
        claim="finds exactly the $d$-dimensional family of part 3",
        cell="assert null_dim == d16 and same_span == d16",
        fault="part 3's blocks built from the symmetric [[0, 1], [1, 0]] instead of J",
        replace=(("for blk in (np.eye(2), J2)", "for blk in (np.eye(2), J2)",
                  "for blk in (np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]]))"),),
    ),
    Mutant(
        id="offset-scores-sine-sign",
        claim="compares scores computed from the encodings with the formula",
        cell="np.testing.assert_allclose(S, expected, atol=1e-9)",
        fault="the formula with the sine terms of the opposite sign (the offset q - p for p - q)",
        replace=(("expected = np.cos(", "+ np.sin(delta[..., None] * omega) @ beta_i",
                  "- np.sin(delta[..., None] * omega) @ beta_i"),),
    ),
    Mutant(
        id="conjugation-inverse-permutation",
        claim="it holds again after conjugating by the permutation",
        cell="assert right < 1e-12",
        fault="the permutation's inverse used in place of interleave_permutation",
        replace=(("Pi8 = np.eye(d8)", "np.eye(d8)[interleave_permutation(d8)]",
                  "np.eye(d8)[np.argsort(interleave_permutation(d8))]"),),
    ),
    Mutant(
        id="float32-bound-without-epsilon",
        claim="holds in every case; the cell checks it pair by pair",
        cell="assert all(x <= b for x, b in zip(err, bound))",
        fault="the bound 2 omega_i p u of correctly rounded frequencies applied to every frequency",
        replace=(("assert all(x <= b for x, b in zip(err, bound))", "f32_bound(e, w_i, p_ex)", "2 * u * w_i * p_ex"),),
    ),
    Mutant(
        id="float32-bound-position-above-2-24",
        claim="a third error that {eq}`eq-f32-bound` does not count",
        cell="assert all(x <= b for x, b in zip(err, bound))",
        fault="the check run at one more position, 16,779,887, above 2^24 (not stored exactly in float32)",
        replace=(("assert all(x <= b for x, b in zip(err, bound))", "for pos in positions:",
                  "for pos in np.append(positions, 16_779_887.0):"),),
    ),
    Mutant(
        id="counter-no-wrap",
        claim="The fourth step, the first whose carry runs further, breaks every such map",
        cell="assert every > 0.1 and first4 > 0.1 and first3 < 1e-12",
        fault="the check fitted to the first three steps only (no carry beyond bit 1)",
        replace=(("def affine_step_residual", "inputs = np.hstack([codes[:-1]", "codes = codes[:4]\n    inputs = np.hstack([codes[:-1]"),),
    ),
]
