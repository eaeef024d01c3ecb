"""Fetch the book's browser assets from the npm registry, checked against pinned sha512 integrity.

The HTML ships plotly.js and the reference previews' scripts with the pages, and the browser
test runs axe-core on them; all come from npm packages, pinned in ``_ext/assets.json`` with the
integrity string the registry publishes for each tarball. This script needs only Python (no
Node.js): it downloads each tarball from the registry, refuses it unless its sha512 matches the
pinned integrity, and extracts the listed files into :data:`ASSETS` (inside the virtual
environment, so a fresh ``make venv`` fetches them and nothing lands in the repository).

``make venv`` runs it; running it again does nothing when every file is in place. Usage::

    python _ext/fetch_assets.py            # fetch what is missing
    python _ext/fetch_assets.py --check    # exit 1 if anything is missing, fetch nothing
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import pathlib
import sys
import tarfile
import urllib.request

LOCK = pathlib.Path(__file__).with_name("assets.json")
#: Where the files go: ``<ASSETS>/<package name>/<path inside the package>``.
ASSETS = pathlib.Path(sys.prefix) / "share" / "posenc-assets"
REGISTRY = "https://registry.npmjs.org"


def packages(lock: pathlib.Path = LOCK) -> list[dict]:
    """The pinned packages, validated: name, version, integrity (sha512-...) and files."""
    entries = json.loads(lock.read_text(encoding="utf-8"))["packages"]
    for entry in entries:
        for key in ("name", "version", "integrity", "files"):
            if key not in entry:
                raise ValueError(f"{lock}: package {entry.get('name')!r} has no {key!r}")
        if not entry["integrity"].startswith("sha512-"):
            raise ValueError(f"{lock}: {entry['name']} integrity {entry['integrity']!r}; expected 'sha512-...'")
    return entries


def asset(name: str, path: str, root: pathlib.Path | None = None) -> pathlib.Path:
    """The local copy of ``path`` from package ``name`` (raises if it was not fetched)."""
    file = (root or ASSETS) / name / path
    if not file.is_file():
        raise FileNotFoundError(f"{file} is missing: run `python _ext/fetch_assets.py` (make venv does)")
    return file


def tarball_url(name: str, version: str) -> str:
    """The registry's tarball address (a scoped package's file drops the scope)."""
    return f"{REGISTRY}/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"


def check_integrity(data: bytes, integrity: str, what: str) -> None:
    """Raise ValueError unless ``data``'s sha512 is the pinned ``integrity`` (npm's SRI form)."""
    got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    if got != integrity:
        raise ValueError(f"{what}: integrity {got} differs from the pinned {integrity}; refusing it")


def extract(data: bytes, entry: dict, root: pathlib.Path) -> list[pathlib.Path]:
    """Write the entry's files from an npm tarball (members under ``package/``) into ``root``."""
    written = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for path in entry["files"]:
            member = tar.getmember(f"package/{path}")
            source = tar.extractfile(member)
            if source is None:
                raise ValueError(f"{entry['name']}: {path} is not a regular file in the tarball")
            target = root / entry["name"] / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())
            written.append(target)
    return written


def missing(entries: list[dict], root: pathlib.Path) -> list[dict]:
    return [e for e in entries if not all((root / e["name"] / p).is_file() for p in e["files"])]


def fetch(root: pathlib.Path = ASSETS, lock: pathlib.Path = LOCK) -> int:
    """Fetch and extract every package whose files are not all in ``root``; returns how many."""
    todo = missing(packages(lock), root)
    for entry in todo:
        url = tarball_url(entry["name"], entry["version"])
        with urllib.request.urlopen(url, timeout=120) as response:
            data = response.read()
        check_integrity(data, entry["integrity"], f"{entry['name']}@{entry['version']}")
        extract(data, entry, root)
        print(f"fetched {entry['name']}@{entry['version']} into {root / entry['name']}")
    return len(todo)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report what is missing")
    args = parser.parse_args(argv)
    if args.check:
        gone = missing(packages(), ASSETS)
        for entry in gone:
            print(f"missing: {entry['name']}@{entry['version']}")
        return 1 if gone else 0
    fetch()
    return 0


if __name__ == "__main__":
    sys.exit(main())
