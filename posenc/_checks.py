"""Input validation shared by every public function of :mod:`posenc`.

Each helper raises :class:`TypeError` (wrong kind of object) or :class:`ValueError`
(right kind, wrong value) with a message that names the parameter, shows the value
received and says what was expected.  Public functions call these helpers first, so
nothing downstream ever sees an input it would silently mishandle.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_int",
    "check_float",
    "check_bool",
    "check_choice",
    "as_float_array",
    "as_position_array",
    "broadcast_positions",
    "as_int_array",
]


def _show(value, limit: int = 60) -> str:
    """Short ``repr`` of ``value`` for error messages."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_int(name: str, value, *, minimum: int | None = None, even: bool = False) -> int:
    """Return ``value`` as a Python ``int`` after checking it.

    Accepts Python and NumPy integers; rejects ``bool``, floats (even integral ones)
    and everything else with a :class:`TypeError`.  ``minimum`` and ``even`` are
    checked with a :class:`ValueError`.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {_show(value)} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value}")
    if even and value % 2:
        raise ValueError(f"{name}: expected an even integer (coordinates come in pairs), got {value}")
    return value


def check_float(
    name: str,
    value,
    *,
    positive: bool = False,
    minimum: float | None = None,
    greater_than: float | None = None,
) -> float:
    """Return ``value`` as a finite Python ``float`` after checking it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {_show(value)} of type {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    if positive and value <= 0:
        raise ValueError(f"{name}: expected a number > 0, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected a number >= {minimum}, got {value}")
    if greater_than is not None and value <= greater_than:
        raise ValueError(f"{name}: expected a number > {greater_than}, got {value}")
    return value


def check_bool(name: str, value) -> bool:
    """Return ``value`` as ``bool``; only ``True``/``False`` are accepted."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {_show(value)} of type {type(value).__name__}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """Check that ``value`` is one of the strings in ``choices``."""
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name}: expected one of {options}, got {_show(value)}")
    return value


def as_float_array(
    name: str, x, *, min_ndim: int = 0, allow_neg_inf: bool = False, check_finite: bool = True
) -> np.ndarray:
    """Return ``x`` as a floating-point :class:`numpy.ndarray` (its dtype is kept).

    Raises :class:`TypeError` for non-numeric, integer, boolean or complex input and
    :class:`ValueError` for too few dimensions or non-finite entries (``-inf`` is
    allowed only when ``allow_neg_inf``, for additive masks).
    """
    if isinstance(x, np.ndarray):
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except Exception as exc:  # pragma: no cover - exotic objects
            raise TypeError(f"{name}: expected an array of floats, got {_show(x)}") from exc
    if not np.issubdtype(arr.dtype, np.floating):
        if np.issubdtype(arr.dtype, np.integer) and not isinstance(x, np.ndarray):
            arr = arr.astype(np.float64)  # plain Python lists of ints are fine
        else:
            raise TypeError(f"{name}: expected a floating-point array, got {_show(arr)}")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name}: expected at least {min_ndim} dimensions, got shape {arr.shape}")
    if allow_neg_inf:
        bad = np.isnan(arr) | (arr == np.inf)
        if bad.any():
            raise ValueError(f"{name}: expected finite values or -inf, found NaN or +inf")
    elif check_finite and not np.isfinite(arr).all():
        raise ValueError(f"{name}: expected finite values, found NaN or infinity")
    return arr


def as_int_array(name: str, values) -> np.ndarray:
    """Return ``values`` as an ``int64`` array; floats and booleans are rejected."""
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name}: expected integers, got {_show(values)}")
    return arr.astype(np.int64)


def as_position_array(name: str, positions, *, ndim: int | None = None, count: bool = False) -> np.ndarray:
    """Return positions as a float64 array of finite real values, its shape kept.

    Production code passes one row of positions per sequence (``position_ids`` of shape
    ``(B, T)``), so any shape is accepted unless ``ndim`` is given. With ``count=True``
    a positive integer ``T`` stands for the positions ``0, 1, ..., T-1``.
    """
    if count and isinstance(positions, (int, np.integer)) and not isinstance(positions, (bool, np.bool_)):
        return np.arange(check_int(name, positions, minimum=1), dtype=np.float64)
    arr = np.asarray(positions)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ) or arr.dtype == np.bool_:
        what = f"a {ndim}-D array" if ndim else "an array"
        raise TypeError(f"{name}: expected {what} of real numbers, got {_show(positions)}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: expected finite positions, found NaN or infinity")
    return arr


def broadcast_positions(name: str, positions, target: tuple) -> np.ndarray:
    """Positions whose shape broadcasts against ``target`` (the token axes of ``x``).

    A 1-D array must have one entry per token (``target[-1]``), as before; any other
    shape must broadcast to ``target`` without enlarging it, for example ``(B, 1, T)``
    against ``x.shape[:-1] == (B, H, T)``.
    """
    arr = as_position_array(name, positions)
    if arr.ndim == 1 and len(target) >= 1 and arr.shape[0] != target[-1]:
        raise ValueError(
            f"{name}: expected {target[-1]} positions to match the sequence axis of x, got {arr.shape[0]}"
        )
    try:
        shape = np.broadcast_shapes(arr.shape, tuple(target))
    except ValueError:
        shape = None
    if shape != tuple(target):
        raise ValueError(
            f"{name}: shape {arr.shape} does not broadcast against x.shape[:-1] = {tuple(target)}; "
            f"expected a shape that broadcasts to it, such as ({target[-1]},) or one row per sequence "
            f"like (B, 1, T)"
        )
    return arr
