"""The chapters' Run controls (``_ext/posenc_live.py``), driven in headless Chromium, offline.

For every chapter page of the built site (``_build/html``, served on 127.0.0.1; every other
host unresolvable, as in ``tests/test_site.py``):

- before any click, the page requests nothing of the in-browser Python (``_pyodide/``, the
  worker, the page's cell list ``_live/``);
- the last code cell's Run control runs every cell of the page in order (the hidden ones
  too) in Pyodide, loaded from the site; no cell raises, every cell shown on the page gets
  its new output, and each printed output (stdout, and the value of a last bare expression)
  equals the stored one character for character (the chapters round what they print, so
  Pyodide's NumPy gives the same text as the build's); a cell that stored a figure draws one;
  the run's output replaces the stored one, which no longer shows (for a cell tagged
  hide-output, its whole fold: no empty toggle is left);
- in chapter 1, a line typed with the keyboard at the end of a cell's code and run with the
  cell's Run button shows the output of the edited code (one edit prints, through a "/" the
  page's search shortcut must not take; another raises and shows its traceback); then
  axe-core (``browser.harness.check_axe``: WCAG 2.1 A/AA, light and dark mode) finds no violation
  on the page with the run's outputs, the traceback and the controls after the run;
- each cell's "Show stored output" gives back its stored output as it was before the run
  (a fold closed or open as it was) and removes the run's.

Opened from disk, a Run control says how to serve the book instead of starting. The last
test breaks a copy of the site (a request before the click, a stored output that differs, a
folded output left beside the run's and given back unfolded, a "/" the page takes from the
code, a control that ignores the reader's edit, a restore control with no name) and shows
that each check fails.

``make test`` runs one chapter in full (:data:`FULL_CHAPTER`, with the keyboard edits and
axe-core) and every other chapter's first cells (up to its :data:`FIRST_PRINTING`-th cell
shown that prints: Pyodide starts, ``posenc`` and the chapter's setup run, printed outputs
compare). ``make live-test`` (``POSENC_LIVE_ALL=1``, run by ``.ci/run`` after ``make test``)
runs every cell of every chapter, chapter 6's live retraining (2000 steps, about two minutes
in the browser) included. A cell whose stored output is folded (tagged hide-output) is
compared with the output inside its fold.
Timings are not asserted here: ``benchmarks/live_cells.py`` measures them.
"""

from __future__ import annotations

import http.server
import os
import pathlib
import re
import shutil
import sys
import time

import pytest

from browser.harness import (
    REQUIRE,
    SITE,
    _need_browser,
    _need_site,
    _QuietHandler,
    check_axe,
    load,
    make_driver,
    page_requests,
    serve,
    toc_docnames,
)

#: Seconds a page's run may take (chapter 6 in full: about 4 minutes on 2 shared cores).
RUN_TIMEOUT = 900
#: The site folders and file only a click may request.
LIVE_PARTS = ("_pyodide/", "_live/", "_static/posenc-live-worker.js")
#: Every chapter in full (``make live-test``), not only :data:`FULL_CHAPTER`.
ALL = os.environ.get("POSENC_LIVE_ALL", "") not in ("", "0")
#: The chapter ``make test`` runs in full, where a reader's edits and axe-core are checked too.
FULL_CHAPTER = "chapters/01_why_order_matters"
#: In the other chapters ``make test`` runs the cells up to this one among those that print.
FIRST_PRINTING = 2
#: The lines typed at the end of a chapter's first two cells that print, and what each run must show
#: (the first has a "/", a key the page's search shortcut would take; the second raises).
EDITS = (
    ('print("edited in the browser:", 84 // 2)', "printed", "edited in the browser: 42"),
    ('int("forty-two")', "traceback", "ValueError: invalid literal for int() with base 10: 'forty-two'"),
)


def _chapters() -> list[str]:
    return [d for d in toc_docnames() if d.startswith("chapters/")]


