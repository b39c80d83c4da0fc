/* Building the page's DOM from corpus text, safely.
 *
 * Every string from the corpus enters the page through textContent or a DOM
 * property, never innerHTML: a title that holds markup shows as that markup,
 * as text. Corpus text sits in <bdi> elements, so that a right-to-left
 * override in a label cannot reorder the page's own words around it.
 * Highlights are <mark> elements around text nodes. Tooltips are DOM elements
 * for the same reason (vis-network puts a string tooltip into the page as
 * markup in some versions).
 */

/** A new element holding `text` as text (never parsed as HTML). */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** Corpus text, isolated: its own direction, whatever bidi controls it holds. */
function bdi(text) {
  return el("bdi", text);
}

/** A `tag` element holding corpus text, isolated. */
function corpus(tag, text, className) {
  const node = el(tag, null, className);
  node.append(bdi(text));
  return node;
}

/** Plain text that mixes our words with corpus text (an <option>'s label): the corpus part isolated. */
function isolated(text) {
  return "\u2068" + text + "\u2069"; // FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE
}

function plural(count, noun) {
  return count + " " + noun + (count === 1 ? "" : "s");
}

/** `text` cut to `limit` code points (an emoji is never split), with an ellipsis (kg.strings.truncate is its twin). */
function truncate(text, limit) {
  const chars = Array.from(text);
  return chars.length <= limit ? text : chars.slice(0, limit - 1).join("").trimEnd() + "…";
}

function swatch(kind) {
  const dot = el("span", null, "kg-swatch");
  dot.style.backgroundColor = colourOf.get(kind) || "#6B7280";
  return dot;
}

/**
 * `text` as a `tag` element with each [start, end, title] span in a <mark>.
 * Offsets count code points, as Python's do (Array.from splits by code
 * point; String.slice would split an emoji in two).
 */
function markedText(tag, text, spans, className) {
  const box = el(tag, null, className);
  const inner = bdi();
  for (const [piece, span] of segments(text, spans)) {
    if (span === null) {
      inner.append(document.createTextNode(piece));
    } else {
      const mark = el("mark", piece);
      if (span[2]) mark.title = span[2];
      inner.append(mark);
    }
  }
  box.append(inner);
  return box;
}

/** `text` cut at `spans` ([start, end, title?]): [piece, span or null] in order, empty pieces and
 * spans overlapping an earlier one or out of range left out (kg.serve.pages.segments is its twin). */
function segments(text, spans) {
  const chars = Array.from(text);
  const pieces = [];
  let at = 0;
  for (const span of spans.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    const [start, end] = span;
    if (start < at || end > chars.length || start >= end) continue;
    pieces.push([chars.slice(at, start).join(""), null], [chars.slice(start, end).join(""), span]);
    at = end;
  }
  pieces.push([chars.slice(at).join(""), null]);
  return pieces.filter(([piece]) => piece);
}

/** "Also: a, b, c, …": each item of corpus text isolated from the others. */
function isolatedList(tag, lead, items, limit) {
  const box = el(tag, lead);
  items.slice(0, limit).forEach((item, i) => box.append(i ? ", " : "", bdi(truncate(item, 60))));
  if (items.length > limit) box.append(", …");
  return box;
}
