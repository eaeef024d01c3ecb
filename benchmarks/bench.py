"""posenc benchmarks: ratios measured in one run, never absolute timings in tests.

``make bench`` prints

1. ``apply_rope`` throughput on a float32 tensor of shape (32 heads, 4096 positions,
   128) as a ratio to ``numpy.copy`` of the same tensor, per tensor with the cos/sin
   table computed once by ``posenc.rope_table`` and passed in (as in a forward pass,
   where queries, keys and every layer share it; Hugging Face's figure of about 4.7x is
   of this kind), and for a call that computes the table too.  A copy reads and writes
   every byte once, which is the memory-bandwidth floor for any out-of-place
   elementwise operation; RoPE must also read its cos/sin tables and does four
   multiplies and two adds per pair.
2. Peak memory of ``alibi_bias`` (measured with ``tracemalloc``) for long sequences,
   as a ratio to the size of the returned tensor (n_heads x T x T float64).

Timings are the best of several repeats after a warm-up, the operation and
``numpy.copy`` timed alternately, so the ratios are stable to a few per cent on an idle
machine; on a shared one run it several times and read the range.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import posenc


def best_time(fn, repeats: int = 7) -> float:
    fn()  # warm-up: page faults, caches
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def best_ratio(fn, reference, repeats: int = 15) -> float:
    """Best time of ``fn`` over best time of ``reference``, timed alternately.

    On a shared machine a quiet moment favours whichever runs in it; alternating the two
    and keeping each one's best gives both the same chances.
    """
    fn(), reference()  # warm-up: page faults, caches
    best_fn = best_ref = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        reference()
        best_ref = min(best_ref, time.perf_counter() - start)
        start = time.perf_counter()
        fn()
        best_fn = min(best_fn, time.perf_counter() - start)
    return best_fn / best_ref


def bench_rope() -> None:
    heads, length, dim = 32, 4096, 128
    x = np.random.default_rng(0).standard_normal((heads, length, dim), dtype=np.float32)
    positions = np.arange(length)
    t_copy = best_time(lambda: np.copy(x))
    print(f"apply_rope on ({heads}, {length}, {dim}) float32, {x.nbytes / 2**20:.0f} MiB:")
    # As in a forward pass: the table is computed once (queries, keys and every layer share it).
    table = posenc.rope_table(positions, dim, dtype=x.dtype)

    def copy():
        return np.copy(x)

    for layout in ("interleaved", "half"):
        r_rope = best_ratio(lambda: posenc.apply_rope(x, table=table, layout=layout), copy)
        r_fresh = best_ratio(lambda: posenc.apply_rope(x, positions, layout=layout), copy, repeats=7)
        print(
            f"  layout={layout:12s} time / numpy.copy time = {r_rope:5.2f}"
            f"   (computing the cos/sin table too: {r_fresh:5.2f})"
        )
    r_complex = best_ratio(lambda: posenc.apply_rope_complex(x, positions), copy, repeats=3)
    print(f"  apply_rope_complex        time / numpy.copy time = {r_complex:5.2f}")
    gbs = 2 * x.nbytes / t_copy / 1e9
    print(f"  (numpy.copy moves {gbs:.1f} GB/s on this machine; ratios are what to compare)")


def bench_alibi() -> None:
    print("alibi_bias peak memory (tracemalloc), as a multiple of the returned tensor:")
    heads = 8
    for length in (1024, 2048, 4096):
        tracemalloc.start()
        bias = posenc.alibi_bias(heads, length)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out = bias.nbytes
        del bias
        print(
            f"  n_heads={heads}, T={length:5d}: output {out / 2**20:7.0f} MiB, "
            f"peak {peak / 2**20:7.0f} MiB, peak / output = {peak / out:4.2f}"
        )
    # What a fused kernel avoids: one row of slopes and a distance vector per query.
    length = 4096
    row = 0.0 - posenc.alibi_slopes(heads)[:, None] * np.arange(length, 0, -1)[None, :]
    print(
        f"  computed on the fly, one query row costs {row.nbytes / 2**10:.0f} KiB for T={length}: "
        f"{(heads * length * length * 8) / row.nbytes:.0f}x less than materialising the tensor"
    )


def main() -> None:
    bench_rope()
    bench_alibi()


if __name__ == "__main__":
    main()
