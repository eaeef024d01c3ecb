"""Mutants of chapter 6 (``chapters/06_extrapolation.md``); see ``mutants/__init__.py``."""

from mutants import Mutant, NotClaim

MUTANTS = [
    Mutant(
        id="pi-other-factor",
        claim="it fails if PI divided by any other factor",
        cell="np.testing.assert_allclose(top * pi_freq, (2048 - 1) * theta64, rtol=1e-13)",
        fault="linear_scaling divides the frequencies by 1.001 s instead of s",
        patch=(
            "from posenc.scaling import RopeScaling as _RS\n"
            "linear_scaling = lambda d, *, factor, base=10000.0: _RS(rope_frequencies(d, base) / (1.001 * factor), 1.0)\n"
        ),
    ),
    Mutant(
        id="yarn-ramp-edge-moved",
        claim="they fail if a ramp edge moves by one plane",
        cell="assert yarn_correction_range(d, original_max_position=L0, base=base) == edges",
        fault="the released ramp's lower edge one plane later (yarn_correction_range returns low + 1)",
        patch=(
            "import posenc.scaling as _scaling\n"
            "_range = _scaling.yarn_correction_range\n"
            "def _moved(*args, **kwargs):\n"
            "    low, high = _range(*args, **kwargs)\n"
            "    return low + 1, high\n"
            "_scaling.yarn_correction_range = _moved\n"
            "yarn_correction_range = _moved\n"
        ),
        at='"YaRN": yarn_freq / theta,',
    ),
    Mutant(
        id="ntk-end-point",
        claim="if the NTK ratios stop being geometric or miss an end point",
        cell="np.testing.assert_allclose(r_ntk[-1], 1 / s, rtol=1e-12)",
        fault="NTK-aware base b s^(d/(d-1)) instead of b s^(d/(d-2)): the slowest plane is not divided by s",
        patch=(
            "from posenc.scaling import RopeScaling as _RS\n"
            "ntk_scaling = lambda d, *, factor, base=10000.0: _RS(rope_frequencies(d, base * factor ** (d / (d - 1))), 1.0)\n"
        ),
        at='"YaRN": yarn_freq / theta,',
    ),
    Mutant(
        id="ntk-not-geometric",
        claim="if the NTK ratios stop being geometric or miss an end point",
        cell="np.testing.assert_allclose(np.diff(np.log(r_ntk)), np.log(1 / s) / (d // 2 - 1), rtol=1e-9)",
        fault="NTK-aware ratios linear from 1 to 1/s across the planes (same end points, not geometric)",
        patch=(
            "from posenc.scaling import RopeScaling as _RS\n"
            "ntk_scaling = lambda d, *, factor, base=10000.0: _RS(rope_frequencies(d, base) * "
            "np.linspace(1.0, 1.0 / factor, d // 2), 1.0)\n"
        ),
        at='"YaRN": yarn_freq / theta,',
    ),
    Mutant(
        id="llama3-band-misplaced",
        claim="or if a band is misplaced",
        cell='assert np.array_equal(ratios["Llama 3.1"] == 1.0, lam3 < l3_L0 / 4)',
        fault="Llama 3.1's high_freq_factor 2 instead of 4 (the kept band reaches L0 / 2)",
        patch=(
            "import posenc.scaling as _scaling\n"
            "_l3 = _scaling.llama3_scaling\n"
            "llama3_scaling = lambda d, **kw: _l3(d, **{**kw, 'high_freq_factor': 2.0})\n"
        ),
        at='"YaRN": yarn_freq / theta,',
    ),
    Mutant(
        id="dynamic-ntk-transcription-slip",
        claim="so it can only catch a slip in `posenc`'s transcription",
        cell="np.testing.assert_allclose(dyn[L][-1], expected, rtol=1e-12)",
        fault="dynamic NTK's effective factor s L / L0 - s (a slip: the + 1 dropped)",
        patch=(
            "from posenc.scaling import RopeScaling as _RS\n"
            "def dynamic_ntk_scaling(d, *, factor, seq_len, original_max_position, base=10000.0):\n"
            "    length = max(seq_len, original_max_position)\n"
            "    f = max(1.0, factor * length / original_max_position - factor)\n"
            "    return _RS(rope_frequencies(d, base * f ** (d / (d - 2))), 1.0)\n"
        ),
    ),
]

NOT_CLAIMS = [
    NotClaim(
        text="sinusoidal and learned fail at once",
        why="describes the recorded losses (the schemes degrade past the training length), not a check",
    ),
    NotClaim(
        text="use it to explain why RoPE fails to extrapolate",
        why="reports what a cited paper argues about models, not what a check of the chapter catches",
    ),
]
