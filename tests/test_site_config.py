"""The book's Sphinx configuration: every Jupyter Book default extension but Thebe, formulas as MathML, icon fonts cut.

`_config.yml` gives the complete extension list (`sphinx: config: extensions`) to leave out
sphinx_thebe, whose inline script Sphinx 7.4 writes twice into every page (a console error).
A list given in full replaces the one Jupyter Book assembles, so an upgrade of Jupyter Book
that adds a default extension would silently lose it: these tests compare the list with
Jupyter Book's own defaults.
"""

from __future__ import annotations

import pathlib
import re

import fetch_assets
import posenc_codeautolink
import posenc_icons
import posenc_images
import posenc_mathml
import posenc_plotly
import posenc_theme
import posenc_tippy
import yaml
from jupyter_book.config import get_default_sphinx_config, get_final_config

from booktools import ROOT

CONFIG = ROOT / "_config.yml"
OWN = ["sphinx_proof", "sphinx_exercise", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinxcontrib.bibtex",
       "sphinx_tippy", "sphinx_codeautolink"]


def _final():
    config, _ = get_final_config(
        user_yaml=CONFIG, cli_config={"latex_individualpages": False}, sourcedir=ROOT
    )
    return config


def test_extension_list_is_jupyter_books_defaults_less_thebe():
    listed = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["sphinx"]["config"]["extensions"]
    defaults = [e for e in get_default_sphinx_config()["extensions"] if e != "sphinx_thebe"]
    assert listed[: len(defaults)] == defaults, "Jupyter Book's default extensions changed: update _config.yml"
    assert "sphinx_thebe" in get_default_sphinx_config()["extensions"], (
        "Jupyter Book no longer adds sphinx_thebe: the full list in _config.yml may no longer be needed"
    )


def test_final_configuration_has_every_extension_but_thebe():
    final = _final()["extensions"]
    assert "sphinx_thebe" not in final
    local = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["sphinx"]["local_extensions"]
    for ext in [*(e for e in get_default_sphinx_config()["extensions"] if e != "sphinx_thebe"), *OWN, *local]:
        assert ext in final, f"{ext} is missing from the book's extensions"
    assert len(final) == len(set(final))


def test_no_launch_button_needs_thebe():
    options = _final()["html_theme_options"]
    assert not options.get("launch_buttons", {}).get("thebe"), "a Thebe button needs sphinx_thebe"


def _typesetter():
    """posenc_mathml and a Typesetter running the Temml that _ext/fetch_assets.py fetched."""
    return posenc_mathml, posenc_mathml.Typesetter(fetch_assets.asset(*posenc_mathml.TEMML),
                                                   fetch_assets.asset(*posenc_mathml.SPEECH).parent,
                                                   fetch_assets.ASSETS)


def test_formulas_are_mathml_written_at_build_time():
    import pytest

    assert _final()["html_math_renderer"] == "posenc_mathml"
    posenc_mathml, typeset = _typesetter()
    try:
        inline = typeset(r"x \in \mathbb{R}^d", False)
        # MathML Core: the double-struck R is the character itself (Chromium ignores mathvariant).
        assert inline.startswith("<math ") and "\u211d" in inline and "mathvariant" not in inline, inline
        # Named by its spoken text (speech-rule-engine, ClearSpeak), which a screen reader says.
        assert inline.startswith('<math aria-label="x is a member of '), inline
        assert "<msup>" in inline and "<mo>\u2208</mo>" in inline, inline
        display = typeset(r"\sum_{i=0}^{n} a_i", True)
        assert display.startswith('<math display="block"') and "<munderover>" in display, display
        with pytest.raises(posenc_mathml.TexError, match="undefinedmacro"):
            typeset(r"\undefinedmacro x", False)
        with pytest.raises(posenc_mathml.TexError, match="undefinedmacro"):  # kept, not asked again
            typeset(r"\undefinedmacro x", False)
        with pytest.raises(TypeError, match="tex=3"):
            typeset(3, False)
    finally:
        typeset.close()


