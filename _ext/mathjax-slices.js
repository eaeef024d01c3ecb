/* MathJax's first typesetting of a page, in short slices (_ext/posenc_mathjax.py puts this
 * script, deferred, just before MathJax's loader on each page that has a formula).
 *
 * By default MathJax typesets all of a page's formulas in one task once its components have
 * loaded: on a chapter, hundreds of formulas and a task of a second or more on a phone, during
 * which the page answers no tap, key or scroll (Lighthouse's "Total Blocking Time"). Here
 * MathJax's documented hook for that first typesetting, startup.pageReady, typesets the
 * page's formulas (Sphinx's .math elements) a few at a time, in document order, and gives the
 * main thread back to the browser each time a slice has run for SLICE_MS. It ends with one
 * pass over the whole page, as MathJax's own pageReady does (nothing is left for it unless a
 * formula sits outside a .math element), less any reference preview shown in the meantime
 * (sphinx-tippy typesets those itself), so MathJax.startup.promise still resolves once
 * every formula is typeset, and what the reader sees at the end is what MathJax would have
 * drawn in one go.
 */
(function () {
  "use strict";
  var SLICE_MS = 10;  // a task of at most about 50 ms on a phone 4 to 5 times slower
  var config = window.MathJax = window.MathJax || {};
  var startup = config.startup = config.startup || {};
  function pause() {
    return new Promise(function (resolve) { setTimeout(resolve, 0); });
  }
  // The page without the reference previews shown meanwhile (tippy's popups, children of
  // <body>): sphinx-tippy typesets each preview itself when it is shown.
  function page() {
    return Array.prototype.filter.call(document.body.children, function (el) {
      return !el.hasAttribute("data-tippy-root");
    });
  }
  startup.pageReady = function () {
    var formulas = Array.prototype.filter.call(document.querySelectorAll(".math"), function (el) {
      return !el.closest("[data-tippy-root]");
    });
    var batch = 1;  // formulas per call: doubled while a call takes under half a slice
    var sliceStart = performance.now();
    var next = function (i) {
      if (i >= formulas.length) { return window.MathJax.typesetPromise(page()); }
      var callStart = performance.now();
      var done = i + batch;
      return window.MathJax.typesetPromise(formulas.slice(i, done)).then(function () {
        var now = performance.now();
        if (now - callStart < SLICE_MS / 2) { batch = Math.min(2 * batch, 64); }
        else if (now - callStart > SLICE_MS && batch > 1) { batch = Math.floor(batch / 2); }
        if (now - sliceStart < SLICE_MS) { return next(done); }
        return pause().then(function () { sliceStart = performance.now(); return next(done); });
      });
    };
    return next(0);
  };
})();
