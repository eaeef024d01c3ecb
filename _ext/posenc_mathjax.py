"""Ship MathJax 3 with the book, no CDN: only what a page loads (sphinx-mathjax-offline's own extension copies 24 MB).

Sphinx loads MathJax from a CDN by default, so without a network every formula stays raw
LaTeX. The PyPI package ``sphinx-mathjax-offline`` (pinned in requirements.txt) carries
the MathJax 3.2.2 distribution; this extension

- points ``mathjax_path`` at ``_static/mathjax/startup.js``, MathJax's loader (a relative
  path, so pages opened from disk as ``file://`` find it too), and adds to
  ``mathjax3_config`` the components it loads: :data:`LOAD`, that is the TeX input with
  only the packages the book uses (``base`` and ``ams``), the CommonHTML output with its
  TeX fonts, and the hidden MathML that screen readers read; and
- copies into the site only those files (:data:`NEEDED`, 1.1 MB with every web font; the
  package's own extension would copy all 24 MB).

A page with a formula then loads 0.75 MB of MathJax's scripts (plus the few web fonts its
formulas use), against 1.16 MB for the combined ``tex-chtml.js``, which also carries the
TeX packages ``newcommand``, ``require``, ``autoload`` (which fetches any other package on
first use) and ``configmacros``, and MathJax's context menu (``ui/menu``, 0.43 MB: "Show
Math As", zoom, and the speech and explorer settings; screen readers still get each
formula's MathML from ``a11y/assistive-mml``). The book defines no macros and uses no
package beyond ``ams``; a formula that needs one is a MathJax error on the page ("Undefined
control sequence"), which the browser test (tests/test_site.py) reports: add the package's
name to :data:`TEX_PACKAGES`. To offer the menu again, add ``"ui/menu"`` to :data:`LOAD`
and its file to :data:`NEEDED` (0.43 MB more on every page with a formula).

MathJax is loaded only on pages that contain a formula (Sphinx's own rule). On those pages
this extension also puts ``_static/mathjax-slices.js`` (:data:`SLICES`, 2 kB) just before the
loader: it sets MathJax's ``startup.pageReady`` so that the first typesetting runs in short
slices, one formula at a time, instead of one task of a second or more on a phone during
which the page cannot respond (see the script's comment). The outcome is the same: every
formula typeset when ``MathJax.startup.promise`` resolves.
"""

from __future__ import annotations

import copy
import importlib.util
import pathlib
import shutil

#: The first typesetting in slices (see the module docstring); it must run before the loader.
SLICES = pathlib.Path(__file__).with_name("mathjax-slices.js")
PACKAGE = "sphinx-mathjax-offline"  # the package's import name has hyphens
COMPONENT = "startup.js"
#: The TeX packages beyond ``base`` that the book's formulas use.
TEX_PACKAGES = ("ams",)
#: What the loader loads (``core`` and the output's font come as their dependencies).
LOAD = ("input/tex-base", *(f"[tex]/{p}" for p in TEX_PACKAGES), "output/chtml", "a11y/assistive-mml")
#: Paths under the package's ``static/mathjax`` that a page loads: the loader, the core, and
#: the files of :data:`LOAD` (the CommonHTML output with its TeX font data and web fonts).
NEEDED = (
    COMPONENT,
    "core.js",
    "input/tex-base.js",
    *(f"input/tex/extensions/{p}.js" for p in TEX_PACKAGES),
    "output/chtml.js",
    "output/chtml/fonts",
    "a11y/assistive-mml.js",
)


def mathjax_source() -> pathlib.Path:
    """The MathJax distribution inside the installed ``sphinx-mathjax-offline`` package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE} is not installed (it is pinned in requirements.txt)")
    root = pathlib.Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    if not (root / COMPONENT).is_file():
        raise FileNotFoundError(f"{COMPONENT} not found in {root}")
    return root


def with_components(config: dict | None) -> dict:
    """``mathjax3_config`` with the loader's components and the TeX packages added.

    The book's own settings (``_config.yml``) are kept: ``loader.load`` and the TeX
    packages' ``[+]`` list are extended, nothing is replaced.
    """
    config = copy.deepcopy(dict(config or {}))
    loader = config.setdefault("loader", {})
    loader["load"] = [*loader.get("load", []), *(c for c in LOAD if c not in loader.get("load", []))]
    tex = config.setdefault("tex", {})
    packages = tex.get("packages", {})
    if isinstance(packages, list):  # a plain list replaces MathJax's default: extend it
        tex["packages"] = [*packages, *(p for p in TEX_PACKAGES if p not in packages)]
    else:
        packages = dict(packages)
        packages["[+]"] = [*packages.get("[+]", []), *(p for p in TEX_PACKAGES if p not in packages.get("[+]", []))]
        tex["packages"] = packages
    return config


def _configure(app, config):
    # Sphinx prefixes a path without "://" with _static/.
    config.mathjax_path = f"mathjax/{COMPONENT}"
    config.mathjax3_config = with_components(config.mathjax3_config)


def with_slices(script_files: list) -> list:
    """``script_files`` with :data:`SLICES`, deferred, just before MathJax's loader (if present)."""
    from sphinx.builders.html._assets import _JavaScript

    result = []
    for js in script_files:
        if str(getattr(js, "filename", "") or "").endswith(f"mathjax/{COMPONENT}"):
            result.append(_JavaScript(f"_static/{SLICES.name}", priority=js.priority, defer="defer"))
        result.append(js)
    return result


def _page_context(app, pagename, templatename, context, doctree):
    # After sphinx.ext.mathjax (priority 500) has added the loader, on pages with a formula.
    if app.builder.format == "html" and "script_files" in context:
        context["script_files"] = with_slices(list(context["script_files"]))


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    shutil.copyfile(SLICES, pathlib.Path(app.outdir) / "_static" / SLICES.name)
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
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _page_context, priority=600)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
