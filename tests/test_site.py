"""The built book, checked the way a reader sees it: every page in headless Chromium.

The site in ``_build/html`` (or ``$POSENC_SITE``) is served on 127.0.0.1 and every page
is opened in headless Chromium, driven by Selenium (pinned in requirements.txt) with the
system's ``chromium`` and ``chromedriver``. On each page:

- no error in the browser console (a script error, a resource that failed to load);
- nothing is fetched from another host: the book works offline;
- every image is decoded, and has an alt text that describes it (not empty, not its file name,
  path or hash: ``helpers.alt_text_problem``), unless it is marked decorative
  (``alt=""`` with ``role="presentation"``/``"none"`` or ``aria-hidden="true"``);
- every formula (every ``.math`` element) is MathML (``<math>``, written at build time by
  _ext/posenc_mathml.py; no TeX left as text, no ``<merror>``), drawn with a size, in the
  STIX Two Math web font the site ships, which has loaded;
- every internal link leads to a file of the site, and its ``#anchor`` to an element;
- every icon drawn (an element whose ``::before`` uses a Font Awesome font) has its glyph in
  the web font the site ships (_ext/posenc_icons.py cuts those fonts down to the icons used),
  and every element with an icon's class draws that icon's character (the stylesheet, cut
  down to the icons used, still has its rule);
- no script in the page's ``<head>`` blocks its first paint (each is ``defer`` or ``async``)
  but those of :data:`BLOCKING_SCRIPTS` (_ext/posenc_theme.py), and every content image (in
  the article: the figures) is ``loading="lazy"``, ``decoding="async"``, with ``width`` and
  ``height`` attributes in the image's proportions (_ext/posenc_images.py);
- nothing scrolls sideways at a 375-pixel-wide viewport, and images keep their proportions there;
- a cell whose output is only a figure folds its code (the ``hide-input`` toggle), and a
  folded cell shows its output but not its code;
- each interactive figure (``.posenc-interactive``), once scrolled to, is drawn by Plotly, and moving its
  control (a slider step, a drop-down entry) changes what is drawn; its control is a native
  ``<input type="range">`` or ``<select>`` with a ``<label>``, its plot an image
  (``role="img"``) with an ``aria-label``, its status line ``aria-live``, and Plotly's own
  mouse-only slider or menu is not drawn;
- the page's weight: every file it requested (the Performance API's navigation and resource
  entries, once settled: formulas typeset, images decoded), sized on disk, stays within
  :data:`WEIGHT_BUDGET` (3 MB, uncompressed) on a first visit, before the reader scrolls
  (plotly.js is loaded when a figure comes near the viewport: _ext/plotly-lazy.js; the
  summary also gives the weight once every figure is drawn);
- at a 360-pixel viewport, no interactive figure's axis title overlaps another axis title or
  another panel's plot;
- axe-core (pinned in ``_ext/assets.json``, read from disk and run inside the page, so no
  request leaves the machine) finds no violation of WCAG 2.1 level A or AA, in the theme's
  light mode and in its dark mode (colour contrast differs between the two).

In each chapter, resting the pointer on a reference to a theorem, an equation and a citation
shows a preview of the target's text (formulas typeset; it stays under the pointer, Escape
hides it), also from ``file://``; and posenc's names in the code cells link to existing
entries of the API page.

Each interactive figure also gets its own keyboard test: its control is reached with the
Tab key, an arrow key moves it, and the state, what Plotly draws and the status line change.

The pages are the book's table of contents (``_toc.yml``) plus every other page Sphinx
wrote (index, search, ...). The last tests break a copy of the site on purpose, once per
kind of check, and show that the check fails.

``make test`` runs this file after the strict build. Without Chromium the browser tests
are skipped with a message saying how to install it, unless ``POSENC_REQUIRE_BROWSER=1``
(set by ``.ci/run``), which makes its absence a failure.
"""

from __future__ import annotations

import functools
import json
import pathlib
import re
import shutil
import sys
import time
import urllib.parse

import pytest

from booktools import ROOT
from browser.harness import (
    AXE_TAGS,
    COLOUR_MODES,
    MATH_FONT,
    MATH_FONT_FILE,
    PAGE_TIMEOUT,
    SITE,
    _INTERACTIVE_IDS_JS,
    _MATH_JS,
    _PLOT_STATE_JS,
    _need_browser,
    _need_site,
    _scroll_to,
    _wait,
    check_axe,
    load,
    make_driver,
    math_problems,
    page_requests,
    serve,
    toc_docnames,
)
from helpers import alt_text_problem


PHONE_WIDTH = 375
#: Seconds a moved control has to show its new state. A breakage test, where the change never
#: comes, lowers it (monkeypatch) rather than wait it out: it only makes the failure it expects
#: come sooner.
CHANGE_TIMEOUT = 15
#: The most a page may load on a reader's first visit, uncompressed, everything included (its
#: HTML, styles, scripts, fonts, images and plotly.js): 3 MB.
WEIGHT_BUDGET = 3_000_000
#: Pages known to exceed the budget, with their measured weight: their weight test is a strict
#: xfail, so it turns red the day they come within budget (then remove them from here). None
#: today: plotly.js (1.19 MB) is loaded only when a figure nears the viewport, and the figures'
#: PNGs are palette images (the heaviest first visit was chapter 2's, 4.08 MB, before both).
OVER_BUDGET: dict[str, str] = {}
#: The only scripts (file names) that may block a page's first paint from its ``<head>``, and
#: why: an inline script right after it needs it as it runs (_ext/posenc_theme.py).
BLOCKING_SCRIPTS = {
    "documentation_options.js": "Sphinx's inline DOCUMENTATION_OPTIONS.pagename = ... needs its object",
}


# --------------------------------------------------------------------------- pages


def site_pages(site: pathlib.Path) -> list[str]:
    """Every HTML page of the site (relative paths), the table of contents' first."""
    toc = [f"{d}.html" for d in toc_docnames()]
    others = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).parts[0].startswith("_")
    )
    return toc + [p for p in others if p not in toc]


# --------------------------------------------------------------------------- server and browser


@pytest.fixture(scope="module")
def browser():
    _need_site()
    chromium, chromedriver = _need_browser()
    driver = make_driver(chromium, chromedriver)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def site_url():
    _need_site()
    with serve(SITE) as url:
        yield url


# --------------------------------------------------------------------------- the checks


_IMAGES_JS = """
const done = arguments[arguments.length - 1];
const imgs = Array.from(document.images);
// The content images' loading attributes as the page has them, before they are forced eager.
const content = imgs.filter((img) => img.closest('article.bd-article')).map((img) => ({
  img: img, src: img.getAttribute('src'), loading: img.getAttribute('loading'),
  decoding: img.getAttribute('decoding'), width: img.getAttribute('width'),
  height: img.getAttribute('height')}));
imgs.forEach((img) => { img.loading = 'eager'; });
Promise.allSettled(imgs.map((img) => img.decode())).then((results) => {
  const bad = [];
  results.forEach((r, i) => {
    const img = imgs[i];
    if (r.status !== 'fulfilled' || !img.complete || img.naturalWidth === 0)
      bad.push(img.getAttribute('src'));
  });
  content.forEach((c) => { c.naturalWidth = c.img.naturalWidth; c.naturalHeight = c.img.naturalHeight; delete c.img; });
  done({count: imgs.length, bad: bad, content: content});
});
"""

# An image squeezed into a narrow column keeps its proportions (a fixed height would not).
_DISTORTED_JS = """
const bad = [];
Array.from(document.images).forEach((img) => {
  const r = img.getBoundingClientRect();
  if (r.width > 0 && r.height > 0 && img.naturalWidth > 0 && img.naturalHeight > 0) {
    const shown = r.width / r.height, natural = img.naturalWidth / img.naturalHeight;
    if (Math.abs(shown / natural - 1) > 0.03)
      bad.push(img.getAttribute('src') + ' (' + Math.round(r.width) + 'x' + Math.round(r.height) + ')');
  }
});
return bad;
"""

# Every <img> of the page with what a screen reader is given for it (null: no alt attribute).
# No image is left out: Sphinx's expand/collapse toggle of the module index, an <img alt="-">
# that only a mouse can click, is gone from the book (_ext/templates/domainindex.html), and
# this check fails if it comes back (its alt text "-" describes nothing).
_ALT_JS = """
return Array.from(document.images).map((img) => ({
  src: img.getAttribute('src'), alt: img.getAttribute('alt'),
  role: (img.getAttribute('role') || '').trim().toLowerCase(),
  hidden: img.getAttribute('aria-hidden') === 'true' || !!img.closest('[aria-hidden="true"]')}));
"""


def lazy_image_problems(content: list[dict]) -> list[str]:
    """Each content image (``_IMAGES_JS``'s ``content``) loads lazily, decodes off the main thread,
    and reserves its box: ``width`` and ``height`` attributes in its own proportions (3%)."""
    problems = []
    for img in content:
        src = img["src"]
        if img["loading"] != "lazy":
            problems.append(f'{src}: loading={img["loading"]!r}, expected "lazy"')
        if img["decoding"] != "async":
            problems.append(f'{src}: decoding={img["decoding"]!r}, expected "async"')
        try:
            width, height = int(img["width"]), int(img["height"])
        except (TypeError, ValueError):
            problems.append(f'{src}: width={img["width"]!r} height={img["height"]!r}, expected its size in pixels')
            continue
        if img["naturalWidth"] and img["naturalHeight"] and width > 0 and height > 0:
            ratio = (width / height) / (img["naturalWidth"] / img["naturalHeight"])
            if abs(ratio - 1) > 0.03:
                problems.append(f"{src}: width/height {width}x{height} not in the proportions of the image "
                                f'({img["naturalWidth"]}x{img["naturalHeight"]})')
        else:
            problems.append(f"{src}: size {width}x{height} or the image's is zero")
    return problems


# The external scripts of the page's <head> that hold up its parsing (and so its first paint):
# neither defer nor async (a module is deferred; a script a script adds is async).
_BLOCKING_JS = """
return Array.from(document.head.querySelectorAll('script[src]'))
  .filter((s) => !s.defer && !s.async && s.type !== 'module')
  .map((s) => s.getAttribute('src'));
"""


def check_blocking_scripts(driver) -> list[str]:
    """No script in ``<head>`` blocks the first paint, but those of :data:`BLOCKING_SCRIPTS`."""
    return [
        f"script blocks the first paint (neither defer nor async): {src}"
        for src in driver.execute_script(_BLOCKING_JS)
        if src.split("?")[0].rsplit("/", 1)[-1] not in BLOCKING_SCRIPTS
    ]


