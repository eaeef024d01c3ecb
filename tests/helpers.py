"""Helpers shared by the tests: anchored error matching, finite differences, a fake npm tarball, alt texts."""

from __future__ import annotations

import io
import re
import tarfile

import numpy as np
import pytest


def raises_named(exc, name: str, detail: str = ""):
    """``pytest.raises(exc)`` whose message must begin with ``name: ``.

    posenc's errors begin with the parameter's name (``"factor: -1.0; expected ..."``).
    An unanchored ``match=name`` also accepts a message that names no parameter at all,
    as soon as the name occurs somewhere in it (``match="x"`` matches the x of
    "expected"); anchoring the match to the leading ``name: `` does not.

    Parameters
    ----------
    exc : type of Exception, or tuple of them
    name : str
        The parameter the message must name first; taken literally (``states[1]``).
    detail : str, optional
        A regular expression the rest of the message must begin with.
    """
    return pytest.raises(exc, match=rf"^{re.escape(name)}: {detail}")


def finite_difference_gradient(loss, param: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``loss()`` with respect to every element of ``param``.

    ``param`` (a float array that ``loss`` reads) is perturbed in place, one element at a
    time, by ``+eps`` and ``-eps``, and restored exactly afterwards.

    Returns
    -------
    numpy.ndarray of float64, shape param.shape
        ``(loss(p + eps e_i) - loss(p - eps e_i)) / (2 eps)`` for every index ``i``.
    """
    numeric = np.zeros(param.shape, dtype=np.float64)
    for idx in np.ndindex(param.shape):
        old = param[idx]
        param[idx] = old + eps
        up = loss()
        param[idx] = old - eps
        down = loss()
        param[idx] = old
        numeric[idx] = (up - down) / (2 * eps)
    return numeric


def npm_tarball(files: dict[str, bytes]) -> bytes:
    """A gzipped tarball laid out as ``npm pack`` writes one (every file under ``package/``)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


ALT_MIN_LENGTH = 15
_IMAGE_FILE = re.compile(r"\.(png|svg|jpe?g|gif|webp|pdf)$", re.IGNORECASE)
_HEX_RUN = re.compile(r"\b[0-9a-f]{16,}\b", re.IGNORECASE)
_TEX = re.compile(r"\$|\\[a-zA-Z]+")


def alt_text_problem(alt: str | None) -> str | None:
    """Why ``alt`` does not describe a figure to a reader who cannot see it; None if it does."""
    if alt is None:
        return "no alt text"
    text = alt.strip()
    if not text:
        return "empty alt text"
    if _IMAGE_FILE.search(text) or "_images/" in text or (" " not in text and "/" in text):
        return f"alt text is a file name or path: {text!r}"
    if any(re.search(r"\d", run) and re.search(r"[a-f]", run, re.IGNORECASE) for run in _HEX_RUN.findall(text)):
        return f"alt text contains a hash: {text!r}"
    if len(text) < ALT_MIN_LENGTH:
        return f"alt text too short to describe a figure ({len(text)} characters): {text!r}"
    if _TEX.search(text):
        return f"alt text holds TeX markup, read out as written: {text[:80]!r}"
    return None
