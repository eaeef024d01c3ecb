/* posenc's interactive figures (posenc.interactive): each figure's native control switches
 * the states its page stores (_ext/posenc_plotly.py puts this script, deferred, in the <head>
 * of each page that holds such a figure, after plotly-lazy.js).
 *
 * A figure is a <div data-posenc-figure="NAME" data-posenc-shown="S"> holding its plot
 * (#NAME-plot), its control (#NAME-control: <input type="range"> or <select>), its status
 * line (#NAME-status) and its data (#NAME-json: the traces and layout to draw, and per state
 * the Plotly.restyle arguments, the status text and the label); S is the state shown first.
 * The figure is drawn with Plotly.newPlot (plotly-lazy.js's stand-in loads plotly.js when the
 * figure nears the viewport); moving the control calls Plotly.restyle with the chosen state's
 * precomputed arguments and sets the status line and the slider's aria-valuetext: no number
 * is computed here. Without plotly.js the plot says so in plain text and the control is
 * disabled.
 */
(function () {
  "use strict";

  function setUp(box) {
    var name = box.getAttribute("data-posenc-figure");
    var el = document.getElementById(name + "-plot");
    var control = document.getElementById(name + "-control");
    var status = document.getElementById(name + "-status");
    var json = document.getElementById(name + "-json");
    if (!el || !control || !status || !json) { return; }
    var fig = JSON.parse(json.textContent);
    var shown = Number(box.getAttribute("data-posenc-shown"));

    function show() {
      var s = Number(control.value);
      if (s === shown || !(s >= 0 && s < fig.states.length)) { return; }
      shown = s;
      window.Plotly.restyle(el, fig.states[s]);
      status.textContent = fig.status[s];
      if (control.type === "range") { control.setAttribute("aria-valuetext", fig.labels[s]); }
    }

    function draw() {
      window.Plotly.newPlot(el, fig.data, fig.layout,
        {responsive: true, displayModeBar: false, scrollZoom: false}).then(show);
      control.addEventListener("input", show);
      control.addEventListener("change", show);
    }

    if (window.Plotly) { draw(); return; }
    window.addEventListener("load", function () {
      if (window.Plotly) { draw(); return; }
      el.textContent = "This interactive figure needs plotly.js, which the built book ships.";
      control.disabled = true;
    });
  }

  document.querySelectorAll("[data-posenc-figure]").forEach(setUp);
})();
