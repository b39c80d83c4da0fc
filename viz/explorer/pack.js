/* Layout that keeps every label readable: the map, a topic and any neighbourhood are
 * drawn as boxes (a node's dot with its label below) packed on a spiral, each at the
 * first place clear of every box before it, and only as many as leave the smallest label
 * meta.min_label_px high once the view is fitted to the canvas (fitAll). What does not
 * fit is returned, for the caller to group or count.
 */

const measurer = document.createElement("canvas").getContext("2d");
const FONT_FACE = "px system-ui, sans-serif"; // the canvas's, as kg.viz.network's options set it
const LABEL_STROKE = 4;
const FREE_SPOTS = 300; // free places on the spiral a box is tried at, the nearest first // the white outline vis-network draws around a label, both sides together

function textWidth(text, font, bold = false) {
  measurer.font = (bold ? "bold " : "") + font + FONT_FACE;
  return measurer.measureText(text).width + LABEL_STROKE;
}

/** Each item's `font` and dot `size` from its `papers`, by square root between meta.label_font
 * and meta.dot_size over `items`; an item of no papers (null: a count of others) gets the smallest,
 * and papers their small unlabelled dot. */
function sizeByPapers(items) {
  const weighed = items.filter((item) => item.label && item.papers !== null);
  const roots = weighed.map((item) => Math.sqrt(Math.max(item.papers, 0)));
  const low = Math.min(...roots), high = Math.max(...roots);
  for (const item of items) {
    if (!item.label) {
      item.size = item.size || meta.paper_size;
      continue;
    }
    const share = item.papers === null || !(high > low) ? 0 : (Math.sqrt(Math.max(item.papers, 0)) - low) / (high - low);
    item.font = Math.round(meta.label_font[0] + share * (meta.label_font[1] - meta.label_font[0]));
    item.size = Math.round(meta.dot_size[0] + share * (meta.dot_size[1] - meta.dot_size[0]));
  }
  return items;
}

/** The box a node takes: its dot, and its label centred below it. `below`: how far the box's
 * centre lies below the dot's. */
function boxOf(item) {
  const label = item.label ? item.font + 6 : 0; // vis-network's label sits a few pixels below the dot
  const width = Math.max(item.label ? textWidth(item.label, item.font, item.bold) : 0, 2 * item.size);
  const height = 2 * item.size + label;
  return { w: width, h: height, below: height / 2 - item.size };
}

/** The canvas's size in pixels (a hidden or unsized canvas counts as 800 x 600). */
function canvasFrame() {
  const frame = container.getBoundingClientRect();
  return frame.width > 50 && frame.height > 50 ? { width: frame.width, height: frame.height } : { width: 800, height: 600 };
}

/** Positions for `items` ({id, label?, font?, size, bold?, anchor?, at?}, most important first).
 * Each goes on a spiral around a centre, where its box (boxOf) is meta.label_gap clear of every box
 * placed before it: around `at` (a position the item should stay near, as a graph layout placed it),
 * at the first free place there; else around its `anchor` (an id placed before it) or the origin, at
 * the free place, among the first FREE_SPOTS, that keeps the boxes' bounds closest to `frame`'s shape,
 * so that the fitted view stays largest. `bold`: the label vis-network will draw bold (the selected
 * node's). No place is taken that would leave the smallest label less than meta.min_label_px high once
 * the view is fitted: there, items stop being placed, or, with `keepAll`, an item is placed without its
 * label (its tooltip still names it). Returns {placed: the items given x and y, left: the rest}. */
function pack(items, frame, keepAll = false) {
  const gap = meta.label_gap, stretch = Math.sqrt(frame.width / frame.height);
  // No legible view is wider than this: the spiral need not look further out.
  const reach = Math.max(frame.width, frame.height) * meta.label_font[1] / meta.min_label_px;
  const fitted = (bounds) => 0.97 * Math.min(frame.width / Math.max(bounds.r - bounds.l, 1),
                                             frame.height / Math.max(bounds.b - bounds.t, 1));
  const boxes = [], byId = new Map();
  let bounds = null, smallest = Infinity;

  /** The place for `box` around `origin`, with the bounds and fitted scale it leaves; null if none. */
  function place(box, origin, font, nearest) {
    let best = null, free = 0;
    // The spiral's step grows with its radius, so that each step moves about as far as the last.
    for (let angle = 0, radius = 0; radius < reach && free < FREE_SPOTS; angle += Math.min(0.5, 6 / Math.max(radius, 1)), radius = 3 * angle / Math.PI) {
      const x = origin.x + radius * Math.cos(angle) * stretch, y = origin.y + radius * Math.sin(angle) / stretch;
      if (!boxes.every((b) => Math.abs(x - b.cx) - (box.w + b.w) / 2 >= gap || Math.abs(y - b.cy) - (box.h + b.h) / 2 >= gap)) continue;
      free++;
      const grown = bounds === null ? { l: x - box.w / 2, r: x + box.w / 2, t: y - box.h / 2, b: y + box.h / 2 }
        : { l: Math.min(bounds.l, x - box.w / 2), r: Math.max(bounds.r, x + box.w / 2),
            t: Math.min(bounds.t, y - box.h / 2), b: Math.max(bounds.b, y + box.h / 2) };
      const spot = { x: x, y: y, bounds: grown, scale: fitted(grown) };
      spot.legible = bounds === null || font === Infinity || spot.scale * font >= meta.min_label_px;
      if (nearest && spot.legible) return spot;
      if (best === null || spot.scale > best.scale) best = spot;
      if (bounds !== null && spot.scale >= fitted(bounds)) break; // inside the bounds already: none is better
    }
    return best;
  }

  for (let n = 0; n < items.length; n++) {
    const item = items[n];
    const anchor = item.anchor !== undefined ? byId.get(item.anchor) : undefined;
    const origin = item.at || (anchor ? { x: anchor.cx, y: anchor.cy } : { x: 0, y: 0 });
    let box = boxOf(item);
    let spot = place(box, origin, item.label ? Math.min(smallest, item.font) : smallest, Boolean(item.at));
    if ((spot === null || !spot.legible) && keepAll && item.label) { // a dot, named by its tooltip
      item.label = "";
      box = boxOf(item);
      spot = place(box, origin, smallest, Boolean(item.at));
    }
    if (spot === null || (!spot.legible && !keepAll)) return { placed: items.slice(0, n), left: items.slice(n) };
    if (item.label) smallest = Math.min(smallest, item.font);
    bounds = spot.bounds;
    const placedBox = { cx: spot.x, cy: spot.y, w: box.w, h: box.h };
    boxes.push(placedBox);
    if (item.id !== undefined) byId.set(item.id, placedBox);
    item.x = spot.x;
    item.y = spot.y - box.below; // the dot sits above its box's centre, its label below
  }
  return { placed: items, left: [] };
}

/** vis-network's node for a packed item: its own label (none, if it was placed without), font and
 * dot size, no scaling by value. */
function packedNode(node, item) {
  const drawn = Object.assign({}, node, { x: item.x, y: item.y, size: item.size });
  delete drawn.value;
  if (item.label) {
    drawn.label = item.label;
    drawn.font = { size: item.font };
  } else {
    delete drawn.label;
  }
  return drawn;
}
