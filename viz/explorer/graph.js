/* Drawing: vis-network's nodes and edges (from the page's data, or from the tables
 * as the Python side draws them), their tooltips, selecting a node, and the
 * legend's kind filters.
 */

/** vis-network's node for `i`, as the Python side draws it. */
function visNodeAt(tables, i) {
  const { t, ids, kindOf } = tables;
  const kind = kindOf(i);
  const node = { id: ids[i], kind: kind, group: kind, shape: "dot" };
  if (kind === "Paper") {
    node.size = meta.paper_size;
  } else {
    node.label = truncate(t.label[i], meta.label_limit);
    node.value = Math.round(Math.sqrt(Math.max(t.papers[i], 0)) * 1000) / 1000;
  }
  return node;
}

/** vis-network's edges between `nodes`: one per linked pair, with all its roles. */
function visEdgesAmong(tables, nodes) {
  const { t, first, ids, isPaper, relationsOf } = tables;
  const inside = new Set(nodes);
  const pairs = [];
  for (const i of nodes) {
    if (isPaper(i)) {
      const links = t.paper_links[i - first];
      for (let k = 0; k < links.length; k += 2) if (inside.has(links[k])) pairs.push([i, links[k], links[k + 1]]);
    } else {
      for (const r of relationsOf[i]) {
        if (t.relations[r] === i && inside.has(t.relations[r + 1])) pairs.push([i, t.relations[r + 1], t.relations[r + 2]]);
      }
    }
  }
  const roles = new Map(); // "from to" -> [from, to, role codes]
  for (const [from, to, role] of pairs) {
    const key = from + " " + to;
    if (!roles.has(key)) roles.set(key, [from, to, []]);
    if (!roles.get(key)[2].includes(role)) roles.get(key)[2].push(role);
  }
  return [...roles.values()].map(([from, to, codes]) => ({
    from: ids[from], to: ids[to], roles: codes.sort((a, b) => a - b).map((code) => t.roles[code]),
    width: Math.min(codes.length, 3) }));
}

// ---------------------------------------------------------------- the drawn nodes and edges

function tooltipFor(id) {
  const d = summary(tables, indexOf(id));
  const box = el("div", null, "kg-tooltip");
  box.append(corpus("strong", d.label));
  if (d.kind === "Paper") {
    if (d.where) box.append(corpus("div", d.where, "kg-muted"));
    if (d.abstract) box.append(corpus("p", truncate(d.abstract, 420), "kg-tooltip-abstract"));
  } else {
    // The overview's labels count a concept's reach: the tooltip says which number is which.
    const reach = d.reach !== d.papers ? " · " + d.reach + " with narrower concepts" : "";
    box.append(el("div", d.kind + " · " + plural(d.papers, "paper") + reach, "kg-muted"));
    if (d.aliases.length) box.append(isolatedList("div", "Also: ", d.aliases, 8));
  }
  return box;
}

function visNodes(list) {
  return list.map((node) => Object.assign({}, node, {
    title: node.tooltip ? el("div", node.tooltip, "kg-tooltip") : tooltipFor(node.id) }));
}

function visEdges(list) {
  return list.map((edge, i) => Object.assign({ id: "e" + i }, edge, { title: el("div", edge.roles.join(", "), "kg-tooltip") }));
}

const MAX_ZOOM = 1.5;

/** Zoom and centre so that every drawn node is in view, its label included: vis-network's fit()
 * frames the dots, and the label of a node at the edge runs out of the canvas. */
function fitAll() {
  network.fit();
  const ids = nodes.getIds({ filter: (node) => !node.hidden });
  if (!ids.length) return;
  let left = Infinity, top = Infinity, right = -Infinity, bottom = -Infinity;
  for (const id of ids) {
    const box = network.getBoundingBox(id);
    left = Math.min(left, box.left); top = Math.min(top, box.top);
    right = Math.max(right, box.right); bottom = Math.max(bottom, box.bottom);
  }
  const frame = container.getBoundingClientRect();
  // At most MAX_ZOOM: a view of two nodes is not drawn as large as the canvas.
  const scale = Math.min(MAX_ZOOM, 0.97 * Math.min(frame.width / Math.max(right - left, 1), frame.height / Math.max(bottom - top, 1)));
  network.moveTo({ position: { x: (left + right) / 2, y: (top + bottom) / 2 }, scale: scale });
}

/** Select node `id` (drawn now), bring it into view (unless `zoom` is false) and show it in the panel. */
function select(id, zoom = true) {
  if (indexOf(id) === undefined || nodes.get(id) === null) return false;
  setKindVisible(tables.kindOf(indexOf(id)), true);
  network.selectNodes([id]);
  if (zoom) network.focus(id, { scale: Math.max(network.getScale(), 1.1), animation: { duration: 450, easingFunction: "easeInOutQuad" } });
  showPanel(id);
  return true;
}

/** Select `id` if it is drawn, else focus on its neighbourhood. From disk, `id` may also be
 * TYPE/NAME, as kg serve takes it (the server resolves it when served). */
function goTo(id) {
  if (!served) id = resolveNode(tables, id) || id;
  return select(id) ? Promise.resolve(true) : focus(id, 1);
}

// ---------------------------------------------------------------- legend and filters

const toggles = new Map(); // kind -> its checkbox
const counts = new Map(); // kind -> its count in the legend

function setKindVisible(kind, visible) {
  const box = toggles.get(kind);
  if (box && box.checked !== visible) box.checked = visible;
  const changes = nodes.get({ filter: (node) => node.kind === kind && Boolean(node.hidden) === visible });
  if (changes.length) nodes.update(changes.map((node) => ({ id: node.id, hidden: !visible })));
  const shown = panel.dataset.node;
  if (!visible && shown && indexOf(shown) !== undefined && tables.kindOf(indexOf(shown)) === kind) {
    network.unselectAll();
    showEmptyPanel();
  }
}

function addToggle(name, count) {
  const row = el("label", null, "kg-kind-toggle");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.checked = true;
  box.dataset.kind = name;
  box.addEventListener("change", () => setKindVisible(name, box.checked));
  toggles.set(name, box);
  counts.set(name, el("span", String(count), "kg-count"));
  row.append(box, swatch(name), el("span", name), counts.get(name));
  legend.append(row);
}

/** Legend counts of what is drawn now (a focused view has other kinds and counts than the overview). */
function updateLegend() {
  const drawn = new Map();
  for (const node of nodes.get()) drawn.set(node.kind, (drawn.get(node.kind) || 0) + 1);
  for (const [kind, count] of drawn) if (!toggles.has(kind) && colourOf.has(kind)) addToggle(kind, count);
  for (const [kind, span] of counts) span.textContent = String(drawn.get(kind) || 0);
}
