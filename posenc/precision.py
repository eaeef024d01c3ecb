r"""Rounding to bfloat16, the 16-bit format NumPy lacks, to reproduce what production code computes.

Models are trained and run in bfloat16: Hugging Face's Llama casts its RoPE cos/sin table to
the model's dtype, BLOOM casts its ALiBi row to it (chapters 4 and 5 measure what that costs).
NumPy has ``float16`` but no bfloat16, so :func:`round_to_bfloat16` rounds to it explicitly
and returns the rounded values in float64, where the rest of a computation can go on exactly.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array

__all__ = ["round_to_bfloat16"]


def round_to_bfloat16(x) -> np.ndarray:
    r"""Round to the nearest bfloat16 value (ties to even); return it as float64.

    A bfloat16 is the upper half of a float32: the sign, the same 8 exponent bits and the
    top 7 of the 23 fraction bits, so 8 significant bits and a relative rounding error of
    at most :math:`2^{-8}`. ``x`` is first rounded to float32 (production tensors are
    float32 before the cast); rounding that float32 to bfloat16 adds ``0x7FFF`` plus the
    lowest bit that is kept to its bit pattern (round to nearest, ties to even) and clears
    the lower 16 bits, as PyTorch's ``c10::BFloat16`` does. A float32 beyond the largest
    bfloat16 (about :math:`3.39 \cdot 10^{38}`) rounds to infinity.

    Parameters
    ----------
    x : array_like of float, any shape
        Finite values.

    Returns
    -------
    numpy.ndarray of float64, shape of ``x``

    Raises
    ------
    TypeError
        If ``x`` is not an array of real floating-point numbers (or of integers given as a
        list).
    ValueError
        If ``x`` holds a NaN or an infinity.

    References
    ----------
    PyTorch, ``c10/util/BFloat16.h``, ``round_to_nearest_even`` (the same bias and shift).
    """
    u = as_float_array("x", x).astype(np.float32).view(np.uint32)
    kept_lowest = (u >> np.uint32(16)) & np.uint32(1)  # the lowest bit that is kept
    u = (u + np.uint32(0x7FFF) + kept_lowest) & np.uint32(0xFFFF0000)
    return u.view(np.float32).astype(np.float64)