def check_alt_text(driver) -> list[str]:
    """Every image has an alt text that describes it, or is explicitly decorative."""
    problems = []
    for img in driver.execute_script(_ALT_JS):
        if img["alt"] == "" and (img["role"] in ("presentation", "none") or img["hidden"]):
            continue  # decorative: screen readers skip it
        problem = alt_text_problem(img["alt"])
        if problem:
            problems.append(f"{img['src']}: {problem}")
    return problems


_EXTERNAL_JS = """
const here = location.origin;
const local = (u) => u.startsWith(here) || u.startsWith('data:') || u.startsWith('blob:') ||
                     u.startsWith('file:') || u.startsWith('about:');
const urls = performance.getEntriesByType('resource').map((e) => e.name);
document.querySelectorAll('script[src], link[href][rel~="stylesheet"], img[src], iframe[src]')
  .forEach((el) => urls.push(el.src || el.href));
return Array.from(new Set(urls.filter((u) => !local(u))));
"""

_CELLS_JS = """
// checkVisibility: false inside a closed <details> (content-visibility) or display: none.
const shown = (el) => !!el && (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
const out = {folded: 0, unfolded_figures: [], hidden_outputs: [], shown_inputs: []};
document.querySelectorAll('div.cell').forEach((cell, i) => {
  const input = cell.querySelector('.cell_input');
  const output = cell.querySelector('.cell_output');
  const label = (cell.querySelector('figure[id]') || {}).id || ('cell ' + i);
  if (cell.classList.contains('tag_hide-input')) {
    out.folded += 1;
    if (shown(input)) out.shown_inputs.push(label);
    if (output && !shown(output)) out.hidden_outputs.push(label);
    return;
  }
  if (!input || !output) return;
  const figure = output.querySelector('img, .posenc-interactive');
  const text = output.querySelector('.output.stream, .output.text_plain, .output.traceback, ' +
                                    '.output.stderr, table, .output.text_latex');
  if (figure && !text) out.unfolded_figures.push(label);
});
return out;
"""


# What a screen reader needs from the figure: the control's <label>, the plot as an image
# (its name, the aria-label, is judged in Python like an <img>'s alt text), the status line
# announced politely, and no mouse-only Plotly control drawn.
_FIGURE_A11Y_JS = """
const el = document.getElementById(arguments[0]);
const box = el.closest('.posenc-figure');
const control = box ? box.querySelector('input[type="range"], select') : null;
const problems = [];
if (!control) return ['no native slider (input type=range) or menu (select)'];
const label = control.id ? document.querySelector('label[for="' + CSS.escape(control.id) + '"]') : null;
if (!label || !label.textContent.trim() || !label.checkVisibility())
  problems.push('the control has no visible <label for=...>');
if (el.getAttribute('role') !== 'img') problems.push('the plot is not role="img"');
const status = box.querySelector('[aria-live]');
if (!status || status.getAttribute('aria-live') !== 'polite' || !status.textContent.trim() ||
    !status.checkVisibility())
  problems.push('no visible status line with aria-live="polite"');
const full = el._fullLayout || {};
if ((full.sliders || []).length || (full.updatemenus || []).length)
  problems.push("Plotly's own (mouse-only) slider or menu is drawn");
return problems;
"""


# Traces plotly.js did not draw as given: a trace type missing from the shipped bundle (the
# basic one has scatter, bar and pie) is turned into another type or hidden, without an error.
_UNDRAWN_TRACES_JS = """
const bad = [];
document.querySelectorAll('.posenc-interactive').forEach((el) => {
  if (!el.data || !el._fullData) { bad.push(el.id + ': not drawn by Plotly'); return; }
  el.data.forEach((t, i) => {
    const full = el._fullData.find((f) => f.index === i);
    const type = t.type || 'scatter';
    if (!full || full.type !== type || (t.visible === true && full.visible !== true))
      bad.push(el.id + ': trace ' + i + ' (' + type + ') drawn as ' +
               (full ? full.type + (full.visible === true ? '' : ', hidden') : 'nothing'));
  });
});
return bad;
"""


def _console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _anchors(path: pathlib.Path) -> frozenset:
    """The ids (and ``<a name>``) of an HTML file: parsed once per distinct content, so that a
    broken copy of the site reuses what the unchanged pages of the built one gave."""
    return _anchors_in(path.read_bytes())


@functools.cache
def _anchors_in(html: bytes) -> frozenset:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html.decode("utf-8", errors="replace"), "html.parser")
    return frozenset(
        [t["id"] for t in soup.find_all(id=True)] + [t["name"] for t in soup.find_all("a", attrs={"name": True})]
    )


_anchors.cache_clear = _anchors_in.cache_clear


def check_links(driver, base_url: str, site: pathlib.Path) -> list[str]:
    """Every link to the site itself resolves to a file, and its anchor to an element."""
    hrefs = driver.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);")
    problems = []
    for href in sorted(set(hrefs)):
        if not href.startswith(base_url):
            continue  # another host (cited papers), mailto:, javascript:
        url = urllib.parse.urlsplit(href)
        rel = urllib.parse.unquote(url.path[len(urllib.parse.urlsplit(base_url).path):])
        target = site / rel
        if rel == "" or target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            problems.append(f"{href}: no such file {target.relative_to(site)}")
            continue
        fragment = urllib.parse.unquote(url.fragment)
        if fragment and target.suffix == ".html" and fragment not in _anchors(target):
            problems.append(f"{href}: no element with id {fragment!r} in {target.relative_to(site)}")
    return problems


#: Every icon the page draws: an element whose ``::before`` is set in a Font Awesome font,
#: with the code point it shows, the font's family and weight, and where it is.
_ICONS_JS = """
const out = [];
for (const el of document.querySelectorAll('body *')) {
  const s = getComputedStyle(el, '::before');
  if (!/Font Awesome/.test(s.fontFamily)) continue;
  // The character, without the alternative text that follows it ("\\f002" / "": decorative).
  const text = (/^"([^"]*)"/.exec(s.content) || [])[1];
  if (!text) continue;
  out.push([text.codePointAt(0), s.fontFamily, s.fontWeight,
            el.tagName.toLowerCase() + '.' + Array.from(el.classList).join('.')]);
}
return out;
"""


def icon_font(site: pathlib.Path, family: str, weight: str) -> pathlib.Path:
    """The WOFF2 file of the site that draws an icon in ``family`` at ``weight`` (Font Awesome 6's CSS)."""
    style = "brands-400" if "Brands" in family else "solid-900" if int(weight) >= 900 else "regular-400"
    found = sorted(site.glob(f"_static/vendor/fontawesome/*/webfonts/fa-{style}.woff2"))
    assert len(found) == 1, f"expected one fa-{style}.woff2 in {site}, found {found}"
    return found[0]


@functools.cache
def _glyphs(font: pathlib.Path, mtime: float) -> frozenset:
    from fontTools.ttLib import TTFont

    return frozenset(TTFont(font).getBestCmap() or ())  # a font cut down to no icon has no cmap


def check_icons(driver, site: pathlib.Path) -> list[str]:
    """Every icon drawn on the page has its glyph in the font the site ships (else it shows as nothing)."""
    problems = []
    for point, family, weight, where in driver.execute_script(_ICONS_JS):
        font = icon_font(site, family, weight)
        if point not in _glyphs(font, font.stat().st_mtime):
            problems.append(f"icon U+{point:04X} of {where} is not in {font.name}")
    return sorted(set(problems))


#: Every element with a ``fa-...`` class, with the character its ``::before`` shows (null: none).
_ICON_CLASSES_JS = """
const out = [];
for (const el of document.querySelectorAll('body [class*="fa-"]')) {
  const classes = Array.from(el.classList).filter((c) => c.startsWith('fa-'));
  if (!classes.length) continue;
  const text = (/^"([^"]+)"/.exec(getComputedStyle(el, '::before').content) || [])[1];
  out.push([classes, text ? text.codePointAt(0) : null,
            el.tagName.toLowerCase() + '.' + Array.from(el.classList).join('.')]);
}
return out;
"""


@functools.cache
def theme_icons() -> dict[str, int]:
    """``fa-NAME`` -> its character, from the theme's whole Font Awesome stylesheet (not the site's)."""
    import pydata_sphinx_theme

    (css,) = (pathlib.Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" /
              "static" / "vendor" / "fontawesome").glob("*/css/all.min.css")
    icons = {}
    for selectors, point in re.findall(r'([^{}]+)\{content:"\\([0-9a-fA-F]{1,6})"\}', css.read_text(encoding="utf-8")):
        for selector in selectors.split(","):
            name = re.fullmatch(r"\.(fa-[a-z0-9-]+)::?before", selector.strip())
            if name:
                icons[name.group(1)] = int(point, 16)
    return icons


def check_icon_rules(driver) -> list[str]:
    """Every element with an icon's class (``fa-NAME``, an icon of Font Awesome) draws that icon's
    character: the site's stylesheet still has its rule (else the icon shows as nothing)."""
    icons, problems = theme_icons(), []
    for classes, point, where in driver.execute_script(_ICON_CLASSES_JS):
        names = [c for c in classes if c in icons]
        if names and point not in {icons[n] for n in names}:
            shown = "nothing" if point is None else f"U+{point:04X}"
            problems.append(f"{where} draws {shown}, not the icon of {'/'.join(names)}")
    return sorted(set(problems))


def check_overflow(driver) -> list[str]:
    """At a 375-pixel viewport, the page must not scroll sideways."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE_WIDTH, "height": 800, "deviceScaleFactor": 2, "mobile": False},
    )
    try:
        driver.execute_script("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));")
        width, view, culprits = driver.execute_script(
            """
            const view = document.documentElement.clientWidth;
            const width = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
            const culprits = [];
            if (width > view) {
              document.querySelectorAll('body *').forEach((el) => {
                const r = el.getBoundingClientRect();
                if (r.right > view + 1 && r.width > 0 && culprits.length < 5)
                  culprits.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
                                (el.className && el.className.baseVal === undefined ?
                                 '.' + String(el.className).trim().split(/\\s+/).join('.') : '') +
                                ' (right edge ' + Math.round(r.right) + ')');
              });
            }
            return [width, view, culprits];
            """
        )
        distorted = driver.execute_script(_DISTORTED_JS)
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    problems = [f"image drawn out of proportion at {PHONE_WIDTH} px: {d}" for d in distorted]
    if width > view:
        problems.append(f"scrolls sideways at {PHONE_WIDTH} px: content {width} px wide; e.g. {culprits}")
    return problems


def _move_control(driver, plot_id: str, state: dict) -> None:
    """Move a figure's control, as a reader would: click the slider's far end, or choose a menu entry."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    control = driver.find_element(By.ID, state["id"])
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", control)
    target = 0 if state["active"] == state["steps"] - 1 else state["steps"] - 1
    if state["control"] == "slider":
        half = control.size["width"] / 2
        offset = (half - 3) if target > 0 else (3 - half)
        ActionChains(driver).move_to_element_with_offset(control, int(offset), 0).click().perform()
    else:
        Select(control).select_by_index(target)