def test_displayed_formulas_are_assembled_as_sphinx_does():
    from docutils import nodes


    def block(text, nowrap=False):
        return nodes.math_block(text, text, nowrap=nowrap, number=None)

    assert posenc_mathml.display_tex(block("a = b")) == "a = b"
    assert posenc_mathml.display_tex(block("a &= b \\\\ c &= d")) == "\\begin{split}a &= b \\\\ c &= d\\end{split}"
    assert posenc_mathml.display_tex(block("a = b\n\nc = d")) == "\\begin{aligned}a = b\\\\c = d\\end{aligned}"
    assert posenc_mathml.display_tex(block("\\begin{align}a\\end{align}", nowrap=True)) == "\\begin{align}a\\end{align}"


def test_math_font_differing_from_its_pin_is_refused(monkeypatch):
    """The carrier package's font file is taken only with the pinned sha256."""
    import pytest
    from sphinx.errors import ExtensionError

    monkeypatch.setattr(posenc_mathml, "FONT_SHA256", "0" * 64)
    with pytest.raises(ExtensionError, match=r"^posenc_mathml: .*STIXTwoMath-Regular\.ttf: sha256 [0-9a-f]{64} differs"):
        posenc_mathml.font_source()


def test_math_font_is_cut_to_the_characters_used():
    import tempfile

    from fontTools.ttLib import TTFont

    markup = ('<p>x <span class="math"><math><mi>\u211d</mi><mo>&#x2211;</mo></math></span> '
              '<math display="block"><mi>&lt;</mi></math></p>')
    assert posenc_mathml.math_characters(markup) == {"\u211d", "\u2211", "<"}
    assert posenc_mathml.math_characters("<p>no formula</p>") == set()
    wanted = posenc_mathml.font_characters({"\u211d", "\u2211", "\u2032", "x", "h", "\u03b1", "\u03a9", "\u03d5"})
    # Drawn though never spelt: the radical of <msqrt> and the italic forms of the letters
    # (x: U+1D465; h: U+210E, Unicode's hole at U+1D455; alpha, Omega, the phi symbol).
    assert wanted == {0x211D, 0x2211, 0x2032, ord("x"), ord("h"), 0x3B1, 0x3A9, 0x3D5,
                      0x221A, 0x1D465, 0x210E, 0x1D6FC, 0x1D6FA, 0x1D719}, sorted(map(hex, wanted))
    assert posenc_mathml.italic("1") is None and posenc_mathml.italic("Z") == 0x1D44D
    source = posenc_mathml.font_source()
    assert "STIX Two Math" in str(TTFont(str(source))["name"].getDebugName(1))
    assert str(TTFont(str(source))["name"].getDebugName(5)).startswith("Version 2.11")
    assert "Open Font License" in posenc_mathml.font_licence(source)
    with tempfile.TemporaryDirectory() as tmp:
        target = f"{tmp}/math.woff2"
        kept = posenc_icons.subset_font(source, target, wanted, features=posenc_mathml.FONT_FEATURES,
                                                hinting=False)
        font = TTFont(target)
        assert kept == len(wanted) and set(font.getBestCmap()) == wanted
        # The MATH table, which lays formulas out, and the features Temml's stylesheet asks for
        # (ss04: the prime's form for superscripts; ssty: letters' forms for scripts).
        assert "MATH" in font
        features = {r.FeatureTag for r in font["GSUB"].table.FeatureList.FeatureRecord}
        assert {"ssty", "ss04"} <= features and "aalt" not in features, features
        assert "Open Font License" in str(font["name"].getDebugName(13))


def test_spacing_is_set_as_tex_sets_it():
    from xml.etree import ElementTree

    posenc_mathml, typeset = _typesetter()
    try:
        big = ElementTree.fromstring(typeset(r"\bigl\langle x \bigr\rangle + \Bigl| y \Bigr|", False))
        plain = ElementTree.fromstring(typeset(r"\langle x \rangle + y", False))
        limits = ElementTree.fromstring(typeset(r"\sum_{i=0}^{d/2-1} p_{b,t} = 1", False))
        function = typeset(r"\alpha_i \cos x + a \cos x", False)
    finally:
        typeset.close()

    def spaces(root):
        return [(mo.text, mo.get("lspace"), mo.get("rspace")) for mo in root.iter("mo")]

    # Sized delimiters: no operator space; the + between them and plain delimiters keep theirs.
    assert [s for s in spaces(big) if s[0] != "+"] == [(c, "0em", "0em") for c in "\u27e8\u27e9||"], spaces(big)
    assert all(s[1:] == (None, None) for s in spaces(plain)), spaces(plain)
    # In scripts and limits no operator space; on the line, the = keeps its own.
    assert spaces(limits) == [("\u2211", None, None), ("=", "0em", "0em"), ("\u2212", "0em", "0em"),
                              (",", "0em", "0em"), ("=", None, None)], spaces(limits)
    # The thin space before cos, after alpha_i as after a: Temml gives it after a only.
    assert function.count('<mspace width="0.1667em"></mspace><mi>cos</mi>') == 2, function
    # Temml's groups for line breaking are not asked for (their last operator loses its space).
    assert re.match(r'<math aria-label="[^"]+"><mrow><msub>', function), function


