"""Where the chapters and their stored baselines live; shared by the tools in tests/."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
BASELINES = ROOT / "tests" / "baselines"


def chapter_sources() -> list[pathlib.Path]:
    """Every executable chapter: the MyST notebooks ``chapters/NN_name.md``."""
    return sorted(p for p in CHAPTERS.glob("[0-9][0-9]_*.md"))


def baseline_for(source: pathlib.Path) -> pathlib.Path:
    return BASELINES / (source.stem + ".ipynb")