@pytest.fixture(scope="module")
def live_browser():
    _need_site()
    chromium, chromedriver = _need_browser()
    if not (SITE / "_pyodide" / "pyodide-lock.json").is_file():
        unavailable = pathlib.Path(sys.prefix) / "share" / "posenc-pyodide" / "UNAVAILABLE"  # _ext/fetch_pyodide.py
        why = unavailable.read_text(encoding="utf-8").strip() if unavailable.is_file() else "see the build's log"
        message = f"{SITE} has no _pyodide/: the build left the Run controls out ({why})"
        if REQUIRE:
            pytest.fail(message + " (POSENC_REQUIRE_BROWSER is set)")
        pytest.skip(message)
    driver = make_driver(chromium, chromedriver)
    driver.set_script_timeout(RUN_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


class _CachingHandler(_QuietHandler):
    """As the site test's server, but the browser may keep ``_pyodide/`` (the same files all session).

    A reader's browser keeps them too; here it spares each chapter after the first the
    download and the WebAssembly compilation (Chromium caches the compiled module of a
    cached response): about 5 s per page on this machine.
    """

    def end_headers(self):
        if self.path.startswith("/_pyodide/"):
            self.send_header("Cache-Control", "max-age=3600")
            http.server.SimpleHTTPRequestHandler.end_headers(self)
        else:
            super().end_headers()


@pytest.fixture(scope="module")
def live_url():
    _need_site()
    with serve(SITE, _CachingHandler) as url:
        yield url


# --------------------------------------------------------------------------- the checks


def live_requests(requests: dict[str, int]) -> list[str]:
    """The files of the in-browser Python among a page's requests."""
    return sorted(name for name in requests if name.startswith(LIVE_PARTS))


_RUN_JS = """
const upto = arguments[0];
const bars = Array.from(document.querySelectorAll('.posenc-live-bar'));
if (!bars.length) return {error: 'no Run control on the page'};
let i = bars.length - 1;
if (upto !== null) {
  i = bars.findIndex((b) => b.parentElement.classList.contains('posenc-cell-' + upto));
  if (i < 0) return {error: 'no Run control on cell ' + upto};
}
bars[i].querySelector('.posenc-live-status').textContent = '';
bars[i].querySelector('.posenc-live-run').click();
return {bar: i, cell: Number(/posenc-cell-(\\d+)/.exec(bars[i].parentElement.className)[1])};
"""

_STATUS_JS = """
return document.querySelectorAll('.posenc-live-bar')[arguments[0]].querySelector('.posenc-live-status').textContent;
"""
#: A status line that ends a run.
FINISHED = re.compile(r"^Ran |error|could not|needs the book served")


def run_page(driver, upto: int | None = None, timeout: float = RUN_TIMEOUT) -> dict:
    """Click the Run control of the last cell (or of cell ``upto``); wait for the end of the run.

    The wait polls (one WebDriver call per second) rather than holding one asynchronous
    script: Selenium's client gives up on a single call after 120 seconds.
    """
    started = driver.execute_script(_RUN_JS, upto)
    if "error" in started:
        return started
    deadline = time.monotonic() + timeout
    while True:
        status = driver.execute_script(_STATUS_JS, started["bar"])
        if FINISHED.search(status) or time.monotonic() > deadline:
            break
        time.sleep(1)
    return {**started, "status": status, "timings": driver.execute_script("return window.posencLive.timings")}


# Shared by the two queries below: whether an element is displayed (its own display, not
# whether the reader sees it), and a cell's stored output with, for a hide-output cell, the
# fold (<details>) MyST-NB puts it in (null otherwise). Written here, not read from the page's
# script, so that the test does not take the page's word for where the stored output is.
_STORED_OF_JS = """
const displayed = (e) => getComputedStyle(e).display !== 'none';
const storedOf = (el) => {
  const stored = el.querySelector(':scope > .cell_output, :scope > details > .cell_output');
  return [stored, stored && stored.parentElement !== el ? stored.parentElement : null];
};
"""

# Each cell shown on the page: its stored printed output, what the run printed, figures.
_OUTPUTS_JS = _STORED_OF_JS + """
const upto = arguments[0];
return Array.from(document.querySelectorAll("div.cell[class*='posenc-cell-']")).map((el) => {
  const index = Number(/posenc-cell-(\\d+)/.exec(el.className)[1]);
  const [stored, fold] = storedOf(el);
  const shown = !!stored && displayed(fold || stored);  // a closed fold shows its toggle
  const live = el.querySelector(':scope > .posenc-live-output');
  const liveFold = live ? live.querySelector(':scope > details.posenc-live-fold') : null;
  const text = (root, sel) => root ? Array.from(root.querySelectorAll(sel)).map((p) => p.textContent).join('') : '';
  return {index: index, upto: index <= upto, ran: !!live, folded: !!fold, storedShown: shown,
          // hide-output: the run's output folded too, open or closed as the stored fold is
          liveFoldedAsStored: !fold || (!!liveFold && liveFold.open === fold.open),
          // printed text, a value's text, and a value shown as a code block (posenc.book.show_source)
          stored: stored ? Array.from(stored.querySelectorAll(
                                  '.output.stream pre, .output.text_plain pre, :scope > .highlight-python pre'))
                                .map((p) => p.textContent) : [],
          printed: text(live, '.posenc-live-stdout'), error: text(live, '.posenc-live-error'),
          kept: !!(live && live.querySelector('.posenc-live-note')) && shown,
          storedImages: stored ? stored.querySelectorAll('img').length : 0,
          liveImages: live ? live.querySelectorAll('img.posenc-live-figure').length : 0};
});
"""


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def printed_as_stored(printed: str, blocks: list[str]) -> bool:
    """Whether ``printed`` is the text of the stored output blocks, in order.

    The kernel may flush one ``print`` in pieces (chapter 5's "12 heads, extra slopes:"
    once arrived as two stream outputs), which the page shows as two blocks, each ending
    in a line break the code never printed; so a line break (and the trailing spaces
    before it) is optional where one block ends and the next begins, and nowhere else.
    """
    pattern = r"[ \t]*\n?".join(re.escape(_normal(block)) for block in blocks)
    return re.fullmatch(pattern, _normal(printed)) is not None


def output_problems(outputs: list[dict]) -> list[str]:
    """Cells (up to the one run) that did not run, raised, print otherwise than stored, or drew nothing."""
    problems = []
    for cell in outputs:
        if not cell["upto"]:
            continue
        where = f"cell {cell['index']}"
        if not cell["ran"]:
            problems.append(f"{where}: no output from the run")
        elif cell["error"]:
            problems.append(f"{where} raised: {cell['error'].strip().splitlines()[-1]}")
        elif not printed_as_stored(cell["printed"], cell["stored"]):
            problems.append(f"{where} printed {cell['printed'][:300]!r}; stored {''.join(cell['stored'])[:300]!r}")
        elif cell["storedImages"] and not cell["kept"] and not cell["liveImages"]:
            problems.append(f"{where} stored {cell['storedImages']} figure(s); the run drew none")
        elif cell["storedShown"] and not cell["kept"]:
            what = "the fold (hide-output) of its stored output" if cell["folded"] else "its stored output"
            problems.append(f"{where}: {what} still shows beside the run's output")
        if cell["ran"] and not cell["kept"] and not cell["liveFoldedAsStored"]:
            problems.append(f"{where}: the run's output is not folded (hide-output), open or closed, as its stored output is")
    return problems


# Each cell's stored output: whether it is displayed (for a hide-output cell: its fold, open
# or closed) and whether its fold is open; whether the cell shows a run's output and its
# "Show stored output" control. A cell in a closed solution counts as shown.
_STORED_STATE_JS = _STORED_OF_JS + """
const state = {};
document.querySelectorAll("div.cell[class*='posenc-cell-']").forEach((el) => {
  const [stored, fold] = storedOf(el);
  if (!stored) return;
  const back = el.querySelector(':scope > .posenc-live-bar .posenc-live-restore');
  state[/posenc-cell-(\\d+)/.exec(el.className)[1]] = {
    shown: displayed(fold || stored), folded: !!fold, open: fold ? fold.open : null,
    live: !!el.querySelector(':scope > .posenc-live-output'), back: !!back && displayed(back)};
});
return state;
"""

# Press every "Show stored output" control the page displays, one by one (those in a closed
# solution too).
_RESTORE_JS = """
const backs = Array.from(document.querySelectorAll('.posenc-live-restore'))
  .filter((b) => getComputedStyle(b).display !== 'none');
backs.forEach((b) => b.click());
return backs.length;
"""


def restore_problems(before: dict, after: dict) -> list[str]:
    """Cells whose stored output "Show stored output" did not give back as it was before the run."""
    problems = []
    for index, was in before.items():
        now = after.get(index)
        where = f"cell {index}"
        if now is None:
            problems.append(f"{where}: its stored output is gone")
            continue
        what = "the fold (hide-output) of its stored output" if was["folded"] else "its stored output"
        if now["live"]:
            problems.append(f"{where}: the run's output stays after 'Show stored output'")
        if now["back"]:
            problems.append(f"{where}: 'Show stored output' still offered after it was pressed")
        if now["shown"] != was["shown"]:
            problems.append(f"{where}: {what} {'shows' if now['shown'] else 'is hidden'} after 'Show stored output'; "
                            f"before the run it {'showed' if was['shown'] else 'was hidden'}")
        if now["open"] != was["open"]:
            problems.append(f"{where}: the fold of its stored output is {'open' if now['open'] else 'closed'} "
                            f"after 'Show stored output'; before the run it was {'open' if was['open'] else 'closed'}")
    return problems


# The edited code as the page holds it, and whether the reader's caret is in it.
_CODE_JS = """
const pre = document.querySelector('div.cell.posenc-cell-' + arguments[0] + ' .cell_input pre');
return {text: pre.innerText, editable: pre.isContentEditable, focused: document.activeElement === pre};
"""
#: A status line that ends a run of the edited cell.
EDIT_FINISHED = re.compile(r"^Ran |error")


def type_edit(driver, index: int, line: str, timeout: float = 60) -> dict:
    """Type ``line`` at the end of cell ``index``'s code with the keyboard, then press its Run control.

    As a reader would: a click in the code puts the caret there, Ctrl+End moves it to the
    end, Enter starts a new line, the line is typed key by key (WebDriver's key events,
    which Chromium's editing turns into the text), and a click on the cell's Run button
    runs it. Returns what the run printed, its traceback, the status line and the code as typed.
    """
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    cell = driver.find_element(By.CSS_SELECTOR, f"div.cell.posenc-cell-{index}")
    code = cell.find_element(By.CSS_SELECTOR, ".cell_input pre")
    if not driver.execute_script(_CODE_JS, index)["editable"]:
        return {"error": "the code is not editable"}
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", code)
    (ActionChains(driver).click(code).key_down(Keys.CONTROL).send_keys(Keys.END).key_up(Keys.CONTROL)
     .send_keys(Keys.ENTER).send_keys(line).perform())
    typed = driver.execute_script(_CODE_JS, index)
    if not typed["focused"]:
        return {"error": "the keyboard focus is not in the code after typing"}
    if not typed["text"].rstrip("\n").endswith("\n" + line):
        return {"error": f"the typed line is not the code's last line: {typed['text'][-200:]!r}"}
    status = cell.find_element(By.CSS_SELECTOR, ".posenc-live-status")
    driver.execute_script("arguments[0].textContent = '';", status)
    before = driver.execute_script("return window.posencLive.timings.length")
    run = cell.find_element(By.CSS_SELECTOR, ".posenc-live-run")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", run)
    run.click()
    WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: EDIT_FINISHED.search(status.text))
    text = {
        kind: "".join(e.get_attribute("textContent") for e in cell.find_elements(By.CSS_SELECTOR, selector))
        for kind, selector in (("printed", ":scope > .posenc-live-output .posenc-live-stdout"),
                               ("traceback", ":scope > .posenc-live-output .posenc-live-error"))
    }
    return {**text, "status": status.text,
            "code": typed["text"], "timings": driver.execute_script(
                "return window.posencLive.timings.slice(arguments[0])", before)}