def test_only_plotlys_unknown_mime_warning_is_dropped():
    import logging


    def record(mime):
        return logging.LogRecord("sphinx.myst_nb", logging.WARNING, "x.md", 1,
                                 f"skipping unknown output mime type: {mime}", None, None)

    keep = posenc_plotly._PlotlyMimeWarning().filter
    assert keep(record("application/vnd.plotly.v1+json")) is False
    assert keep(record("application/vnd.other+json")) is True


def test_theme_asset_macros_are_the_themes_less_font_awesomes_script_and_preloads():
    """_ext/templates/static/webpack-macros.html is the theme's file (same macros, same tags in
    the same order) less Font Awesome's script and its fonts' preloads, with the two scripts
    at the end of <body> deferred: a theme upgrade that changes its file fails here."""
    import pydata_sphinx_theme

    theme = (pathlib.Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"
             / "webpack-macros.html").read_text(encoding="utf-8")
    ours = (ROOT / "_ext" / "templates" / "static" / "webpack-macros.html").read_text(encoding="utf-8")

    def macros(text):
        return re.findall(r"{%\s*macro (\w+)", text)

    def tags(text):  # the files named (the math font's preload is an inline script)
        return re.findall(r"<(?:link|script)\b[^>]*(?:src|href)=[^>]*>", text)

    expected = [t.replace("<script src=", '<script defer="defer" src=') if "/scripts/" in t and t.startswith("<script")
                else t for t in tags(theme) if "fontawesome" not in t or t.endswith('rel="stylesheet" />')]
    assert macros(ours) == macros(theme)
    assert tags(ours) == expected
    assert not [t for t in tags(ours) if "fontawesome" in t and "all.min.css" not in t]


def test_scripts_are_deferred_but_the_one_an_inline_script_needs():
    from sphinx.builders.html._assets import _JavaScript

    files = [
        _JavaScript("_static/documentation_options.js?v=1", priority=200),
        _JavaScript("_static/doctools.js", priority=200),
        _JavaScript(None, body="let toggleHintShow = 'Click to show';"),
        _JavaScript("_static/design-tabs.js", **{"data-sd-tabs-storage-prefix": "x-"}),
        _JavaScript("_static/mathjax/startup.js", defer="defer"),
        _JavaScript("_static/a.js", **{"async": "async"}),
        _JavaScript("_static/m.js", type="module"),
    ]
    out = posenc_theme.defer_scripts(files)
    assert [js.priority for js in out] == [js.priority for js in files]
    assert out[0] is files[0] and out[2] is files[2] and out[4:] == files[4:]
    assert out[1] == _JavaScript("_static/doctools.js", priority=200, defer="defer")
    assert out[3].attributes == {"data-sd-tabs-storage-prefix": "x-", "defer": "defer"}


def test_first_visit_colour_mode_is_the_themes_auto():
    """pydata-sphinx-theme's documented html_context variable; empty, it is a console error."""
    assert _final()["html_context"]["default_mode"] == "auto"


def test_previews_use_the_shipped_scripts_and_fetch_nothing():
    final = _final()
    assert list(final["tippy_js"]) == list(posenc_tippy.SCRIPTS)
    assert not any("://" in path for path in final["tippy_js"])
    assert final["tippy_enable_wikitips"] is False
    assert final["tippy_enable_doitips"] is False
    assert not final.get("tippy_rtd_urls")
    assert final["tippy_enable_mathjax"] is False  # a preview shows the page's MathML as it is


def test_previews_refuse_a_cdn_script():
    import types

    import pytest
    from sphinx.errors import ExtensionError

    posenc_tippy._check_config(None, types.SimpleNamespace(tippy_js=list(posenc_tippy.SCRIPTS)))
    cdn = ["https://unpkg.com/@popperjs/core@2", "https://unpkg.com/tippy.js@6"]
    with pytest.raises(ExtensionError, match=r"^posenc_tippy: tippy_js is "):
        posenc_tippy._check_config(None, types.SimpleNamespace(tippy_js=cdn))


