// Scrolling (13.21): the page opens and sends at the end, follows the end while the reader is
// there, and stays put when the reader has scrolled up to read.

const FOLLOW_WITHIN = 80; // px from the end: 13.21c follows within 40, 13.21d stays beyond 200
let pinned = true;        // the reader is at the end: follow it as the page grows
let lastTop = -1;         // the scroll position the page itself last set or saw

function scroller() {
  return document.scrollingElement || document.documentElement;
}

function distanceFromEnd() {
  const s = scroller();
  return s.scrollHeight - s.scrollTop - s.clientHeight;
}

/**
 * Whether the reader is at the end is decided only when the scroll position moved by something
 * other than the page (the reader, a clamp): the page growing under a reader at the end (a
 * picture arriving, a chunk streaming in) does not unpin them.
 */
function syncPinned() {
  const top = scroller().scrollTop;
  if (Math.abs(top - lastTop) > 1) {
    pinned = distanceFromEnd() <= FOLLOW_WITHIN;
    lastTop = top;
  }
}

export function scrollToEnd() {
  const s = scroller();
  s.scrollTop = s.scrollHeight;
  lastTop = s.scrollTop;
  pinned = true;
}

/** Change the page; follow the end only when the reader was there (13.21c–e). */
export function mutate(fn) {
  syncPinned();
  fn();
  if (pinned) scrollToEnd();
}

let anchorRoot = null; // the conversation's element, whose bubbles anchor the reader's place

/** The first bubble still (partly) in view, and where its top is in the viewport. */
function anchor() {
  if (!anchorRoot) return null;
  for (const el of anchorRoot.children) {
    const r = el.getBoundingClientRect();
    if (r.bottom > 0) return { el, top: r.top };
  }
  return null;
}

/**
 * Change the page outside the flow of a turn (13.21e: a key saved, a notice shown or hidden, the
 * conversation drawn again): it stays where the reader has it — the bubble they were reading
 * keeps its place in the viewport — or at the end when they were there.
 */
export function redrawInPlace(fn) {
  syncPinned();
  if (pinned) {
    fn();
    scrollToEnd();
    return;
  }
  const before = anchor();
  fn();
  if (before && before.el.isConnected) {
    const shift = before.el.getBoundingClientRect().top - before.top;
    if (Math.abs(shift) >= 1) scroller().scrollTop += shift;
  }
  lastTop = scroller().scrollTop;
  pinned = false;
}

/** Follow the end as the conversation grows (pictures arriving, blocks opening) or the window changes. */
export function watchScrolling(log) {
  anchorRoot = log;
  window.addEventListener('scroll', syncPinned, { passive: true });
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      syncPinned();
      if (pinned) scrollToEnd();
    }).observe(log);
  }
  window.addEventListener('resize', () => {
    if (pinned) scrollToEnd();
  });
}
