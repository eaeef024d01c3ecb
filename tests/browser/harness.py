"""The browser tests' harness: the built site served on 127.0.0.1, headless Chromium, page loading.

Shared by ``tests/test_site.py``, ``tests/test_site_math.py``, ``tests/test_live.py``,
``tests/test_lab.py`` and ``benchmarks/live_cells.py`` (none of which imports another test
module): where the site is (:data:`SITE`), the book's pages (:func:`toc_docnames`), finding
Chromium and its driver or skipping (failing under ``POSENC_REQUIRE_BROWSER=1``), the static
server (:func:`serve`), the driver (:func:`make_driver`), opening a page (:func:`load`), what
a page requested (:func:`page_requests`), the formulas' probe (:data:`_MATH_JS`) and
axe-core's run (:func:`check_axe`).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import pathlib
import re
import shutil
import threading
import urllib.parse

import fetch_assets
import pytest
import yaml

from booktools import ROOT

SITE = pathlib.Path(os.environ.get("POSENC_SITE", ROOT / "_build" / "html"))
REQUIRE = os.environ.get("POSENC_REQUIRE_BROWSER", "") not in ("", "0")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAMES = ("chromedriver",)
INSTALL_HINT = (
    "install Chromium and its driver: `sudo apt-get install chromium chromium-driver` (Debian) "
    "or `sudo apt-get install chromium-browser chromium-chromedriver` (Ubuntu); "
    "or set POSENC_CHROMIUM and POSENC_CHROMEDRIVER to their paths"
)
DESKTOP = (1280, 900)
PAGE_TIMEOUT = 60  # seconds for the fonts or Plotly to finish on a slow, shared machine
#: axe-core's rules for WCAG 2.0 and 2.1, levels A and AA (axe's own tag names).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: The theme's colour modes; each page is checked in both.
COLOUR_MODES = ("light", "dark")
AXE_TIMEOUT = 240  # seconds: the contrast rule visits every text node of the longest chapter


def toc_docnames(toc: pathlib.Path = ROOT / "_toc.yml") -> list[str]:
    """The book's pages in reading order, from the table of contents."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    names = [data["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))

    for part in data.get("parts", []):
        walk(part.get("chapters"))
    walk(data.get("chapters"))
    return [re.sub(r"\.(md|ipynb|rst)$", "", n) for n in names]


def _find(env: str, names) -> str | None:
    if os.environ.get(env):
        return os.environ[env]
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def _need_site():
    if not (SITE / "index.html").is_file():
        message = f"no built site at {SITE}: run `make book` first (make test builds it before this test)"
        if REQUIRE:
            pytest.fail(message)
        pytest.skip(message)


def _need_browser() -> tuple[str, str]:
    chromium, driver = _find("POSENC_CHROMIUM", CHROMIUM_NAMES), _find("POSENC_CHROMEDRIVER", DRIVER_NAMES)
    try:
        import selenium  # noqa: F401
    except ImportError:
        chromium = None
    if not (chromium and driver):
        message = f"browser test skipped: no headless Chromium/chromedriver/selenium found; {INSTALL_HINT}"
        if REQUIRE:
            pytest.fail(message + " (POSENC_REQUIRE_BROWSER is set)")
        pytest.skip(message)
    return chromium, driver


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def end_headers(self):
        # Never cached: a later server may get the same port and serve a changed copy.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextlib.contextmanager
