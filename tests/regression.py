"""The notebook regression: a chapter's code, executed, prints what its baseline stores.

``make check CHAPTER=04_rope`` runs ``python tests/regression.py 04_rope``: it executes the
chapter (``chapters/04_rope.md``, as the book does: one kernel, in ``chapters/``) and prints,
for each code cell whose outputs differ from ``tests/baselines/04_rope.ipynb``, a unified
diff of the stored outputs against this run's; the glued values likewise, by name. It exits
1 when anything differs. ``--kernel Sandybridge --threads 2`` runs it under another OpenBLAS
kernel (``tests/test_portability.py``).

A baseline stores what is compared and nothing else, so it changes only when an output does:
one cell per code cell of the chapter, in order, holding that cell's outputs (no source),
and the glued values by name in the notebook's metadata (``glue``). Markdown, and code that
prints the same, are not in it. ``python tests/make_baselines.py chapters/04_rope.md``
writes it; regenerating an unchanged chapter leaves the file as it was.

The comparison is nbval's (nbval 0.11, ``IPyNbCell.compare_outputs``), applied to both sides:
a cell's stream outputs are joined per stream (nbval's ``coalesce_streams``), every string is
passed through the patterns of ``tests/nbval_sanitize.cfg``, and then, key by key (``stdout``,
``stderr``, each MIME type of a displayed value, an error's name and value), the lists of
values must be equal. Like nbval it ignores metadata, execution counts and tracebacks; it
does not compare an image's pixels either, but, stricter than nbval, it records which MIME
types a cell displayed, so a figure that appears or disappears is a difference. A glued value
is compared by name, as MyST-NB pastes it (``{glue:text}``), wherever its cell is.

The strict build has already executed every chapter once (``_build/jupyter_execute``, the
glued values beside each notebook): :func:`from_build` reads those outputs, so ``make test``
compares the book it built with the baselines without executing the chapters again
(``tests/test_regression.py``).
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import os
import pathlib
import re
import subprocess
import time

import jupytext
import nbformat
from myst_nb.ext.glue import extract_glue_data_cell
from nbval.plugin import coalesce_streams, get_sanitize_patterns

from booktools import ROOT, baseline_for, chapter_sources

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
#: The notebooks MyST-NB executed in the last build, and their glued values (``NAME.glue.json``).
BUILD = ROOT / "_build" / "jupyter_execute"
#: Images are stored and compared by MIME type only (nbval skips these types altogether).
IMAGES = ("image/png", "image/jpeg")
#: Keys of an output that nbval does not compare (its ``skip_compare``, less the images above).
SKIP = ("metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
        "application/vnd.jupyter.widget-view+json")
#: Seconds a cell may run (chapter 6's training included), as in the book's `_config.yml`.
TIMEOUT = 1200


# --------------------------------------------------------------------------- what is stored


def _output(output) -> dict:
    """One output as stored: what the comparison reads, images by MIME type only."""
    kind = output["output_type"]
    if kind == "stream":
        return nbformat.v4.new_output("stream", name=output["name"], text=output["text"])
    if kind == "error":
        return nbformat.v4.new_output("error", ename=output["ename"], evalue=output["evalue"], traceback=[])
    data = {key: ("" if key in IMAGES else value) for key, value in output["data"].items()}
    stored = nbformat.v4.new_output(kind, data=data)
    if kind == "execute_result":
        stored["execution_count"] = None
    return stored


def record(cells: list, glue: dict | None = None) -> nbformat.NotebookNode:
    """The baseline of executed notebook cells: each code cell's outputs, and the glued values.

    ``glue`` (name -> output) is given when the glue outputs were already taken out of the
    cells (MyST-NB's ``.glue.json``); otherwise they are taken from the cells here.
    """
    glue = dict(glue or {})
    stored = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        cell = copy.deepcopy(cell)
        glue.update(extract_glue_data_cell(cell))  # MyST-NB's own extraction (it also drops them)
        outputs = [_output(o) for o in coalesce_streams(cell.get("outputs", []))]
        stored.append(nbformat.v4.new_code_cell(source="", outputs=outputs, id=f"code-{len(stored):03d}"))
    values = {name: {k: v for k, v in output["data"].items() if k not in IMAGES} for name, output in glue.items()}
    nb = nbformat.v4.new_notebook(cells=stored, metadata={"kernelspec": dict(KERNELSPEC)})
    nb.metadata["glue"] = dict(sorted(values.items()))
    return nb


def read_baseline(source: pathlib.Path) -> nbformat.NotebookNode:
    return nbformat.read(baseline_for(source), as_version=4)


def write_baseline(source: pathlib.Path, nb) -> bool:
    """Write ``nb`` as the chapter's baseline; False (file untouched) when it is already that."""
    nbformat.validate(nb)
    target = baseline_for(source)
    text = nbformat.writes(nb) + "\n"
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    target.write_text(text, encoding="utf-8")
    return True


# --------------------------------------------------------------------------- executing


def execute(source: pathlib.Path) -> tuple[nbformat.NotebookNode, float]:
    """The chapter executed as the book executes it (one kernel, in its folder); and the seconds taken.

    A cell that raises does not stop the run: its error is an output, which the comparison
    shows, and the cells below still run.
    """
    from nbclient import NotebookClient

    nb = jupytext.read(source)
    nb.metadata = {"kernelspec": dict(KERNELSPEC)}
    client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(source.parent)}})
    started = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - started


