"""ruff (pinned in requirements.txt, rules in pyproject.toml) finds nothing in the project's Python."""

import subprocess
import sys

from booktools import ROOT

#: Every folder of Python: the package, its tests, the build's extensions, the tools, the benchmarks.
PATHS = ("posenc", "tests", "_ext", "tools", "benchmarks")


def test_ruff_reports_nothing():
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *PATHS],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert run.returncode == 0, f"ruff check {' '.join(PATHS)}:\n{run.stdout}{run.stderr}"