def tab_problems(driver, index: int) -> list[str]:
    """In cell ``index``'s code, Tab indents a new line by four spaces; Escape, then Tab, leaves the code."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    code = driver.find_element(By.CSS_SELECTOR, f"div.cell.posenc-cell-{index} .cell_input pre")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", code)
    (ActionChains(driver).click(code).key_down(Keys.CONTROL).send_keys(Keys.END).key_up(Keys.CONTROL)
     .send_keys(Keys.ENTER).send_keys(Keys.TAB).send_keys("x").perform())
    typed = driver.execute_script(_CODE_JS, index)
    problems = []
    if not typed["focused"]:
        problems.append("Tab in the code moved the focus out of it")
    elif not typed["text"].rstrip("\n").endswith("\n    x"):
        problems.append(f"Tab in the code did not indent the line by four spaces: {typed['text'][-40:]!r}")
    ActionChains(driver).send_keys(Keys.ESCAPE).send_keys(Keys.TAB).perform()
    if driver.execute_script(_CODE_JS, index)["focused"]:
        problems.append("Escape, then Tab, did not leave the code (the keyboard is trapped in it)")
    return problems


def edit_problems(result: dict, kind: str, expected: str) -> list[str]:
    """Whether the edited cell's run shows ``expected`` in its ``kind`` ("printed", "traceback")."""
    if "error" in result:
        return [result["error"]]
    if expected not in result[kind]:
        return [f"the edited cell's {kind} is {result[kind][-200:]!r}, not {expected!r} ({result['status']})"]
    return []