def check_interactive(driver, timeout: float = PAGE_TIMEOUT) -> tuple[int, list[str]]:
    """Each interactive figure, once scrolled to, renders (within ``timeout`` seconds), is labelled
    for a screen reader, and moving its control changes what is drawn."""
    from selenium.common.exceptions import TimeoutException

    problems = []
    ids = driver.execute_script(_INTERACTIVE_IDS_JS)
    for plot_id in ids:
        _scroll_to(driver, plot_id)
        try:
            before = _wait(driver, _PLOT_STATE_JS, plot_id, timeout=timeout)
        except TimeoutException:
            problems.append(f"{plot_id}: Plotly drew nothing")
            continue
        if before["traces"] == 0:
            problems.append(f"{plot_id}: the plot has no trace drawn")
        problems += [f"{plot_id}: {p}" for p in driver.execute_script(_FIGURE_A11Y_JS, plot_id)]
        name = alt_text_problem(driver.execute_script(
            "return document.getElementById(arguments[0]).getAttribute('aria-label');", plot_id))
        if name:
            problems.append(f"{plot_id}: the plot's aria-label: {name}")
        if before["control"] is None or before["steps"] < 2:
            problems.append(f"{plot_id}: no native slider or drop-down with two states or more")
            continue
        try:
            _move_control(driver, plot_id, before)
            # Wait for the control to move and Plotly to redraw (the redraw may follow the
            # control's own update by a frame); a control that moves but draws nothing new
            # times out here and is told apart below.
            after = _wait(
                driver,
                "const s = (function () {" + _PLOT_STATE_JS + "}).apply(null, [arguments[0]]);"
                " return s && s.active !== arguments[1] && s.drawn !== arguments[2] ? s : null;",
                plot_id,
                before["active"],
                before["drawn"],
                timeout=CHANGE_TIMEOUT,
            )
        except TimeoutException:
            now = driver.execute_script(_PLOT_STATE_JS, plot_id)
            if now and now["active"] != before["active"]:
                problems.append(f"{plot_id}: moving the {before['control']} changed nothing drawn")
            else:
                problems.append(f"{plot_id}: the {before['control']} did not move")
            continue
        except Exception as exc:  # noqa: BLE001 - reported as a failure of this figure
            problems.append(f"{plot_id}: could not operate the {before['control']}: {type(exc).__name__}: {exc}")
            continue
        if after["drawn"] == before["drawn"]:
            problems.append(f"{plot_id}: moving the {before['control']} changed nothing drawn")
    return len(ids), problems


#: The narrowest phone the interactive figures are checked at (their axis titles must not collide).
NARROW_WIDTH = 360

# An interactive figure's axis titles, and the plotting areas of its subplots (Plotly's drag
# rectangles, one per subplot, named like "xy" or "x2y2"), as boxes on the page; null until
# Plotly has laid the figure out at the element's present width.
_AXIS_BOXES_JS = """
const el = document.getElementById(arguments[0]);
if (!el || !el._fullLayout || Math.abs(el._fullLayout.width - el.clientWidth) > 1) return null;
const box = (node) => { const r = node.getBoundingClientRect();
                        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
const titles = [];
el.querySelectorAll('.infolayer text').forEach((t) => {
  const m = /^([xy]\\d*)title$/.exec(t.getAttribute('class') || '');
  if (m && t.textContent.trim() && t.getBBox().width > 0)
    titles.push({axis: m[1], text: t.textContent.trim(), box: box(t)});
});
const areas = [];
el.querySelectorAll('.draglayer > g').forEach((g) => {
  const rect = g.querySelector('rect.nsewdrag');
  const m = /^(x\\d*)(y\\d*)$/.exec(g.getAttribute('class') || '');
  if (rect && m) areas.push({subplot: m[0], axes: [m[1], m[2]], box: box(rect)});
});
return {width: el.clientWidth, titles: titles, areas: areas};
"""


def _overlap(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > slack
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > slack)


def axis_title_overlaps(boxes: dict) -> list[str]:
    """Axis titles that overlap another axis title, or the plotting area of a subplot not theirs."""
    problems = []
    titles = boxes["titles"]
    for i, a in enumerate(titles):
        for b in titles[i + 1:]:
            if _overlap(a["box"], b["box"]):
                problems.append(f"the {a['axis']} axis title {a['text']!r} overlaps the {b['axis']} axis title {b['text']!r}")
        for area in boxes["areas"]:
            if a["axis"] not in area["axes"] and _overlap(a["box"], area["box"]):
                problems.append(f"the {a['axis']} axis title {a['text']!r} overlaps the plot {area['subplot']}")
    return problems


def check_narrow_figures(driver, width: int = NARROW_WIDTH) -> list[str]:
    """At a ``width``-pixel viewport, no interactive figure's axis title collides with another
    title or with another panel's plot (the figures are drawn: :func:`check_interactive`)."""
    from selenium.common.exceptions import TimeoutException

    ids = driver.execute_script(_INTERACTIVE_IDS_JS)
    if not ids:
        return []
    problems = []
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": width, "height": 800, "deviceScaleFactor": 2, "mobile": False})
    try:
        for plot_id in ids:
            _scroll_to(driver, plot_id)
            try:  # Plotly re-lays the figure out to the new width (its "responsive" option)
                boxes = _wait(driver, _AXIS_BOXES_JS, plot_id, timeout=15)
            except TimeoutException:
                problems.append(f"{plot_id}: not laid out again at {width} px")
                continue
            problems += [f"{plot_id} at {width} px: {p}" for p in axis_title_overlaps(boxes)]
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return problems


def check_keyboard(driver, plot_id: str) -> list[str]:
    """The figure's control is reached with Tab and moved with an arrow key, and that shows a new state.

    The control is focused, then Shift+Tab and Tab are pressed: focus comes back to it only
    if it is in the tab order (a control with tabindex=-1 can be focused by a script but is
    skipped by Tab). Then ArrowRight (slider) or ArrowDown (menu), or Left/Up at the last
    state, must change the control's state, what Plotly draws, and the ``aria-live`` status
    line, which must name the new state (the slider's aria-valuetext, the menu's entry).
    """
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _scroll_to(driver, plot_id)
    try:
        before = _wait(driver, _PLOT_STATE_JS, plot_id)
    except TimeoutException:
        return [f"{plot_id}: Plotly drew nothing"]
    if before["control"] is None:
        return [f"{plot_id}: no native slider or drop-down"]
    name = f"{plot_id}: the {before['control']}"
    reached = driver.execute_script(
        """const c = document.getElementById(arguments[0]);
           c.scrollIntoView({block: 'center', behavior: 'instant'}); c.focus();
           return {tabindex: c.tabIndex, disabled: c.disabled, focused: document.activeElement === c};""",
        before["id"],
    )
    problems = []
    if reached["tabindex"] < 0 or reached["disabled"] or not reached["focused"]:
        problems.append(f"{name} is not in the tab order ({reached})")
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    ActionChains(driver).send_keys(Keys.TAB).perform()
    if driver.execute_script("return document.activeElement.id;") != before["id"]:
        problems.append(f"{name} is not reached with the Tab key")
        return problems
    last = before["active"] == before["steps"] - 1
    if before["control"] == "slider":
        key = Keys.ARROW_LEFT if last else Keys.ARROW_RIGHT
    else:
        key = Keys.ARROW_UP if last else Keys.ARROW_DOWN
    ActionChains(driver).send_keys(key).perform()
    try:
        after = _wait(
            driver,
            "const s = (function () {" + _PLOT_STATE_JS + "}).apply(null, [arguments[0]]);"
            " return s && s.active !== arguments[1] && s.drawn !== arguments[2] && s.status !== arguments[3]"
            " ? s : null;",
            plot_id, before["active"], before["drawn"], before["status"],
            timeout=CHANGE_TIMEOUT,
        )
    except TimeoutException:
        now = driver.execute_script(_PLOT_STATE_JS, plot_id) or {}
        if now.get("active") == before["active"]:
            problems.append(f"{name} did not move on the arrow key")
        if now.get("drawn") == before["drawn"]:
            problems.append(f"{name} moved by the arrow key changed nothing drawn")
        if now.get("status") == before["status"]:
            problems.append(f"{name} moved by the arrow key left the status line (aria-live) unchanged")
        return problems
    if not after["valuetext"] or after["valuetext"] == before["valuetext"]:
        problems.append(f"{name}'s state text did not follow: {before['valuetext']!r} -> {after['valuetext']!r}")
    elif after["valuetext"] not in after["status"]:
        problems.append(f"the status line {after['status']!r} does not name the state {after['valuetext']!r}")
    return problems


def weight_problems(requests: dict[str, int], budget: int = WEIGHT_BUDGET, biggest: int = 8) -> list[str]:
    """The page's total against the budget; over it, the message lists its biggest files."""
    total = sum(requests.values())
    if total <= budget:
        return []
    top = sorted(requests.items(), key=lambda item: (-item[1], item[0]))[:biggest]
    return [
        f"loads {total / 1e6:.2f} MB on a first visit ({len(requests)} files), over the "
        f"{budget / 1e6:g} MB budget; biggest: " + ", ".join(f"{name} ({size / 1e6:.2f} MB)" for name, size in top)
    ]


