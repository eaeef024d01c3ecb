// The Python of a chapter page (_ext/posenc_live.py): Pyodide from this site, one namespace,
// cells run one at a time. Messages: {type: "init", indexURL}, {type: "reset"},
// {type: "run", code}; each answered with the same id.
"use strict";

// Runs a cell as a notebook does: the statements, then the value of a last bare expression
// (pretty-printed as IPython's text output is: 79 columns, dicts in their own order); stdout
// and stderr captured; a traceback without this runner's frame; every open Matplotlib figure
// saved as a PNG, then closed.
const RUNNER = `
import ast, base64, contextlib, io, os, pprint, sys, traceback
os.environ["MPLBACKEND"] = "Agg"
import matplotlib
matplotlib.use("Agg")
with contextlib.redirect_stderr(io.StringIO()):
    import matplotlib.pyplot as plt  # builds the font cache here, not in the reader's first cell
plt.show = lambda *args, **kwargs: None

_namespace = {"__name__": "__main__"}

def _reset():
    plt.close("all")
    _namespace.clear()
    _namespace["__name__"] = "__main__"

def _run(code):
    out, err = io.StringIO(), io.StringIO()
    result = {"stdout": "", "stderr": "", "error": "", "images": [], "keep": False}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            tree = ast.parse(code, "<cell>")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, "<cell>", "exec"), _namespace)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), _namespace)
                if type(value).__name__ == "InteractiveFigure":
                    result["keep"] = True
                elif isinstance(value, matplotlib.figure.Figure):
                    if value.number not in plt.get_fignums():
                        plt.figure(value)
                elif value is not None:
                    print(pprint.pformat(value, width=79, sort_dicts=False))
    except BaseException:
        kind, error, tb = sys.exc_info()
        result["error"] = "".join(traceback.format_exception(kind, error, tb.tb_next))
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png", bbox_inches="tight")
        result["images"].append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    plt.close("all")
    result["stdout"], result["stderr"] = out.getvalue(), err.getvalue()
    return result
`;

let pyodide = null;
let ready = null;

async function init(indexURL) {
  importScripts(`${indexURL}pyodide.js`);
  pyodide = await loadPyodide({ indexURL });
  await pyodide.loadPackage(["numpy", "matplotlib", "posenc"], { messageCallback: () => {} });
  pyodide.runPython(RUNNER);
}

self.onmessage = async (event) => {
  const { id, type } = event.data;
  try {
    if (type === "init") {
      ready = ready || init(event.data.indexURL);
      await ready;
      // what the worker fetched (its own timeline: the page's does not see it)
      const fetched = performance.getEntriesByType("resource").map((e) => [e.name, e.decodedBodySize]);
      self.postMessage({ id, fetched });
    } else if (type === "reset") {
      await ready;
      pyodide.globals.get("_reset")();
      self.postMessage({ id });
    } else if (type === "run") {
      await ready;
      const started = performance.now();
      try {
        await pyodide.loadPackagesFromImports(event.data.code, { messageCallback: () => {} });
      } catch (error) {
        // code that does not parse: the run below reports the SyntaxError as a traceback
      }
      const proxy = pyodide.globals.get("_run")(event.data.code);
      const result = proxy.toJs({ dict_converter: Object.fromEntries });
      proxy.destroy();
      self.postMessage({ id, ...result, seconds: (performance.now() - started) / 1000 });
    }
  } catch (error) {
    self.postMessage({ id, error: String(error && error.stack || error) });
  }
};
