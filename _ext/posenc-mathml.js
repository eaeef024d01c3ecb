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
    // wrap "tex": an inline formula may break across lines where TeX would break it (after a
    // top-level relation or binary operator), so a long one does not overflow a phone's screen.
    reply = {mathml: temml.renderToString(tex, {displayMode: display, wrap: "tex", throwOnError: true})};
  } catch (e) {
    reply = {error: String((e && e.message) || e)};
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
