// Reference previews (sphinx-tippy, see _config.yml), made to meet WCAG 1.4.13 (content on
// hover or focus). sphinx-tippy's options cannot set these, so they are tippy's defaults here:
// - the previews are interactive (the pointer can move onto one without it disappearing), and
//   are attached to the page's body, not to the link's paragraph, where a box that clips its
//   overflow (an admonition) would cut them;
// - a shown preview is the link's description (aria-describedby), which tippy gives only a
//   preview that is not interactive;
// - Escape hides a shown preview without moving the pointer or the focus.
// Deferred scripts (tippy) have run by DOMContentLoaded; sphinx-tippy makes the previews at load.
document.addEventListener("DOMContentLoaded", () => {
  if (window.tippy) {
    window.tippy.setDefaultProps({ appendTo: () => document.body, aria: { content: "describedby", expanded: "auto" } });
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && window.tippy) window.tippy.hideAll({ duration: 0 });
});
