"""The GitHub Actions workflow parses, runs the CI command and publishes the site from main."""

from __future__ import annotations

import re

import yaml

from booktools import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _load():
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as the boolean True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def _runs(job) -> list[str]:
    return [step["run"].strip() for step in job["steps"] if "run" in step]


def test_workflow_runs_on_push_and_pull_request():
    data = _load()
    assert set(data["on"]) >= {"push", "pull_request"}


def test_workflow_runs_the_ci_command_which_runs_the_readme_command():
    data = _load()
    runs = _runs(data["jobs"]["test"])
    assert runs == ["bash .ci/run"], runs
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.strip() for line in ci.splitlines() if line.strip().startswith("make ")]
    assert commands == ['make test PYTHON="$PYTHON"'], commands
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^make test\b", readme, re.M), "the README does not give `make test`"
    python = [s for s in data["jobs"]["test"]["steps"] if s.get("uses", "").startswith("actions/setup-python")]
    assert python and str(python[0]["with"]["python-version"]) == "3.11"


def test_make_test_runs_the_browser_test_after_the_build():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.M).group(1).splitlines()
    assert "--ignore=tests/test_site.py" in recipe[0] and "pytest tests" in recipe[0]
    assert "jupyter-book build" in recipe[1]
    assert "site-test" in recipe[2]
    site = re.search(r"^site-test:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "pytest tests/test_site.py" in site


def test_ci_requires_the_browser():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "export POSENC_REQUIRE_BROWSER=1" in ci
    assert "chromium-driver" in ci and "chromium-chromedriver" in ci


def test_main_publishes_the_built_site_to_pages():
    data = _load()
    test_steps = data["jobs"]["test"]["steps"]
    upload = [s for s in test_steps if s.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    assert "refs/heads/main" in upload[0]["if"] and "push" in upload[0]["if"]
    publish = data["jobs"]["publish"]
    assert publish["needs"] == "test" and "refs/heads/main" in publish["if"]
    assert publish["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in publish["steps"])