def check_page(driver, base_url: str, site: pathlib.Path, page: str, interact: bool = True, axe=True) -> dict:
    """Open one page and run every check; returns the problems found, by kind, and counts.

    ``interact``: operate the interactive figures' controls. ``axe``: run axe-core on the
    whole page with every WCAG 2.1 A/AA rule (True, what :func:`test_page` does), not at all
    (False: a breakage test of another check), or as ``{"rules": (...), "include": selector}``
    narrows it (a breakage test of one rule on the element it made; see :func:`run_axe`).

    ``requests`` is what the page loaded on a first visit, before anything was scrolled to
    (the weight budget applies to it); ``requests_scrolled`` adds what it loaded once every
    interactive figure was scrolled to and drawn (plotly.js comes then: _ext/plotly-lazy.js).
    """
    driver.get_log("browser")  # drop what earlier pages left
    load(driver, urllib.parse.urljoin(base_url, page))
    problems: dict[str, list[str]] = {}
    math = driver.execute_async_script(_MATH_JS, MATH_FONT, MATH_FONT_FILE)
    problems["math"] = math_problems(math)
    images = driver.execute_async_script(_IMAGES_JS)
    problems["images"] = [f"not decoded: {src}" for src in images["bad"]]
    problems["alt"] = check_alt_text(driver)
    problems["links"] = check_links(driver, base_url, site)
    problems["icons"] = check_icons(driver, site) + check_icon_rules(driver)
    problems["lazy"] = lazy_image_problems(images["content"])
    problems["scripts"] = check_blocking_scripts(driver)
    cells = driver.execute_script(_CELLS_JS)
    problems["cells"] = (
        [f"figure-only cell shows its code (tag it hide-input): {c}" for c in cells["unfolded_figures"]]
        + [f"folded cell shows its code: {c}" for c in cells["shown_inputs"]]
        + [f"folded cell hides its output: {c}" for c in cells["hidden_outputs"]]
    )
    requests = page_requests(driver, base_url, site)  # a first visit, settled: typeset, decoded
    if axe:  # the page as first seen, before the checks below move, resize and operate it
        narrowed = {} if axe is True else axe
        problems["axe"] = check_axe(driver, None, **narrowed)
    n_interactive, problems["interactive"] = check_interactive(driver) if interact else (0, [])
    if interact:
        problems["interactive"] += driver.execute_script(_UNDRAWN_TRACES_JS)
        problems["interactive"] += check_narrow_figures(driver)
    problems["overflow"] = check_overflow(driver)
    scrolled = page_requests(driver, base_url, site)  # and every figure drawn
    # The page axe-core unfolded is checked too: nothing fetched from another host, and the
    # console log (all of it since the page was opened) holds no error.
    external = driver.execute_script(_EXTERNAL_JS)
    problems["offline"] = [f"fetched from another host: {u}" for u in sorted(set(external))]
    problems["console"] = _console_errors(driver)
    return {
        "problems": {k: v for k, v in problems.items() if v},
        "formulas": math["formulas"],
        "images": images["count"],
        "folded": cells["folded"],
        "interactive": n_interactive,
        "requests": requests,
        "requests_scrolled": scrolled,
    }


# --------------------------------------------------------------------------- the tests

SUMMARY: dict[str, dict] = {}


def _pages_for_params() -> list[str]:
    if (SITE / "index.html").is_file():
        return site_pages(SITE)
    return [f"{d}.html" for d in toc_docnames()]


@pytest.mark.parametrize("page", _pages_for_params())
def test_page(browser, site_url, page):
    if not (SITE / page).is_file():
        pytest.fail(f"{page} (in _toc.yml) was not built")
    result = check_page(browser, site_url, SITE, page)
    SUMMARY[page] = result
    assert not result["problems"], f"{page}: " + json.dumps(result["problems"], indent=1)


def _weight_params() -> list:
    return [
        pytest.param(page, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=OVER_BUDGET[page]))
        if page in OVER_BUDGET else page
        for page in _pages_for_params()
    ]


@pytest.mark.parametrize("page", _weight_params())
def test_page_weight(browser, site_url, page):
    """A first visit loads at most WEIGHT_BUDGET bytes, uncompressed, fonts and plotly.js included."""
    if not (SITE / page).is_file():
        pytest.fail(f"{page} (in _toc.yml) was not built")
    # test_page has opened the page and let it settle; run alone, this opens it the same way.
    result = SUMMARY.get(page) or check_page(browser, site_url, SITE, page)
    problems = weight_problems(result["requests"])
    assert not problems, f"{page}: {problems[0]}"


def test_summary(browser, site_url):
    """Print the totals (pages, formulas, images, figures) and the site's weight."""
    if not SUMMARY:
        pytest.skip("no page was checked")
    total = sum(p.stat().st_size for p in SITE.rglob("*") if p.is_file())
    heaviest = max(SUMMARY, key=lambda page: page_weight(SITE, page))
    lines = [
        f"pages checked: {len(SUMMARY)}",
        f"formulas typeset: {sum(r['formulas'] for r in SUMMARY.values())}",
        f"images decoded: {sum(r['images'] for r in SUMMARY.values())}",
        f"folded figure cells: {sum(r['folded'] for r in SUMMARY.values())}",
        f"interactive figures operated: {sum(r['interactive'] for r in SUMMARY.values())}",
        f"axe-core ({', '.join(AXE_TAGS)}): {len(SUMMARY)} pages, each in {' and '.join(COLOUR_MODES)} mode",
        f"site size: {total / 2**20:.1f} MiB; heaviest page: {heaviest} "
        f"({page_weight(SITE, heaviest) / 2**20:.2f} MiB, HTML plus its images)",
    ]
    lines += [f"  {page}: {r['formulas']} formulas, {r['images']} images, {r['interactive']} interactive, "
              f"{sum(r['requests'].values()) / 1e6:.2f} MB loaded on a first visit ({len(r['requests'])} files), "
              f"{sum(r['requests_scrolled'].values()) / 1e6:.2f} MB once every figure is drawn"
              for page, r in SUMMARY.items()]
    print("\n" + "\n".join(lines))
    assert sum(r["formulas"] for r in SUMMARY.values()) > 0


def page_weight(site: pathlib.Path, page: str) -> int:
    """Bytes of a page's HTML plus the images it shows (shared scripts and styles excluded)."""
    from bs4 import BeautifulSoup

    path = site / page
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    size = path.stat().st_size
    for src in {img.get("src", "") for img in soup.find_all("img")}:
        if src and not src.startswith(("data:", "http:", "https:")):
            target = (path.parent / urllib.parse.unquote(src.split("#")[0])).resolve()
            if target.is_file():
                size += target.stat().st_size
    return size


def test_pages_opened_from_disk_work(browser):
    """Opened as files (no server, no network), the pages draw their formulas and figures."""
    browser.get((SITE / "index.html").as_uri())
    _wait(browser, "return document.readyState === 'complete' && !location.pathname.endsWith('/index.html');")
    pages = [p for p in site_pages(SITE) if p != "index.html"]
    formulas = 0
    for page in pages:
        browser.get_log("browser")
        load(browser, (SITE / page).as_uri())
        math = browser.execute_async_script(_MATH_JS, MATH_FONT, MATH_FONT_FILE)
        assert not math_problems(math), (page, math_problems(math))
        formulas += math["formulas"]
        n, problems = check_interactive(browser)
        assert not problems, (page, problems)
        errors = _console_errors(browser)
        assert not errors, (page, errors)
    assert formulas > 0


def pages_showing_the_build_path(site: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """The site's HTML pages that contain the absolute path of the checkout that built them
    (an autodoc value such as a data file's path): a reader must not see the builder's
    machine, and two clones must build the same pages."""
    needle = str(root.resolve())
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                  if needle in p.read_text(encoding="utf-8", errors="replace"))


def test_no_page_shows_where_it_was_built():
    _need_site()
    assert not pages_showing_the_build_path(SITE), pages_showing_the_build_path(SITE)


def test_breakage_build_path_is_caught(broken_copy):
    _break(broken_copy, "api.html", "</body>", f"<p>{ROOT.resolve() / 'posenc' / 'data'}</p></body>")
    assert pages_showing_the_build_path(broken_copy) == ["api.html"]


def pages_with_raw_tex(site: pathlib.Path) -> dict[str, list[str]]:
    """Each page whose text, as a reader sees it, still holds a ``$``: a formula MyST left as TeX.

    Code, scripts, styles and MathML are left out (a ``$`` there is legitimate); what remains
    is the prose. A source line that begins with ``+ `` inside a ``$...$`` formula is read as
    a list item, which cuts the formula in two and leaves both halves as raw TeX (chapter 4
    had one); any unbalanced or unparsed ``$`` shows up the same way.
    """
    from bs4 import BeautifulSoup

    found = {}
    for page in site_pages(site):
        soup = BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")
        for tag in soup.select("script, style, pre, code, math, textarea, template, .highlight"):
            tag.decompose()
        text = " ".join(soup.get_text(" ").split())
        hits = [text[max(0, m.start() - 40):m.end() + 40] for m in re.finditer(r"\$", text)]
        if hits:
            found[page] = hits
    return found


def test_no_raw_tex_reaches_a_page():
    _need_site()
    assert not pages_with_raw_tex(SITE), pages_with_raw_tex(SITE)


def test_breakage_raw_tex_is_caught(broken_copy):
    page = "chapters/04_rope.html"
    _break(broken_copy, page, "</p>", " the offset $\\sigma(a, b)$ itself</p>")
    assert list(pages_with_raw_tex(broken_copy)) == [page]


def test_chapters_offer_their_executed_notebook():
    """Each chapter page links its executed notebook (.ipynb, with outputs) for download."""
    _need_site()
    chapters = [d for d in toc_docnames() if d.startswith("chapters/")]
    assert chapters
    for doc in chapters:
        page = SITE / f"{doc}.html"
        # every <a href="....ipynb"> of the page (the attribute as the HTML writers quote it)
        links = [urllib.parse.unquote(h) for h in
                 re.findall(r'<a\b[^>]*\bhref="([^"#?]+\.ipynb)"', page.read_text(encoding="utf-8"))]
        assert links, f"{doc}.html offers no .ipynb download"
        notebook = (page.parent / links[0]).resolve()
        data = json.loads(notebook.read_text(encoding="utf-8"))
        code = [c for c in data["cells"] if c["cell_type"] == "code"]
        assert code and any(c.get("outputs") for c in code), f"{notebook.name} has no executed outputs"


# --------------------------------------------------------------------------- deliberate breakages


def _a_page_with(site: pathlib.Path, marker: str) -> str:
    for page in site_pages(site):
        if marker in (site / page).read_text(encoding="utf-8"):
            return page
    pytest.fail(f"no page contains {marker!r}")


