/* plotly.js on demand (_ext/posenc_plotly.py puts this small script, deferred, in the
 * <head> of each page that holds an interactive figure, instead of plotly.js itself, before
 * the figures' own script, posenc-interactive.js).
 *
 * Until plotly.js has loaded, window.Plotly is this stand-in. posenc-interactive.js calls
 * Plotly.newPlot(el, ...) as usual; the stand-in waits until the figure's <div> comes within
 * half a screen of the viewport (an IntersectionObserver), then loads plotly-basic.min.js
 * from beside this file (once for the page: the bundle then replaces window.Plotly) and
 * draws. Plotly.restyle on a figure not yet drawn waits for that figure to be drawn. So a
 * reader who never scrolls to a figure never downloads plotly.js (1.2 MB), and the page's
 * first load stays light. Until then the figure's <div> keeps its height, its role="img"
 * and its aria-label (the alt text), and its native control works: the state it chooses is
 * drawn when the figure is. A failed load rejects the figure's promise (a console error).
 */
(function () {
  "use strict";
  if (window.Plotly) { return; }
  var bundleUrl = document.currentScript.src.replace(/[^/]*$/, "plotly-basic.min.js");
  var bundle = null;
  var drawing = new WeakMap();

  function loadBundle() {
    if (!bundle) {
      bundle = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = bundleUrl;
        script.onload = function () { resolve(window.Plotly); };
        script.onerror = function () { reject(new Error("plotly.js did not load from " + bundleUrl)); };
        document.head.appendChild(script);
      });
    }
    return bundle;
  }

  function near(el) {
    return new Promise(function (resolve) {
      if (!("IntersectionObserver" in window)) { resolve(); return; }
      var observer = new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) {
          observer.disconnect();
          resolve();
        }
      }, { rootMargin: "50% 0px" });
      observer.observe(el);
    });
  }

  window.Plotly = {
    newPlot: function (el, data, layout, config) {
      var drawn = near(el).then(loadBundle).then(function (plotly) {
        return plotly.newPlot(el, data, layout, config);
      });
      drawing.set(el, drawn);
      return drawn;
    },
    restyle: function (el, update) {
      return (drawing.get(el) || loadBundle()).then(function () {
        return window.Plotly.restyle(el, update);
      });
    }
  };
})();