def serve(directory: pathlib.Path, handler_class=None):
    """Serve ``directory`` on 127.0.0.1 (a free port) for the duration of the block, with
    ``handler_class`` (default: :class:`_QuietHandler`; test_live passes a caching one)."""
    handler = functools.partial(handler_class or _QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def make_driver(chromium: str, chromedriver: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
        "--hide-scrollbars",
        # Offline, as a reader without a network: any request to another host fails.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    # The Performance API keeps 250 resource entries by default and drops later ones; the
    # weight check needs them all, so every document raises that limit before anything loads.
    driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": "performance.setResourceTimingBufferSize(100000);"},
    )
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    return driver


#: The font family of the formulas (Temml's stylesheet, _ext/posenc_mathml.py).
MATH_FONT = "STIX2"


#: The file of that font, under _static/mathml/.
MATH_FONT_FILE = "STIXTwoMath.woff2"


# Every formula of the page: MathML, drawn (a size, unless it is inside something folded), in
# the math font, with no TeX left as text beside it and no Temml error; once the page's fonts
# have settled, the math font has loaded (a missing font file or stylesheet leaves it
# unloaded, and the formulas drawn in some other font).
_MATH_JS = """
const done = arguments[arguments.length - 1], family = arguments[0];
const MATHML = 'http://www.w3.org/1998/Math/MathML';
document.fonts.ready.then(() => {
  const formulas = document.querySelectorAll('.math');
  const untypeset = [], errors = [], undrawn = [];
  formulas.forEach((el) => {
    const text = el.textContent.trim().slice(0, 80);
    const maths = Array.from(el.querySelectorAll('math')).filter((m) => m.namespaceURI === MATHML);
    const outside = Array.from(el.childNodes).filter((n) =>
      !(n.nodeType === 1 && (n.localName === 'math' || n.classList.contains('eqno') || n.classList.contains('formula'))));
    const loose = outside.map((n) => n.textContent).join('').trim();
    if (maths.length !== 1 || loose) { untypeset.push(text); return; }
    el.querySelectorAll('merror').forEach((e) => errors.push(e.textContent.slice(0, 120) + ' in ' + text));
    const m = maths[0];
    if (el.getClientRects().length === 0) return;  // folded away: nothing is drawn
    const box = m.getBoundingClientRect();
    const font = getComputedStyle(m).fontFamily;
    if (box.width === 0 || box.height === 0 || !font.includes(family))
      undrawn.push(text + ' (' + Math.round(box.width) + 'x' + Math.round(box.height) + ', ' + font + ')');
  });
  const faces = Array.from(document.fonts).filter((f) => f.family.replace(/["']/g, '') === family);
  const loaded = faces.some((f) => f.status === 'loaded');
  // Over HTTP the font is preloaded (_ext/templates/static/webpack-macros.html), and fetched once:
  // a preload the stylesheet's font request cannot use would be a second fetch.
  let preload = null;
  if (formulas.length && location.protocol !== 'file:') {
    const links = document.head.querySelectorAll('link[rel="preload"][as="font"][href$="/' + arguments[1] + '"]');
    const fetched = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/' + arguments[1])).length;
    if (links.length !== 1 || fetched !== 1)
      preload = links.length + ' preload link(s), fetched ' + fetched + ' time(s)';
  }
  done({formulas: formulas.length, untypeset: untypeset, errors: errors, undrawn: undrawn, preload: preload,
        font: formulas.length === 0 || loaded ? null :
          family + (faces.length ? ' ' + faces.map((f) => f.status).join('/') : ' not declared')});
});
"""


def math_problems(math: dict) -> list[str]:
    """What :data:`_MATH_JS` found wrong, one line each."""
    return ([f"math font did not load: {math['font']}"] if math["font"] else []) + (
        [f"math font not preloaded once: {math['preload']}"] if math["preload"] else []) + [
        f"not typeset: {t}" for t in math["untypeset"]
    ] + [f"Temml error: {e}" for e in math["errors"]] + [f"formula not drawn: {t}" for t in math["undrawn"]]


_INTERACTIVE_IDS_JS = """
return Array.from(document.querySelectorAll('.posenc-interactive')).map((el) => el.id);
"""


# Unfold what a reader can unfold (folded code cells, <details>; the solutions, which
# sphinx-togglebutton hides), so that axe-core checks it too. Then switch the page to a colour
# mode the way pydata-sphinx-theme 0.15.4's setTheme() does (html's data-mode and data-theme,
# and Bootstrap's dark drop-down menus), without storing it in localStorage (the next page
# opens in the reader's default mode again); wait for the fade-ins and the theme's colour
# transitions to end (a half-faded text has a lower contrast), then run axe-core (already
# injected) with the WCAG 2.0/2.1 A and AA rules only (or a few of them: a breakage test),
# on the whole document (or the element a breakage test made). Returns the violations: rule,
# impact, help text and each element's target (a CSS selector).
_AXE_JS = """
const [mode, runOnly, include, done] = arguments;
document.querySelectorAll('details:not([open])').forEach((d) => {
  d.open = true; d.dataset.posencUnfolded = ''; });
document.querySelectorAll('.toggle-hidden > .admonition-title').forEach((t) => {
  t.click(); t.dataset.posencUnfolded = ''; });
const root = document.documentElement;
if (root.dataset.posencMode === undefined)
  root.dataset.posencMode = JSON.stringify([root.dataset.mode, root.dataset.theme]);
root.dataset.mode = mode;
root.dataset.theme = mode;
document.querySelectorAll('.dropdown-menu').forEach((el) =>
  el.classList.toggle('dropdown-menu-dark', mode === 'dark'));
const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
const finite = (a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity;
frame()
  .then(() => Promise.all(document.getAnimations().filter(finite)
    .map((a) => a.finished.catch(() => null))))
  .then(() => axe.run(include ? {include: [include]} : document, {runOnly: runOnly, resultTypes: ['violations']}))
  .then((r) => done({violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => JSON.stringify(n.target))}))}))
  .catch((e) => done({error: String(e)}));
"""


# Undo what _AXE_JS did: fold again what it unfolded, and give the page back its colour mode.
_REFOLD_JS = """
document.querySelectorAll('details[data-posenc-unfolded]').forEach((d) => {
  d.open = false; delete d.dataset.posencUnfolded; });
document.querySelectorAll('.admonition-title[data-posenc-unfolded]').forEach((t) => {
  t.click(); delete t.dataset.posencUnfolded; });
const root = document.documentElement;
if (root.dataset.posencMode !== undefined) {
  const [mode, theme] = JSON.parse(root.dataset.posencMode);
  delete root.dataset.posencMode;
  if (mode === undefined) delete root.dataset.mode; else root.dataset.mode = mode;
  if (theme === undefined) delete root.dataset.theme; else root.dataset.theme = theme;
  document.querySelectorAll('.dropdown-menu').forEach((el) =>
    el.classList.toggle('dropdown-menu-dark', theme === 'dark'));
}
"""


# What the plot draws: for every trace Plotly has drawn (a scatter line, a heat map, ...),
# its index, name and data, read from the data Plotly bound to the drawn element. Positions
# on the page are left out: a control that switches nothing may still nudge the margins.
# The control is the figure's native one (posenc's <div class="posenc-figure"> holds the plot,
# the control and the status line): its state, how many it offers, the text naming the state
# (the slider's aria-valuetext, the menu's selected entry) and the status line's text.
_PLOT_STATE_JS = """
const el = document.getElementById(arguments[0]);
if (!el || !el.classList.contains('js-plotly-plot') || !el.querySelector('svg.main-svg'))
  return null;
const drawn = [];
el.querySelectorAll('g.trace, g.hm').forEach((g) => {
  const cd = g.__data__;
  const t = cd && cd[0] && cd[0].trace;
  if (!t) return;
  drawn.push(JSON.stringify([t.index, t.name, t.x, t.y, t.z]));
});
drawn.sort();
const box = el.closest('.posenc-figure');
const control = box ? box.querySelector('input[type="range"], select') : null;
const status = box ? box.querySelector('[aria-live]') : null;
const out = {drawn: drawn.join('\\n'), traces: drawn.length, control: null, id: null, active: null,
             steps: 0, valuetext: null, status: status ? status.textContent.trim() : null};
if (control && control.tagName === 'SELECT') {
  const option = control.options[control.selectedIndex];
  Object.assign(out, {control: 'dropdown', active: control.selectedIndex, steps: control.options.length,
                      valuetext: option ? option.textContent.trim() : null});
} else if (control) {
  const step = Number(control.step) || 1;
  Object.assign(out, {control: 'slider', active: Number(control.value),
                      steps: Math.floor((Number(control.max) - Number(control.min)) / step) + 1,
                      valuetext: control.getAttribute('aria-valuetext')});
}
if (control) out.id = control.id;
return out;
"""


def _wait(driver, js: str, *args, timeout: float = PAGE_TIMEOUT):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(lambda d: d.execute_script(js, *args))


def load(driver, url: str) -> None:
    """Open ``url`` and wait until that document (not the one before it) has loaded.

    A page that redirects (``index.html``'s meta refresh) is followed to its target.
    """
    driver.execute_script("window.__posencOld = true;")  # marks the document being left
    driver.get(url)
    _wait(driver, "return !window.__posencOld && document.readyState === 'complete';")
    if driver.execute_script("return !!document.querySelector('meta[http-equiv=\"refresh\"]');"):
        _wait(
            driver,
            "return location.href.split('#')[0] !== arguments[0] && document.readyState === 'complete';",
            url.split("#")[0],
        )


def _scroll_to(driver, plot_id: str) -> None:
    """Scroll an interactive figure to the middle of the window, as a reader does on reaching it:
    plotly.js loads then (_ext/plotly-lazy.js), and the figure is drawn."""
    driver.execute_script(
        "const el = document.getElementById(arguments[0]);"
        " if (el) el.scrollIntoView({block: 'center', behavior: 'instant'});", plot_id)


# Every file the page has asked for so far: the page itself (the navigation entry) and each
# resource (what the HTML names, and what scripts or stylesheets fetch later: web fonts,
# images, plotly.js). Read once the web fonts in use have arrived (document.fonts.ready).
_REQUESTS_JS = """
const done = arguments[arguments.length - 1];
document.fonts.ready.then(() => requestAnimationFrame(() => requestAnimationFrame(() => {
  const entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
  done(entries.map((e) => [e.name, e.decodedBodySize || 0]));
})));
"""


def page_requests(driver, base_url: str, site: pathlib.Path) -> dict[str, int]:
    """What the open page has loaded: ``{file: bytes}``, each URL once.

    The URLs come from the Performance API. A URL of the site is sized by its file on disk:
    that is what the server sends (it does not compress) and what a reader downloads on a
    first visit, whatever the browser reports for a response it served from its own memory
    cache (no size). Any other URL keeps the browser's ``decodedBodySize``. The keys are the
    files' paths in the site (query strings kept, fragments dropped).
    """
    base_path = urllib.parse.urlsplit(base_url).path
    sizes: dict[str, int] = {}
    for name, decoded in driver.execute_async_script(_REQUESTS_JS):
        url = urllib.parse.urlsplit(name)
        if not name.startswith(base_url):
            key, size = name.split("#")[0], decoded
        else:
            rel = urllib.parse.unquote(url.path[len(base_path):])
            target = site / rel
            if rel == "" or target.is_dir():
                target = target / "index.html"
            size = target.stat().st_size if target.is_file() else decoded
            key = rel + (f"?{url.query}" if url.query else "")
        sizes[key] = max(sizes.get(key, 0), size)
    return sizes


@functools.cache
def _axe_source() -> str:
    return fetch_assets.asset("axe-core", "axe.min.js").read_text(encoding="utf-8")


def run_axe(driver, mode: str, rules: tuple[str, ...] = (), include: str | None = None) -> list[dict]:
    """axe-core's WCAG 2.1 A/AA violations on the open page in colour ``mode`` ("light", "dark").

    ``rules`` and ``include`` narrow the run, for a breakage test, to some of those rules (each
    must be one of the WCAG 2.1 A/AA rules that the full run applies) and to the elements
    that a CSS selector matches (and their content).
    """
    if not driver.execute_script("return !!window.axe;"):
        driver.execute_script(_axe_source())
    run_only = {"type": "tag", "values": AXE_TAGS}
    if rules:
        known = driver.execute_script("return axe.getRules(arguments[0]).map((r) => r.ruleId);", AXE_TAGS)
        assert set(rules) <= set(known), f"not among axe-core's {AXE_TAGS} rules: {sorted(set(rules) - set(known))}"
        run_only = {"type": "rule", "values": list(rules)}
    driver.set_script_timeout(AXE_TIMEOUT)
    try:
        result = driver.execute_async_script(_AXE_JS, mode, run_only, include)
    finally:
        driver.set_script_timeout(PAGE_TIMEOUT)
    if "error" in result:
        raise RuntimeError(f"axe-core failed in {mode} mode: {result['error']}")
    return result["violations"]


def check_axe(driver, url: str | None, shown: int = 8, rules: tuple[str, ...] = (), include: str | None = None) -> list[str]:
    """No WCAG 2.1 A/AA violation in either colour mode: one line per rule and mode, with targets.

    The page is checked as a reader first sees it: opened afresh from ``url``, or (``url``
    None) the page already open, before any other check has moved, resized or operated it.
    It is checked once the fonts and Plotly have drawn (each figure is scrolled to, which makes
    plotly.js load and draw it, and the page back to its top); then what axe's run unfolded
    is folded again and the page gets its colour mode back. ``rules`` and ``include``: see
    :func:`run_axe`.
    """
    from selenium.common.exceptions import TimeoutException

    if url is not None:
        load(driver, url)
    driver.execute_async_script(_MATH_JS, MATH_FONT, MATH_FONT_FILE)
    for plot_id in driver.execute_script(_INTERACTIVE_IDS_JS):
        with contextlib.suppress(TimeoutException):  # a figure that never draws: see check_interactive
            _scroll_to(driver, plot_id)
            _wait(driver, _PLOT_STATE_JS, plot_id)
    driver.execute_script("window.scrollTo({top: 0, behavior: 'instant'});")
    problems = []
    try:
        for mode in COLOUR_MODES:
            for v in run_axe(driver, mode, rules, include):
                targets = v["targets"]
                more = f" and {len(targets) - shown} more" if len(targets) > shown else ""
                problems.append(
                    f"{mode} mode: {v['id']} ({v['impact']}, {len(targets)} element(s)): {v['help']}; "
                    f"at {', '.join(targets[:shown])}{more}"
                )
    finally:
        driver.execute_script(_REFOLD_JS)
    return problems
