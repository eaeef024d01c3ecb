"""Retrain seed 0 of chapter 6's record under other OpenBLAS kernels and compare with the record.

Chapter 6 reads its numbers from the record ``posenc/data/book`` (``posenc.experiment.BOOK_RUN``)
and retrains only ALiBi's seed 0 live. This script measures why: it retrains seed 0 of every
scheme (the five together, stacked as the record stacks them) in float64, once per kernel in
its own process with ``OPENBLAS_CORETYPE`` set (``default`` leaves the machine's choice), and
writes one row per (kernel, scheme) to a CSV::

    nice python benchmarks/kernel-drift/collect.py posenc/data/kernel-drift/drift.csv

(chapter 6 reads it from the installed package: ``posenc.experiment.BOOK_KERNEL_DRIFT``).

Columns: ``kernel``, ``threads`` (``OPENBLAS_NUM_THREADS``), ``scheme``,
``first_step_off`` (the first training step whose loss differs from the record's by more
than ``1e-9`` nats, 0 if none does), ``max_train_gap`` (the largest such difference over
training), ``gap_at_1x`` (the difference of the model's mean loss at the training length,
on the record's evaluation tokens) and ``gap_beyond`` (the largest difference of the mean
loss on the new positions past the training length, over every evaluation length and, for
RoPE, its context-extension variants too; the shuffled-position controls are left out).
A kernel the CPU cannot run is skipped, with a message.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np

KERNELS = (("default", "1"), ("Sandybridge", "2"), ("Nehalem", "1"))
TOLERANCE = 1e-9  # nats: a training loss this close to the record's counts as the same


def one_kernel() -> list:
    """In this process (its kernel set by the parent): seed 0 of every scheme against the record."""
    from posenc.experiment import BOOK_RUN, ExperimentConfig, read_results, run_experiment

    record = read_results(BOOK_RUN)
    config = replace(ExperimentConfig.book(), seeds=(0,), workers=1)
    live = run_experiment(config)
    rows = []
    for scheme in config.schemes:
        gap = np.abs(live.train_loss[scheme][0] - record.train_loss[scheme][0])
        off = np.flatnonzero(gap > TOLERANCE)
        at_1x = float(np.abs(live.losses[(scheme, 1, "within")][0].mean()
                             - record.losses[(scheme, 1, "within")][0].mean()))
        beyond = [float(np.abs(losses[0].mean() - record.losses[(name, k, region)][0].mean()))
                  for (name, k, region), losses in live.losses.items()
                  if region == "beyond" and name.split("+")[0] == scheme]  # the scheme and its RoPE variants
        rows.append({"scheme": scheme, "first_step_off": int(off[0]) + 1 if off.size else 0,
                     "max_train_gap": f"{gap.max():.3g}", "gap_at_1x": f"{at_1x:.3g}",
                     "gap_beyond": f"{max(beyond):.3g}"})
    return rows


def main(out: str) -> None:
    rows = []
    for kernel, threads in KERNELS:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads)
        env.pop("OPENBLAS_CORETYPE", None)
        if kernel != "default":
            env["OPENBLAS_CORETYPE"] = kernel
        run = subprocess.run([sys.executable, __file__, "--one"], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{kernel}: skipped ({run.stderr.strip().splitlines()[-1] if run.stderr.strip() else run.returncode})")
            continue
        for row in csv.DictReader(run.stdout.splitlines()):
            rows.append({"kernel": kernel, "threads": threads, **row})
            print(rows[-1])
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    if sys.argv[1:] == ["--one"]:
        found = one_kernel()
        writer = csv.DictWriter(sys.stdout, fieldnames=list(found[0]))
        writer.writeheader()
        writer.writerows(found)
    else:
        main(*sys.argv[1:])