def from_build(source: pathlib.Path, build: pathlib.Path = BUILD) -> nbformat.NotebookNode:
    """The chapter's code cells as the last build executed them (``_build/jupyter_execute``).

    Raises ``FileNotFoundError`` without a build, and ``ValueError`` when the build's code is
    not the chapter's (the chapter was edited after the build).
    """
    stem = source.relative_to(ROOT).with_suffix("")
    executed = build / stem.with_suffix(".ipynb")
    if not executed.is_file():
        raise FileNotFoundError(f"{executed.relative_to(ROOT)} is missing: run `make book` first")
    nb = nbformat.read(executed, as_version=4)
    built = [c.source for c in nb.cells if c.cell_type == "code"]
    current = [c.source for c in jupytext.read(source).cells if c.cell_type == "code"]
    if built != current:
        raise ValueError(f"the build executed another version of {source.name}: run `make book` again")
    glue_file = executed.with_suffix(".glue.json")
    glue = json.loads(glue_file.read_text(encoding="utf-8")) if glue_file.is_file() else {}
    return record(nb.cells, glue)


# --------------------------------------------------------------------------- comparing


def _patterns() -> list[tuple[str, str]]:
    return get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8"))


def _sanitize(value, patterns):
    if not isinstance(value, str):
        return value
    for regex, replace in patterns:
        value = re.sub(regex, replace, value)
    return value


def compared(outputs: list, patterns) -> dict[str, list]:
    """nbval's view of a cell's outputs: each compared key -> its sanitized values, in order.

    ``outputs`` are stored outputs (:func:`record`): streams joined, images empty.
    """
    keys: dict[str, list] = {}
    for output in outputs:
        if output["output_type"] == "stream":
            keys.setdefault(output["name"], []).append(_sanitize(output["text"], patterns))
            continue
        for key, value in output.items():
            if key in SKIP:
                continue
            if key == "data":
                for mime, content in value.items():
                    if mime not in SKIP:
                        keys.setdefault(mime, []).append("" if mime in IMAGES else _sanitize(content, patterns))
            else:
                keys.setdefault(key, []).append(_sanitize(value, patterns))
    return keys


def _lines(keys: dict[str, list]) -> list[str]:
    """A cell's compared outputs as text, one block per value, for a readable diff."""
    lines = []
    for key in sorted(keys):
        for value in keys[key]:
            if key in IMAGES:
                lines.append(f"[{key}] (an image: its pixels are not compared)")
                continue
            lines.append(f"[{key}]")
            text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True)
            lines += text.splitlines() or [""]
    return lines


def _glue_view(values: dict, patterns) -> dict[str, dict]:
    """Each glued value (name -> MIME bundle) as :func:`compared` sees a displayed value."""
    return {name: compared([{"output_type": "display_data", "data": data}], patterns) for name, data in values.items()}


def _glue_lines(view: dict[str, dict]) -> list[str]:
    """``name = value`` per glued value (other MIME types than text/plain on lines of their own)."""
    lines = []
    for name, keys in sorted(view.items()):
        if list(keys) == ["text/plain"] and len(keys["text/plain"]) == 1:
            lines.append(f"{name} = {keys['text/plain'][0]}")
        else:
            lines += [f"{name}: {line}" for line in _lines(keys)]
    return lines


def _short(code: str, lines: int = 3) -> str:
    head = code.strip("\n").splitlines()
    shown = "\n".join("    " + line for line in head[:lines])
    return shown + (f"\n    ... ({len(head) - lines} more lines)" if len(head) > lines else "")


