// Reference previews (sphinx-tippy, see _config.yml), made to meet WCAG 1.4.13 (content on
// hover or focus). sphinx-tippy's options cannot set these, so they are tippy's defaults here:
// - the previews are interactive (the pointer can move onto one without it disappearing), and
//   are attached to the page's body, not to the link's paragraph, where a box that clips its
//   overflow (an admonition) would cut them;
// - a shown preview is the link's description (aria-describedby), which tippy gives only a
//   preview that is not interactive;
// - a preview stays within the window, across as well as along its side of the link (a wide
//   one beside a link on a phone went off the window's edge);
// - a formula wider than the preview is shown whole, set smaller to the preview's width: a
//   preview is a glance, shown while the pointer or the focus is on the link, and its box is
//   attached at the end of the page, out of the keyboard's reach, so it cannot be scrolled;
// - Escape hides a shown preview without moving the pointer or the focus.
// Deferred scripts (tippy) have run by DOMContentLoaded; sphinx-tippy makes the previews at load.
// (Scaled by its font size, which MathML lays out in both browsers; Firefox did not shrink a
// <math> element's box by CSS zoom. Further passes take what did not scale in proportion.)
const fitFormulas = (instance) => {
  instance.popper.querySelectorAll("span.math, div.math > .formula").forEach((box) => {
    const math = box.querySelector("math");
    if (!math) return;
    math.style.fontSize = "";
    for (let pass = 0; pass < 4 && box.scrollWidth > box.clientWidth + 1; pass++) {
      const size = parseFloat(getComputedStyle(math).fontSize);
      math.style.fontSize = `${0.97 * size * box.clientWidth / box.scrollWidth}px`;
    }
  });
};
document.addEventListener("DOMContentLoaded", () => {
  if (window.tippy) {
    window.tippy.setDefaultProps({
      appendTo: () => document.body,
      aria: { content: "describedby", expanded: "auto" },
      popperOptions: { modifiers: [{ name: "preventOverflow", options: { altAxis: true, padding: 4 } }] },
      onMount: fitFormulas,
    });
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && window.tippy) window.tippy.hideAll({ duration: 0 });
});