def _printing_cells(outputs: list[dict]) -> list[int]:
    return [c["index"] for c in outputs if c["upto"] and "".join(c["stored"]).strip()]


def check_live_page(driver, base_url: str, site: pathlib.Path, page: str, edit: bool = False,
                    axe: bool | dict = False, first: int | None = None) -> dict:
    """Load ``page``, check its requests before a click, run it, compare outputs; restore them.

    ``first``: run only the cells up to the ``first``-th shown cell that prints (all by default).
    ``edit``: type a line into each of the first two cells that print and run each
    (:data:`EDITS`: one prints, one raises). ``axe``: once the run
    (and the edit) has left its outputs and controls on the page, run axe-core on it
    (``browser.harness.check_axe``: True for every WCAG 2.1 A/AA rule, or ``{"rules": ..., "include":
    ...}`` to narrow it). Last, every "Show stored output" control is pressed and each
    stored output must be back as it was before the run (a fold closed or open as it was).
    """
    load(driver, base_url + f"{page}.html")
    before = live_requests(page_requests(driver, base_url, site))
    stored = driver.execute_script(_STORED_STATE_JS)
    upto = None
    if first is not None:
        printing = _printing_cells(driver.execute_script(_OUTPUTS_JS, 10**9))
        if len(printing) < first:
            return {"before": before, "run": {"error": f"{page} has fewer than {first} cells that print"},
                    "problems": [f"{page} has fewer than {first} cells that print"]}
        upto = printing[first - 1]
    started = time.perf_counter()
    run = run_page(driver, upto)
    report = {"before": before, "run": run, "seconds": time.perf_counter() - started, "problems": [],
              "full": upto is None}
    if "error" in run:
        report["problems"].append(run["error"])
        return report
    fetched = driver.execute_script("return window.posencLive.fetched || []")
    report["fetched"] = sum(size for _, size in fetched)
    report["problems"] += [f"the worker fetched {name}, not from the site" for name, _ in fetched
                           if not name.startswith(base_url + "_pyodide/")]
    if not fetched:
        report["problems"].append("the worker reported no file fetched")
    outputs = driver.execute_script(_OUTPUTS_JS, run["cell"])
    report["problems"] += output_problems(outputs)
    report["cells"] = sum(c["upto"] and c["ran"] for c in outputs)
    report["folded"] = sum(c["upto"] and c["folded"] for c in outputs)
    report["folds"] = sum(c["folded"] for c in stored.values())
    if edit:
        report["edits"], report["edit_problems"] = [], []
        for (line, kind, expected), index in zip(EDITS, _printing_cells(outputs), strict=False):
            report["edits"].append(type_edit(driver, index, line))
            report["edit_problems"] += edit_problems(report["edits"][-1], kind, expected)
        if len(report["edits"]) < len(EDITS):
            report["edit_problems"].append(f"{page} has fewer than {len(EDITS)} cells that print")
        else:
            report["edit_problems"] += tab_problems(driver, _printing_cells(outputs)[0])
    if axe:
        report["axe"] = check_axe(driver, None, **({} if axe is True else axe))
    report["restored"] = driver.execute_script(_RESTORE_JS)
    report["restore_problems"] = restore_problems(stored, driver.execute_script(_STORED_STATE_JS))
    return report


