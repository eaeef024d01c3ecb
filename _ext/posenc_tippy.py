"""Ship the reference previews' scripts (tippy.js, Popper) with the site: sphinx-tippy only links a CDN.

sphinx-tippy (pinned in requirements.txt) shows a preview of a reference's target when
the pointer rests on it (a theorem, an equation, a figure, a citation). It loads its two
scripts from the paths in its ``tippy_js`` option, by default from unpkg.com, and has no
option to ship them. Here ``tippy_js`` (in ``_config.yml``) names local paths under
``_static/vendor/``, and this extension copies those files there once per build, from the
npm packages that ``_ext/fetch_assets.py`` fetched (pinned, sha512-checked, in
``_ext/assets.json``), with their licences. A ``tippy_js`` entry that is not one of these
files (a CDN address put back) stops the build, so the site keeps working offline and
from ``file://``. It also removes the previews' data files that earlier builds left in
``_static/tippy/`` (sphinx-tippy removes only the top-level pages' old ones).
"""

from __future__ import annotations

import pathlib
import shutil

import fetch_assets
from sphinx.errors import ExtensionError

#: ``tippy_js`` entry (path under ``_static``) -> (npm package, file in it, its licence file).
SCRIPTS = {
    "vendor/popper/popper.min.js": ("@popperjs/core", "dist/umd/popper.min.js", "LICENSE.md"),
    "vendor/tippy/tippy-bundle.umd.min.js": ("tippy.js", "dist/tippy-bundle.umd.min.js", "LICENSE"),
}


def _check_config(app, config):
    listed = list(config.tippy_js)
    if listed != list(SCRIPTS):
        raise ExtensionError(
            f"posenc_tippy: tippy_js is {listed!r}; it must be {list(SCRIPTS)!r}, the local copies "
            "this extension ships (a CDN address would break the site offline)"
        )


def _sources(app):
    # At the start of the build: a missing asset stops it before any page is executed.
    if app.builder.format != "html":
        return
    app.env.posenc_tippy_sources = {
        target: (fetch_assets.asset(package, path), fetch_assets.asset(package, licence))
        for target, (package, path, licence) in SCRIPTS.items()
    }


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    static = pathlib.Path(app.outdir) / "_static"
    for target, (script, licence) in app.env.posenc_tippy_sources.items():
        dest = static / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(script, dest)
        shutil.copyfile(licence, dest.parent / licence.name)


def _drop_stale_data(app, exception):
    # sphinx-tippy writes each page's previews to _static/tippy/<page>.<uuid>.js, a new name
    # per build, and removes the old file only for top-level pages (it looks for
    # "chapters.*.js" in _static/tippy/chapters/), so every build of the chapters left six
    # dead files behind. Keep only the files the pages load now.
    if exception is not None or app.builder.format != "html":
        return
    current = {pathlib.Path(page["js_path"]) for page in getattr(app.env, "tippy_data", {}).get("pages", {}).values()}
    for path in (pathlib.Path(app.outdir) / "_static" / "tippy").rglob("*.js"):
        if path not in current:
            path.unlink()


def setup(app):
    app.setup_extension("sphinx_tippy")
    app.connect("config-inited", _check_config)
    app.connect("builder-inited", _sources)
    app.connect("build-finished", _copy)
    app.connect("build-finished", _drop_stale_data, priority=600)  # after sphinx-tippy writes them (500)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
