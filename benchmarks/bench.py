"""posenc benchmarks: ratios measured in one run, never absolute timings in tests.

``make bench`` prints

1. ``apply_rope`` throughput on a float32 tensor of shape (32 heads, 4096 positions,
   128) as a ratio to ``numpy.copy`` of the same tensor, per tensor with the cos/sin
   table already computed (as in a forward pass, where queries, keys and every layer
   share it; Hugging Face's figure of about 4.7x is of this kind), and for a first
   call that computes the table too.  A copy reads and writes
   every byte once, which is the memory-bandwidth floor for any out-of-place
   elementwise operation; RoPE must also read its cos/sin tables and does four
   multiplies and two adds per pair.
2. Peak memory of ``alibi_bias`` (measured with ``tracemalloc``) for long sequences,
   as a ratio to the size of the returned tensor (n_heads x T x T float64).

Timings are the best of several repeats after a warm-up, so the ratios are stable
to a few per cent on an idle machine.
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


def bench_rope() -> None:
    heads, length, dim = 32, 4096, 128
    x = np.random.default_rng(0).standard_normal((heads, length, dim), dtype=np.float32)
    positions = np.arange(length)
    t_copy = best_time(lambda: np.copy(x))
    print(f"apply_rope on ({heads}, {length}, {dim}) float32, {x.nbytes / 2**20:.0f} MiB:")
    from posenc import rope as rope_module

    def fresh(layout):
        rope_module._CIS_CACHE.clear()  # recompute the cos/sin table on every call
        return posenc.apply_rope(x, positions, layout=layout)

    for layout in ("interleaved", "half"):
        t_rope = best_time(lambda: posenc.apply_rope(x, positions, layout=layout))
        t_fresh = best_time(lambda: fresh(layout))
        print(
            f"  layout={layout:12s} time / numpy.copy time = {t_rope / t_copy:5.2f}"
            f"   (first call, computing the cos/sin table: {t_fresh / t_copy:5.2f})"
        )
    t_complex = best_time(lambda: posenc.apply_rope_complex(x, positions), repeats=3)
    print(f"  apply_rope_complex        time / numpy.copy time = {t_complex / t_copy:5.2f}")
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