@pytest.fixture
def broken_copy(tmp_path):
    """A fresh copy of the built site, to break one thing in (the built site is never touched)."""
    _need_site()
    copy = tmp_path / "html"
    # The in-browser Python (27 MB, _ext/posenc_live.py) is linked, not copied: no check here reads it.
    shutil.copytree(SITE, copy, ignore=shutil.ignore_patterns("_pyodide"))
    if (SITE / "_pyodide").is_dir():
        (copy / "_pyodide").symlink_to(SITE / "_pyodide")
    return copy


def _break(copy: pathlib.Path, page: str, old: str, new: str) -> None:
    path = copy / page
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {page}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_breakage_link_is_caught(browser, broken_copy):
    page = _a_page_with(broken_copy, 'class="reference internal" href="')
    _break(broken_copy, page, 'class="reference internal" href="', 'class="reference internal" href="no-such-page.html')
    _anchors.cache_clear()
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert any("no-such-page" in p for p in result["problems"].get("links", [])), result["problems"]


def test_breakage_anchor_is_caught(browser, broken_copy):
    page = _a_page_with(broken_copy, 'href="#')
    text = (broken_copy / page).read_text(encoding="utf-8")
    anchor = re.search(r'href="#([^"]+)"', text).group(1)
    _break(broken_copy, page, f'id="{anchor}"', 'id="renamed-anchor"')
    _anchors.cache_clear()
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert any(anchor in p for p in result["problems"].get("links", [])), result["problems"]


@pytest.mark.parametrize("how", ["missing", "corrupt"])
def test_breakage_image_is_caught(browser, broken_copy, how):
    page = _a_page_with(broken_copy, "<img ")
    src = re.search(r'<img [^>]*src="([^"]+\.png)"', (broken_copy / page).read_text(encoding="utf-8")).group(1)
    image = (broken_copy / page).parent / src
    if how == "missing":
        image.unlink()
    else:
        image.write_bytes(b"this is not a PNG")
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert any(src in p for p in result["problems"].get("images", [])), result["problems"]


INLINE_MATH = '<span class="math notranslate nohighlight"><math '


@pytest.mark.parametrize("how", ["left as TeX", "a Temml error", "drawn with no size"])
def test_breakage_formula_is_caught(browser, broken_copy, how):
    """A formula that is not MathML, that holds Temml's error element, or that draws nothing is reported."""
    page = _a_page_with(broken_copy, INLINE_MATH)
    text = (broken_copy / page).read_text(encoding="utf-8")
    start = text.index(INLINE_MATH)
    opening = text[start:text.index(">", start + len(INLINE_MATH)) + 1]  # up to the end of <math ...>
    if how == "left as TeX":
        _break(broken_copy, page, opening, opening.replace("<math ", "\\(\\undefinedmacro\\)<math "))
    elif how == "a Temml error":
        _break(broken_copy, page, opening, opening + "<merror><mtext>undefinedmacro</mtext></merror>")
    else:
        _break(broken_copy, page, opening, opening.replace("<math ", '<math style="display: none" '))
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    expected = {"left as TeX": "not typeset: \\(\\undefinedmacro", "a Temml error": "Temml error: undefinedmacro",
                "drawn with no size": "formula not drawn:"}[how]
    assert any(p.startswith(expected) for p in result["problems"].get("math", [])), result["problems"]


def test_breakage_math_font_not_preloaded_is_caught(browser, broken_copy):
    page = _a_page_with(broken_copy, INLINE_MATH)
    _break(broken_copy, page, 'link.rel = "preload"', 'link.rel = "prefetch"')
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert any(p.startswith("math font not preloaded once: 0 preload link(s)")
               for p in result["problems"].get("math", [])), result["problems"]


def test_breakage_math_font_missing_is_caught(browser, broken_copy):
    (broken_copy / "_static" / "mathml" / "STIXTwoMath.woff2").unlink()
    page = _a_page_with(broken_copy, INLINE_MATH)
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert any(p.startswith("math font did not load") for p in result["problems"].get("math", [])), result["problems"]
    assert result["problems"].get("console"), result["problems"]


@pytest.mark.parametrize("how", ["named in the HTML", "added by a script"])
def test_breakage_heavy_page_is_caught(browser, broken_copy, how):
    """A page that loads a file over the budget fails the weight check, which names that file first.

    The file is named in the page's HTML, or added by a script as it runs (as _ext/plotly-lazy.js
    adds plotly.js): the check counts what the page requested, not what its HTML names.
    """
    page = _a_page_with(broken_copy, "</head>")
    (broken_copy / "_static" / "ballast.js").write_text("/*" + "x" * WEIGHT_BUDGET + "*/\n", encoding="utf-8")
    src = "../" * page.count("/") + "_static/ballast.js"
    if how == "named in the HTML":
        tag = f'<script src="{src}"></script>'
    else:
        tag = f"<script>const s = document.createElement('script'); s.src = '{src}'; document.head.append(s);</script>"
    _break(broken_copy, page, "</head>", tag + "</head>")
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert "_static/ballast.js" in result["requests"], sorted(result["requests"])
    problems = weight_problems(result["requests"])
    assert problems and problems[0].split("biggest: ")[1].startswith("_static/ballast.js ("), problems


ARTICLE = '<article class="bd-article">'


def _inject_into_article(copy: pathlib.Path, html: str) -> str:
    """Put ``html`` at the top of a page's article in the broken copy; return the page."""
    page = _a_page_with(copy, ARTICLE)
    _break(copy, page, ARTICLE, ARTICLE + html)
    return page


def _checked(browser, copy: pathlib.Path, page: str, axe=False) -> dict:
    """The problems :func:`check_page` finds on ``page`` of the broken copy (figures not operated;
    ``axe``: as :func:`check_page` takes it, none by default)."""
    with serve(copy) as url:
        return check_page(browser, url, copy, page, interact=False, axe=axe)["problems"]


def test_breakage_viewport_width_is_caught(browser, broken_copy):
    page = _inject_into_article(broken_copy, '<div style="width:600px">a line wider than a phone</div>')
    problems = _checked(browser, broken_copy, page)
    assert problems.get("overflow"), problems


def test_breakage_missing_icon_is_caught(browser, broken_copy):
    """A solid font without the search icon (on every page's header): the icon would show as nothing."""
    from fontTools import subset

    page = _a_page_with(broken_copy, "fa-magnifying-glass")
    (font,) = broken_copy.glob("_static/vendor/fontawesome/*/webfonts/fa-solid-900.woff2")
    options = subset.Options()
    options.flavor = "woff2"
    whole = subset.load_font(str(font), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[p for p in whole.getBestCmap() if p != 0xF002])  # fa-magnifying-glass
    subsetter.subset(whole)
    subset.save_font(whole, str(font), options)
    problems = _checked(browser, broken_copy, page)
    assert any("U+F002" in p for p in problems.get("icons", [])), problems


def test_breakage_icon_rule_cut_is_caught(browser, broken_copy):
    """The stylesheet without the search icon's rule (on every page's header): it would draw nothing."""
    page = _a_page_with(broken_copy, "fa-magnifying-glass")
    (css,) = broken_copy.glob("_static/vendor/fontawesome/*/css/all.min.css")
    text = css.read_text(encoding="utf-8")
    # posenc_icons writes the icon's character with an empty alternative text: content:"\f002"/""
    rule = re.search(r'(?<=[}\s])[^{}]*\.fa-magnifying-glass:before[^{}]*\{content:"\\f002"(?:/"")?\}', text).group(0)
    css.write_text(text.replace(rule, "", 1), encoding="utf-8")
    problems = _checked(browser, broken_copy, page)
    assert any("fa-magnifying-glass" in p and "draws nothing" in p for p in problems.get("icons", [])), problems


def test_breakage_blocking_script_is_caught(browser, broken_copy):
    """A deferred script of the head made synchronous again holds up the first paint."""
    page = _a_page_with(broken_copy, "_static/doctools.js")
    text = (broken_copy / page).read_text(encoding="utf-8")
    tag = re.search(r'<script defer="defer" src="([^"]*_static/doctools\.js[^"]*)"></script>', text)
    assert tag, "doctools.js is not deferred"
    _break(broken_copy, page, tag.group(0), f'<script src="{tag.group(1)}"></script>')
    problems = _checked(browser, broken_copy, page)
    assert any("doctools.js" in p for p in problems.get("scripts", [])), problems


@pytest.mark.parametrize("attribute", ["loading", "decoding", "width", "height"])
def test_breakage_eager_or_unsized_image_is_caught(browser, broken_copy, attribute):
    """A figure without loading="lazy", decoding="async", or its width or height attribute."""
    page = _a_page_with(broken_copy, 'loading="lazy"')
    text = (broken_copy / page).read_text(encoding="utf-8")
    tag = re.search(r"<img [^>]*>", text).group(0)
    _break(broken_copy, page, tag, re.sub(rf'\s{attribute}="[^"]*"', "", tag, count=1))
    src = re.search(r'src="([^"]+)"', tag).group(1)
    problems = _checked(browser, broken_copy, page)
    assert any(p.startswith(src) and f"{attribute}=" in p for p in problems.get("lazy", [])), problems


def test_breakage_image_size_out_of_proportion_is_caught(browser, broken_copy):
    """A figure whose width and height attributes are not its proportions would move the text when it arrives."""
    page = _a_page_with(broken_copy, 'loading="lazy"')
    text = (broken_copy / page).read_text(encoding="utf-8")
    tag = re.search(r"<img [^>]*>", text).group(0)
    _break(broken_copy, page, tag, re.sub(r'\sheight="([0-9]+)"', lambda m: f' height="{2 * int(m.group(1))}"', tag))
    problems = _checked(browser, broken_copy, page)
    assert any("not in the proportions" in p for p in problems.get("lazy", [])), problems


def test_breakage_squeezed_image_is_caught(browser, broken_copy):
    """Without the stylesheet's height: auto, a figure narrowed to a phone is stretched."""
    page = _a_page_with(broken_copy, "<img ")
    _break(broken_copy, "_static/custom.css", "height: auto !important;", "")
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    assert any("out of proportion" in p for p in result["problems"].get("overflow", [])), result["problems"]