# --------------------------------------------------------------------------- the tests


def test_printed_output_comparison():
    """Exact but for a print the kernel flushed in pieces (a line break where a block ends)."""
    stored = ["12 heads, extra slopes:\n", " [0.7071 0.3536] > m_1 = 0.5\n"]
    assert printed_as_stored("12 heads, extra slopes: [0.7071 0.3536] > m_1 = 0.5\n", stored)
    assert printed_as_stored("12 heads, extra slopes:\n [0.7071 0.3536] > m_1 = 0.5\n", stored)
    assert not printed_as_stored("12 heads, extra slopes: [0.7071 0.3535] > m_1 = 0.5\n", stored)
    assert not printed_as_stored("12 heads, extra\nslopes: [0.7071 0.3536] > m_1 = 0.5\n", stored)
    assert printed_as_stored("", []) and not printed_as_stored("x", [])
    assert printed_as_stored("a.b\n", ["a.b\n"]) and not printed_as_stored("axb\n", ["a.b\n"])


def test_the_full_chapter_is_a_chapter():
    assert FULL_CHAPTER in _chapters()


@pytest.mark.parametrize("page", _chapters())
def test_chapter_runs_in_the_browser(live_browser, live_url, page):
    full = page == FULL_CHAPTER
    report = check_live_page(live_browser, live_url, SITE, page, edit=full, axe=full,
                             first=None if ALL or full else FIRST_PRINTING)
    assert not report["before"], f"{page} requested before any click: {report['before']}"
    assert report["run"].get("status", "").startswith("Ran "), report["run"]
    assert not report["problems"], "\n".join(report["problems"])
    assert report["cells"] > 0
    if report["full"]:  # every hide-output cell of the page ran, and its fold was hidden, then given back
        assert report["folded"] == report["folds"], report
    if "edits" in report:
        assert not report["edit_problems"], report["edit_problems"]
    if "axe" in report:  # the page with the run's outputs, the edited cell and the controls after the run
        assert not report["axe"], "\n".join(report["axe"])
    assert report["restored"] >= report["cells"] and not report["restore_problems"], report["restore_problems"]
    print(f"{page}: {report['cells']} cells shown ran ({'all' if report['full'] else 'the first'}) "
          f"in {report['seconds']:.1f} s "
          f"({report['folded']} with a folded output), {report['fetched'] / 1e6:.1f} MB fetched by the worker",
          end=" ")


