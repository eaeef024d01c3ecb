"""Execute every chapter (``chapters/NN_name.md``) into ``tests/baselines/NN_name.ipynb``.

Run through ``make baselines``.  The stored notebooks are the reference outputs that
``pytest --nbval`` compares against on every test run; they are generated, never
hand-edited.  Volatile metadata (timestamps, interpreter versions) is dropped and
cell ids are numbered, so regenerating an unchanged chapter gives an identical file.

Usage: ``python tests/make_baselines.py [chapter.md ...]`` (default: all chapters).
"""

from __future__ import annotations

import sys

import jupytext
import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from booktools import BASELINES, chapter_sources, baseline_for  # noqa: E402

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def merge_streams(outputs: list) -> list:
    """Join consecutive stdout (or stderr) chunks into one output.

    The kernel flushes a cell's prints in chunks whose boundaries depend on timing;
    nbval compares the joined text, and joining here keeps regenerated baselines
    byte-identical when nothing changed.
    """
    merged = []
    for out in outputs:
        if (
            merged
            and out.get("output_type") == "stream"
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def build(source) -> None:
    nb = jupytext.read(source)
    nb.metadata = {"kernelspec": dict(KERNELSPEC)}
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    client = NotebookClient(
        nb,
        timeout=1200,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    nb.metadata = {"kernelspec": dict(KERNELSPEC)}
    nbformat.validate(nb)
    target = baseline_for(source)
    nbformat.write(nb, target)
    print(f"{source.name} -> {target.relative_to(BASELINES.parent.parent)}")


def main(argv: list[str]) -> int:
    import pathlib

    BASELINES.mkdir(parents=True, exist_ok=True)
    sources = [pathlib.Path(a).resolve() for a in argv] or chapter_sources()
    if not sources:
        print("no chapters found", file=sys.stderr)
        return 1
    for source in sources:
        build(source)
    known = {baseline_for(s).name for s in chapter_sources()}
    for stale in BASELINES.glob("*.ipynb"):
        if stale.name not in known:
            stale.unlink()
            print(f"removed {stale.name}: its chapter no longer exists")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
