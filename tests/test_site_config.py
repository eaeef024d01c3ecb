"""The book's Sphinx configuration: every Jupyter Book default extension but Thebe, MathJax offline.

`_config.yml` gives the complete extension list (`sphinx: config: extensions`) to leave out
sphinx_thebe, whose inline script Sphinx 7.4 writes twice into every page (a console error).
A list given in full replaces the one Jupyter Book assembles, so an upgrade of Jupyter Book
that adds a default extension would silently lose it: these tests compare the list with
Jupyter Book's own defaults.
"""

from __future__ import annotations

import yaml
from jupyter_book.config import get_default_sphinx_config, get_final_config

from booktools import ROOT

CONFIG = ROOT / "_config.yml"
OWN = ["sphinx_proof", "sphinx_exercise", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinxcontrib.bibtex"]


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


def test_mathjax_ships_with_the_site():
    import importlib.util
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import posenc_mathjax
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    source = posenc_mathjax.mathjax_source()
    for part in posenc_mathjax.NEEDED:
        assert (source / part).exists(), part
    component = (source / posenc_mathjax.COMPONENT).read_text(encoding="utf-8", errors="replace")
    assert 'VERSION="3.2.2"' in component, "not the MathJax 3.2.2 that sphinx-mathjax-offline 0.0.2 ships"
    assert importlib.util.find_spec(posenc_mathjax.PACKAGE) is not None
    # The loader's components are added to the book's own MathJax settings, which are kept.
    book = {"tex": {"packages": {"[-]": ["noundefined"]}}}
    config = posenc_mathjax.with_components(book)
    assert config["tex"]["packages"] == {"[-]": ["noundefined"], "[+]": ["ams"]}
    assert config["loader"]["load"] == ["input/tex-base", "[tex]/ams", "output/chtml", "a11y/assistive-mml"]
    assert book == {"tex": {"packages": {"[-]": ["noundefined"]}}}


def test_only_plotlys_unknown_mime_warning_is_dropped():
    import logging
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import posenc_plotly
    finally:
        sys.path.remove(str(ROOT / "_ext"))

    def record(mime):
        return logging.LogRecord("sphinx.myst_nb", logging.WARNING, "x.md", 1,
                                 f"skipping unknown output mime type: {mime}", None, None)

    keep = posenc_plotly._PlotlyMimeWarning().filter
    assert keep(record("application/vnd.plotly.v1+json")) is False
    assert keep(record("application/vnd.other+json")) is True


def test_only_fontawesomes_script_is_dropped():
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import posenc_theme
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    page = (
        '<link href="../_static/vendor/fontawesome/6.5.2/css/all.min.css?digest=dfe6caa3a7d634c4db9b" rel="stylesheet" />\n'
        '  <script src="../_static/vendor/fontawesome/6.5.2/js/all.min.js?digest=dfe6caa3a7d634c4db9b"></script>\n'
        '<script src="_static/scripts/bootstrap.js?digest=dfe6caa3a7d634c4db9b"></script>\n'
    )
    assert posenc_theme.drop_fontawesome_js(page) == (
        '<link href="../_static/vendor/fontawesome/6.5.2/css/all.min.css?digest=dfe6caa3a7d634c4db9b" rel="stylesheet" />\n'
        '<script src="_static/scripts/bootstrap.js?digest=dfe6caa3a7d634c4db9b"></script>\n'
    )


def test_only_the_font_preloads_are_dropped():
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import posenc_theme
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    page = (
        "<head>\n"
        '  <link rel="preload" as="font" type="font/woff2" crossorigin '
        'href="../_static/vendor/fontawesome/6.5.2/webfonts/fa-solid-900.woff2" />\n'
        '<link rel="preload" as="font" type="font/woff2" crossorigin '
        'href="_static/vendor/fontawesome/6.5.2/webfonts/fa-brands-400.woff2" />\n'
        '<link rel="preload" as="script" href="_static/scripts/bootstrap.js" />\n'
        '<link href="_static/vendor/fontawesome/6.5.2/css/all.min.css" rel="stylesheet" />\n'
        "</head>\n"
    )
    assert posenc_theme.drop_font_preloads(page) == (
        "<head>\n"
        '<link rel="preload" as="script" href="_static/scripts/bootstrap.js" />\n'
        '<link href="_static/vendor/fontawesome/6.5.2/css/all.min.css" rel="stylesheet" />\n'
        "</head>\n"
    )
