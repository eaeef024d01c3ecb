"""Ship MathJax 3 with the book, no CDN: only what a page loads (sphinx-mathjax-offline's own extension copies 24 MB).

Sphinx loads MathJax from a CDN by default, so without a network every formula stays raw
LaTeX. The PyPI package ``sphinx-mathjax-offline`` (pinned in requirements.txt) carries
the MathJax 3.2.2 distribution; this extension

- points ``mathjax_path`` at ``_static/mathjax/tex-chtml.js`` (a relative path, so pages
  opened from disk as ``file://`` find it too), and
- copies into the site only what a page can load: the ``tex-chtml`` component, its
  CHTML fonts, the TeX extensions it may autoload, and the menu and accessibility
  modules with their speech rules. The package's own extension would copy all 24 MB
  (every other component too); this copies about a third of it.

MathJax is loaded only on pages that contain a formula (Sphinx's own rule).
"""

from __future__ import annotations

import importlib.util
import pathlib
import shutil

PACKAGE = "sphinx-mathjax-offline"  # the package's import name has hyphens
COMPONENT = "tex-chtml.js"
#: Paths under the package's ``static/mathjax`` that tex-chtml.js may load at run time.
NEEDED = (COMPONENT, "output/chtml", "input/tex/extensions", "ui", "a11y", "sre", "adaptors")


def mathjax_source() -> pathlib.Path:
    """The MathJax distribution inside the installed ``sphinx-mathjax-offline`` package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE} is not installed (it is pinned in requirements.txt)")
    root = pathlib.Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    if not (root / COMPONENT).is_file():
        raise FileNotFoundError(f"{COMPONENT} not found in {root}")
    return root


def _set_path(app, config):
    # Sphinx prefixes a path without "://" with _static/.
    config.mathjax_path = f"mathjax/{COMPONENT}"


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    source = mathjax_source()
    target = pathlib.Path(app.outdir) / "_static" / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    for part in NEEDED:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, target / part)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target / part)


def setup(app):
    app.connect("config-inited", _set_path)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
