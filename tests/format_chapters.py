"""Write every chapter in the form jupytext itself writes (``make format``).

JupyterLab (``make lab``) opens the chapters through jupytext and, on save, writes them
back with jupytext's own YAML dumper. A chapter stored in any other form (for example a
figure caption as a YAML block literal) would be rewritten on the first save. This
script puts each chapter in that canonical form once, so that opening, running and
saving a chapter leaves ``git status`` clean; ``tests/test_lab.py`` fails when a chapter
is not canonical.

Multi-line strings in cell metadata (captions) are joined into one line: in Markdown a
single newline inside a paragraph is a space, so the rendered caption is unchanged.

Usage: ``python tests/format_chapters.py [chapter.md ...]`` (default: all chapters).
"""

from __future__ import annotations

import pathlib
import sys

import jupytext

from booktools import CHAPTERS, chapter_sources

# The same filter as chapters/jupytext.toml: the header carries no jupytext version.
CONFIG_FILE = CHAPTERS / "jupytext.toml"


def _one_line(value):
    if isinstance(value, str) and "\n" in value.strip("\n"):
        paragraphs = value.strip("\n").split("\n\n")
        if len(paragraphs) > 1:
            raise ValueError(f"a metadata string has several paragraphs: {value[:60]!r}...")
        return " ".join(value.split())
    if isinstance(value, str):
        return value.strip("\n")
    if isinstance(value, dict):
        return {k: _one_line(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_one_line(v) for v in value]
    return value


def canonical(text: str) -> str:
    """The chapter as jupytext writes it back after a round trip through a notebook."""
    config = jupytext.config.load_jupytext_configuration_file(str(CONFIG_FILE))
    nb = jupytext.reads(text, fmt="md:myst")
    for cell in nb.cells:
        cell.metadata = _one_line(cell.metadata)
    return jupytext.writes(nb, fmt="md:myst", config=config)


def main(argv: list[str]) -> int:
    sources = [pathlib.Path(a) for a in argv] or chapter_sources()
    for source in sources:
        text = source.read_text(encoding="utf-8")
        new = canonical(text)
        if new != text:
            source.write_text(new, encoding="utf-8")
            print(f"{source.name}: rewritten in jupytext's form")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