def test_previews_scripts_are_pinned_assets():
    """Each script the previews load is a file of a package pinned in _ext/assets.json."""
    import json

    pinned = {e["name"]: e["files"] for e in json.loads(fetch_assets.LOCK.read_text())["packages"]}
    for package, path, licence in posenc_tippy.SCRIPTS.values():
        assert path in pinned[package] and licence in pinned[package], (package, path, licence)


def _untitled_section_page():
    """A page as sphinx-exercise writes it: an exercise's body is a section with no title."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.utils import new_document

    document = new_document(str(ROOT / "chapters" / "x.md"), get_default_settings())
    chapter = nodes.section(ids=["x"])
    chapter += nodes.title(text="A chapter")
    body = nodes.section(ids=["exercise-content"])
    body += nodes.literal_block("import posenc\nposenc.apply_rope", "import posenc\nposenc.apply_rope",
                                language="ipython3")
    chapter += body
    document += chapter
    return document


def _read_code(document):
    from sphinx_codeautolink.extension.block import CodeBlockAnalyser

    visitor = CodeBlockAnalyser(document, source_dir=str(ROOT), global_preface=[], custom_blocks={},
                                concat_default=True, default_highlight_lang=None, warn_default_parse_fail=False)
    document.walkabout(visitor)
    return visitor


def test_codeautolink_still_needs_the_untitled_section_fix():
    """Without _ext/posenc_codeautolink.py the library crashes on an untitled section (remove it once fixed)."""
    import pytest
    from sphinx_codeautolink.extension.block import CodeBlockAnalyser

    fix = posenc_codeautolink
    saved = CodeBlockAnalyser.depart_section
    CodeBlockAnalyser.depart_section = fix._depart_section  # the library's own
    try:
        with pytest.raises(IndexError, match="pop from empty list"):
            _read_code(_untitled_section_page())
    finally:
        CodeBlockAnalyser.depart_section = saved


def test_codeautolink_reads_an_untitled_section_with_the_fix():
    from sphinx_codeautolink.extension.block import CodeBlockAnalyser

    fix = posenc_codeautolink
    saved = CodeBlockAnalyser.depart_section
    CodeBlockAnalyser.depart_section = fix.depart_section
    try:
        visitor = _read_code(_untitled_section_page())
    finally:
        CodeBlockAnalyser.depart_section = saved
    names = [name.code_str for t in visitor.source_transforms for name in t.names]
    assert "posenc.apply_rope" in names, names


def _png(pixels, mode: str = "RGB") -> bytes:
    import io

    import numpy as np
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.asarray(pixels, dtype=np.uint8), mode).save(out, format="PNG")
    return out.getvalue()


def _chart(size: int = 400):
    """A white chart: grey grid lines and two anti-aliased coloured curves (a few hundred colours)."""
    import numpy as np

    image = np.full((size, size, 3), 255.0)
    image[::40, :] = image[:, ::40] = 229
    x = np.arange(size)
    for k, colour in ((1, (0, 114, 178)), (3, (213, 94, 0))):
        y = size / 2 + size / 3 * np.sin(k * x / 40)
        for row in range(size):
            cover = np.clip(2.0 - np.abs(row - y), 0, 1)[:, None]  # a 3-pixel line with soft edges
            image[row] = image[row] * (1 - cover) + np.array(colour) * cover
    return image.round()


def test_figure_pngs_take_a_palette_only_when_it_is_faithful():
    import io

    import numpy as np
    from PIL import Image

    images = posenc_images
    chart = _png(_chart())
    smaller = images.palette_png(chart)
    assert smaller is not None and len(smaller) < len(chart)
    with Image.open(io.BytesIO(smaller)) as image:
        assert image.mode == "P"
        diff = np.abs(np.asarray(image.convert("RGB"), int) - _chart().astype(int))
    assert diff.mean() <= images.MAX_MEAN_ERROR
    assert images.palette_png(smaller) is None  # already a palette image
    # A smooth gradient over the whole image (65,000 colours) does not fit in 256: kept.
    ramp = np.linspace(0, 255, 256)
    gradient = np.stack([*np.meshgrid(ramp, ramp[::-1]), np.full((256, 256), 128.0)], axis=2)
    assert images.palette_png(_png(gradient)) is None
    # A transparent pixel: kept as it is.
    rgba = np.concatenate([_chart(), np.full((400, 400, 1), 255.0)], axis=2)
    rgba[0, 0, 3] = 0
    assert images.palette_png(_png(rgba, "RGBA")) is None


def test_figure_images_load_lazily_with_their_size():
    import pytest

    tag = '<img alt="A plot" src="../_images/a.png" style="width: 716px; height: 408px;" />'
    assert posenc_images.lazy_img(tag, 716, 408) == (
        '<img loading="lazy" decoding="async" width="716" height="408" alt="A plot" src="../_images/a.png" '
        'style="width: 716px; height: 408px;" />')
    assert posenc_images.lazy_img('<img loading="eager" src="a.png"/>', None, None) == (
        '<img decoding="async" loading="eager" src="a.png"/>')
    assert [posenc_images._pixels(v) for v in ("716px", "716", "715.6px", "50%", "3em", None)] == [
        716, 716, 716, None, None, None]
    with pytest.raises(ValueError, match="tag="):
        posenc_images.lazy_img('<a href="x">', 1, 1)


def test_icon_code_points_come_from_fontawesomes_stylesheet():
    css = '.fa-sun-plant-wilt:before{content:"\\e57a"}.fa-magnifying-glass:before,.fa-search:before{content:"\\f002"}'
    assert posenc_icons.code_points(css) == {"fa-sun-plant-wilt": 0xE57A, "fa-magnifying-glass": 0xF002,
                                             "fa-search": 0xF002}
    # The theme's own stylesheets name icons as escapes or as the characters themselves.
    assert posenc_icons.stylesheet_code_points('a:before{content:"\\f303"}b{--i:"\uf09b"}q:before{content:"\\201c"}') == {
        0xF303, 0xF09B}


def test_icon_stylesheet_keeps_only_the_icons_asked_for():
    css = ('.fa-solid{font-weight:900}.fa-0:before{content:"\\30"}.fa-sun:before{content:"\\f185"}'
           '.fa-magnifying-glass:before,.fa-search:before{content:"\\f002"}'
           '@media (x){.fa-sun:before{content:"\\f185"}}.fa-lg{font-size:1.25em}'
           'blockquote:before{content:"\\201c"}')
    # An icon is decorative: its character has an empty alternative text (a screen reader skips it).
    assert posenc_icons.cut_stylesheet(css, {"fa-search", "fa-solid"}) == (
        '.fa-solid{font-weight:900}.fa-search:before{content:"\\f002"/""}@media (x){}.fa-lg{font-size:1.25em}'
        'blockquote:before{content:"\\201c"}')
    assert posenc_icons.cut_stylesheet(css, set(posenc_icons.code_points(css)) | {"fa-0"}) == css.replace(
        '"}.', '"/""}.').replace('"}@', '"/""}@').replace('"}}', '"/""}}')


def test_icon_fonts_are_cut_to_the_icons_asked_for(tmp_path):
    from fontTools.ttLib import TTFont

    source = posenc_icons.theme_fontawesome() / "webfonts" / "fa-solid-900.woff2"
    whole = set(TTFont(source).getBestCmap())
    target = tmp_path / source.name
    # 0xF09B is GitHub's icon: in the brands font, not the solid one, so it is not kept here.
    assert posenc_icons.subset_font(source, target, {0xF002, 0xF185, 0xF09B}) == 2
    assert set(TTFont(target).getBestCmap()) == {0xF002, 0xF185} < whole
    assert target.stat().st_size < source.stat().st_size / 20


def test_the_index_redirect_gets_a_title_and_the_sites_icon():
    bare = '<meta http-equiv="Refresh" content="0; url=intro.html" />\n'
    page = posenc_theme.full_redirect(bare, "Positional Encodings, executable", "_static/favicon.svg")
    assert '<link rel="icon" href="_static/favicon.svg">' in page and "<title>Positional Encodings, executable</title>" in page
    assert '<meta http-equiv="Refresh" content="0; url=intro.html">' in page and '<a href="intro.html">' in page
    assert posenc_theme.full_redirect(page, "t", "f") is None  # written once; any other page untouched
    assert posenc_theme.full_redirect("<html></html>", "t", "f") is None
