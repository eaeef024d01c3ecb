"""ruff (pinned in requirements.txt, rules in pyproject.toml) finds nothing in posenc/ and tests/."""

import subprocess
import sys

from booktools import ROOT


def test_ruff_reports_nothing():
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "posenc", "tests"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert run.returncode == 0, f"ruff check posenc tests:\n{run.stdout}{run.stderr}"
