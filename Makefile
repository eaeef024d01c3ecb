# Positional Encodings, executable: the two commands are `make book` and `make test`.
# Everything runs in .venv, created from requirements.txt (all versions pinned).

PYTHON ?= python3
VENV   := .venv
BIN    := $(abspath $(VENV)/bin)
STAMP  := $(VENV)/.installed
# Kernels and tools resolve to the venv first.
export PATH := $(BIN):$(PATH)

BUILD_FLAGS := --all -W -n --keep-going

.PHONY: all venv book serve test check check-changed unit regression portability strict-build site-test site-test-built site-breakage-test-built site-math-test-built live-test live-test-built notebook-test-built pdf pdf-test dist build baselines mutants format lab lab-setup bench bench-live clean

all: book

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml _ext/assets.json
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements.txt
	# Browser assets from the npm registry, checked against pinned sha512 (_ext/assets.json).
	$(BIN)/python _ext/fetch_assets.py
	# Build matplotlib's font cache once, so no notebook ever prints
	# "Matplotlib is building the font cache" on its first run.
	$(BIN)/python -c "import matplotlib.pyplot"
	touch $(STAMP)

## make book: execute every chapter and build the HTML into _build/html (strict).
# _ext/fetch_pyodide.py first assembles the Python the chapters' Run controls load in the
# browser (downloads cached in ~/.cache/posenc-pyodide); if a piece cannot be obtained it says
# why and the book builds without the controls.
book: $(STAMP)
	$(BIN)/python _ext/fetch_pyodide.py
	$(BIN)/jupyter-book build . $(BUILD_FLAGS)
	@echo "Open _build/html/index.html in a browser."

## make test: two at a time on the two cores. First the strict build, beside the unit tests
## and baseline currency; then, on that build, the browser test of the site (its pages, and
## the tests that break a copy of it; test_site_math: formulas in Chromium and Firefox), the Run
## controls in the browser (test_live), the
## downloaded notebooks (test_local_notebooks), beside the notebook regression (nbval) and
## its re-run under each other BLAS kernel (tests/test_portability.py).
# Two phases, because make, given one list with -j2, starts the goals in list order and
# comes back to one waiting for the build only at the end of the list: the browser test
# then ran last, alone. In the second phase the longest jobs come first, so the two cores
# finish together. The browser test is split in two jobs (SITE_BREAKAGE selects the tests
# that break a copy of the site; together the two run every test once).
SWEEP_KERNELS := Sandybridge Haswell Nehalem
SITE_BREAKAGE := breakage or both_controls
test: $(STAMP)
	$(MAKE) -j2 --output-sync=target strict-build unit
	$(MAKE) -j2 --output-sync=target site-breakage-test-built site-test-built live-test-built regression $(addprefix portability-,$(SWEEP_KERNELS)) notebook-test-built site-math-test-built

# The tests of the site already built in _build/html (make test's second phase; `make
# site-test` runs them all on their own).
site-test-built: $(STAMP)
	$(BIN)/python -m pytest tests/test_site.py -rs -k "not ($(SITE_BREAKAGE))"

site-breakage-test-built: $(STAMP)
	$(BIN)/python -m pytest tests/test_site.py -rs -k "$(SITE_BREAKAGE)"

# The chapters' formulas, previews and page width in Chromium and Firefox ESR (tests/test_site_math.py).
site-math-test-built: $(STAMP)
	$(BIN)/python -m pytest tests/test_site_math.py -rs

# The chapters' Run controls in the browser (tests/test_live.py), under Pyodide: one chapter in
# full and the first cells of every other (make test).
live-test-built: $(STAMP)
	$(BIN)/python -m pytest tests/test_live.py -rs

## make live-test: every cell of every chapter run in the browser, on the site already built
## (about 11 minutes; .ci/run runs it after make test).
live-test: $(STAMP)
	POSENC_LIVE_ALL=1 $(BIN)/python -m pytest tests/test_live.py -rs

notebook-test-built: $(STAMP)
	$(BIN)/python -m pytest tests/test_local_notebooks.py -rs

strict-build: $(STAMP)
	$(BIN)/python _ext/fetch_pyodide.py
	$(BIN)/jupyter-book build . $(BUILD_FLAGS)

## make serve: the built book on http://127.0.0.1:8000/ (PORT=...), which the chapters' Run
## controls need: browsers start no Python in a page opened from disk (file://).
PORT ?= 8000
serve:
	@test -f _build/html/index.html || { echo "no built book in _build/html: run make book first"; exit 1; }
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory _build/html $(PORT)

unit: $(STAMP)
	$(BIN)/python -m pytest tests --ignore=tests/test_site.py --ignore=tests/test_pdf.py --ignore=tests/test_local_notebooks.py --ignore=tests/test_live.py --ignore=tests/test_site_math.py -m "not portability and not build"

## make check CHAPTER=04_rope: the loop while editing. Executes that chapter (or several:
## CHAPTER="03 04") and prints a diff of each output that differs from its baseline.
## make check alone: the unit tests beside the chapters changed since main (every chapter
## when posenc/ changed).
check: $(STAMP)
ifdef CHAPTER
	$(BIN)/python tests/regression.py $(CHAPTER)
else
	$(MAKE) -j2 --output-sync=target unit check-changed
endif

check-changed: $(STAMP)
	$(BIN)/python tests/regression.py --changed-since main

## make portability: the notebook regression under other OpenBLAS kernels and thread counts
## (a kernel the CPU lacks is skipped, with the reason).
portability: $(STAMP)
	$(BIN)/python -m pytest tests/test_portability.py -m portability -rs