#: The cell whose run is stopped: chapter 6's live retraining (minutes in the browser).
LONG_CELL = ("chapters/06_extrapolation", "live = run_experiment(")

# The bar of the first cell whose text holds arguments[0]: its state while a run goes on.
_BAR_STATE_JS = """
const bar = Array.from(document.querySelectorAll('.posenc-live-bar'))
  .find((b) => b.parentElement.textContent.includes(arguments[0]));
if (!bar) return null;
const q = (s) => bar.querySelector(s);
return {status: q('.posenc-live-status').textContent, timer: q('.posenc-live-timer').textContent,
        stopShown: !q('.posenc-live-stop').hidden, stopEnabled: !q('.posenc-live-stop').disabled,
        othersDisabled: Array.from(document.querySelectorAll('.posenc-live-run')).every((b) => b.disabled),
        ran: window.posencLive ? window.posencLive.ran.size : -1};
"""


def test_a_long_run_shows_its_progress_and_stops(live_browser, live_url):
    """Chapter 6's retraining: while it runs, its bar counts the seconds and offers Stop (every
    Run control disabled); Stop ends Python (the worker) within a second, and the Run control
    of another cell then runs it in a new Python, from the top."""
    from selenium.webdriver.common.by import By

    page, text = LONG_CELL
    load(live_browser, live_url + f"{page}.html")
    live_browser.execute_script(
        "Array.from(document.querySelectorAll('.posenc-live-bar')).find((b) => b.parentElement.textContent"
        ".includes(arguments[0])).querySelector('.posenc-live-run').click();", text)
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:  # the cells above run first; then the retraining, for minutes
        state = live_browser.execute_script(_BAR_STATE_JS, text)
        if state["status"] == "Running…" and state["timer"] or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert state["status"] == "Running…" and re.fullmatch(r"\d+:\d\d elapsed", state["timer"]), state
    assert state["stopShown"] and state["stopEnabled"] and state["othersDisabled"], state
    time.sleep(2)
    live_browser.execute_script(
        "Array.from(document.querySelectorAll('.posenc-live-bar')).find((b) => b.parentElement.textContent"
        ".includes(arguments[0])).querySelector('.posenc-live-stop').click();", text)
    time.sleep(1)
    stopped = live_browser.execute_script(_BAR_STATE_JS, text)
    assert stopped["status"].startswith("Stopped after ") and not stopped["stopShown"] and not stopped["timer"], stopped
    assert not stopped["othersDisabled"] and stopped["ran"] == 0, stopped
    first = live_browser.find_elements(By.CSS_SELECTOR, ".posenc-live-bar")[0]
    first.find_element(By.CSS_SELECTOR, ".posenc-live-run").click()
    status = first.find_element(By.CSS_SELECTOR, ".posenc-live-status")
    deadline = time.monotonic() + 120
    while not FINISHED.search(status.text) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert status.text.startswith("Ran "), status.text


