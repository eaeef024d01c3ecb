"""Execute chapters (``chapters/NN_name.md``) and store their outputs in ``tests/baselines/NN_name.ipynb``.

Run through ``make baselines`` (every chapter) or ``python tests/make_baselines.py
chapters/04_rope.md``. A baseline stores only what the regression compares (each code cell's
outputs and the glued values: see ``tests/regression.py``), so a chapter whose outputs did
not change leaves its file as it was, whatever was edited in its text or code. Baselines are
generated, never hand-edited.
"""

from __future__ import annotations

import sys

from booktools import BASELINES, ROOT, baseline_for, chapter_sources
from regression import execute, record, resolve, write_baseline


def main(argv: list[str]) -> int:
    BASELINES.mkdir(parents=True, exist_ok=True)
    for source in resolve(argv):
        nb, seconds = execute(source)
        errors = [(n, o) for n, c in enumerate(nb.cells) if c.cell_type == "code"
                  for o in c.outputs if o.output_type == "error" and "raises-exception" not in c.metadata.get("tags", [])]
        if errors:
            n, error = errors[0]
            print(f"{source.name}: cell {n} raised {error.ename}: {error.evalue}; no baseline written", file=sys.stderr)
            return 1
        changed = write_baseline(source, record(nb.cells))
        state = "written" if changed else "unchanged (the outputs are those stored)"
        print(f"{source.name} -> {baseline_for(source).relative_to(ROOT)}: {state} ({seconds:.0f} s)")
    known = {baseline_for(s).name for s in chapter_sources()}
    for stale in BASELINES.glob("*.ipynb"):
        if stale.name not in known:
            stale.unlink()
            print(f"removed {stale.name}: its chapter no longer exists")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
