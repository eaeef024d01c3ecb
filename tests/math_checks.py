"""The formulas of a page as a reader gets them, in Chromium or Firefox (an :class:`browsers.Engine`).

- :func:`layout_problems`: at the page's present width, no formula is cut off (by a box that
  hides what overflows, or beyond what a scrolling box reaches), a formula whole only once a
  box is scrolled sits in a box with a tab stop, no equation number is drawn over its formula
  and each number follows its formula in the document (``probes/formulas.js``); folds are
  opened first, so that the formulas of every solution and folded cell are laid out too.
- :func:`name_problems`: every formula is, in the browser's accessibility tree, a ``math``
  element with a name (what a screen reader says for it); and no name of any element holds a
  Private Use Area character (a Font Awesome icon read as text).
- :func:`structure_problems`: no id is used twice in the page; each statement (a theorem, a
  lemma, ...) is a region named by its title ("Theorem 4.3 (...)"), each proof a named group.
- :func:`preview_problems`: each reference whose preview holds a formula, its preview shown,
  has the formulas whole (as above, and within the window) and is described by the preview
  (``aria-describedby``).
- :func:`keyboard_problems`: each formula in a box that scrolls is reached with the Tab key,
  and the arrow key scrolls it.
"""

from __future__ import annotations

import pathlib
import re

PROBES = pathlib.Path(__file__).with_name("probes")
FORMULAS_JS = (PROBES / "formulas.js").read_text(encoding="utf-8")
#: The Private Use Area, where Font Awesome draws its icons.
PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
#: Formulas checked from the keyboard per page (each one scrolled by the arrow key).
KEYBOARD_SAMPLE = 3

_UNFOLD_JS = """
document.querySelectorAll('.toggle-hidden').forEach((el) => el.classList.remove('toggle-hidden'));
document.querySelectorAll('details').forEach((el) => { el.open = true; });
"""

#: The formulas' drawings: the <math> element of each formula.
DRAWINGS = ".math math"
# The elements whose name a reader meets as the name of a control or of a region, that hold
# an element drawing a Private Use Area character (an icon) in its ::before or ::after.
_ICON_HOLDERS_JS = """
const named = 'a[href], button, [role="button"], [role="region"], [role="group"], summary, input, select';
const icon = (el) => ['::before', '::after'].some((p) => /[\\ue000-\\uf8ff]/.test(getComputedStyle(el, p).content));
const holders = new Set();
document.querySelectorAll('body *').forEach((el) => {
  if (!icon(el)) return;
  const holder = el.closest(named);
  if (holder && holder.getClientRects().length > 0) holders.add(holder);
});
return Array.from(holders);
"""
#: Roles a browser gives a <math> element: MathML's, and Chromium's WebDriver name for it.
MATH_ROLES = ("math", "MathMLMath")

# Of each element a selector matches, in document order: whether it is drawn, and its text.
_DRAWN_JS = """
return Array.from(document.querySelectorAll(arguments[0])).map((el) =>
  [el.getClientRects().length > 0 && getComputedStyle(el).visibility === 'visible',
   Array.from(el.textContent.replace(/\\s+/g, ' ').trim()).slice(0, 60).join('')]);
"""

_DUPLICATE_IDS_JS = """
const seen = {};
document.querySelectorAll('[id]').forEach((el) => { seen[el.id] = (seen[el.id] || 0) + 1; });
return Object.entries(seen).filter(([, n]) => n > 1).map(([id, n]) => id + ' (' + n + ' times)');
"""

# sphinx-proof's statements (div.proof with a title) and proofs (the others): the element a
# screen reader meets, and what its name must start with (the statement's number, "Theorem 4.3").
_STATEMENTS_JS = """
return Array.from(document.querySelectorAll('article div.proof.admonition')).map((el) => {
  const caption = el.querySelector(':scope > .admonition-title');
  const group = el.closest('[role]');
  const number = caption && caption.querySelector('.caption-number');
  return {element: caption ? el : (group || el), proof: !caption,
          title: caption ? (number || caption).textContent.replace(/\\s+/g, ' ').trim() : 'Proof'};
});
"""

# Every reference in the article whose preview holds a formula, one per target.
_PREVIEW_LINKS_JS = """
const seen = new Set();
return Array.from(document.querySelectorAll('article.bd-article a[href]')).filter((a) => {
  const href = a.getAttribute('href');
  if (!a._tippy || seen.has(href) || !/<math|class="math/.test(String(a._tippy.props.content))) return false;
  seen.add(href);
  return true;
});
"""

_SHOW_PREVIEW_JS = """
const a = arguments[0];
a.scrollIntoView({block: 'center', behavior: 'instant'});
a._tippy.setProps({duration: 0, delay: 0});
a._tippy.show();
a._tippy.popper.id = 'posenc-shown-preview';
"""

