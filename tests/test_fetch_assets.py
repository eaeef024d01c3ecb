"""_ext/fetch_assets.py: pinned integrity is enforced, files land where the build looks."""

from __future__ import annotations

import base64
import hashlib
import json

import fetch_assets
import pytest
from helpers import npm_tarball


def _sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def test_lock_pins_every_package():
    entries = fetch_assets.packages()
    names = {e["name"] for e in entries}
    assert {"axe-core", "plotly.js-basic-dist-min", "tippy.js", "@popperjs/core"} <= names
    for e in entries:
        assert len(base64.b64decode(e["integrity"].removeprefix("sha512-"))) == 64, e["name"]
        assert e["version"].count(".") == 2 and e["files"], e["name"]


def test_tarball_url_drops_the_scope():
    assert fetch_assets.tarball_url("@popperjs/core", "2.11.8") == (
        "https://registry.npmjs.org/@popperjs/core/-/core-2.11.8.tgz")
    assert fetch_assets.tarball_url("axe-core", "4.14.1").endswith("/axe-core/-/axe-core-4.14.1.tgz")


def test_integrity_mismatch_is_refused():
    data = npm_tarball({"a.js": b"ok"})
    fetch_assets.check_integrity(data, _sri(data), "pkg")
    tampered = data[:-1] + bytes([data[-1] ^ 1])
    with pytest.raises(ValueError, match=r"^pkg: integrity sha512-.* differs from the pinned"):
        fetch_assets.check_integrity(tampered, _sri(data), "pkg")


def test_extract_writes_the_listed_files_only(tmp_path):
    data = npm_tarball({"dist/x.min.js": b"x", "other.js": b"y"})
    entry = {"name": "@s/p", "version": "1.0.0", "integrity": _sri(data), "files": ["dist/x.min.js"]}
    written = fetch_assets.extract(data, entry, tmp_path)
    assert written == [tmp_path / "@s/p/dist/x.min.js"]
    assert (tmp_path / "@s/p/dist/x.min.js").read_bytes() == b"x"
    assert not (tmp_path / "@s/p/other.js").exists()
    assert fetch_assets.asset("@s/p", "dist/x.min.js", tmp_path) == written[0]
    with pytest.raises(FileNotFoundError, match="fetch_assets.py"):
        fetch_assets.asset("@s/p", "other.js", tmp_path)


def test_lock_without_integrity_is_rejected(tmp_path):
    lock = tmp_path / "assets.json"
    lock.write_text(json.dumps({"packages": [{"name": "p", "version": "1.0.0", "files": ["a"]}]}))
    with pytest.raises(ValueError, match="has no 'integrity'"):
        fetch_assets.packages(lock)
    lock.write_text(json.dumps({"packages": [{"name": "p", "version": "1.0.0", "files": ["a"],
                                              "integrity": "sha1-abc"}]}))
    with pytest.raises(ValueError, match=r"expected 'sha512-\.\.\.'"):
        fetch_assets.packages(lock)


def test_the_venv_has_every_asset():
    # make venv runs the fetch; a package added to the lock without a fetch fails here.
    assert fetch_assets.missing(fetch_assets.packages(), fetch_assets.ASSETS) == []
