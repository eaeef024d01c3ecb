"""The GitHub Actions workflows parse: book.yml runs the CI command and publishes the site
from main; release.yml, on tags v*, runs the same command, attaches the site, the PDF, the
notebooks and posenc's files to the release, and publishes to PyPI by trusted publishing.

What the CI command (``.ci/run``) and the Makefile's recipes run is not asserted here as
text: CI running them is their test."""

from __future__ import annotations

import re

import yaml

from booktools import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def _load(path=WORKFLOW):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as the boolean True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def _runs(job) -> list[str]:
    return [step["run"].strip() for step in job["steps"] if "run" in step]


def test_workflow_runs_on_push_and_pull_request():
    data = _load()
    assert set(data["on"]) >= {"push", "pull_request"}


def test_workflow_runs_the_ci_command():
    data = _load()
    runs = _runs(data["jobs"]["test"])
    assert runs == ["bash .ci/run"], runs
    python = [s for s in data["jobs"]["test"]["steps"] if s.get("uses", "").startswith("actions/setup-python")]
    assert python and str(python[0]["with"]["python-version"]) == "3.11"


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


def test_release_runs_on_version_tags_only():
    data = _load(RELEASE)
    assert data["on"] == {"push": {"tags": ["v*"]}}
    assert data["permissions"] == {"contents": "read"}


def test_release_builds_and_tests_as_ci_does():
    job = _load(RELEASE)["jobs"]["release"]
    runs = _runs(job)
    assert "bash .ci/run" in runs
    python = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python")]
    assert python and str(python[0]["with"]["python-version"]) == "3.11"
    # the tag must name posenc's version, checked before anything is built
    assert any("__version__" in r and "GITHUB_REF_NAME" in r for r in runs[: runs.index("bash .ci/run")])
    # after the PDF exists: the site rebuilt (so it offers the PDF), then the package files
    after = runs[runs.index("bash .ci/run") + 1:]
    assert after[0] == "make book" and after[1] == "make dist"
    assert job["permissions"] == {"contents": "write"}


def test_release_attaches_site_pdf_notebooks_and_package():
    job = _load(RELEASE)["jobs"]["release"]
    collect = next(r for r in _runs(job) if r.startswith("mkdir -p release"))
    assert re.search(r"zip -q -r \S+-site\.zip\S* html", collect), collect
    assert "cp _build/latex/book.pdf" in collect
    assert "jupyter_execute" in collect and "*.ipynb" in collect
    assert "cp dist/* release/" in collect
    create = next(r for r in _runs(job) if r.startswith("gh release create"))
    assert "release/*" in create and "--verify-tag" in create
    steps = [s.get("run", "").strip() for s in job["steps"]]
    assert steps.index(collect) < steps.index(create)


def test_pypi_is_a_separate_trusted_publishing_job():
    data = _load(RELEASE)
    pypi = data["jobs"]["pypi"]
    assert pypi["needs"] == "release"
    assert pypi["permissions"] == {"id-token": "write"}, "trusted publishing needs id-token and nothing else"
    assert pypi["environment"]["name"] == "pypi"
    uses = [s.get("uses", "") for s in pypi["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    publish = next(s for s in pypi["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@"))
    assert "password" not in publish.get("with", {}), "no API token: trusted publishing"
    upload = next(s for s in data["jobs"]["release"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    download = next(s for s in pypi["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    assert upload["with"]["name"] == download["with"]["name"] == "dist"
    assert "trusted publish" in RELEASE.read_text(encoding="utf-8").lower()