# What is cut of a shown preview's formulas beyond the window, and what describes its link.
_PREVIEW_STATE_JS = """
const a = arguments[0], box = a._tippy.popper, width = document.documentElement.clientWidth;
const beyond = Array.from(box.querySelectorAll('.math')).filter((m) => {
  const r = m.getBoundingClientRect();
  return r.right > width + 1.5 || r.left < -1.5;
}).length;
const described = (a.getAttribute('aria-describedby') || '').split(/\\s+/)
  .some((id) => id && box.contains(document.getElementById(id)));
return {beyond: beyond, described: described};
"""

_HIDE_PREVIEW_JS = """
const a = arguments[0];
a._tippy.popper.removeAttribute('id');
a._tippy.hide();
"""

# The formula boxes with a tab stop that scroll sideways (a sample of them).
_SCROLLERS_JS = """
return Array.from(document.querySelectorAll('span.math, div.math > *')).filter((el) =>
  el.tabIndex >= 0 && el.scrollWidth > el.clientWidth + 1 && el.getClientRects().length > 0).slice(0, arguments[0]);
"""


def unfold(engine) -> None:
    """Open every fold of the page (solutions, folded cells): their formulas are laid out too."""
    engine.script(_UNFOLD_JS)
    engine.settle()


def _lines(result: dict) -> list[str]:
    return ([f"cut off: {p}" for p in result["clipped"]]
            + [f"out of keyboard reach: {p}" for p in result["unreachable"]]
            + [f"number over the formula: {p}" for p in result["overlap"]]
            + [f"number before the formula: {p}" for p in result["order"]])


def layout_problems(engine) -> tuple[int, list[str]]:
    """(formulas laid out, problems) of the open page at its present width, folds opened."""
    unfold(engine)
    result = engine.script(FORMULAS_JS, None)
    return result["formulas"], _lines(result)


def name_problems(engine) -> list[str]:
    """Formulas drawn without the role ``math`` or a name; names that hold an icon's character.

    Folds are opened first: a folded solution's formulas are named too.
    """
    unfold(engine)
    problems = []
    drawn = engine.script(_DRAWN_JS, DRAWINGS)
    for (shown, text), (role, name) in zip(drawn, engine.accessible_all(DRAWINGS, "math")):
        if shown and (role not in MATH_ROLES or not name.strip()):
            problems.append(f"formula {text!r}: role {role!r}, name {name!r}")
    for holder in engine.script(_ICON_HOLDERS_JS):
        role, name = engine.accessible(holder)
        if PRIVATE_USE.search(name):
            problems.append(f"{role} named {name!r}: an icon's character is read as text")
    return problems


def structure_problems(engine) -> list[str]:
    """Ids used twice; statements that are not regions named by their title, unnamed proofs."""
    problems = [f"id used twice: {d}" for d in engine.script(_DUPLICATE_IDS_JS)]
    for statement in engine.script(_STATEMENTS_JS):
        role, name = engine.accessible(statement["element"])
        wanted = "group" if statement["proof"] else "region"
        if role != wanted or not " ".join(name.split()).startswith(statement["title"]):
            problems.append(f"{statement['title'][:60]!r}: role {role!r}, name {name!r} (a {wanted} named by its title)")
    return problems


def preview_problems(engine) -> tuple[int, list[str]]:
    """(previews checked, problems): every preview that holds a formula, shown in turn."""
    problems = []
    links = engine.script(_PREVIEW_LINKS_JS)
    for link in links:
        href = engine.script("return arguments[0].getAttribute('href');", link)
        engine.script(_SHOW_PREVIEW_JS, link)
        engine.settle()
        try:
            problems += [f"preview of {href}: {p}" for p in _lines(engine.script(FORMULAS_JS, "#posenc-shown-preview"))]
            state = engine.script(_PREVIEW_STATE_JS, link)
        finally:
            engine.script(_HIDE_PREVIEW_JS, link)
        if state["beyond"]:
            problems.append(f"preview of {href}: {state['beyond']} formula(s) beyond the window")
        if not state["described"]:
            problems.append(f"preview of {href}: the link is not described by its shown preview (aria-describedby)")
    return len(links), problems


def keyboard_problems(engine, sample: int = KEYBOARD_SAMPLE) -> tuple[int, list[str]]:
    """(boxes tried, problems): a formula's scrolling box is reached with Tab and scrolled by the arrow key."""
    problems = []
    boxes = engine.script(_SCROLLERS_JS, sample)
    for box in boxes:
        text = engine.script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});"
                             " arguments[0].scrollLeft = 0; arguments[0].focus();"
                             " return Array.from(arguments[0].textContent.replace(/\\s+/g, ' ')).slice(0, 60).join('');", box)
        engine.keys("Shift+Tab", "Tab")
        if not engine.script("return document.activeElement === arguments[0];", box):
            problems.append(f"formula {text!r}: its scrolling box is not reached with the Tab key")
            continue
        engine.keys("ArrowRight", "ArrowRight")
        try:
            engine.wait("return arguments[0].scrollLeft > 0;", box, timeout=3)
        except TimeoutError:
            problems.append(f"formula {text!r}: the arrow key does not scroll its box")
    return len(boxes), problems
