// Every formula of the page, as a reader sees it at the present width: whole, or reachable.
// Run by tests/site_math.py in Chromium (Selenium) and Firefox (Marionette), in the page or in
// a shown preview. arguments[0]: a CSS selector of the element to look in (null: the document).
// Returns, for each formula (a .math element: Sphinx's span.math inline, div.math displayed):
// - clipped: part of what it draws is cut off by a box that hides its overflow, or lies beyond
//   what a scrolling box can scroll to (or beyond the window's left edge);
// - unreachable: it is whole only once a box is scrolled, and that box has no tab stop
//   (tabindex 0), so a keyboard cannot scroll it;
// - overlap: its equation number is drawn over what is visible of the formula;
// - order: its equation number comes before the formula in the document (a screen reader
//   would read the number first);
// and, per formula, what is wrong, with the formula's text (at most 60 characters).
const root = arguments[0] ? document.querySelector(arguments[0]) : document;
const SLACK = 1.5;  // px: rounding of sub-pixel boxes
const result = {formulas: 0, clipped: [], unreachable: [], overlap: [], order: []};
if (!root) return result;

// The formula's drawing: its <math> element (the equation number is beside it, not in it).
const drawing = (el) => el.querySelector('math');
function inkBox(el) {
  const box = {left: Infinity, top: Infinity, right: -Infinity, bottom: -Infinity};
  const add = (node) => {
    for (const r of node.getClientRects()) {
      if (r.width === 0 && r.height === 0) continue;
      box.left = Math.min(box.left, r.left); box.top = Math.min(box.top, r.top);
      box.right = Math.max(box.right, r.right); box.bottom = Math.max(box.bottom, r.bottom);
    }
  };
  add(el);
  el.querySelectorAll('*').forEach(add);
  return box.right > box.left ? box : null;
}
// A box's padding box in the window's coordinates (what it shows of its content).
function paddingBox(el) {
  const r = el.getBoundingClientRect();
  const left = r.left + el.clientLeft, top = r.top + el.clientTop;
  return {left, top, right: left + el.clientWidth, bottom: top + el.clientHeight};
}
const px = (value) => parseFloat(value) || 0;
// Whether a box said to scroll (overflow auto or scroll) really does: Firefox lays a <math>
// element out with such a style and reports a scroll width, yet neither clips nor scrolls it
// (what overflows is painted over what follows). Nudged by a pixel, then put back.
function scrolls(box, axis) {
  const key = axis === 'x' ? 'scrollLeft' : 'scrollTop';
  const range = axis === 'x' ? box.scrollWidth - box.clientWidth : box.scrollHeight - box.clientHeight;
  if (range < 1) return true;  // nothing to scroll: it clips, as a scrolling box does
  const before = box[key];
  box[key] = before > 0 ? before - 1 : before + 1;
  const moved = box[key] !== before;
  box[key] = before;
  return moved;
}
// (By code point: a cut through an astral character, a mathematical italic letter, leaves half
// of it, which the browser cannot hand back to the test.)
const label = (el) => Array.from((el.textContent || '').replace(/\s+/g, ' ').trim()).slice(0, 60).join('');

const formulas = Array.from(root.querySelectorAll('.math')).filter((el) => !el.parentElement.closest('.math'));
for (const el of formulas) {
  const math = drawing(el);
  // Folded away (a closed <details>, a folded drop-down): nothing is drawn.
  if (!math || el.getClientRects().length === 0 || getComputedStyle(math).visibility !== 'visible') continue;
  result.formulas += 1;
  const drawn = inkBox(math);
  if (!drawn) continue;
  const ink = {...drawn};
  const name = label(math);
  let clipped = null, unreachable = null;
  // Ink left of the window's edge cannot be scrolled to; right of it, the page scrolls (the
  // page-width check reports that), unless a box below cuts it.
  if (ink.left < -SLACK) clipped = `${Math.round(-ink.left)} px left of the window`;
  for (let box = math; box && box !== document.documentElement && !clipped; box = box.parentElement) {
    const style = getComputedStyle(box);
    for (const axis of ['x', 'y']) {
      const overflow = axis === 'x' ? style.overflowX : style.overflowY;
      if (overflow === 'visible') continue;
      if ((overflow === 'auto' || overflow === 'scroll') && !scrolls(box, axis)) continue;  // paints it all
      const pad = paddingBox(box);
      const margin = overflow === 'clip' ? px(style.overflowClipMargin) : 0;
      const [lo, hi] = axis === 'x' ? ['left', 'right'] : ['top', 'bottom'];
      const before = pad[lo] - margin - ink[lo], after = ink[hi] - pad[hi] - margin;
      if (before <= SLACK && after <= SLACK) continue;
      const what = `${box.localName}${box.className && typeof box.className === 'string' ? '.' + box.className.trim().split(/\s+/).join('.') : ''}`;
      if (overflow === 'auto' || overflow === 'scroll') {
        // Scrollable: what lies beyond the end must be within the scroll range, and the start
        // (the scroll origin) cannot be scrolled back past.
        const scrolled = axis === 'x' ? box.scrollLeft : box.scrollTop;
        const range = axis === 'x' ? box.scrollWidth - box.clientWidth : box.scrollHeight - box.clientHeight;
        if (before - scrolled > SLACK || after - (range - scrolled) > SLACK) {
          clipped = `${Math.round(Math.max(before - scrolled, after - (range - scrolled)))} px cut by ${what} (it scrolls ${Math.round(range)} px)`;
        } else if (box.tabIndex < 0 && !unreachable) {
          unreachable = `${what} scrolls ${Math.round(range)} px but has no tab stop`;
        }
        // Whatever scrolls into view is drawn within this box: the boxes around see only it.
        ink[lo] = Math.max(ink[lo], pad[lo]); ink[hi] = Math.min(ink[hi], pad[hi]);
      } else {
        clipped = `${Math.round(Math.max(before, after))} px cut by ${what} (overflow-${axis}: ${overflow})`;
      }
      if (clipped) break;
    }
  }
  if (clipped) result.clipped.push(`${name}: ${clipped}`);
  else if (unreachable) result.unreachable.push(`${name}: ${unreachable}`);
  const number = el.querySelector('.eqno');
  if (number) {
    if (number.compareDocumentPosition(math) & Node.DOCUMENT_POSITION_FOLLOWING)
      result.order.push(`${name}: its number ${label(number)} comes first`);
    // What is visible of the formula: its ink within the box it scrolls in (if any).
    let seen = {...drawn};
    for (let box = math; box && box !== el.parentElement; box = box.parentElement) {
      const overflow = getComputedStyle(box).overflowX;
      if (overflow === 'visible' || ((overflow === 'auto' || overflow === 'scroll') && !scrolls(box, 'x'))) continue;
      const pad = paddingBox(box);
      seen = {left: Math.max(seen.left, pad.left), right: Math.min(seen.right, pad.right),
              top: Math.max(seen.top, pad.top), bottom: Math.min(seen.bottom, pad.bottom)};
    }
    const n = number.getBoundingClientRect();
    const dx = Math.min(n.right, seen.right) - Math.max(n.left, seen.left);
    const dy = Math.min(n.bottom, seen.bottom) - Math.max(n.top, seen.top);
    if (dx > SLACK && dy > SLACK) result.overlap.push(`${name}: ${label(number)} is drawn over ${Math.round(dx)} px of it`);
  }
}
return result;
