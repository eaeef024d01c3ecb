// Run and edit this chapter's code cells in the browser: Pyodide in a Web Worker, loaded from
// this site on the first click (see _ext/posenc_live.py). Nothing is fetched before a click.
(() => {
  "use strict";
  const STATIC = new URL(".", document.currentScript.src);
  const ROOT = new URL("..", STATIC);
  const PYODIDE = new URL("_pyodide/", ROOT).href;
  const PAGE = decodeURIComponent(location.pathname).slice(decodeURIComponent(ROOT.pathname).length)
    .replace(/\.html$/, "");
  const CELLS = new URL(`_live/${PAGE}.json`, ROOT).href;

  let worker = null, starting = null, cells = null, nextId = 0;
  const pending = new Map();
  const ran = new Set();          // cell indices run in the current namespace
  let queue = Promise.resolve();  // one run at a time, in the order asked
  const bars = [];                // every cell's bar, to disable buttons while running
  window.posencLive = { timings: [], ran };
  const STOPPED = { stopped: true };

  function cellElement(index) {
    return document.querySelector(`div.cell.posenc-cell-${index}`);
  }

  function codeOf(el) {
    return el ? el.querySelector(":scope > .cell_input pre, :scope > details .cell_input pre") : null;
  }

  function say(bar, text) {
    bar.status.textContent = text;
  }

  function ask(message) {
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ ...message, id });
    });
  }

  function start(bar) {
    if (starting) return starting;
    say(bar, "Starting Python in your browser (about 27 MB the first time)…");
    starting = (async () => {
      const response = await fetch(CELLS);
      if (!response.ok) throw new Error(`cannot load ${CELLS}: ${response.status}`);
      cells = (await response.json()).cells;
      worker = new Worker(new URL("posenc-live-worker.js", STATIC).href);
      worker.onmessage = (event) => {
        const resolve = pending.get(event.data.id);
        if (resolve) { pending.delete(event.data.id); resolve(event.data); }
      };
      worker.onerror = (event) => {
        for (const resolve of pending.values()) resolve({ error: `The Python worker failed: ${event.message}` });
        pending.clear();
      };
      const ready = await ask({ type: "init", indexURL: PYODIDE });
      if (ready === STOPPED) return;
      if (ready.error) throw new Error(ready.error);
      window.posencLive.fetched = ready.fetched;
      makeEditable();
    })();
    starting.catch(stop);  // a later click tries again, in a new worker
    return starting;
  }

  // Ends the worker, and with it Python and every variable the page's cells made: a cell that
  // does not return (chapter 6 retrains a model for minutes) is stopped only so. What waits
  // for an answer gets STOPPED; the next Run starts a new worker and runs from the top.
  function stop() {
    if (worker) worker.terminate();
    worker = null;
    starting = null;
    ran.clear();
    for (const resolve of pending.values()) resolve(STOPPED);
    pending.clear();
  }

  function makeEditable() {
    for (const cell of cells) {
      const pre = codeOf(cell.shown ? cellElement(cell.index) : null);
      if (!pre || pre.isContentEditable) continue;
      pre.dataset.stored = pre.textContent;
      pre.contentEditable = "true";
      pre.spellcheck = false;
      pre.setAttribute("role", "textbox");
      pre.setAttribute("aria-multiline", "true");
      pre.setAttribute("aria-label", `Code of code cell ${pre.closest("div.cell").dataset.posencNumber}, ` +
        "editable; Tab indents, Escape then Tab leaves the code");
      pre.classList.add("posenc-live-editable");
      // Keys typed in the code are the code's: the page's one-key shortcuts (Sphinx's "/",
      // which moves to the search box) must not take them. Shortcuts with Ctrl, Alt or Meta,
      // and Escape, still reach the page. Tab indents by four spaces, as in a notebook; after
      // Escape, Tab (or Shift+Tab) leaves the code, so the keyboard is never trapped in it.
      let leaving = false;
      pre.addEventListener("keydown", (event) => {
        if (event.key === "Tab" && !leaving && !(event.ctrlKey || event.altKey || event.metaKey || event.shiftKey)) {
          event.preventDefault();
          document.execCommand("insertText", false, "    ");
        }
        leaving = event.key === "Escape";
        if (!(event.ctrlKey || event.altKey || event.metaKey || event.key === "Escape")) event.stopPropagation();
      });
    }
  }

  function sourceOf(cell) {
    const pre = codeOf(cell.shown ? cellElement(cell.index) : null);
    if (pre && pre.dataset.stored !== undefined && pre.textContent !== pre.dataset.stored) {
      return pre.innerText;
    }
    return cell.source;
  }

  // What a run hides: the cell's stored output or, for a cell tagged hide-output (MyST-NB folds
  // its output in a <details>), the whole fold, so that no empty toggle is left. Its folded or
  // unfolded state is untouched, so "Show stored output" gives it back as it was.
  function storedOf(el) {
    const output = el.querySelector(":scope > .cell_output, :scope > details > .cell_output");
    return output && output.parentElement !== el ? output.parentElement : output;
  }

  function restore(el) {
    const live = el.querySelector(":scope > .posenc-live-output");
    if (live) live.remove();
    const stored = storedOf(el);
    if (stored) stored.hidden = false;
    const back = el.querySelector(":scope > .posenc-live-bar .posenc-live-restore");
    if (back) back.hidden = true;
  }

  function show(el, result) {
    restore(el);
    const stored = storedOf(el);
    const live = document.createElement("div");
    live.className = "posenc-live-output";
    const add = (cls, text) => {
      if (!text) return;
      const pre = document.createElement("pre");
      pre.className = cls;
      pre.textContent = text;
      live.append(pre);
    };
    add("posenc-live-stdout", result.stdout);
    add("posenc-live-stderr", result.stderr);
    add("posenc-live-error", result.error);
    const altOf = stored ? Array.from(stored.querySelectorAll("img")).map((img) => img.alt) : [];
    (result.images || []).forEach((png, k) => {
      const img = document.createElement("img");
      img.src = `data:image/png;base64,${png}`;
      img.alt = `Figure ${k + 1} of this cell, drawn in your browser` +
        (altOf[k] ? `; as stored in the book: ${altOf[k]}` : "");
      img.className = "posenc-live-figure";
      live.append(img);
    });
    if (result.keep) {
      const note = document.createElement("p");
      note.className = "posenc-live-note";
      note.textContent = "The interactive figure below is the book's precomputed one: a run in your " +
        "browser does not redraw it.";
      live.append(note);
    } else if (stored) {
      stored.hidden = true;
    }
    if (!live.childElementCount) {
      const note = document.createElement("p");
      note.className = "posenc-live-note";
      note.textContent = "This run printed nothing.";
      live.append(note);
    }
    if (stored && stored.tagName === "DETAILS" && !result.keep) {
      // A cell tagged hide-output: the run's output is folded as the stored output was, and
      // open or closed as the reader left that fold.
      const fold = document.createElement("details");
      fold.className = "posenc-live-fold";
      fold.open = stored.open;
      const summary = document.createElement("summary");
      summary.textContent = "Output of this run";
      fold.append(summary, ...live.childNodes);
      live.append(fold);
    }
    if (stored) stored.before(live); else el.append(live);
    const back = el.querySelector(":scope > .posenc-live-bar .posenc-live-restore");
    if (back) back.hidden = false;
  }

  // While a run lasts, every Run control is disabled but the Stop control of the bar that
  // started it, which the focus moves to if it was on a control it disables; the bar's timer
  // counts the seconds (role "timer": not read aloud at each tick).
  function busy(bar, on) {
    const focused = bars.some((b) => b.buttons.includes(document.activeElement));
    for (const b of bars) b.buttons.forEach((button) => { button.disabled = on; });
    bar.stop.hidden = !on;
    clearInterval(bar.ticking);
    bar.timer.textContent = "";
    if (on) {
      const since = performance.now();
      bar.ticking = setInterval(() => {
        const seconds = Math.round((performance.now() - since) / 1000);
        bar.timer.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")} elapsed`;
      }, 1000);
      if (focused) bar.stop.focus();
    } else if (document.activeElement === bar.stop || (focused && document.activeElement === document.body)) {
      bar.buttons[0].focus();
    }
  }

  async function run(index, fromTop, bar) {
    if (location.protocol === "file:") {
      say(bar, "Running the code needs the book served over HTTP (browsers start no Python " +
        "from a file opened from disk): in the book's folder run `make serve`, then open " +
        `http://127.0.0.1:8000/${PAGE}.html`);
      return;
    }
    busy(bar, true);
    const clicked = performance.now();
    const seconds = () => ((performance.now() - clicked) / 1000).toFixed(1);
    const stopped = () => say(bar, `Stopped after ${seconds()} s: Python and the page's variables are gone, ` +
      "and the next Run starts again from the top.");
    try {
      await start(bar);
      if (!worker) return stopped();
      if (fromTop) {
        if (await ask({ type: "reset" }) === STOPPED) return stopped();
        ran.clear();
      }
      const upto = cells.findIndex((c) => c.index === index);
      for (let k = 0; k <= upto; k++) {
        const cell = cells[k];
        if (k < upto && ran.has(cell.index)) continue;
        say(bar, k < upto ? `Running cell ${k + 1} of the ${upto + 1} up to this one…` : "Running…");
        const result = await ask({ type: "run", code: sourceOf(cell) });
        if (result === STOPPED) return stopped();
        ran.add(cell.index);
        const el = cell.shown ? cellElement(cell.index) : null;
        if (el) show(el, result);
        window.posencLive.timings.push({ cell: cell.index, seconds: result.seconds,
          sinceClick: (performance.now() - clicked) / 1000 });
        if (result.error) {
          say(bar, k < upto ? `Cell ${k + 1} raised an error; stopped there.` : "The cell raised an error.");
          return;
        }
      }
      say(bar, `Ran in your browser (${seconds()} s).`);
    } catch (error) {
      say(bar, `Python could not start: ${error.message}`);
    } finally {
      busy(bar, false);
    }
  }

  function button(text, label, cls, action) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `posenc-live-button ${cls}`;
    b.textContent = text;
    b.setAttribute("aria-label", label);
    b.addEventListener("click", action);
    return b;
  }

  function setup() {
    const els = Array.from(document.querySelectorAll("div.cell[class*='posenc-cell-']"));
    els.forEach((el, n) => {
      if (!codeOf(el)) return;  // an output-only cell runs with the others, from a cell's controls
      const index = Number(/posenc-cell-(\d+)/.exec(el.className)[1]);
      el.dataset.posencNumber = String(n + 1);
      const bar = document.createElement("div");
      bar.className = "posenc-live-bar";
      bar.status = document.createElement("span");
      bar.status.className = "posenc-live-status";
      bar.status.setAttribute("role", "status");
      const go = (fromTop) => () => { queue = queue.then(() => run(index, fromTop, bar)); };
      const back = button("Show stored output", `Show stored output of code cell ${n + 1}`,
        "posenc-live-restore", () => restore(el));
      back.hidden = true;
      bar.buttons = [
        button("Run", `Run code cell ${n + 1} in your browser`, "posenc-live-run", go(false)),
        button("Run from the top", `Run from the top through code cell ${n + 1}`, "posenc-live-all", go(true)),
        back,
      ];
      bar.stop = button("Stop", "Stop the run (ends Python in this page)", "posenc-live-stop", stop);
      bar.stop.hidden = true;
      bar.timer = document.createElement("span");
      bar.timer.className = "posenc-live-timer";
      bar.timer.setAttribute("role", "timer");
      bar.append(...bar.buttons, bar.stop, bar.status, bar.timer);
      el.prepend(bar);
      bars.push(bar);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
