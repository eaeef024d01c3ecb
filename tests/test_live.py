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
- in chapter 1, a cell edited in place and run again shows the output of the edited code.

Opened from disk, a Run control says how to serve the book instead of starting. The last
test breaks a copy of the site (a request before the click, a stored output that differs, a
control that ignores the reader's edit) and shows that each check fails.

Every cell of every chapter is run and compared, chapter 6's live retraining (2000 steps,
about two minutes in the browser) included; ``POSENC_LIVE_QUICK=1`` stops chapter 6 before
that training, for a quicker check while working on the page. A cell whose stored output is
folded (tagged hide-output) is compared with the output inside its fold.
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

from test_site import (
    REQUIRE,
    SITE,
    _need_browser,
    _need_site,
    _QuietHandler,
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
FULL = os.environ.get("POSENC_LIVE_QUICK", "") in ("", "0")
#: The first source line of a chapter's cell where a quick run (not FULL) stops (the training).
STOP_BEFORE = {"chapters/06_extrapolation": "live = run_experiment("}
EDIT = '\nprint("edited in the browser:", 6 * 7)'


def _chapters() -> list[str]:
    return [d for d in toc_docnames() if d.startswith("chapters/")]


@pytest.fixture(scope="module")
def live_browser():
    _need_site()
    chromium, chromedriver = _need_browser()
    if not (SITE / "_pyodide" / "pyodide-lock.json").is_file():
        unavailable = pathlib.Path(sys.prefix) / "share" / "posenc-pyodide" / "UNAVAILABLE"  # tools/fetch_pyodide.py
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
const stopBefore = arguments[0];
const bars = Array.from(document.querySelectorAll('.posenc-live-bar'));
if (!bars.length) return {error: 'no Run control on the page'};
let i = bars.length - 1;
if (stopBefore) {
  i = bars.findIndex((b) => b.parentElement.textContent.includes(stopBefore)) - 1;
  if (i < 0) return {error: 'no cell holds ' + stopBefore};
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


def run_page(driver, stop_before: str | None = None, timeout: float = RUN_TIMEOUT) -> dict:
    """Click the Run control of the last cell (or of the one before ``stop_before``); wait for the end.

    The wait polls (one WebDriver call per second) rather than holding one asynchronous
    script: Selenium's client gives up on a single call after 120 seconds.
    """
    started = driver.execute_script(_RUN_JS, stop_before)
    if "error" in started:
        return started
    deadline = time.monotonic() + timeout
    while True:
        status = driver.execute_script(_STATUS_JS, started["bar"])
        if FINISHED.search(status) or time.monotonic() > deadline:
            break
        time.sleep(1)
    return {**started, "status": status, "timings": driver.execute_script("return window.posencLive.timings")}


# Each cell shown on the page: its stored printed output, what the run printed, figures.
_OUTPUTS_JS = """
const upto = arguments[0];
return Array.from(document.querySelectorAll("div.cell[class*='posenc-cell-']")).map((el) => {
  const index = Number(/posenc-cell-(\\d+)/.exec(el.className)[1]);
  const stored = el.querySelector(':scope > .cell_output, :scope > details > .cell_output');  // hide-output: folded
  const live = el.querySelector(':scope > .posenc-live-output');
  const text = (root, sel) => root ? Array.from(root.querySelectorAll(sel)).map((p) => p.textContent).join('') : '';
  return {index: index, upto: index <= upto, ran: !!live,
          stored: stored ? Array.from(stored.querySelectorAll('.output.stream pre, .output.text_plain pre'))
                                .map((p) => p.textContent) : [],
          printed: text(live, '.posenc-live-stdout'), error: text(live, '.posenc-live-error'),
          kept: !!(live && live.querySelector('.posenc-live-note')) && !!stored && !stored.hidden,
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
    return problems


_EDIT_JS = """
const [index, extra, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const el = document.querySelector('div.cell.posenc-cell-' + index);
const pre = el.querySelector('.cell_input pre');
if (!pre.isContentEditable) { done({error: 'the code is not editable'}); return; }
pre.focus();
pre.textContent = pre.textContent.replace(/\\n$/, '') + extra;
pre.dispatchEvent(new InputEvent('input', {bubbles: true}));
const before = window.posencLive.timings.length;
const status = el.querySelector('.posenc-live-status');
status.textContent = '';
el.querySelector('.posenc-live-run').click();
const poll = setInterval(() => {
  if (/^Ran |error/.test(status.textContent)) {
    clearInterval(poll);
    const live = el.querySelector(':scope > .posenc-live-output .posenc-live-stdout');
    done({printed: live ? live.textContent : '', status: status.textContent,
          timings: window.posencLive.timings.slice(before)});
  }
}, 50);
"""


def edit_problems(result: dict, expected: str) -> list[str]:
    if "error" in result:
        return [result["error"]]
    if expected not in result["printed"]:
        return [f"the edited cell printed {result['printed'][-200:]!r}, not {expected!r} ({result['status']})"]
    return []


def _first_printing_cell(outputs: list[dict]) -> int:
    return next(c["index"] for c in outputs if c["upto"] and "".join(c["stored"]).strip())


def check_live_page(driver, base_url: str, site: pathlib.Path, page: str, edit: bool = False) -> dict:
    """Load ``page``, check its requests before a click, run it, compare outputs; optionally edit."""
    load(driver, base_url + f"{page}.html")
    before = live_requests(page_requests(driver, base_url, site))
    started = time.perf_counter()
    run = run_page(driver, None if FULL else STOP_BEFORE.get(page))
    report = {"before": before, "run": run, "seconds": time.perf_counter() - started, "problems": []}
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
    if edit:
        result = driver.execute_async_script(_EDIT_JS, _first_printing_cell(outputs), EDIT)
        report["edit"] = result
        report["edit_problems"] = edit_problems(result, "edited in the browser: 42")
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


@pytest.mark.parametrize("page", _chapters())
def test_chapter_runs_in_the_browser(live_browser, live_url, page):
    report = check_live_page(live_browser, live_url, SITE, page, edit=page == _chapters()[0])
    assert not report["before"], f"{page} requested before any click: {report['before']}"
    assert report["run"].get("status", "").startswith("Ran "), report["run"]
    assert not report["problems"], "\n".join(report["problems"])
    assert report["cells"] > 0
    if "edit" in report:
        assert not report["edit_problems"], report["edit_problems"]
    print(f"{page}: {report['cells']} cells shown ran in {report['seconds']:.1f} s, "
          f"{report['fetched'] / 1e6:.1f} MB fetched by the worker", end=" ")


def test_run_from_disk_says_how_to_serve(live_browser):
    page = _chapters()[0]
    load(live_browser, (SITE / f"{page}.html").as_uri())
    run = run_page(live_browser, timeout=30)
    assert "make serve" in run.get("status", ""), run
    assert not live_browser.execute_script("return window.posencLive.timings.length"), "Python ran from file://"


def test_breakages_are_caught(live_browser, tmp_path):
    """A request before the click, a stored output changed, an edit ignored: each check fails."""
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
    html.write_text(text, encoding="utf-8")
    # 3. the Run control ignores the reader's edit and runs the stored source
    script = copy / "_static" / "posenc-live.js"
    js = script.read_text(encoding="utf-8")
    assert "return pre.innerText;" in js
    script.write_text(js.replace("return pre.innerText;", "return cell.source;"), encoding="utf-8")
    with serve(copy, _CachingHandler) as url:
        report = check_live_page(live_browser, url, copy, page, edit=True)
    assert report["before"] == ["_pyodide/pyodide-lock.json"], report["before"]
    assert len(report["problems"]) == 1 and "tampered" in report["problems"][0], report["problems"]
    assert report["edit_problems"] and "not 'edited in the browser: 42'" in report["edit_problems"][0]
