// TeX to MathML for _ext/posenc_mathml.py, run in Node.js while the book is built.
// argv[2]: Temml's CommonJS build. One JSON request per line on stdin, {"tex": ..., "display": bool};
// one JSON reply per line on stdout, {"mathml": ...} or {"error": ...}.
"use strict";
const temml = require(process.argv[2]);
const readline = require("readline");

readline.createInterface({input: process.stdin, terminal: false}).on("line", (line) => {
  let reply;
  try {
    const {tex, display} = JSON.parse(line);
    // wrap "none": Temml's groups for line breaking ("tex") leave each group's last operator
    // unspaced in Chromium (a postfix form), so a formula is one row, as MathJax set it.
    reply = {mathml: temml.renderToString(tex, {displayMode: display, wrap: "none", throwOnError: true})};
  } catch (e) {
    reply = {error: String((e && e.message) || e)};
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