def test_run_from_disk_says_how_to_serve(live_browser):
    page = _chapters()[0]
    load(live_browser, (SITE / f"{page}.html").as_uri())
    run = run_page(live_browser, timeout=30)
    assert "make serve" in run.get("status", ""), run
    assert not live_browser.execute_script("return window.posencLive.timings.length"), "Python ran from file://"


def _fold_output(html: str, n: int) -> str:
    """Fold the ``n``-th stored printed output of a page as MyST-NB folds a hide-output cell's."""
    start = -1
    for _ in range(n):
        start = html.index('<div class="cell_output docutils container">\n<div class="output stream', start + 1)
    depth, end = 0, start
    for tag in re.finditer(r"<(/?)div\b", html[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            end = html.index(">", start + tag.start()) + 1
            break
    summary = ('<summary>\n<p class="collapsed admonition-title">Show code cell output</p>\n'
               '<p class="expanded admonition-title">Hide code cell output</p>\n</summary>\n')
    return (html[:start] + '<details class="admonition hide below-input">\n' + summary + html[start:end]
            + "\n</details>" + html[end:])


def test_breakages_are_caught(live_browser, tmp_path):
    """Each check fails on a copy of the site broken for it.

    A request before the click; a stored output that differs; a run that leaves a
    hide-output cell's fold beside its output (the page before it hid the fold), and so does
    not fold the run's output either; a "Show stored output" that gives the fold back
    unfolded; the page's "/" shortcut taking the key from the code being typed; an edit the
    Run control ignores; a "Show stored output" control with no name (it appears only after
    a run: axe-core on the page as loaded cannot see it); Tab in the code moving the focus on.
    """
    _need_site()
    copy = tmp_path / "html"
    shutil.copytree(SITE, copy, ignore=shutil.ignore_patterns("_pyodide"))
    (copy / "_pyodide").symlink_to(SITE / "_pyodide")
    page = _chapters()[0]
    html = copy / f"{page}.html"
    text = html.read_text(encoding="utf-8")
    # 1. the page fetches Pyodide's lock before any click
    text = text.replace("</body>", '<script>fetch("../_pyodide/pyodide-lock.json")</script></body>', 1)
    # 2. the stored output of the first cell that prints differs from what the code prints
    marker = '<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre><span></span>'
    assert marker in text
    text = text.replace(marker, marker + "tampered ", 1)
    # 3. the second cell that prints is tagged hide-output (its output folded, closed) ...
    text = _fold_output(text, 2)
    html.write_text(text, encoding="utf-8")
    script = copy / "_static" / "posenc-live.js"
    js = script.read_text(encoding="utf-8")
    breakages = {
        # ... and a run hides only an unfolded stored output, as the page did before
        "restore(el);\n    const stored = storedOf(el);":
            'restore(el);\n    const stored = el.querySelector(":scope > .cell_output");',
        # ... and "Show stored output" unfolds the fold
        "if (stored) stored.hidden = false;": "if (stored) { stored.hidden = false; stored.open = true; }",
        # 4. keys typed in the code reach the page's shortcuts ("/" moves to the search box)
        "event.stopPropagation();": ";",
        # 5. the Run control ignores the reader's edit and runs the stored source
        "return pre.innerText;": "return cell.source;",
        # 6. "Show stored output" has no name
        'button("Show stored output", `Show stored output of code cell ${n + 1}`,': 'button("", "",',
        # 7. Tab in the code moves the focus on (to the Copy button), as the browser's default
        'if (event.key === "Tab" && !leaving': 'if (false && event.key === "Tab" && !leaving',
    }
    for old, new in breakages.items():
        assert js.count(old) == 1, old
        js = js.replace(old, new)
    script.write_text(js, encoding="utf-8")
    with serve(copy, _CachingHandler) as url:
        report = check_live_page(live_browser, url, copy, page, edit=True, axe=True)
    assert report["before"] == ["_pyodide/pyodide-lock.json"], report["before"]
    problems = report["problems"]
    tampered = [p for p in problems if "tampered" in p]
    assert len(tampered) == 1, problems
    # Every folded cell run (the page's own hide-output cells and the one folded above): its
    # fold left beside the run's output, and (the old lookup found no stored output) the
    # run's output not folded either.
    folded = report["folded"]
    assert folded >= 1, report
    fold_problems = sorted(p.split(": ", 1)[1] for p in problems if p not in tampered)
    assert fold_problems == sorted(["the fold (hide-output) of its stored output still shows beside the run's output",
                                    "the run's output is not folded (hide-output), open or closed, as its stored output is"]
                                   * folded), problems
    restore = report["restore_problems"]
    assert len(restore) == folded and all("the fold of its stored output is open" in r for r in restore), restore
    # the first line, with its "/", is not typed; the second not run; Tab leaves the code
    edits = report["edit_problems"]
    assert len(edits) == 3 and "typ" in edits[0] and edits[1].startswith("the edited cell's traceback is ''"), edits
    assert edits[2] == "Tab in the code moved the focus out of it", edits
    axe = report["axe"]
    assert {p.split(" (")[0] for p in axe} == {"light mode: button-name", "dark mode: button-name"}, axe
    assert all("posenc-live-restore" in p for p in axe), axe
