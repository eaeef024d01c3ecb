"""Timings and bytes of the chapters' Run controls (``_ext/posenc_live.py``) in headless Chromium.

Serves the built site (``_build/html`` or ``$POSENC_SITE``) on 127.0.0.1 and, for each page
asked (chapter 1 by default), in a fresh browser profile (an empty HTTP cache: cold):

- the time from the click on the first code cell's Run control to its output (Pyodide's
  download and start, NumPy, Matplotlib and posenc loaded, the cell run);
- the bytes the page requested before the click and what the click added;
- the time to re-run that cell after editing it (the worker warm), best of 5;
- with ``--all``, the time to run every cell of the page (the last cell's Run).

Absolute times on a shared machine: run it a few times and read the range. Usage::

    make bench-live [ARGS="--all chapters/01_why_order_matters ..."]

(the browser harness, ``tests/browser/harness.py``, is imported by name: the target puts
``tests/`` and ``_ext/`` on the path).
"""

from __future__ import annotations

import argparse
import sys

from browser.harness import SITE, _need_browser, load, make_driver, page_requests, serve

_FIRST_JS = """
const done = arguments[arguments.length - 1];
const bar = document.querySelector('.posenc-live-bar');
const cell = bar.parentElement;
const clicked = performance.now();
bar.querySelector('.posenc-live-run').click();
const poll = setInterval(() => {
  if (cell.querySelector(':scope > .posenc-live-output')) {
    clearInterval(poll);
    done({seconds: (performance.now() - clicked) / 1000, index: /posenc-cell-(\\d+)/.exec(cell.className)[1]});
  }
}, 10);
"""

_RERUN_JS = """
const [index, n, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const cell = document.querySelector('div.cell.posenc-cell-' + index);
const pre = cell.querySelector('.cell_input pre');
pre.textContent = pre.textContent.replace(/\\n$/, '') + '\\nprint("edit", ' + n + ')';
const clicked = performance.now();
cell.querySelector('.posenc-live-run').click();
const poll = setInterval(() => {
  const out = cell.querySelector(':scope > .posenc-live-output .posenc-live-stdout');
  if (out && out.textContent.includes('edit ' + n)) {
    clearInterval(poll);
    done((performance.now() - clicked) / 1000);
  }
}, 2);
"""

_ALL_JS = """
const done = arguments[arguments.length - 1];
const bars = document.querySelectorAll('.posenc-live-bar');
const bar = bars[bars.length - 1];
const status = bar.querySelector('.posenc-live-status');
const clicked = performance.now();
bar.querySelector('.posenc-live-run').click();
const poll = setInterval(() => {
  if (/^Ran |error|could not/.test(status.textContent)) {
    clearInterval(poll);
    done({seconds: (performance.now() - clicked) / 1000, status: status.textContent});
  }
}, 50);
"""


def measure(page: str, run_all: bool) -> None:
    chromium, chromedriver = _need_browser()
    with serve(SITE) as url:
        driver = make_driver(chromium, chromedriver)
        driver.set_script_timeout(900)
        try:
            load(driver, url + f"{page}.html")
            before = page_requests(driver, url, SITE)
            first = driver.execute_async_script(_FIRST_JS)
            after = page_requests(driver, url, SITE)
            added = {k: v for k, v in after.items() if k not in before}
            fetched = driver.execute_script("return window.posencLive.fetched || []")
            reruns = [driver.execute_async_script(_RERUN_JS, first["index"], n) for n in range(5)]
            print(f"{page}: first output {first['seconds']:.1f} s after the click (cold); "
                  f"edited cell re-run {min(reruns) * 1000:.0f} ms (best of 5, max {max(reruns) * 1000:.0f} ms)")
            print(f"  before the click {sum(before.values()) / 1e6:.2f} MB in {len(before)} files; the click "
                  f"added {sum(added.values()) / 1e6:.2f} MB in {len(added)} files")
            print(f"  the worker fetched {sum(size for _, size in fetched) / 1e6:.2f} MB in {len(fetched)} files, "
                  f"all from {url}: {all(name.startswith(url) for name, _ in fetched)}")
            if run_all:
                load(driver, url + f"{page}.html")
                result = driver.execute_async_script(_ALL_JS)
                print(f"  every cell, page reloaded (the server forbids caching: Pyodide fetched again): {result['seconds']:.1f} s, "
                      f"{result['status']}")
        finally:
            driver.quit()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", default=["chapters/01_why_order_matters"])
    parser.add_argument("--all", action="store_true", help="also time a run of every cell of the page")
    args = parser.parse_args(argv)
    pyodide = SITE / "_pyodide"
    if not pyodide.is_dir():
        print(f"{SITE} has no _pyodide/: build the book with the Run controls first (make book)")
        return 1
    size = sum(p.stat().st_size for p in pyodide.iterdir())
    extra = sum((SITE / "_static" / n).stat().st_size for n in ("posenc-live.js", "posenc-live-worker.js", "posenc-live.css"))
    lists = sum(p.stat().st_size for p in (SITE / "_live").rglob("*.json"))
    print(f"site: _pyodide/ {size / 1e6:.2f} MB, controls' scripts and style {extra / 1e3:.1f} kB, "
          f"cell lists {lists / 1e3:.1f} kB")
    for page in args.pages:
        measure(page, args.all)
    return 0


if __name__ == "__main__":
    sys.exit(main())
