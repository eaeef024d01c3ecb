"""What a reader is told, checked without a build: the repository setting, `posenc[book]`.

The repository's address has one setting, ``repository: url:`` in ``_config.yml``;
``_ext/posenc_notebooks.py`` falls back to GitHub Actions' variables and the clone's
``origin`` remote, and invents nothing when neither exists.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import jupytext
import posenc_notebooks
import yaml

from booktools import ROOT, chapter_sources

def test_repository_url_from_the_setting_first():
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}
    assert posenc_notebooks.repository_url("https://example.org/a/b/", ROOT, env) == "https://example.org/a/b"


def test_repository_url_from_github_actions_variables():
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "owner/book"}
    assert posenc_notebooks.repository_url("", ROOT, env) == "https://github.com/owner/book"


def test_repository_url_from_the_origin_remote(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert posenc_notebooks.repository_url("", tmp_path, {}) == ""  # no remote: no address
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "git@github.com:owner/book.git"],
                   check=True)
    assert posenc_notebooks.repository_url("", tmp_path, {}) == "https://github.com/owner/book"


def test_without_an_address_the_instructions_invent_none():
    text = posenc_notebooks.how_to_run("")
    assert "http" not in text and "<" not in text.replace("<a", "")
    assert 'pip install ".[book]"' in text
    with_url = posenc_notebooks.how_to_run("https://github.com/owner/book")
    assert "git clone https://github.com/owner/book" in with_url
    assert 'pip install "posenc[book] @ git+https://github.com/owner/book"' in with_url


def test_the_downloads_install_line_names_the_books_commit_or_this_clone():
    """A downloaded notebook's requirement works from anywhere: the repository at the book's commit, or the clone."""
    from packaging.requirements import Requirement

    sha = "0123456789abcdef0123456789abcdef01234567"
    pinned = posenc_notebooks.requirement("https://github.com/owner/book", sha, ROOT)
    assert pinned == f"posenc[book] @ git+https://github.com/owner/book@{sha}"
    local = posenc_notebooks.requirement("", "", ROOT)
    assert local == f"posenc[book] @ {ROOT.as_uri()}"
    assert posenc_notebooks.requirement("https://github.com/owner/book", "", ROOT) == local  # a commit not pushed
    for line in (pinned, local):
        parsed = Requirement(line)
        assert parsed.name == "posenc" and parsed.extras == {"book"} and parsed.url
    assert f'pip install "posenc[book] @ git+https://github.com/owner/book@{sha}"' in posenc_notebooks.how_to_run(
        "https://github.com/owner/book", sha)


def test_the_books_commit_is_one_the_remote_has(tmp_path):
    def git(*args, cwd=tmp_path / "clone"):
        return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()

    assert posenc_notebooks.published_commit(ROOT, {"GITHUB_SHA": "f" * 40}) == "f" * 40
    (tmp_path / "clone").mkdir()
    git("init", "-q")
    git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "one")
    assert posenc_notebooks.published_commit(tmp_path / "clone", {}) == ""  # no remote has it
    git("init", "-q", "--bare", str(tmp_path / "remote.git"), cwd=tmp_path)
    git("remote", "add", "origin", str(tmp_path / "remote.git"))
    git("push", "-q", "origin", "HEAD:refs/heads/main")
    git("fetch", "-q", "origin")
    head = git("rev-parse", "HEAD")
    assert posenc_notebooks.published_commit(tmp_path / "clone", {}) == head
    git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "two")
    assert posenc_notebooks.published_commit(tmp_path / "clone", {}) == ""  # not pushed yet


def test_the_setting_is_in_config_and_empty_in_the_repository():
    """One setting, `repository: url:`; empty here because the project records no public URL."""

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["repository"]["url"] == ""



def _pins() -> dict:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.strip())
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_the_book_extra_has_the_books_pins_as_lower_bounds():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["book"]
    pins = _pins()
    bounds = dict(re.match(r"^([A-Za-z0-9_.-]+)>=(\S+)$", req).groups() for req in extra)
    assert set(bounds) == {"matplotlib", "plotly", "ipykernel", "nbclient"}
    assert all(pins[name] == version for name, version in bounds.items()), (bounds, pins)


def test_the_book_extra_covers_every_third_party_import_of_the_chapters():
    """A chapter importing a package that neither numpy nor posenc[book] brings fails here."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["book"]
    provided = {"numpy", "posenc"} | {re.match(r"^[A-Za-z0-9_-]+", r).group(0) for r in extra}
    imported = set()
    for chapter in chapter_sources():
        code = "\n".join(c.source for c in jupytext.read(chapter).cells if c.cell_type == "code")
        imported |= set(re.findall(r"^\s*(?:import|from) ([A-Za-z_][A-Za-z0-9_]*)", code, re.M))
    assert {"numpy", "matplotlib", "posenc"} <= imported
    third_party = {name for name in imported if name not in sys.stdlib_module_names}
    assert third_party <= provided, third_party - provided


def test_build_output_is_ignored():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "build/" in ignored and "_build/" in ignored and ".venv/" in ignored
