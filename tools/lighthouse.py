"""Lighthouse's mobile performance and accessibility scores of the built site, per page (issue 20).

Not a test (a score depends on the machine and its load): a measurement for the notes. The
site in ``_build/html`` (``make book``) is served on 127.0.0.1 by Python's ``http.server``,
either plainly (``--server plain``: every byte as stored) or with gzip (``--server gzip``:
HTML, CSS, JavaScript, SVG and JSON compressed on the fly, as GitHub Pages serves them), and
each page is measured ``--runs`` times (default 3) with Lighthouse's default mobile preset
(simulated throttling: 4x CPU slowdown, 150 ms round trip, 1.6 Mbit/s) in the local headless
Chromium. The median run's scores and metrics are printed per page, with the load average
at the start and the end (the simulated CPU time scales with what the machine observes, so
a loaded machine gives a worse Total Blocking Time). Every report is kept as JSON in
``--out``.

Lighthouse itself comes from npm (not a dependency of the book): ``--lighthouse`` names its
executable, default ``lighthouse`` on the PATH (``npm install lighthouse@13.5.0`` puts it in
``node_modules/.bin``); Chromium is ``$CHROME_PATH`` (default ``/usr/bin/chromium``).

Usage: ``python tools/lighthouse.py [--server gzip] [--runs 3] [--out DIR] [page.html ...]``
(default pages: every chapter).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import pathlib
import statistics
import subprocess
import threading

ROOT = pathlib.Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
CHROME_FLAGS = (
    "--headless=new --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)
#: What GitHub Pages compresses (its text types); images and fonts go as stored.
COMPRESSED = (".html", ".css", ".js", ".svg", ".json", ".txt", ".map")
METRICS = {
    "FCP": "first-contentful-paint",
    "LCP": "largest-contentful-paint",
    "TBT": "total-blocking-time",
    "SI": "speed-index",
    "CLS": "cumulative-layout-shift",
}


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """``http.server``'s handler, with the text types gzip-compressed when the client accepts it."""

    def send_head(self):
        path = pathlib.Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix not in COMPRESSED or not path.is_file() or "gzip" not in self.headers.get("Accept-Encoding", ""):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


class PlainHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site: pathlib.Path, compressed: bool) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(GzipHandler if compressed else PlainHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_once(lighthouse: str, url: str, out: pathlib.Path) -> dict:
    env = dict(os.environ, CHROME_PATH=os.environ.get("CHROME_PATH", "/usr/bin/chromium"))
    subprocess.run(
        [
            lighthouse,
            url,
            "--quiet",
            "--only-categories=performance,accessibility",
            "--output=json",
            f"--output-path={out}",
            f"--chrome-flags={CHROME_FLAGS}",
        ],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return json.loads(out.read_text(encoding="utf-8"))


def summary(report: dict) -> dict:
    audits = report["audits"]
    row = {
        "perf": report["categories"]["performance"]["score"],
        "a11y": report["categories"]["accessibility"]["score"],
    }
    for name, audit in METRICS.items():
        row[name] = audits[audit]["numericValue"]
    row["MB"] = audits["total-byte-weight"]["numericValue"] / 1e6
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", help="pages under the site (default: every chapter)")
    parser.add_argument("--site", type=pathlib.Path, default=SITE)
    parser.add_argument("--server", choices=("plain", "gzip"), default="plain")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("/tmp/lighthouse"))
    parser.add_argument("--label", default="run")
    parser.add_argument("--lighthouse", default="lighthouse")
    args = parser.parse_args(argv)
    pages = args.pages or sorted(str(p.relative_to(args.site)) for p in (args.site / "chapters").glob("*.html"))
    args.out.mkdir(parents=True, exist_ok=True)
    server = serve(args.site, args.server == "gzip")
    port = server.server_address[1]
    print(f"server: python http.server, {args.server}; load average at start {os.getloadavg()}")
    print(
        f"{'page':28} {'perf':>5} {'a11y':>5} {'FCP s':>6} {'LCP s':>6} {'TBT ms':>7} {'SI s':>6} {'CLS':>6} {'MB':>5}  perf runs"
    )
    try:
        for page in pages:
            rows = []
            for run in range(args.runs):
                name = f"{args.label}-{args.server}-{pathlib.Path(page).stem}-{run}.json"
                rows.append(summary(run_once(args.lighthouse, f"http://127.0.0.1:{port}/{page}", args.out / name)))
            median = rows[sorted(range(len(rows)), key=lambda i: rows[i]["perf"])[len(rows) // 2]]
            print(
                f"{pathlib.Path(page).stem:28} {median['perf']:5.2f} {statistics.median(r['a11y'] for r in rows):5.2f}"
                f" {median['FCP'] / 1000:6.2f} {median['LCP'] / 1000:6.2f} {median['TBT']:7.0f}"
                f" {median['SI'] / 1000:6.2f} {median['CLS']:6.3f} {median['MB']:5.2f}"
                f"  {' '.join(format(r['perf'], '.2f') for r in rows)}",
                flush=True,
            )
    finally:
        server.shutdown()
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
