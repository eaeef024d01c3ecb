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
3. Training throughput of chapter 6's experiment (``posenc.experiment``, the book's
   configuration), in training tokens per second: one model at a time against a stack
   of models trained as one computation (``train_batch``), in float64 and float32, in
   one process and in the chapter's worker processes; with the ratios batched /
   unbatched. Each figure is the best of several short runs, the variants alternated.

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


def _training_throughput(args) -> float:
    """Training tokens per second of ``train_batch`` over ``stacks``, one after the other."""
    from posenc.experiment import _one_blas_thread, train_batch

    config, stacks = args
    n_tokens = sum(len(models) for models in stacks) * config.steps * config.batch * config.train_len
    with _one_blas_thread():  # as run_experiment trains
        start = time.perf_counter()
        for models in stacks:
            train_batch(config, models)
        return n_tokens / (time.perf_counter() - start)


def bench_training(steps: int = 40, repeats: int = 3) -> None:
    import multiprocessing as mp
    from dataclasses import replace

    from posenc.experiment import ExperimentConfig, _keep_freed_memory, _stacks

    book = ExperimentConfig.book()
    print(f"chapter 6's training ({steps} steps of the book's configuration: batch {book.batch} x "
          f"{book.train_len} tokens, {len(book.schemes)} schemes x {len(book.seeds)} seeds), tokens per second:")
    ctx = mp.get_context("fork")
    # In the worker processes run_experiment uses (one BLAS thread, malloc keeping freed memory).
    one = replace(book, schemes=("nope", "sinusoidal", "rope", "alibi"), seeds=(0,), steps=steps)
    variants = {
        "one model at a time, float64": (one, [[m] for m in _stacks(one)[0]]),
        "stack of 4, float64": (one, _stacks(one)),
        "stack of 4, float32": (replace(one, dtype="float32"), _stacks(one)),
    }
    best = dict.fromkeys(variants, 0.0)
    with ctx.Pool(1, initializer=_keep_freed_memory) as pool:
        for _ in range(repeats):
            for name, job in variants.items():
                best[name] = max(best[name], pool.apply(_training_throughput, (job,)))
    print("  one process:")
    for name, value in best.items():
        print(f"    {name:30s} {value:9.0f}")
    base = best["one model at a time, float64"]
    print(f"    batched / unbatched: float64 {best['stack of 4, float64'] / base:4.2f}, "
          f"float32 {best['stack of 4, float32'] / base:4.2f}")
    # All 15 models in the chapter's worker processes, the work shared as run_experiment shares it.
    full = replace(book, steps=steps)
    workers = full.workers
    stacks = _stacks(full)
    plans = {
        "one model at a time, float64": (full, [[m] for models in stacks for m in models]),
        "stacks, float64": (full, stacks),
        "stacks, float32": (replace(full, dtype="float32"), stacks),
    }
    totals = dict.fromkeys(plans, 0.0)
    with ctx.Pool(workers, initializer=_keep_freed_memory) as pool:
        for _ in range(repeats):
            for name, (cfg, plan) in plans.items():
                n_tokens = sum(len(s) for s in plan) * cfg.steps * cfg.batch * cfg.train_len
                start = time.perf_counter()
                list(pool.imap_unordered(_training_throughput, [(cfg, [s]) for s in plan]))
                totals[name] = max(totals[name], n_tokens / (time.perf_counter() - start))
    print(f"  {workers} worker processes (the chapter's setting), all {len(book.schemes) * len(book.seeds)} models:")
    for name, value in totals.items():
        print(f"    {name:30s} {value:9.0f}")
    base = totals["one model at a time, float64"]
    print(f"    batched / unbatched: float64 {totals['stacks, float64'] / base:4.2f}, "
          f"float32 {totals['stacks, float32'] / base:4.2f}")


def main() -> None:
    bench_rope()
    bench_alibi()
    bench_training()


if __name__ == "__main__":
    main()
