"""The release metadata: one version, a valid citation, the licences, and a posenc
that builds into a wheel and an sdist which twine accepts and which install and import
in an empty environment (offline, from the built files)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import tomllib
import venv
import zipfile

import jsonschema
import pytest
import yaml

import posenc

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "tests" / "citation_cff_1.2.0.schema.json").read_text(encoding="utf-8"))
VERSION = posenc.__version__


def _cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def _repository_url() -> str | None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return (config.get("repository") or {}).get("url")


# --- one version --------------------------------------------------------------------

def test_version_is_written_once():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), VERSION
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "posenc.__version__"}


def test_citation_intro_and_changelog_carry_the_version():
    assert str(_cff()["version"]) == VERSION
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    bibtex = re.search(r"```bibtex\n(.*?)```", intro, re.S)
    assert bibtex, "intro.md has no BibTeX block"
    assert re.search(rf"edition\s*=\s*\{{{re.escape(VERSION)}\}}", bibtex.group(1))
    assert "{{ book_version }}" in intro
    changelog = (ROOT / "changelog.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(VERSION)}$", changelog, re.M), "no changelog section for this version"
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    reference = toc[toc.index("caption: Reference"):]
    assert "file: changelog" in reference


# --- citation and licences -----------------------------------------------------------

def test_citation_cff_is_valid():
    jsonschema.validate(_cff(), SCHEMA)


def test_the_schema_rejects_a_broken_citation():
    broken = dict(_cff())
    del broken["authors"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**_cff(), "cff-version": "1.2"}, SCHEMA)


def test_no_url_is_invented():
    url = _repository_url()
    cff = _cff()
    named = {cff.get(k) for k in ("url", "repository-code", "repository")} - {None}
    assert named == ({url} if url else set()), named
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    bibtex = re.search(r"```bibtex\n(.*?)```", intro, re.S).group(1)
    if url:
        assert url in bibtex
    else:
        assert "url" not in bibtex.lower() and "http" not in bibtex


def test_licences_are_stated():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "CC BY 4.0" in text and "creativecommons.org/licenses/by/4.0" in text
    assert _cff()["license"] == "MIT"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}
    assert "License :: OSI Approved :: MIT License" in project["classifiers"]
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in intro and "MIT" in intro


def test_the_package_readme_stands_alone():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] == "posenc/README.md"
    readme = (ROOT / project["readme"]).read_text(encoding="utf-8")
    first = readme.split("\n\n")[1]
    assert "NumPy" in first and "book" not in first.lower(), first
    # the example in it runs
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    exec(compile(code, "posenc/README.md", "exec"), {})


# --- the wheel and the sdist -----------------------------------------------------------

@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return wheels[0], sdists[0]


def test_build_names_the_version(dist):
    wheel, sdist = dist
    assert wheel.name == f"posenc-{VERSION}-py3-none-any.whl"
    assert sdist.name == f"posenc-{VERSION}.tar.gz"


def test_twine_accepts_both(dist):
    run = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("PASSED") == 2, run.stdout


def test_wheel_holds_the_package_licence_and_readme(dist):
    with zipfile.ZipFile(dist[0]) as z:
        names = z.namelist()
        meta = z.read(f"posenc-{VERSION}.dist-info/METADATA").decode()
    assert "posenc/__init__.py" in names and "posenc/rope.py" in names
    # chapter 6 reads its records from the installed package
    assert {"posenc/data/book-4x/config.json", "posenc/data/book-4x/summary.csv",
            "posenc/data/yarn-L256/config.json", "posenc/data/yarn-L256/summary.csv"} <= set(names), names
    assert not [n for n in names if n.startswith(("tests/", "chapters/", "_ext/"))], names
    assert any(n.endswith("LICENSE") for n in names), names
    assert f"Version: {VERSION}" in meta and "Requires-Dist: numpy" in meta
    body = meta.split("\n\n", 1)[1]
    assert body.strip() == (ROOT / "posenc" / "README.md").read_text(encoding="utf-8").strip()


def test_sdist_holds_what_a_build_needs(dist):
    # `python -m build` (the fixture) made the wheel from this sdist, not from the tree:
    # the wheel's tests below are the sdist's too. Installing the sdist itself offline
    # would need setuptools>=68 and wheel in the empty environment, so it is not repeated.
    import tarfile

    with tarfile.open(dist[1]) as tar:
        members = tar.getnames()
    top = f"posenc-{VERSION}"
    for needed in ("pyproject.toml", "LICENSE", "posenc/README.md", "posenc/__init__.py", "posenc/rope.py", "PKG-INFO"):
        assert f"{top}/{needed}" in members, (needed, members[:20])
    assert not [m for m in members if m.startswith((f"{top}/chapters/", f"{top}/_build/", f"{top}/.venv/"))], members


def test_wheel_installs_into_an_empty_venv_and_imports(dist, tmp_path):
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    py = env / "bin" / "python"
    target = dist[0]
    run = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--no-deps",
                          "--disable-pip-version-check", str(target)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    # NumPy, posenc's only dependency, is lent from this environment by a path entry
    # (a plain directory, so this environment's editable posenc is not seen).
    import numpy

    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "zz_numpy_from_test.pth").write_text(str(pathlib.Path(numpy.__file__).parent.parent) + "\n")
    smoke = (
        "import numpy as np, posenc, pathlib, sys\n"
        "assert pathlib.Path(posenc.__file__).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve()), posenc.__file__\n"
        "x = np.ones((4, 8))\n"
        "y = posenc.apply_rope(x, np.arange(4))\n"
        "assert y.shape == (4, 8) and np.allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1))\n"
        "try:\n"
        "    posenc.alibi_slopes(0)\n"
        "except ValueError as e:\n"
        "    assert str(e).startswith('n_heads: '), e\n"
        "else:\n"
        "    raise SystemExit('alibi_slopes(0) did not raise')\n"
        "print(posenc.__version__)\n"
    )
    run = subprocess.run([str(py), "-c", smoke], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == VERSION