def differences(source: pathlib.Path, expected, got) -> list[str]:
    """Each difference between two records (:func:`record`) of ``source``, as a readable report.

    One entry per code cell whose outputs differ (the cell's number among the chapter's code
    cells and in the notebook, its first lines, a unified diff of baseline against this run),
    one for the glued values, and one when the numbers of code cells differ.
    """
    patterns = _patterns()
    name = source.relative_to(ROOT) if source.is_relative_to(ROOT) else source
    cells = jupytext.read(source).cells
    code = [(index, cell.source) for index, cell in enumerate(cells) if cell.cell_type == "code"]
    fences = [n for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
              if line.startswith("```{code-cell}")]
    found = []
    if len(expected.cells) != len(got.cells):
        found.append(f"{name} has {len(got.cells)} code cells, its baseline {len(expected.cells)}: "
                     f"the outputs are paired cell by cell, so regenerate the baseline "
                     f"(python tests/make_baselines.py {name}) and review its diff")
    for k, (old, new) in enumerate(zip(expected.cells, got.cells)):
        before, after = compared(old.outputs, patterns), compared(new.outputs, patterns)
        if before == after:
            continue
        line = f":{fences[k]}" if k < len(fences) else ""
        where = f"code cell {k + 1}" + (f" (notebook cell {code[k][0]})" if k < len(code) else "")
        diff = difflib.unified_diff(_lines(before), _lines(after), "baseline", "this run", lineterm="", n=2)
        body = (_short(code[k][1]) + "\n") if k < len(code) else ""
        found.append(f"{name}{line}, {where}:\n{body}" + "\n".join(diff))
    old_glue, new_glue = (_glue_view(nb.metadata.get("glue", {}), patterns) for nb in (expected, got))
    if old_glue != new_glue:
        diff = difflib.unified_diff(_glue_lines(old_glue), _glue_lines(new_glue), "baseline", "this run",
                                    lineterm="", n=0)
        found.append(f"{name}, glued values ({{glue:text}} in the prose):\n" + "\n".join(diff))
    return found


# --------------------------------------------------------------------------- command line


def resolve(names: list[str]) -> list[pathlib.Path]:
    """Chapters named as ``04_rope``, ``04``, ``chapters/04_rope.md`` or a path; all when none."""
    every = chapter_sources()
    if not names:
        return every
    chosen = []
    for name in names:
        stem = pathlib.Path(name).stem
        match = [p for p in every if p.stem == stem or p.stem.split("_")[0] == stem]
        if len(match) != 1:
            raise SystemExit(f"chapter: {name!r}; expected one of {', '.join(p.stem for p in every)}")
        chosen += match
    return chosen


def changed_since(ref: str) -> list[pathlib.Path]:
    """The chapters whose source or baseline differs from ``ref``'s (where it forked), edits not
    yet committed included; every chapter when ``posenc/`` differs (any chapter may print otherwise)."""
    base = subprocess.run(["git", "merge-base", ref, "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if base.returncode:
        raise SystemExit(f"--changed-since: {ref!r} is not a commit of this repository ({base.stderr.strip()})")
    listed = subprocess.run(["git", "diff", "--name-only", base.stdout.strip(), "--", "chapters", "tests/baselines",
                             "posenc"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    listed += subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "chapters", "posenc"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    if any(path.startswith("posenc/") for path in listed):
        print(f"posenc/ differs from {ref}: every chapter is checked")
        return chapter_sources()
    stems = {pathlib.Path(path).stem for path in listed}
    return [source for source in chapter_sources() if source.stem in stems]


def check(source: pathlib.Path) -> tuple[list[str], str]:
    """Execute ``source`` and compare with its baseline: (differences, one line of summary)."""
    if not baseline_for(source).is_file():
        return [f"{source.name} has no baseline: python tests/make_baselines.py {source.relative_to(ROOT)}"], ""
    nb, seconds = execute(source)
    found = differences(source, read_baseline(source), record(nb.cells))
    errors = [c for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    if errors and found:  # the traceback is not compared, but it says where the run broke
        found.append("the first error's traceback:\n" + re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(
            next(o for o in errors[0].outputs if o.output_type == "error").traceback)))
    code = sum(c.cell_type == "code" for c in nb.cells)
    verdict = f"{len(found)} difference(s)" if found else "the outputs equal the baseline"
    return found, f"{source.stem}: {code} code cells executed in {seconds:.0f} s; {verdict}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapters to check (default: every chapter)")
    parser.add_argument("--changed-since", metavar="REF", help="only the chapters changed since REF (make check)")
    args = parser.parse_args(argv)
    sources = changed_since(args.changed_since) if args.changed_since else resolve(args.chapters)
    if args.changed_since and not sources:
        print(f"no chapter (and nothing in posenc/) differs from {args.changed_since}")
    kernel = os.environ.get("OPENBLAS_CORETYPE")
    if kernel:
        print(f"under OPENBLAS_CORETYPE={kernel}, {os.environ.get('OPENBLAS_NUM_THREADS', 'default')} thread(s)")
    failed = 0
    for source in sources:
        found, summary = check(source)
        for report in found:
            print(report, end="\n\n")
        print(summary, flush=True)
        failed += bool(found)
    if failed:
        print(f"{failed} chapter(s) differ from their baselines. If the change is intended, "
              f"regenerate: python tests/make_baselines.py CHAPTER.md, and review the baseline's diff.")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
