"""Run chapters' mutants, or write the ledger (see ``mutants/__init__.py``).

Usage (from ``tests/``)::

    python -m mutants run 01_why_order_matters [04_rope ...] [--json results.json]
    python -m mutants ledger [--check]

``run`` prints one line per mutant (``killed``, or what went wrong) and exits 1 unless every
mutant was killed and the unmutated chapter ran through; ``--json`` also writes the results.
"""

from __future__ import annotations

import os

# One BLAS thread: the process forks, and a forked OpenBLAS thread pool can hang.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from . import LEDGER, Chapter, Plan, chapter_paths, ledger, load, plan  # noqa: E402

#: Seconds a mutant may run (its patch and the cells from its fork point to its check cell).
TIMEOUT = 300


def _outcome(error) -> dict:
    return {"raised": type(error).__name__, "names": [c.__name__ for c in type(error).__mro__],
            "message": str(error).strip().splitlines()[0][:300] if str(error).strip() else ""}


def _run_cell(shell, source: str):
    """Run one cell; return the exception it raised, or None."""
    result = shell.run_cell(source, store_history=False)
    return result.error_before_exec or result.error_in_exec


def _child(shell, p: Plan) -> dict:
    if p.mutant.patch.strip():
        error = _run_cell(shell, p.mutant.patch)
        if error is not None:
            return {"status": "patch-error", **_outcome(error)}
    for offset, source in enumerate(p.sources):
        index = p.start + offset
        error = _run_cell(shell, source)
        if index < p.check and error is not None:
            return {"status": "error-before-check", "cell": index, **_outcome(error)}
        if index == p.check:
            if error is None:
                return {"status": "survived", "cell": index}
            outcome = _outcome(error)
            ok = p.mutant.expect in outcome["names"]
            return {"status": "killed" if ok else "wrong-exception", "cell": index, **outcome}
    raise AssertionError("unreachable: the plan ends at its check cell")


def _fork(shell, p: Plan) -> dict:
    """Run the mutant in a forked copy of this process; return its outcome."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        try:
            outcome = _child(shell, p)
        except BaseException as err:  # noqa: BLE001 - reported, not raised
            outcome = {"status": "harness-error", **_outcome(err)}
        os.write(write_end, json.dumps(outcome).encode())
        os.close(write_end)
        os._exit(0)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + TIMEOUT
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pipe], [], [], max(left, 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"status": "timeout", "seconds": TIMEOUT}
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"status": "harness-error", "raised": "ChildDied", "message": f"wait status {status}"}
    return json.loads(b"".join(chunks))


def run_chapter(chapter: Chapter) -> dict:
    """Execute the chapter once, forking each mutant at its first affected cell."""
    from IPython.core.interactiveshell import InteractiveShell

    plans = [plan(chapter, m) for m in chapter.mutants]
    starts: dict[int, list[Plan]] = {}
    for p in plans:
        starts.setdefault(p.start, []).append(p)
    os.chdir(chapter.path.parent)
    shell = InteractiveShell.instance()
    results: dict[str, dict] = {}
    chapter_error = None
    began = time.monotonic()
    for index, source in enumerate(chapter.code):
        for p in starts.get(index, []):
            results[p.mutant.id] = _fork(shell, p)
        error = _run_cell(shell, source)
        if error is not None:
            chapter_error = {"cell": index, **_outcome(error)}
            break
    for p in plans:  # mutants whose fork point the chapter never reached
        results.setdefault(p.mutant.id, {"status": "not-reached"})
    return {"chapter": chapter.stem, "chapter_error": chapter_error, "mutants": results,
            "seconds": round(time.monotonic() - began, 1)}


def _quiet():
    """Send the cells' output (prints, tracebacks) to /dev/null; return the real stdout."""
    real = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    return real


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutants")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the mutants of the named chapters (stems, e.g. 01_why_order_matters)")
    run.add_argument("stems", nargs="+")
    run.add_argument("--json", type=pathlib.Path)
    led = sub.add_parser("ledger", help="write tests/mutants/LEDGER.md")
    led.add_argument("--check", action="store_true", help="exit 1 if the ledger is not current")
    args = parser.parse_args(argv)

    if args.command == "ledger":
        text = ledger()
        if args.check:
            current = LEDGER.exists() and LEDGER.read_text() == text
            print("ledger is current" if current else "ledger is stale: run `python -m mutants ledger`")
            return 0 if current else 1
        LEDGER.write_text(text)
        print(f"wrote {LEDGER}")
        return 0

    paths = {p.stem: p for p in chapter_paths()}
    unknown = [s for s in args.stems if s not in paths]
    if unknown:
        parser.error(f"stems: {unknown}; expected chapter stems from {sorted(paths)}")
    if args.json and len(args.stems) > 1:
        parser.error(f"--json: {args.json}; expected with a single chapter stem")
    if len(args.stems) > 1:  # one process per chapter: a chapter's state must not leak into the next
        import subprocess

        code = 0
        for stem in args.stems:
            cmd = [sys.executable, "-m", "mutants", "run", stem]
            out = subprocess.run(cmd, cwd=pathlib.Path(__file__).parent.parent, capture_output=True, text=True)
            print(out.stdout, end="")
            code = code or out.returncode
        return code
    chapter = load(paths[args.stems[0]])
    real = _quiet()
    result = run_chapter(chapter)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    ok = result["chapter_error"] is None
    if not ok:
        real.write(f"{chapter.stem}: the unmutated chapter fails at code cell {result['chapter_error']['cell']}: "
                   f"{result['chapter_error']['raised']}: {result['chapter_error']['message']}\n")
    for mutant_id, outcome in result["mutants"].items():
        ok = ok and outcome["status"] == "killed"
        detail = {k: v for k, v in outcome.items() if k != "names"}
        real.write(f"{chapter.stem} {mutant_id}: {detail}\n")
    real.write(f"{chapter.stem}: {len(result['mutants'])} mutants, chapter ran in {result['seconds']} s\n")
    real.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
