"""The chapters' formulas, previews and page width, in headless Chromium and Firefox ESR, at 1280 and 360 px.

Each chapter of the built site (``_build/html``, served on 127.0.0.1, offline) is opened in
both browsers (``browsers.py``: Chromium through Selenium, Firefox ESR through its own
Marionette protocol) at a desktop width and a phone's, and checked (``math_checks.py``):

- every formula is MathML drawn in the site's math font (``test_site``'s math check), whole
  or in a box that scrolls to all of it and has a tab stop, never cut; its equation number
  is drawn beside it, not over it, and follows it in the document;
- the page does not scroll sideways;
- every preview of a reference that holds a formula shows it whole, within the window, and
  describes its link;
- a formula's scrolling box is reached with Tab and scrolled with the arrow key;
- (chapter 2) the first tab stops after "Skip to main content" are skip links to the
  interactive figures' controls, and each takes the focus to its control;
- at the desktop width, where names do not depend on the layout: every formula has a name
  in the accessibility tree (a screen reader says it), no name reads an icon's character, no
  id is used twice, statements are regions named by their titles and proofs named groups.

The widths: ``POSENC_MATH_WIDTHS`` (default ``1280,360``; the issue's survey used
``1280,768,414,360``). The last tests break a copy of the site, once per check, and show
that the check fails in Firefox, the browser the other tests do not run.

Without Chromium or Firefox the tests of that browser are skipped, saying how to install it,
unless ``POSENC_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
import urllib.parse

import pytest

import math_checks
from browsers import Chromium, Firefox, find_firefox
from browser.harness import (
    MATH_FONT,
    MATH_FONT_FILE,
    REQUIRE,
    SITE,
    _MATH_JS,
    _need_browser,
    _need_site,
    make_driver,
    math_problems,
    serve,
    toc_docnames,
)

WIDTHS = [int(w) for w in os.environ.get("POSENC_MATH_WIDTHS", "1280,360").split(",")]
DESKTOP = max(WIDTHS)
ENGINES = ("chromium", "firefox")
CHAPTERS = [f"{d}.html" for d in toc_docnames() if d.startswith("chapters/")]
#: A chapter with every kind of formula, preview and statement, for the breakage tests.
PAGE = "chapters/04_rope.html"


def _firefox():
    try:
        import marionette_driver  # noqa: F401
    except ImportError:
        binary = None
    else:
        binary = find_firefox()
    if not binary:
        message = ("Firefox test skipped: no firefox-esr (or marionette-driver) found; install it with "
                   "`sudo apt-get install firefox-esr` (Debian), or set POSENC_FIREFOX to its path")
        if REQUIRE:
            pytest.fail(message + " (POSENC_REQUIRE_BROWSER is set)")
        pytest.skip(message)
    return Firefox(binary)


@pytest.fixture(scope="module", params=ENGINES)
def engine(request):
    _need_site()
    browser = Chromium(make_driver(*_need_browser())) if request.param == "chromium" else _firefox()
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope="module")
def firefox():
    _need_site()
    browser = _firefox()
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture
def broken_copy(tmp_path):
    """A fresh copy of the built site to break one thing in (as test_site's; Pyodide linked, not copied)."""
    _need_site()
    copy = tmp_path / "html"
    shutil.copytree(SITE, copy, ignore=shutil.ignore_patterns("_pyodide"))
    return copy


@pytest.fixture(scope="module")
def site_url():
    _need_site()
    with serve(SITE) as url:
        yield url


def _open(engine, url: str, page: str, width: int) -> None:
    engine.width(width)
    engine.open(urllib.parse.urljoin(url, page))
    engine.settle()


def page_width_problems(engine) -> list[str]:
    width, view = engine.script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];")
    return [f"the page scrolls sideways: {width} px wide in a {view} px window"] if width > view else []