@pytest.mark.parametrize("how", ["file name", "empty", "hash", "decorative"])
def test_breakage_alt_text_is_caught(browser, broken_copy, how):
    """An image whose alt text is its file name, empty or a hash is caught; a decorative one is not."""
    page = _a_page_with(broken_copy, '<img alt="')
    alt, src = re.search(r'<img alt="([^"]*)" [^>]*src="([^"]+)"', (broken_copy / page).read_text(encoding="utf-8")).groups()
    assert not alt_text_problem(alt), (page, alt)
    new = {"file name": f'alt="{src}"', "empty": 'alt=""', "hash": f'alt="{pathlib.PurePosixPath(src).stem}"',
           "decorative": 'alt="" role="presentation"'}[how]
    _break(broken_copy, page, f'<img alt="{alt}"', f"<img {new}")
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, interact=False, axe=False)
    found = [p for p in result["problems"].get("alt", []) if src in p]
    if how == "decorative":
        assert not found, result["problems"]
    else:
        assert len(found) == 1, result["problems"]


def test_breakage_axe_image_without_alt_is_caught(browser, broken_copy):
    """An image with no text alternative is an axe-core violation (image-alt), in both modes."""
    up = "../" * _a_page_with(broken_copy, ARTICLE).count("/")  # the favicon, from that page
    page = _inject_into_article(broken_copy, f'<img id="breakage" src="{up}_static/favicon.svg" width="32" height="32">')
    problems = _checked(browser, broken_copy, page, axe={"rules": ("image-alt",), "include": "#breakage"})
    for mode in COLOUR_MODES:
        assert any(p.startswith(f"{mode} mode: image-alt (critical") for p in problems.get("axe", [])), problems


def test_breakage_axe_dark_mode_contrast_is_caught(browser, broken_copy):
    """Grey text that reads on the light page (7:1) but not on the dark one (2.7:1) fails in dark mode only."""
    page = _inject_into_article(broken_copy, '<p id="breakage"><span style="color: #595959">grey text</span></p>')
    problems = _checked(browser, broken_copy, page, axe={"rules": ("color-contrast",), "include": "#breakage"})
    axe = problems.get("axe", [])
    assert any(p.startswith("dark mode: color-contrast") for p in axe), problems
    assert not any(p.startswith("light mode:") for p in axe), problems


def test_breakage_unfolded_scroll_without_tab_stop_is_caught(browser, broken_copy):
    """A code block that scrolls sideways only once unfolded gets a tab stop (_static/tabstops.js);
    without that script axe-core, which unfolds the page, finds it out of keyboard reach.

    The block is in a folded drop-down (sphinx-togglebutton, as the solutions are) and, like a
    solution's output line in chapter 1, fits while folded: here it is not laid out at all then.
    """
    page = _inject_into_article(
        broken_copy,
        '<style>.toggle-hidden .unfolded-only {display: none !important}</style>'
        '<div class="admonition dropdown" id="folded-wide"><p class="admonition-title">A wide line</p>'
        f'<div class="highlight unfolded-only"><pre>{"wide " * 80}</pre></div></div>',
    )
    rule = {"rules": ("scrollable-region-focusable",), "include": "#folded-wide"}
    kept = _checked(browser, broken_copy, page, axe=rule)
    (broken_copy / "_static" / "tabstops.js").write_text("", encoding="utf-8")
    dropped = _checked(browser, broken_copy, page, axe=rule)
    assert not kept.get("axe"), kept
    assert any(p.startswith("light mode: scrollable-region-focusable") for p in dropped.get("axe", [])), dropped


#: An interactive figure's JSON on a built page, in either attribute order: sphinx-codeautolink
#: writes the chapters back through BeautifulSoup, which sorts attributes (id before type).
FIGURE_JSON = re.compile(r'<script (?=[^>]*type="application/json")[^>]*id="([a-z0-9-]+)-json"[^>]*>(.*?)</script>', re.S)


def _edit_figure(copy: pathlib.Path, edit) -> tuple[str, str, dict]:
    """Rewrite the first interactive figure's JSON in the broken copy with ``edit(figure)``;
    returns the page, the figure's name and the edited figure."""
    page = _a_page_with(copy, 'class="posenc-interactive"')
    match = FIGURE_JSON.search((copy / page).read_text(encoding="utf-8"))
    figure = json.loads(match.group(2))
    edit(figure)
    _break(copy, page, match.group(2), json.dumps(figure))
    return page, match.group(1), figure


def test_breakage_dead_control_is_caught(browser, broken_copy, monkeypatch):
    """An interactive figure whose control switches nothing is caught."""
    monkeypatch.setattr(sys.modules[__name__], "CHANGE_TIMEOUT", 3)

    def same_traces_in_every_state(figure):  # the control still moves, but nothing changes
        figure["states"] = [{} for _ in figure["states"]]  # what Plotly.restyle is given, per state

    page, name, _ = _edit_figure(broken_copy, same_traces_in_every_state)
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, axe=False)
    problems = result["problems"].get("interactive", [])
    assert any(name in p and "changed nothing" in p for p in problems), result["problems"]


def test_breakage_trace_outside_the_bundle_is_caught(browser, broken_copy):
    """A trace type that the shipped plotly.js bundle lacks (a heat map) is caught, not skipped silently."""

    def last_trace_a_heatmap(figure):
        last = figure["data"][-1]
        figure["data"][-1] = {"type": "heatmap", "z": [[1, 2], [3, 4]], "visible": last.get("visible", True)}

    page, name, figure = _edit_figure(broken_copy, last_trace_a_heatmap)
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, axe=False)
    wanted = f"{name}-plot: trace {len(figure['data']) - 1} (heatmap) drawn as "
    assert any(p.startswith(wanted) for p in result["problems"].get("interactive", [])), result["problems"]


def test_breakage_axis_title_over_another_panel_is_caught(browser, broken_copy):
    """A two-panel figure whose right panel's y-axis title sits between the panels (Plotly's default
    side) runs into the left panel on a 360-pixel phone: caught."""

    def second_y_title_on_the_left(figure):
        assert "yaxis2" in figure["layout"], "the first interactive figure has no second panel"
        figure["layout"]["yaxis2"].update(side="left", automargin=False)

    page, name, _ = _edit_figure(broken_copy, second_y_title_on_the_left)
    with serve(broken_copy) as url:
        result = check_page(browser, url, broken_copy, page, axe=False)
    wanted = f"{name}-plot at {NARROW_WIDTH} px: the y2 axis title"
    assert any(p.startswith(wanted) and "overlaps the plot xy" in p
               for p in result["problems"].get("interactive", [])), result["problems"]


def test_breakage_plotly_missing_is_caught(browser, broken_copy):
    """plotly.js is loaded when a figure is scrolled to: without it, the figure is reported undrawn."""
    (broken_copy / "_static" / "plotly-basic.min.js").unlink()
    page = _a_page_with(broken_copy, 'class="posenc-interactive"')
    with serve(broken_copy) as url:
        browser.get_log("browser")
        load(browser, url + page)
        n, problems = check_interactive(browser, timeout=10)  # the load fails at once: no need to wait longer
        console = _console_errors(browser)
    assert n and any("Plotly drew nothing" in p for p in problems), problems
    assert any("plotly-basic.min.js" in e for e in console), console


def test_breakage_figures_script_missing_is_caught(browser, broken_copy):
    """Without the figures' own script (the page's HTML holds their data, no code), no figure is drawn: caught."""
    (broken_copy / FIGURES_JS).unlink()
    page = _a_page_with(broken_copy, 'class="posenc-interactive"')
    with serve(broken_copy) as url:
        load(browser, url + page)
        n, problems = check_interactive(browser, timeout=10)  # nothing will draw: no need to wait longer
    assert n and any("Plotly drew nothing" in p for p in problems), problems


def test_breakage_module_index_toggle_is_caught(browser, broken_copy):
    """Sphinx's own expand/collapse toggle in the module index (an image named "-", clicked with
    the mouse only) fails the alt-text check."""
    page = "py-modindex.html"
    _break(broken_copy, page, '<td></td>\n       <td>\n       <a href="api.html#module-posenc">',
           '<td><img src="_static/minus.png" class="toggler" id="toggle-1" alt="-" /></td>\n'
           '       <td>\n       <a href="api.html#module-posenc">')
    result = _checked(browser, broken_copy, page)
    assert any("minus.png" in p for p in result.get("alt", [])), result


def _figure_page(copy: pathlib.Path, control: str, dead: bool = False, breakage: tuple = ()) -> str:
    """A page of the copied site holding one posenc interactive figure with ``control``.

    ``dead``: every state restyles nothing (the control moves, the plot does not change);
    ``breakage``: ``(old, new)`` replaced once in the figure's HTML.
    """
    import numpy as np

    from posenc.interactive import interactive_figure

    x = np.arange(8.0)
    states = [[{"x": x, "y": np.sin(x * k), "name": "sin", "mode": "lines"}] for k in (0.5, 1.0, 1.5)]
    fig = interactive_figure(states, name=f"test-{control}", labels=["a", "b", "c"], control=control,
                             control_label="frequency ", alt="A sine curve whose frequency the control chooses.")
    html = fig.to_html()
    if dead:
        data = json.loads(fig.page_json())
        data["states"] = [{} for _ in data["states"]]
        html = html.replace(fig.page_json(), json.dumps(data))
    if breakage:
        assert breakage[0] in html, breakage[0]
        html = html.replace(*breakage, 1)
    page = f"test-{control}.html"
    (copy / page).write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>t</title>'
        '<link rel="icon" href="_static/favicon.svg">'
        '<link rel="stylesheet" href="_static/custom.css">'
        '<script src="_static/plotly-basic.min.js"></script>'
        f'<script defer src="{FIGURES_JS}"></script></head>'
        '<body style="margin:0"><p><a href="#top">a link before the figure</a></p>'
        f'<div style="max-width:700px">{html}</div><p><a href="#top">a link after it</a></p></body></html>',
        encoding="utf-8",
    )
    return page


@pytest.mark.parametrize("control", ["slider", "dropdown"])
def test_both_controls_are_operated(browser, broken_copy, control):
    """The interactive check works a slider and a drop-down; a control that switches nothing fails it."""
    live, dead = _figure_page(broken_copy, control, dead=False), None
    with serve(broken_copy) as url:
        load(browser, url + live)
        n, problems = check_interactive(browser)
        assert n == 1 and not problems, (problems, browser.current_url, browser.page_source[:300])
        load(browser, url + live)
        problems = check_keyboard(browser, f"test-{control}-plot")
        assert not problems, problems
        dead = _figure_page(broken_copy, control, dead=True)
        load(browser, url + dead)
        n, problems = check_interactive(browser)
    assert n == 1 and any("changed nothing" in p for p in problems), problems


