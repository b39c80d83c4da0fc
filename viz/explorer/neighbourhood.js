/* The focus on a node's neighbourhood: the nodes within some links of it (from the
 * page's tables, or from the server when served), as many as can be read and the rest
 * counted by kind, drawn in place of the first view; and back to the first view.
 */

/** The nodes at most `hops` links from node `i`, nearest first and, at each distance, the most
 * mentioned first (as kg serve's neighbourhood); at most `limit`, and how many were left out. */
function neighbourhood(tables, i, hops, limit) {
  const { t, ids, neighbours } = tables;
  const order = [i], seen = new Set(order);
  let frontier = [i], leftOut = 0;
  const weight = (n) => [-t.papers[n], -neighbours(n).length, ids[n]];
  for (let hop = 0; hop < hops; hop++) {
    const following = [];
    for (const node of frontier) {
      for (const other of neighbours(node).sort((a, b) => compareRank(weight(a), weight(b)))) {
        if (seen.has(other)) continue;
        seen.add(other);
        if (order.length < limit) {
          order.push(other);
          following.push(other);
        } else {
          leftOut++;
        }
      }
    }
    frontier = following;
  }
  return { nodes: order, leftOut: leftOut };
}

let overview = null; // what the first view draws where it is not the map, kept while another is shown
const overviewSummary = overviewText.textContent;

/** A drawn node's papers: its own count (a node standing for others), else the tables'. */
function papersOfNode(node) {
  return node.papers !== undefined ? node.papers : indexOf(node.id) === undefined ? 0 : tables.t.papers[indexOf(node.id)];
}

/** pack.js's item for vis-network's `node`, with `extra` (at, bold) added. */
function packItem(node, extra) {
  return Object.assign({ id: node.id, node: node, papers: papersOfNode(node), label: node.label || "",
                         size: node.label ? 0 : node.size }, extra);
}

/** The first view of a graph too small or too loose to map, laid out by pack.js: each node near
 * where the graph's layout put it (vis-network's simulation, or kg.viz.layout's for a large graph),
 * spread to the canvas a legible label allows and moved until no label overlaps another; the most
 * mentioned are labelled first, and one whose label would not fit is a dot its tooltip names. */
function readableOverview() {
  const positions = network.getPositions(), frame = canvasFrame();
  const xs = data.nodes.map((node) => positions[node.id].x), ys = data.nodes.map((node) => positions[node.id].y);
  const middle = { x: (Math.min(...xs) + Math.max(...xs)) / 2, y: (Math.min(...ys) + Math.max(...ys)) / 2 };
  const spread = Math.min(frame.width / Math.max(Math.max(...xs) - Math.min(...xs), 1),
                          frame.height / Math.max(Math.max(...ys) - Math.min(...ys), 1))
    * 0.8 * meta.label_font[0] / meta.min_label_px; // the layout as wide as the smallest label can be drawn
  const ordered = data.nodes.slice().sort((a, b) => Boolean(b.label) - Boolean(a.label)
    || papersOfNode(b) - papersOfNode(a) || compareText(a.id, b.id));
  const items = sizeByPapers(ordered.map((node) => packItem(node, {
    at: { x: (positions[node.id].x - middle.x) * spread, y: (positions[node.id].y - middle.y) * spread } })));
  return { nodes: pack(items, frame, true).placed.map((item) => packedNode(item.node, item)), edges: data.edges, tables: tables };
}

/** The nodes within `hops` links of `id` from the page's own tables (the page opened from disk). */
function localNeighbourhood(id, hops) {
  const resolved = resolveNode(tables, id);
  if (resolved === null) throw new Error("No node “" + id + "” in this page.");
  const found = neighbourhood(tables, indexOf(resolved), hops, meta.neighbourhood_limit);
  return {
    center: resolved, left_out: found.leftOut,
    nodes: found.nodes.map((i) => visNodeAt(tables, i)),
    edges: visEdgesAmong(tables, found.nodes),
  };
}

/** Draw `nodeList` and `edgeList` in place of what is drawn, at their positions, fitted to the canvas. */
function draw(nodeList, edgeList) {
  nodes.clear();
  edges.clear();
  nodes.add(visNodes(nodeList));
  edges.add(visEdges(edgeList));
  for (const [kind, box] of toggles) if (!box.checked) setKindVisible(kind, false);
  updateLegend();
  network.setOptions({ physics: { enabled: false } });
  network.redraw(); // vis-network measures labels as it draws: only then do bounding boxes hold them
  fitAll();
}

const MORE = "kg-more:"; // the id of a node that stands for a neighbourhood's nodes of a kind that did not fit
let grouped = new Map(); // such a node's id -> the ids it stands for

/** A neighbourhood `sub` as pack.js lays it out: the centre, then its nodes in order as many as
 * fit legibly, and for the rest one node per kind, labelled with their count ("12 more methods"),
 * linked to the centre; a click on it lists them. */