def check_math_page(engine, url: str, page: str, width: int) -> dict[str, list[str]]:
    """Every check of the module on one page at one width; the problems, by check."""
    _open(engine, url, page, width)
    math = engine.script_async(_MATH_JS, MATH_FONT, MATH_FONT_FILE)
    if engine.name == "firefox":
        # The preload is for Chromium's first paint (Lighthouse): Firefox may ask for the font
        # from the stylesheet before the page's script adds the preload, and fetch it twice.
        math["preload"] = None
    problems = {"math": math_problems(math)}
    problems["width"] = page_width_problems(engine)
    problems["layout"] = math_checks.layout_problems(engine)[1]
    problems["previews"] = math_checks.preview_problems(engine)[1]
    problems["keyboard"] = math_checks.keyboard_problems(engine)[1]
    if width == DESKTOP:
        problems["names"] = math_checks.name_problems(engine)
        problems["structure"] = math_checks.structure_problems(engine)
    return {k: v for k, v in problems.items() if v}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", CHAPTERS)
def test_formulas_whole_named_and_reachable(engine, site_url, page, width):
    problems = check_math_page(engine, site_url, page, width)
    assert not problems, f"{engine.name}, {width} px, {page}: {problems}"


#: A chapter with an interactive figure, for the skip link's test.
FIGURE_PAGE = "chapters/02_sinusoidal.html"


def skip_link_problems(engine, url: str, page: str) -> list[str]:
    """From the top of the page, Tab reaches a skip link to each interactive figure's control
    right after the theme's "Skip to main content", and Enter on it takes the focus there."""
    _open(engine, url, page, DESKTOP)
    controls = engine.script("return Array.from(document.querySelectorAll("
                             "'.posenc-controls input[id], .posenc-controls select[id]')).map((c) => c.id);")
    if not controls:
        return [f"{page} has no interactive figure's control"]
    problems = []
    for n, control in enumerate(controls):
        engine.open(urllib.parse.urljoin(url, page))
        engine.keys(*["Tab"] * (n + 2), "Enter")
        engine.settle()
        focused = engine.script("return document.activeElement.id;")
        if focused != control:
            problems.append(f"Tab {n + 2} times, then Enter, put the focus on {focused!r}, not on the control {control!r}")
    return problems


def test_skip_links_reach_each_figure_control(engine, site_url):
    problems = skip_link_problems(engine, site_url, FIGURE_PAGE)
    assert not problems, f"{engine.name}: {problems}"


# --------------------------------------------------------------------------- deliberate breakages


def _inject_style(copy, css: str) -> None:
    """Add ``css`` to the site's own stylesheet (every page loads it)."""
    path = copy / "_static" / "custom.css"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + css + "\n", encoding="utf-8")


def _problems(firefox, copy, width: int = DESKTOP) -> dict[str, list[str]]:
    with serve(copy) as url:
        return check_math_page(firefox, url, PAGE, width)


def test_breakage_clipped_inline_formula_is_caught(firefox, broken_copy):
    """An inline formula that hides what overflows it (the theme's old ``overflow: clip``)."""
    _inject_style(broken_copy, "span.math { overflow: clip !important; }")
    problems = _problems(firefox, broken_copy, 360)
    assert any(p.startswith("cut off:") and "span.math" in p for p in problems.get("layout", [])), problems


def test_breakage_display_that_cannot_scroll_is_caught(firefox, broken_copy):
    """A displayed formula's own box that does not scroll: the theme's div.math then cuts it."""
    _inject_style(broken_copy, "div.math > .formula { overflow: visible !important; }")
    problems = _problems(firefox, broken_copy, 360)
    assert any(p.startswith("cut off:") and "div.math" in p for p in problems.get("layout", [])), problems


def test_breakage_scrolling_formula_without_tab_stop_is_caught(firefox, broken_copy):
    (broken_copy / "_static" / "tabstops.js").write_text("", encoding="utf-8")
    problems = _problems(firefox, broken_copy, 360)
    assert any(p.startswith("out of keyboard reach:") for p in problems.get("layout", [])), problems


def test_breakage_number_over_or_before_its_formula_is_caught(firefox, broken_copy):
    """The number drawn over the formula's start; the number first in the document (as Sphinx writes it)."""
    _inject_style(broken_copy, "div.math { position: relative; } div.math > .eqno { position: absolute; left: 0; }")
    page = broken_copy / PAGE
    text = page.read_text(encoding="utf-8")
    first = text.index('<div class="math notranslate nohighlight"')
    number_at = text.index('<span class="eqno">', first)
    number_end = text.index("</span>", number_at) + len("</span>")
    math_at = text.index("<math", first)
    number = text[number_at:number_end]
    page.write_text(text[:math_at] + number + text[math_at:number_at] + text[number_end:], encoding="utf-8")
    problems = _problems(firefox, broken_copy)
    assert any(p.startswith("number over the formula:") for p in problems.get("layout", [])), problems
    assert any(p.startswith("number before the formula:") for p in problems.get("layout", [])), problems