# What makes a figure unusable without a mouse, or without sight: each breakage, made in
# the figure's HTML or in the figures' script (FIGURES_JS), and the problem the checks must then report.
FIGURES_JS = "_static/posenc-interactive.js"
_KEYBOARD_BREAKAGES = {
    # in the tab order no more: script can focus it, the Tab key skips it
    "tabindex": (None, ' autocomplete="off"', ' autocomplete="off" tabindex="-1"', "not reached with the Tab key"),
    # the state switched only on a click: the arrow key moves the control and nothing follows
    "click-only": (FIGURES_JS, 'control.addEventListener("input", show);\n      control.addEventListener("change", show);',
                   'control.addEventListener("click", show);', "changed nothing drawn"),
    # the plot switches but the status line (aria-live) is never updated
    "silent-status": (FIGURES_JS, "      status.textContent = fig.status[s];\n", "", "status line (aria-live) unchanged"),
}


@pytest.mark.parametrize("control", ["slider", "dropdown"])
@pytest.mark.parametrize("breakage", sorted(_KEYBOARD_BREAKAGES))
def test_breakage_keyboard_is_caught(browser, broken_copy, control, breakage, monkeypatch):
    """A control that the keyboard cannot reach or operate, or that announces nothing, fails the keyboard check."""
    monkeypatch.setattr(sys.modules[__name__], "CHANGE_TIMEOUT", 3)
    where, old, new, expected = _KEYBOARD_BREAKAGES[breakage]
    if where:
        _break(broken_copy, where, old, new)
        page = _figure_page(broken_copy, control)
    else:
        page = _figure_page(broken_copy, control, breakage=(old, new))
    with serve(broken_copy) as url:
        load(browser, url + page)
        problems = check_keyboard(browser, f"test-{control}-plot")
    assert any(expected in p for p in problems), problems


_A11Y_BREAKAGES = {
    "label": ('<label for="test-slider-control">', "<label>", "no visible <label for=...>"),
    "role": ('role="img" ', "", 'not role="img"'),
    "alt": ('aria-label="A sine curve whose frequency the control chooses."', "", "aria-label: no alt text"),
    "alt-short": ('aria-label="A sine curve whose frequency the control chooses."', 'aria-label="plot"',
                  "aria-label: alt text too short"),
    "live": ('aria-live="polite"', "", 'aria-live="polite"'),
    "plotly-slider": ('"margin":{', '"sliders":[{"steps":[{"label":"a","method":"skip"},'
                      '{"label":"b","method":"skip"}]}],"margin":{', "mouse-only"),
}


@pytest.mark.parametrize("breakage", sorted(_A11Y_BREAKAGES))
def test_breakage_figure_accessibility_is_caught(browser, broken_copy, breakage):
    """A control without a label, a plot without a role or a name, no live status, Plotly's own slider: caught."""
    old, new, expected = _A11Y_BREAKAGES[breakage]
    page = _figure_page(broken_copy, "slider", breakage=(old, new))
    with serve(broken_copy) as url:
        load(browser, url + page)
        n, problems = check_interactive(browser)
    assert n == 1 and any(expected in p for p in problems), problems


# --------------------------------------------------------------------------- the keyboard, figure by figure


def _figures_for_params() -> list:
    """(page, plot id) of every interactive figure in the built site."""
    if not (SITE / "index.html").is_file():
        return [pytest.param(None, None, id="no-site")]
    figures = []
    for page in site_pages(SITE):
        if not (SITE / page).is_file():
            continue  # a page of _toc.yml that was not built: test_page reports it
        for plot_id in re.findall(r'class="posenc-interactive" id="([a-z0-9-]+)"', (SITE / page).read_text("utf-8")):
            figures.append(pytest.param(page, plot_id, id=f"{page}#{plot_id}"))
    return figures or [pytest.param(None, None, id="no-figure")]


@pytest.mark.parametrize("page, plot_id", _figures_for_params())
def test_interactive_figure_works_from_the_keyboard(browser, site_url, page, plot_id):
    """Tab reaches the figure's control, an arrow key moves it: state, plot and status line change."""
    assert page, "the built site holds no interactive figure"
    load(browser, urllib.parse.urljoin(site_url, page))
    problems = check_keyboard(browser, plot_id)
    assert not problems, problems


# --------------------------------------------------------------------------- previews and linked code
# Resting the pointer on a reference to a theorem, an equation or a citation shows a preview of
# its target (sphinx-tippy; the scripts are shipped by _ext/posenc_tippy.py), and posenc's
# names in the chapters' code cells link to their entries in the API page (sphinx-codeautolink).

#: A link of each kind in a page's text: a theorem-like statement (sphinx-proof), an
#: equation (``{eq}``), a citation (sphinxcontrib-bibtex, to the bibliography page).
PREVIEW_LINKS = {
    "theorem": ", ".join(f'article.bd-article a.reference.internal[href*="#{p}-"]' for p in ("thm", "prop", "lem", "cor")),
    "equation": 'article.bd-article a.reference.internal[href*="#equation-"]',
    "citation": 'article.bd-article a.reference.internal[href*="bibliography.html#"]',
}
#: Previews whose target holds formulas, which must be drawn (MathML) in the preview.
PREVIEW_MATH = ("theorem", "equation")
#: At least this many of posenc's names in each chapter's code cells link to their entries in
#: the API page (when written: 14, 43, 40, 144, 102 and 92 in chapters 1 to 6).
MIN_CODE_LINKS = 10

_PREVIEW_LINK_JS = """
const link = document.querySelector(arguments[0]);
if (!link) return null;
link.scrollIntoView({block: 'center', behavior: 'instant'});  // not the theme's smooth scrolling
return {href: link.getAttribute('href'), element: link};
"""

# The preview tippy attached to the link (null until sphinx-tippy's onload script has run).
_PREVIEW_CONTENT_JS = """
const t = arguments[0]._tippy;
return t ? {content: String(t.props.content)} : null;
"""

# The shown preview: tippy's popup element, once visible and (for formulas) drawn.
_PREVIEW_SHOWN_JS = """
const link = arguments[0], math = arguments[1];
const t = link._tippy;
if (!t || !t.state.isShown || !document.body.contains(t.popper)) return null;
const box = t.popper.querySelector('.tippy-content');
if (!box || box.getBoundingClientRect().width === 0) return null;
const typeset = Array.from(box.querySelectorAll('math')).filter((m) => m.getBoundingClientRect().width > 0).length;
if (math && typeset === 0) return null;
return {text: box.innerText, typeset: typeset,
        raw: /\\\\[(\\[]/.test(box.innerText),
        errors: Array.from(box.querySelectorAll('merror')).map((e) => e.textContent)};
"""


def _text(html_or_tag) -> str:
    """Text of an element as tippy's content holds it: no equation number, no pilcrow link."""
    from bs4 import BeautifulSoup

    tag = BeautifulSoup(str(html_or_tag), "html.parser")
    for junk in tag.select(".eqno, .headerlink"):
        junk.decompose()
    return " ".join(tag.get_text().split())


def _target(site: pathlib.Path, page: str, href: str):
    """The element a link on ``page`` leads to, in the built file (None if there is none)."""
    from bs4 import BeautifulSoup

    url = urllib.parse.urlsplit(urllib.parse.urljoin(page, href))
    target = site / urllib.parse.unquote(url.path)
    if not target.is_file():
        return None
    return BeautifulSoup(target.read_text(encoding="utf-8"), "html.parser").find(id=urllib.parse.unquote(url.fragment))


def check_previews(driver, site: pathlib.Path, page: str, timeout: float = PAGE_TIMEOUT,
                   kinds: tuple[str, ...] = tuple(PREVIEW_LINKS)) -> tuple[list[str], list[str]]:
    """Rest the pointer on the page's first reference of each kind (of ``kinds``: a breakage
    test asks only for those its breakage concerns); returns (kinds checked, problems).

    A preview must be attached to the link with the text of the link's target, be shown on
    hover (tippy's popup), with its formulas drawn (MathML) for a theorem or an
    equation, stay while the pointer moves onto it and hide on Escape; and nothing may come
    from another host nor reach the console.
    """
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    checked, problems = [], []
    for kind, selector in PREVIEW_LINKS.items():
        if kind not in kinds:
            continue
        found = driver.execute_script(_PREVIEW_LINK_JS, selector)
        if found is None:
            continue
        checked.append(kind)
        href, link = found["href"], found["element"]
        target = _target(site, page, href)
        if target is None:
            problems.append(f"{kind} {href}: no target element")
            continue
        expected = _text(target)
        # What the popup must show as text: a statement's number ("Theorem 4.1"), a
        # citation's entry (a formula is typeset, so its text is not the TeX).
        caption = target.select_one(".caption-number")
        visible = {"theorem": _text(caption) if caption else expected[:20],
                   "citation": _text(target.find("p") or target)}.get(kind, "")
        try:
            content = _wait(driver, _PREVIEW_CONTENT_JS, link, timeout=timeout)
        except TimeoutException:
            problems.append(f"{kind} {href}: no preview attached to the link")
            continue
        if _text(content["content"]) != expected:
            problems.append(f"{kind} {href}: the preview is not its target: {_text(content['content'])[:120]!r}"
                            f" instead of {expected[:120]!r}")
        ActionChains(driver).move_to_element(link).perform()
        try:
            shown = _wait(driver, _PREVIEW_SHOWN_JS, link, kind in PREVIEW_MATH, timeout=timeout)
        except TimeoutException:
            problems.append(f"{kind} {href}: no preview shown on hover"
                            + (" with its formulas drawn" if kind in PREVIEW_MATH else ""))
            continue
        shown_text = " ".join(shown["text"].split())
        if visible not in shown_text:
            problems.append(f"{kind} {href}: the preview shows {shown_text[:120]!r}, without {visible[:120]!r}")
        if shown["raw"]:
            problems.append(f"{kind} {href}: the preview shows untypeset TeX: {shown_text[:120]!r}")
        problems += [f"{kind} {href}: Temml error in the preview: {e}" for e in shown["errors"]]
        # WCAG 1.4.13: the pointer can move onto the preview, and Escape hides it.
        box = driver.execute_script("return arguments[0]._tippy.popper.querySelector('.tippy-content');", link)
        ActionChains(driver).move_to_element(box).perform()
        time.sleep(0.6)  # longer than tippy's hide transition
        if not driver.execute_script("return arguments[0]._tippy.state.isShown;", link):
            problems.append(f"{kind} {href}: the preview disappears when the pointer moves onto it")
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        try:
            _wait(driver, "return !arguments[0]._tippy.state.isShown;", link, timeout=5)
        except TimeoutException:
            problems.append(f"{kind} {href}: Escape does not hide the preview")
    problems += [f"fetched from another host: {u}" for u in driver.execute_script(_EXTERNAL_JS)]
    problems += [f"console: {e}" for e in _console_errors(driver)]
    return checked, problems


