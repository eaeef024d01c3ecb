// TeX to MathML and its spoken text, for _ext/posenc_mathml.py, run in Node.js while the book is built.
// argv[2]: Temml's CommonJS build; argv[3]: speech-rule-engine's folder (its dependencies are
// found on NODE_PATH). One JSON request per line on stdin, {"tex": ..., "display": bool}; one
// JSON reply per line on stdout, {"mathml": ..., "speech": ...} or {"error": ...}.
"use strict";
const path = require("path");
const readline = require("readline");
const temml = require(process.argv[2]);
const sre = require(process.argv[3]);

sre.setupEngine({locale: "en", domain: "clearspeak", modality: "speech",
                 json: path.join(process.argv[3], "lib", "mathmaps")})
  .then(() => sre.engineReady())
  .then(() => {
    readline.createInterface({input: process.stdin, terminal: false}).on("line", (line) => {
      let reply;
      try {
        const {tex, display} = JSON.parse(line);
        // wrap "none": Temml's groups for line breaking ("tex") leave each group's last operator
        // unspaced in Chromium (a postfix form), and only Firefox breaks lines at them.
        const mathml = temml.renderToString(tex, {displayMode: display, wrap: "none", throwOnError: true});
        const speech = sre.toSpeech(mathml.replace("<math", '<math xmlns="http://www.w3.org/1998/Math/MathML"'));
        reply = {mathml, speech};
      } catch (e) {
        reply = {error: String((e && e.message) || e)};
      }
      process.stdout.write(JSON.stringify(reply) + "\n");
    });
  });