function readable(sub) {
  const items = (list) => sizeByPapers(list.map((node) => packItem(node, { bold: node.id === sub.center })));
  const frame = canvasFrame();
  const centre = sub.nodes.filter((node) => node.id === sub.center), rest = sub.nodes.filter((node) => node.id !== sub.center);
  let packed = pack(items(centre.concat(rest)), frame);
  grouped = new Map();
  if (packed.left.length) { // again, with room for a node per kind (each labelled as long as it can be)
    const kinds = [...new Set(rest.map((node) => node.kind))];
    const groups = kinds.map((kind) => ({ id: MORE + kind, kind: kind, group: kind, shape: "dot", papers: null,
                                          label: moreLabel(9999, kind) }));
    packed = pack(items(centre.concat(groups, rest)), frame);
    const left = new Map(kinds.map((kind) => [kind, []]));
    for (const item of packed.left) left.get(item.node.kind).push(item.node.id);
    packed.placed = packed.placed.filter((item) => !item.id.startsWith(MORE) || left.get(item.node.kind).length);
    for (const item of packed.placed) {
      if (!item.id.startsWith(MORE)) continue;
      const ids = left.get(item.node.kind);
      item.label = moreLabel(ids.length, item.node.kind);
      item.node.tooltip = item.label + " within reach of it: click to list them";
      grouped.set(item.id, ids);
    }
  }
  const shown = new Set(packed.placed.map((item) => item.id));
  const edgeList = sub.edges.filter((edge) => shown.has(edge.from) && shown.has(edge.to));
  for (const id of grouped.keys()) edgeList.push({ from: sub.center, to: id, roles: ["more"], width: 1, dashes: true });
  return { center: sub.center, left_out: sub.left_out, edges: edgeList,
           nodes: packed.placed.map((item) => packedNode(item.node, item)),
           notDrawn: [...grouped.values()].reduce((total, ids) => total + ids.length, 0) };
}

function moreLabel(count, kind) {
  return count + " more " + (count === 1 ? kind.toLowerCase() : kind.toLowerCase() + "s");
}

/** Draw only the nodes within `hops` links of `id` (from the server when served: the whole graph),
 * as many as can be read; with `record`, the URL says so. */
async function focus(id, hops, record = true) {
  let sub;
  try {
    if (served) {
      sub = await getJSON("/neighbourhood.json?" + new URLSearchParams({ id: id, k: String(hops) }));
      tables = readTables(sub.explorer.tables);
    } else {
      tables = pageTables;
      sub = localNeighbourhood(id, hops);
    }
  } catch (error) {
    searchStatus.textContent = error.message;
    return false;
  }
  setView("focus"); // first: the legend it shows changes the canvas's size
  const shown = readable(collapsePapers(sub));
  draw(shown.nodes, shown.edges);
  const more = shown.notDrawn + (sub.left_out || 0);
  overviewText.replaceChildren("Within " + plural(hops, "link") + " of ", bdi(nameOf(sub.center)),
    ": " + plural(shown.nodes.length, "node") + (more ? ", " + more + " more not drawn" : "")
    + (collapsed ? "; its papers are one node: click it to draw them." : "."));
  if (record) setHash(new URLSearchParams({ focus: sub.center, hops: String(hops) }).toString());
  return select(sub.center, false); // the whole neighbourhood stays in view
}

const COLLAPSED = "kg-papers-of:"; // the id of the node that stands for a dataset's or task's papers
let collapsed = null; // the neighbourhood as it is with its papers, while they are drawn as one node

/** A dataset's or task's neighbourhood with the papers linked to it drawn as one node labelled
 * with their count, so that its entities can be read; a click on that node draws them all. */
function collapsePapers(sub) {
  collapsed = null;
  const centre = indexOf(sub.center);
  const kind = centre === undefined ? null : tables.kindOf(centre);
  if (kind !== meta.page_kinds.benchmark && kind !== meta.page_kinds.task) return sub;
  const linked = new Set();
  for (const edge of sub.edges) {
    if (edge.from === sub.center) linked.add(edge.to);
    if (edge.to === sub.center) linked.add(edge.from);
  }
  const papers = new Set(sub.nodes.filter((node) => node.kind === "Paper" && linked.has(node.id)).map((node) => node.id));
  if (papers.size < meta.collapse_papers) return sub;
  const id = COLLAPSED + sub.center;
  const nodes = sub.nodes.filter((node) => !papers.has(node.id));
  nodes.splice(1, 0, { id: id, kind: "Paper", group: "Paper", shape: "dot", papers: papers.size, label: plural(papers.size, "paper"),
                       tooltip: plural(papers.size, "paper") + " linked to it: click to draw them" });
  const seen = new Set(), edges = [];
  for (const edge of sub.edges) {
    const from = papers.has(edge.from) ? id : edge.from, to = papers.has(edge.to) ? id : edge.to;
    if (from === to || seen.has(from + " " + to)) continue;
    seen.add(from + " " + to);
    edges.push(Object.assign({}, edge, { from: from, to: to }));
  }
  collapsed = { id: id, sub: sub };
  return { center: sub.center, left_out: sub.left_out, nodes: nodes, edges: edges };
}

/** Draw the papers a collapsed node stands for (true), or do nothing if `id` is not that node. */
function expandPapers(id) {
  if (!collapsed || id !== collapsed.id) return false;
  const sub = collapsed.sub;
  collapsed = null;
  const shown = readable(sub);
  draw(shown.nodes, shown.edges);
  select(sub.center, false);
  return true;
}

function nameOf(id) {
  return summary(tables, indexOf(id)).label;
}

/** Back to the first view: the map, or the overview of a graph too small or too loose to map. */
function showOverview(record = true) {
  collapsed = null;
  if (topics.size) {
    showMap();
  } else {
    if (!overview) return;
    tables = overview.tables;
    setView("overview");
    draw(overview.nodes, overview.edges);
    overviewText.textContent = overviewSummary;
  }
  if (record) setHash("map");
  const shown = panel.dataset.node;
  if (shown && nodes.get(shown) !== null && indexOf(shown) !== undefined) showPanel(shown);
  else showEmptyPanel();
}

backButton.addEventListener("click", () => showOverview());