def _chapters() -> list[str]:
    return [f"{d}.html" for d in toc_docnames() if d.startswith("chapters/")]


@pytest.mark.parametrize("page", _chapters())
def test_reference_previews(browser, site_url, page):
    """Each chapter previews a theorem, an equation and a citation reference it holds."""
    if not (SITE / page).is_file():
        pytest.fail(f"{page} was not built")
    browser.get_log("browser")
    load(browser, urllib.parse.urljoin(site_url, page))
    checked, problems = check_previews(browser, SITE, page)
    assert "theorem" in checked and "citation" in checked, f"{page}: no theorem or citation reference: {checked}"
    assert not problems, f"{page}: " + json.dumps(problems, indent=1)


def test_reference_previews_work_from_disk(browser):
    """Opened as a file (no server, no network), a chapter previews its references too."""
    _need_site()
    page = "chapters/04_rope.html"
    browser.get_log("browser")
    load(browser, (SITE / page).as_uri())
    checked, problems = check_previews(browser, SITE, page)
    assert sorted(checked) == sorted(PREVIEW_LINKS), checked
    assert not problems, problems


def _entry_name(anchor: str) -> str:
    """The documented name an API anchor is for: ``posenc.rope.apply_rope`` -> ``apply_rope``."""
    return anchor.removeprefix("module-").split(".")[-1]


def _names_it(anchor: str, attribute: bool) -> bool:
    """Whether an API anchor documents a name that a link's text could be: a module's
    function, class or constant for a bare name (``apply_rope``), also a member of a class
    (``Results.config``) for a dotted one (``results.config``). A bare variable that
    happens to share a member's name (``config``, an ``ExperimentConfig``) is linked to its
    type, not to that member."""
    parts = anchor.removeprefix("module-").split(".")
    return parts[0] == "posenc" and (attribute or len(parts) <= 3)


def check_code_links(site: pathlib.Path, page: str) -> tuple[int, list[str]]:
    """posenc's names in the page's code cells that link to the API page; returns (count, problems).

    Every link from a code cell to the API page must lead to an element of that page (the
    anchor checker's ids). A link whose text is a documented name must lead to that name's
    own entry (``apply_rope`` to ``#posenc.rope.apply_rope``, ``posenc.rope`` to
    ``#module-posenc.rope``); only those are counted. sphinx-codeautolink also links a
    variable to the entry of its type (``chain`` to ``#posenc.markov.MarkovChain``): these
    are checked for their anchor but not counted.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")
    count, problems = 0, []
    for link in soup.select("div.cell_input a[href]"):
        url = urllib.parse.urlsplit(urllib.parse.urljoin(page, link["href"]))
        fragment = urllib.parse.unquote(url.fragment)
        if not url.path.endswith("api.html") or not fragment.removeprefix("module-").startswith("posenc"):
            continue
        target = site / urllib.parse.unquote(url.path)
        anchors = _anchors(target) if target.is_file() else frozenset()
        if fragment not in anchors:
            problems.append(f"{link.get_text()!r} links to {link['href']}: no such element")
            continue
        text = link.get_text()
        name = text.split(".")[-1]
        if name == _entry_name(fragment):
            count += 1
        elif name in {_entry_name(a) for a in anchors if _names_it(a, attribute="." in text)}:
            problems.append(f"{text!r} links to another name's entry, {link['href']}")
    return count, problems


@pytest.mark.parametrize("page", _chapters())
def test_code_cells_link_to_the_api(page):
    _need_site()
    if not (SITE / page).is_file():
        pytest.fail(f"{page} was not built")
    count, problems = check_code_links(SITE, page)
    assert not problems, f"{page}: " + json.dumps(problems, indent=1)
    assert count >= MIN_CODE_LINKS, f"{page}: {count} of posenc's names in code cells link to the API page"
    print(f"{page}: {count} links from code cells to the API page")


def _tippy_js(copy: pathlib.Path, page: str) -> pathlib.Path:
    """The page's own preview data, written by sphinx-tippy under _static/tippy/."""
    name = re.search(r'src="[^"]*_static/(tippy/[^"]+\.js)"', (copy / page).read_text(encoding="utf-8"))
    assert name, f"{page} loads no preview data"
    return copy / "_static" / name.group(1)


def _previews_in(copy: pathlib.Path, page: str, browser, kinds: tuple[str, ...] = tuple(PREVIEW_LINKS)):
    with serve(copy) as url:
        browser.get_log("browser")
        load(browser, url + page)
        return check_previews(browser, copy, page, timeout=10, kinds=kinds)


PREVIEW_PAGE = "chapters/04_rope.html"  # has all three kinds


def test_breakage_previews_script_missing_is_caught(browser, broken_copy):
    (broken_copy / "_static" / "vendor" / "tippy" / "tippy-bundle.umd.min.js").unlink()
    _, problems = _previews_in(broken_copy, PREVIEW_PAGE, browser, kinds=("citation",))
    assert any("no preview attached" in p for p in problems), problems
    assert any(p.startswith("console:") for p in problems), problems


def test_breakage_preview_of_another_text_is_caught(browser, broken_copy):
    """The previews of the first theorem and citation on the page carry another text."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((broken_copy / PREVIEW_PAGE).read_text(encoding="utf-8"), "html.parser")
    theorem = _target(broken_copy, PREVIEW_PAGE, soup.select_one(PREVIEW_LINKS["theorem"])["href"])
    citation = _target(broken_copy, PREVIEW_PAGE, soup.select_one(PREVIEW_LINKS["citation"])["href"])
    number = theorem.select_one(".caption-number").get_text()
    authors = citation.find("p").get_text()[:30]
    data = _tippy_js(broken_copy, PREVIEW_PAGE)
    text = data.read_text(encoding="utf-8")
    assert authors in text and f'\\"caption-number\\">{number}' in text, (authors, number)
    data.write_text(text.replace(authors, "Someone Else").replace(
        f'\\"caption-number\\">{number}', '\\"caption-number\\">Lemma 9.9 '), encoding="utf-8")
    _, problems = _previews_in(broken_copy, PREVIEW_PAGE, browser, kinds=("theorem", "citation"))
    assert any(p.startswith("citation") and "is not its target" in p for p in problems), problems
    assert any(p.startswith("theorem") and "is not its target" in p for p in problems), problems
    assert any(p.startswith("theorem") and f"without {number.strip()!r}" in p for p in problems), problems


def test_breakage_untypeset_preview_is_caught(browser, broken_copy):
    """Previews whose formulas are TeX text (no MathML) are reported."""
    data = _tippy_js(broken_copy, PREVIEW_PAGE)
    text = data.read_text(encoding="utf-8")
    untypeset, count = re.subn(r"<math\b.*?</math>", lambda m: "\\\\(x\\\\)", text, flags=re.S)
    assert count, f"no formula in {data.name}"
    data.write_text(untypeset, encoding="utf-8")
    _, problems = _previews_in(broken_copy, PREVIEW_PAGE, browser, kinds=("equation",))
    assert any("no preview shown on hover with its formulas drawn" in p for p in problems), problems


def test_breakage_preview_script_from_a_cdn_is_caught(browser, broken_copy):
    local = re.search(r'src="(\.\./_static/vendor/popper/popper\.min\.js[^"]*)"',
                      (broken_copy / PREVIEW_PAGE).read_text(encoding="utf-8"))
    assert local, "the page does not load the local Popper"
    _break(broken_copy, PREVIEW_PAGE, local.group(0),
           'src="https://unpkg.com/@popperjs/core@2.11.8/dist/umd/popper.min.js"')
    _, problems = _previews_in(broken_copy, PREVIEW_PAGE, browser, kinds=("citation",))
    assert any(p.startswith("fetched from another host: https://unpkg.com/") for p in problems), problems


def test_breakage_preview_that_vanishes_under_the_pointer_is_caught(browser, broken_copy):
    data = _tippy_js(broken_copy, PREVIEW_PAGE)
    _break(broken_copy, data.relative_to(broken_copy).as_posix(), "interactive: true", "interactive: false")
    _, problems = _previews_in(broken_copy, PREVIEW_PAGE, browser, kinds=("citation",))
    assert any("disappears when the pointer moves onto it" in p for p in problems), problems


def test_breakage_preview_escape_is_caught(browser, broken_copy):
    _break(broken_copy, "_static/previews.js", 'event.key === "Escape"', 'event.key === "F13"')
    _, problems = _previews_in(broken_copy, PREVIEW_PAGE, browser, kinds=("citation",))
    assert any("Escape does not hide the preview" in p for p in problems), problems


def test_breakage_unlinked_code_is_caught(broken_copy):
    page = _chapters()[0]
    path = broken_copy / page
    path.write_text(re.sub(r'<a class="sphinx-codeautolink-a"[^>]*>(.*?)</a>', r"\1",
                           path.read_text(encoding="utf-8"), flags=re.S), encoding="utf-8")
    count, problems = check_code_links(broken_copy, page)
    assert count < MIN_CODE_LINKS and not problems, (count, problems)


def test_breakage_code_link_to_a_missing_entry_is_caught(broken_copy):
    page = _chapters()[0]
    count, problems = check_code_links(broken_copy, page)
    assert count >= MIN_CODE_LINKS and not problems
    _break(broken_copy, "api.html", 'id="posenc.attention.causal_mask"', 'id="posenc.attention.renamed"')
    _anchors.cache_clear()
    count, problems = check_code_links(broken_copy, page)
    assert any("causal_mask" in p and "no such element" in p for p in problems), problems


def test_breakage_code_link_to_another_entry_is_caught(broken_copy):
    page = _chapters()[0]
    _break(broken_copy, page, 'href="../api.html#posenc.attention.causal_mask"',
           'href="../api.html#posenc.attention.softmax"')
    _, problems = check_code_links(broken_copy, page)
    assert any("another name's entry" in p for p in problems), problems