portability-%: $(STAMP)
	$(BIN)/python -m pytest tests/test_portability.py -m portability -rs -k "$*" -p no:cacheprovider

## make site-test: the browser test of the built site in _build/html (headless Chromium), and
## the downloaded notebooks it offers (tests/test_local_notebooks.py: no raw MyST; one runs in a
## fresh venv after `pip install posenc[book]` from the wheel and the pins, with no index).
# Without Chromium it is skipped with a message saying how to install it (-rs prints it);
# POSENC_REQUIRE_BROWSER=1 (set by .ci/run) makes that a failure.
site-test: $(STAMP)
	$(BIN)/python -m pytest tests/test_site.py tests/test_site_math.py tests/test_live.py tests/test_local_notebooks.py -rs

## make pdf: the whole book as one PDF, _build/latex/book.pdf, through Jupyter Book's LaTeX
## builder and XeLaTeX (strict, like the HTML), then its checks (tests/test_pdf.py).
# Its own target, not part of `make test`: it re-executes every chapter (see the README for
# the TeX packages it needs). A later `make book` then offers the PDF on the site.
pdf: $(STAMP)
	$(BIN)/jupyter-book build . --builder pdflatex $(BUILD_FLAGS)
	$(MAKE) pdf-test

## make pdf-test: Poppler's checks of the PDF already built (skipped with a message without
## TeX or Poppler; POSENC_REQUIRE_TEX=1, set by .ci/run, makes that a failure).
pdf-test: $(STAMP)
	$(BIN)/python -m pytest tests/test_pdf.py -rs

## make dist: posenc's wheel and sdist in dist/, checked by twine.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/python -m twine check --strict dist/*

## make regression: the outputs of the book built in _build (make book) against the baselines:
## the chapters are not executed again (tests/test_regression.py).
regression: $(STAMP)
	$(BIN)/python -m pytest tests/test_regression.py -m build

## make baselines: re-execute every chapter and store its outputs in tests/baselines/*.ipynb
## (a baseline whose outputs did not change is left as it was).
baselines: $(STAMP)
	$(BIN)/python tests/make_baselines.py

## make mutants: every chapter's mutants (tests/mutants/), then the ledger rewritten.
mutants: $(STAMP)
	cd tests && $(BIN)/python -m mutants run $(notdir $(basename $(wildcard chapters/[0-9][0-9]_*.md)))
	cd tests && $(BIN)/python -m mutants ledger

## make format: write the chapters in the form jupytext writes them back (see tests/format_chapters.py).
format: $(STAMP)
	$(BIN)/python tests/format_chapters.py

## make lab: JupyterLab on chapters/, where a double-click opens a chapter as a notebook.
# lab/jupyter_server_config.py (a chapter opens unmodified: see its docstring) goes into the
# environment's own configuration folder (.venv/etc/jupyter), never into ~/.jupyter.
# Extra flags for `jupyter lab` go in ARGS: make lab ARGS="--no-browser --port 8899".
# The default viewer is set by lab/overrides.json, installed into the environment's own
# settings (.venv/share/jupyter/lab/settings), never into the user's ~/.jupyter.
# The files Jupyter, IPython and Matplotlib keep for a user (settings, workspaces, the notebooks'
# trust database, runtime files, IPython's history, Matplotlib's configuration folder and font
# cache) go into .venv too, never into ~/.jupyter, ~/.local, ~/.ipython or ~/.config.
LAB_DIRS := JUPYTER_CONFIG_DIR=$(abspath $(VENV))/etc/jupyter JUPYTER_DATA_DIR=$(abspath $(VENV))/share/jupyter IPYTHONDIR=$(abspath $(VENV))/etc/ipython MPLCONFIGDIR=$(abspath $(VENV))/etc/matplotlib

LAB_STAMP     := $(VENV)/.lab-installed
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
LAB_SERVER    := $(VENV)/etc/jupyter/jupyter_server_config.py

$(LAB_STAMP): $(STAMP) requirements-lab.txt
	$(BIN)/python -m pip install --disable-pip-version-check -r requirements-lab.txt
	# Matplotlib's font cache in the lab's own folder (LAB_DIRS), built once before a chapter runs.
	$(LAB_DIRS) $(BIN)/python -c "import matplotlib.pyplot"
	touch $(LAB_STAMP)

$(LAB_OVERRIDES): lab/overrides.json
	mkdir -p $(dir $(LAB_OVERRIDES))
	cp lab/overrides.json $(LAB_OVERRIDES)

$(LAB_SERVER): lab/jupyter_server_config.py
	mkdir -p $(dir $(LAB_SERVER))
	cp lab/jupyter_server_config.py $(LAB_SERVER)

lab-setup: $(LAB_STAMP) $(LAB_OVERRIDES) $(LAB_SERVER)

lab: lab-setup
	$(LAB_DIRS) $(BIN)/jupyter lab chapters/ $(if $(filter 0,$(shell id -u)),--allow-root,) $(ARGS)

## make bench: throughput and memory figures, printed as ratios measured in one run.
bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

## make bench-live: the Run buttons in Chromium, on the site already built (benchmarks/live_cells.py):
## first output after a click, an edited cell's re-run, bytes. ARGS="--all chapters/04_rope" for more.
# It imports the browser tests' harness by name: tests/ and _ext/ on the path, as pytest's
# `pythonpath` (pyproject.toml) puts them.
bench-live: $(STAMP)
	PYTHONPATH=tests:_ext $(BIN)/python benchmarks/live_cells.py $(ARGS)

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -not -path "./$(VENV)/*" -exec rm -rf {} +