def test_breakage_unnamed_formula_is_caught(firefox, broken_copy):
    page = broken_copy / PAGE
    text = page.read_text(encoding="utf-8")
    opening = '<span class="math notranslate nohighlight"><math aria-label="'
    start = text.index(opening, text.index('<article class="bd-article">'))  # one drawn in the text
    end = text.index('"', start + len(opening))
    page.write_text(text[:start] + opening[:-len(' aria-label="')] + text[end + 1:], encoding="utf-8")
    problems = _problems(firefox, broken_copy)
    assert any(p.startswith("formula ") and "name ''" in p for p in problems.get("names", [])), problems


def test_breakage_icon_read_as_text_is_caught(firefox, broken_copy):
    """The search icon's character without its empty alternative text (posenc_icons writes it)."""
    (css,) = (broken_copy / "_static" / "vendor" / "fontawesome").glob("*/css/all.min.css")
    css.write_text(css.read_text(encoding="utf-8").replace('{content:"\\f002"/""}', '{content:"\\f002"}'),
                   encoding="utf-8")
    problems = _problems(firefox, broken_copy)
    assert any(p.startswith("button named '\\uf002") and "icon's character" in p for p in problems.get("names", [])), problems


def test_breakage_repeated_id_and_unnamed_statement_are_caught(firefox, broken_copy):
    page = broken_copy / PAGE
    text = page.read_text(encoding="utf-8")
    assert ' role="region">' in text and 'class="proof-group"' in text
    page.write_text(text.replace(' role="region">', ">", 1)
                    .replace('class="proof-group"', 'class="proof-group" id="again"', 2), encoding="utf-8")
    problems = _problems(firefox, broken_copy)
    assert "id used twice: again (2 times)" in problems.get("structure", []), problems
    assert any("a region named by its title" in p for p in problems.get("structure", [])), problems


def test_breakage_cut_or_undescribed_preview_is_caught(firefox, broken_copy):
    """Previews whose formulas are not fitted to the box, a box that hides what overflows; and no description."""
    _inject_style(broken_copy, ".tippy-content { max-width: 200px; overflow: hidden; }"
                               " .tippy-content div.math > .formula { overflow: visible !important; }")
    script = broken_copy / "_static" / "previews.js"
    text = script.read_text(encoding="utf-8")
    assert text.count('content: "describedby"') == 1 and text.count("onMount: fitFormulas,") == 1
    script.write_text(text.replace('content: "describedby"', "content: null").replace("onMount: fitFormulas,", ""),
                      encoding="utf-8")
    problems = _problems(firefox, broken_copy)
    assert any(p.startswith("preview of ") and "cut off:" in p for p in problems.get("previews", [])), problems
    assert any("not described by its shown preview" in p for p in problems.get("previews", [])), problems


def test_breakage_formula_box_out_of_tab_order_is_caught(firefox, broken_copy):
    """A scrolling formula box that keeps its tab stop attribute but cannot take the focus."""
    script = broken_copy / "_static" / "tabstops.js"
    script.write_text(script.read_text(encoding="utf-8").replace(
        "if (el.scrollWidth > el.clientWidth) el.tabIndex = 0;",
        "if (el.scrollWidth > el.clientWidth) { el.tabIndex = 0; el.inert = true; }"), encoding="utf-8")
    problems = _problems(firefox, broken_copy, 360)
    assert any("not reached with the Tab key" in p for p in problems.get("keyboard", [])), problems


def test_breakage_missing_skip_link_is_caught(firefox, broken_copy):
    script = broken_copy / "_static" / "tabstops.js"
    script.write_text(script.read_text(encoding="utf-8").replace('getElementById("pst-skip-link")', "null"),
                      encoding="utf-8")
    with serve(broken_copy) as url:
        problems = skip_link_problems(firefox, url, FIGURE_PAGE)
    assert problems and "not on the control" in problems[0], problems
