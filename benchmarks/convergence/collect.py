"""Collect the held-out 1x losses of chapter 6's convergence runs into one CSV.

Each run is ``python -m posenc.experiment --out RUNS/steps_N --steps N ...`` (the book's
configuration otherwise: see README.md here); ``RUNS/times.txt`` holds one line
``N seconds`` per run (its wall-clock time). Usage::

    python benchmarks/convergence/collect.py RUNS benchmarks/convergence/ch6_1x_losses.csv

prints, for each N with a run at 4N, every scheme's mean 1x loss at N and 4N and their
difference.
"""

from __future__ import annotations

import csv
import os
import sys

import numpy as np

SCHEMES = ("nope", "sinusoidal", "learned", "rope", "alibi")


def collect(root: str) -> list:
    times = dict(line.split() for line in open(os.path.join(root, "times.txt")))
    rows = []
    for steps in sorted(int(n) for n in times):
        path = os.path.join(root, f"steps_{steps}", "results.csv")
        if not os.path.exists(path):
            continue
        for r in csv.DictReader(open(path)):
            if r["scheme"] in SCHEMES and r["multiple"] == "1":
                rows.append({"steps": steps, "scheme": r["scheme"], "seed": int(r["seed"]),
                             "loss_1x": f"{float(r['loss_all']):.6f}", "optimum_1x": f"{float(r['floor_all']):.6f}",
                             "final_train_loss": f"{float(r['final_train_loss']):.6f}",
                             "run_seconds": f"{float(times[str(steps)]):.0f}"})
    return rows


def main(root: str, out: str) -> None:
    rows = collect(root)
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    loss = {(r["steps"], r["scheme"], r["seed"]): float(r["loss_1x"]) for r in rows}
    seeds = sorted({r["seed"] for r in rows})
    done = sorted({r["steps"] for r in rows})
    for n in done:
        if 4 * n not in done:
            continue
        print(f"N = {n} against 4N = {4 * n}:")
        worst = 0.0
        for s in SCHEMES:
            a = np.array([loss[n, s, seed] for seed in seeds])
            b = np.array([loss[4 * n, s, seed] for seed in seeds])
            worst = max(worst, abs(a.mean() - b.mean()))
            print(f"  {s:11s} {a.mean():.4f} -> {b.mean():.4f}  mean difference {a.mean() - b.mean():+.4f}  "
                  f"largest per-seed difference {np.max(np.abs(a - b)):.4f}")
        print(f"  largest difference of means: {worst:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
