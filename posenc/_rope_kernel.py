"""The arithmetic of :func:`posenc.rope.apply_rope`: the complex products, bit-identical whatever the batch.

Kept out of :mod:`posenc.rope` so that ``apply_rope`` reads as the rotation it computes.
What the blocked path buys, measured on the (32, 4096, 128) float32 input of
``benchmarks/bench.py`` (best of 7 to 9 calls, two runs on the 2-core development machine):
the readable path takes 3.5 to 5.3 times as long in the interleaved layout and 2.2 to 2.8
times in the half layout (it allocates full-size temporaries).
``tests/test_rope.py`` checks that both paths give the same bits on every shape, layout,
dtype and memory layout.

:func:`multiply_flat`
    ``z * c`` as one contiguous 1-D product, the readable path of ``apply_rope``.
:func:`rotate_blocked`
    the same products, block of rows by block of rows, for large inputs whose rows share one
    (T, d/2) table (:func:`blocked_applies` decides).
"""

from __future__ import annotations

import numpy as np

#: Below this many elements the plain path is as fast as the blocked one.
BLOCKED_MIN_SIZE = 1 << 16
#: Complex elements per block, by layout: the half layout's gather and scatter buffers
#: (512 KiB each in complex64) stay in cache; the interleaved layout needs no buffer and
#: takes larger blocks, which costs fewer calls. Measured best on a 2-core EPYC.
BLOCK_ELEMS = {"interleaved": 1 << 18, "half": 1 << 16}


def check_finite(x: np.ndarray) -> None:
    """Raise ``x``'s error of :func:`posenc.rope.apply_rope` if ``x`` has a NaN or an infinity."""
    if not np.isfinite(x).all():
        raise ValueError("x: expected finite values, found NaN or infinity")


def multiply_flat(z: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``z * c`` for arrays of one shape, computed as one contiguous 1-D product.

    NumPy's complex multiply has a vector loop (for contiguous operands, with a fused
    multiply-add) and a scalar loop (for an operand broadcast along the inner loop) that
    round differently in the last bit. Always taking the contiguous 1-D form makes a
    token's rotation independent of the shape of the batch it comes in, bit for bit.
    """
    zf = np.ascontiguousarray(z).reshape(-1)
    cf = np.ascontiguousarray(c).reshape(-1)
    w = np.empty_like(zf)
    np.multiply(zf, cf, out=w)
    return w.reshape(z.shape)


def blocked_applies(x: np.ndarray, table: np.ndarray) -> bool:
    """Whether :func:`rotate_blocked` handles this call: large float32/float64 inputs
    whose rows all share one (T, d/2) table (positions of shape (T,))."""
    return (
        x.dtype in (np.float32, np.float64)
        and x.dtype.isnative
        and x.size >= BLOCKED_MIN_SIZE
        and all(n == 1 for n in table.shape[:-2])
        and table.shape[-2:] == x.shape[-2:-1] + (x.shape[-1] // 2,)
    )


def _finite_or_raise(v: np.ndarray) -> None:
    """Raise the error of :func:`check_finite` if the 1-D block ``v`` has a NaN or an
    infinity. A sum of finite values is finite unless it overflows, and any NaN or
    infinity makes the sum NaN or infinite, so the exact test runs only on a non-finite
    sum."""
    if not np.isfinite(np.einsum("i->", v)):
        check_finite(v)


def rotate_blocked(x: np.ndarray, table: np.ndarray, layout: str) -> np.ndarray:
    """``apply_rope``'s products, block of rows by block of rows, bit for bit.

    ``x`` is read once and the output written once; every multiply has two contiguous
    operands of one shape (NumPy's vector loop, as in :func:`multiply_flat`). The
    interleaved layout multiplies views of ``x`` and of the output as complex numbers;
    the half layout gathers each block's pairs into a small complex buffer and scatters
    the products back. Sequences shorter than a block go several at a time, against the
    table repeated once for the whole call.
    """
    n_tokens, head_dim = x.shape[-2], x.shape[-1]
    half = head_dim // 2
    rows = np.ascontiguousarray(x).reshape(-1, n_tokens * head_dim)
    out = np.empty(rows.shape, dtype=x.dtype)
    ctype = table.dtype
    tab = np.ascontiguousarray(table).reshape(-1)  # (T * d/2,)
    per_seq = n_tokens * half
    block = BLOCK_ELEMS[layout]
    if per_seq >= block:
        # long sequences: blocks of whole token rows within one sequence
        span = max(1, block // half) * half
        blocks = [(i, i + 1, s, min(s + span, per_seq)) for i in range(rows.shape[0])
                  for s in range(0, per_seq, span)]
    else:
        # short sequences: several at a time, against the table repeated
        group = max(1, block // per_seq)
        tab = np.tile(tab, min(group, rows.shape[0]))
        span = tab.size
        blocks = [(i, min(i + group, rows.shape[0]), 0, per_seq) for i in range(0, rows.shape[0], group)]
    if layout == "interleaved":
        xc, oc = rows.view(ctype), out.view(ctype)  # (N, T * d/2) complex views
        for i, j, s, e in blocks:
            _finite_or_raise(rows[i:j, 2 * s:2 * e].reshape(-1))
            size = (j - i) * (e - s)
            np.multiply(xc[i:j, s:e].reshape(-1), tab[s:s + size] if j - i == 1 else tab[:size],
                        out=oc[i:j, s:e].reshape(-1))
        return out.reshape(x.shape)
    z = np.empty(span, dtype=ctype)
    w = np.empty_like(z)
    real = x.dtype
    for i, j, s, e in blocks:
        src = rows[i:j, 2 * s:2 * e]
        _finite_or_raise(src.reshape(-1))
        size = (j - i) * (e - s)
        n = size // half  # token rows in this block
        zf = z[:size].view(real).reshape(n, half, 2)
        src = src.reshape(n, 2, half)
        zf[..., 0] = src[:, 0]  # gather: pair i of a row is (x[i], x[i + d/2])
        zf[..., 1] = src[:, 1]
        np.multiply(z[:size], tab[s:s + size] if j - i == 1 else tab[:size], out=w[:size])
        # scatter, one call: the destination rows are contiguous
        out[i:j, 2 * s:2 * e].reshape(n, 2, half)[...] = w[:size].view(real).reshape(n, half, 2).transpose(0, 2, 1)
    return out.reshape(x.shape)
