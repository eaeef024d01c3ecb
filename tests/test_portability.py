"""The notebook regression passes under every BLAS kernel and thread count, not only the local one.

NumPy's bundled OpenBLAS chooses its compute kernels from the CPU it finds, and a
reduction (a norm, a dot product, a matrix product, an SVD) rounds differently in each
kernel, so the last bits of a float depend on the reader's machine.  The stored
baselines must not: every glued value goes through ``posenc.book.glue`` (rounded to
what the text shows) and every printed float is rounded with margin.  This test proves
it instead of hoping for it: it re-runs the whole strict regression (``pytest --nbval``
on ``tests/baselines``) with OpenBLAS forced to other kernels (``OPENBLAS_CORETYPE``)
and other thread counts, and fails with the differing cells if any output changes.

Only kernels that the CPU supports are forced (``/proc/cpuinfo`` flags; forcing a
kernel the CPU lacks would crash).  On a CPU that is not x86-64, or where NumPy does not
use OpenBLAS (macOS Accelerate, MKL), the test is skipped with the reason: there the
same rounding discipline is what protects the regression.

The sweep takes a few minutes, so ``make test`` runs it after the strict build, one job per
kernel (``make portability`` runs it alone); ``make unit`` leaves it out. Chapter 6, whose training is two
thirds of the book's CPU time, is re-run under one kernel of the sweep, every other
chapter under all three (see :data:`TRAINING_CHAPTER`).
"""

from __future__ import annotations

import os
import pathlib
import platform
import re
import subprocess
import sys

import numpy as np
import pytest

from booktools import ROOT, chapter_sources

#: (kernel, threads) configurations of the sweep and the CPU flags each kernel needs.
#: Together they cover three kernels and both 1 and 2 threads; the ordinary regression
#: run of ``make test`` adds the machine's own kernel at its default thread count.
#: (``Zen`` is not listed: in NumPy's OpenBLAS build it runs the Haswell kernels, as
#: ``OPENBLAS_VERBOSE=2`` reports, so it would repeat the Haswell run. SkylakeX, the
#: kernel of the machine that reported the defect, is not listed either: OpenBLAS chooses
#: it, or a newer AVX-512 core, by itself on every CPU that could run it, so there the
#: ordinary regression already runs it.)
SWEEP = [
    ("Sandybridge", 2, {"avx"}),
    ("Haswell", 1, {"avx2", "fma"}),
    ("Nehalem", 1, {"sse4_2"}),
]

#: The chapter whose training takes most of an execution (two thirds of the book's CPU
#: time). It runs in the sweep under the kernel most unlike the machine's own (Sandybridge:
#: AVX without FMA) and is left out under the other two, which keeps ``make test`` within
#: its time; every other chapter runs under all three.
TRAINING_CHAPTER = "06_extrapolation"
FULL_KERNEL = "Sandybridge"


def chapters_for(kernel: str) -> list[pathlib.Path]:
    """The chapters the sweep re-runs under ``kernel``."""
    every = chapter_sources()
    if kernel == FULL_KERNEL:
        return every
    return [source for source in every if source.stem != TRAINING_CHAPTER]


def cpu_flags() -> set[str]:
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:\s*(.*)$", text, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


def numpy_uses_openblas() -> bool:
    config = np.show_config(mode="dicts")
    blas = config.get("Build Dependencies", {}).get("blas", {})
    return "openblas" in str(blas.get("name", "")).lower()


def sweep_configurations() -> list[tuple[str, int]]:
    """The (kernel, threads) pairs of the sweep whose kernel this CPU supports."""
    flags = cpu_flags()
    return [(kernel, threads) for kernel, threads, needs in SWEEP if needs <= flags]


def why_skip() -> str | None:
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return f"OpenBLAS kernels are forced only on x86-64, not on {platform.machine()}"
    if not numpy_uses_openblas():
        return "NumPy does not use OpenBLAS here; the rounding discipline alone protects the regression"
    if len(sweep_configurations()) < 3:
        return f"this CPU supports fewer than three of the sweep's kernels ({sweep_configurations()})"
    return None


def kernel_environment(kernel: str, threads: int) -> dict[str, str]:
    """The environment of a child Python whose NumPy uses ``kernel`` with ``threads`` threads."""
    env = dict(os.environ)
    env.update(OPENBLAS_CORETYPE=kernel, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    return env


def kernel_in_use(kernel: str, threads: int) -> str:
    """The core OpenBLAS reports (``OPENBLAS_VERBOSE=2``) in a child Python of that environment.

    The notebook kernels of the sweep are child Pythons started with the same
    environment, so this shows that the variable really forces the kernel there.
    """
    env = kernel_environment(kernel, threads)
    env["OPENBLAS_VERBOSE"] = "2"
    result = subprocess.run(
        [sys.executable, "-c", "import numpy"], env=env, capture_output=True, text=True, timeout=120
    )
    found = re.findall(r"Core: (\w+)", result.stdout + result.stderr)
    return found[-1] if found else ""


def run_regression(kernel: str, threads: int) -> subprocess.CompletedProcess:
    """``tests/regression.py`` on the sweep's chapters, in a child Python of that environment."""
    command = [sys.executable, str(ROOT / "tests" / "regression.py"), *(s.stem for s in chapters_for(kernel))]
    return subprocess.run(command, cwd=ROOT, env=kernel_environment(kernel, threads), capture_output=True,
                          text=True, timeout=1800)


def test_the_sweep_forces_only_supported_kernels():
    flags = cpu_flags()
    for kernel, _ in sweep_configurations():
        needs = {k: n for k, _, n in SWEEP}[kernel]
        assert needs <= flags, f"{kernel} needs {sorted(needs - flags)}, which this CPU lacks"
    threads = {t for _, t in sweep_configurations()}
    if why_skip() is None:
        assert threads == {1, 2}, "the sweep must cover 1 and 2 threads"


def test_every_chapter_runs_under_some_kernel_and_most_under_all():
    every = [s.stem for s in chapter_sources()]
    assert TRAINING_CHAPTER in every and FULL_KERNEL in {k for k, _, _ in SWEEP}
    for kernel, _, _ in SWEEP:
        names = [s.stem for s in chapters_for(kernel)]
        expected = every if kernel == FULL_KERNEL else [n for n in every if n != TRAINING_CHAPTER]
        assert names == expected, kernel


@pytest.mark.portability
@pytest.mark.parametrize("kernel, threads", [(k, t) for k, t, _ in SWEEP], ids=lambda v: str(v))
def test_regression_under_kernel(kernel: str, threads: int):
    reason = why_skip()
    if reason:
        pytest.skip(reason)
    if (kernel, threads) not in sweep_configurations():
        pytest.skip(f"this CPU lacks {kernel}'s instructions; forcing it would crash")
    used = kernel_in_use(kernel, threads)
    assert used.lower() == kernel.lower(), f"OPENBLAS_CORETYPE={kernel} gave the core {used!r}"
    result = run_regression(kernel, threads)
    assert result.returncode == 0, (
        f"under OPENBLAS_CORETYPE={kernel} with {threads} thread(s) the chapters print otherwise than "
        "their baselines. A printed or glued float shows bits that depend on the BLAS kernel: glue it "
        "through posenc.book.glue with the digits the text shows, and print floats rounded with margin.\n"
        + result.stdout[-6000:] + result.stderr[-2000:]
    )
    ran = [line for line in result.stdout.splitlines() if "code cells executed" in line]
    assert len(ran) == len(chapters_for(kernel)), result.stdout[-3000:]
