/* Keyboard access to code blocks and outputs shown after the page loaded (axe-core's
   scrollable-region-focusable, WCAG 2.1.1 Keyboard). pydata-sphinx-theme 0.15.4 makes a code
   block or cell output that scrolls sideways focusable (tabindex 0, else -1), but only on load,
   on resize and when nodes are added; it is not told when hidden content is shown. A solution
   that sphinx-togglebutton folds is measured while folded (its blocks then have no margins and
   fit), so once unfolded an output line that overflows keeps tabindex -1 and cannot be scrolled
   from the keyboard. This applies the theme's own rule again to whatever a reader unfolds (a
   solution, a folded code cell's <details>). No CSS can set a tab stop, hence the script.
   The same rule covers formulas, displayed and inline (custom.css lets one wider than the
   line scroll sideways in its own box rather than be cut), and tables (on a phone a wide
   one scrolls in its own box, custom.css), which the theme's selector does not name:
   applied once the page has loaded (its fonts with it) and again on resize. */
(() => {
  // The theme's selector and rule (addTabStopsToScrollableElements in pydata-sphinx-theme.js).
  const SCROLLABLE = "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon";
  const update = (root) => root.querySelectorAll(SCROLLABLE).forEach((el) => {
    el.tabIndex = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight ? 0 : -1;
  });
  const FORMULAS = "div.math > .formula, span.math, .bd-article table";
  const updateFormulas = () => document.querySelectorAll(FORMULAS).forEach((el) => {
    if (el.scrollWidth > el.clientWidth) el.tabIndex = 0;
    else el.removeAttribute("tabindex");
  });
  window.addEventListener("load", updateFormulas);
  window.addEventListener("resize", updateFormulas);
  const unfolded = (el) => el.matches("details[open], .toggle:not(.toggle-hidden)");
  document.addEventListener("DOMContentLoaded", () => {
    const main = document.getElementById("main-content");
    if (!main) return;
    new MutationObserver((records) => {
      records.forEach((r) => {
        if (unfolded(r.target)) { update(r.target); updateFormulas(); }
      });
    }).observe(main, {subtree: true, attributes: true, attributeFilter: ["open", "class"]});
  });
})();
/* A skip link to each interactive figure's control: behind the chapters' text, figures and
   code cells, a figure's slider or menu was 94 to 209 presses of Tab from the top of its page.
   The links follow the theme's "Skip to main content" in its skip bar (the page's first tab
   stops, shown while one has the focus); each takes the focus to the control. */
document.addEventListener("DOMContentLoaded", () => {
  const bar = document.getElementById("pst-skip-link");
  if (!bar) return;
  document.querySelectorAll(".posenc-controls input[id], .posenc-controls select[id]").forEach((control) => {
    const number = control.closest("figure")?.querySelector(".caption-number");
    const link = document.createElement("a");
    link.href = `#${control.id}`;
    link.className = "posenc-skip-figure";
    link.textContent = `Skip to the control of ${number ? number.textContent.trim() : "an interactive figure"}`;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      control.scrollIntoView({block: "center"});
      control.focus();
    });
    bar.append(link);
  });
});
