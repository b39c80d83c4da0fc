/* The focus on a node's neighbourhood: the nodes within some links of it (from the
 * page's tables, or from the server when served), drawn in place of the overview,
 * and back to the overview.
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

let overview = null; // what the overview draws, kept while a neighbourhood is shown
const overviewSummary = overviewText.textContent;

/** The overview as drawn: nodes at their current positions (physics may have placed them). */
function snapshot() {
  const positions = network.getPositions();
  return {
    nodes: data.nodes.map((node) => Object.assign({}, node, positions[node.id] || {})),
    edges: data.edges,
    positions: positions,
    tables: tables,
  };
}

/** The nodes within `hops` links of `id` from the page's own tables (the page opened from disk):
 * where the overview placed them all, there; else laid out here. */
function localNeighbourhood(id, hops) {
  const resolved = resolveNode(tables, id);
  if (resolved === null) throw new Error("No node “" + id + "” in this page.");
  const found = neighbourhood(tables, indexOf(resolved), hops, meta.neighbourhood_limit);
  const placed = found.nodes.every((i) => overview.positions[tables.ids[i]]);
  return {
    center: resolved, left_out: found.leftOut, layOut: !placed,
    nodes: found.nodes.map((i) => Object.assign(visNodeAt(tables, i), placed ? overview.positions[tables.ids[i]] : {})),
    edges: visEdgesAmong(tables, found.nodes),
  };
}

function draw(nodeList, edgeList, layOut) {
  nodes.clear();
  edges.clear();
  nodes.add(visNodes(nodeList));
  edges.add(visEdges(edgeList));
  for (const [kind, box] of toggles) if (!box.checked) setKindVisible(kind, false);
  updateLegend();
  if (layOut) { // the simulation the page uses for a small graph; it stops itself when done
    network.setOptions({ physics: meta.physics });
    network.stabilize(meta.physics.stabilization.iterations);
  } else {
    network.setOptions({ physics: { enabled: false } });
    fitAll();
  }
}

/** Draw only the nodes within `hops` links of `id` (from the server when served: the whole graph). */
async function focus(id, hops) {
  if (!overview) overview = snapshot();
  let sub;
  try {
    if (served) {
      sub = await getJSON("/neighbourhood.json?" + new URLSearchParams({ id: id, k: String(hops) }));
      tables = readTables(sub.explorer.tables);
    } else {
      sub = localNeighbourhood(id, hops);
    }
  } catch (error) {
    searchStatus.textContent = error.message;
    return false;
  }
  const shown = collapsePapers(sub);
  draw(shown.nodes, shown.edges, Boolean(shown.layOut));
  overviewText.replaceChildren("Within " + plural(hops, "link") + " of ", bdi(nameOf(sub.center)),
    ": " + plural(shown.nodes.length, "node") + (sub.left_out ? ", " + sub.left_out + " more not shown" : "")
    + (collapsed ? "; its papers are one node: click it to draw them." : "."));
  backButton.hidden = false;
  document.body.dataset.view = "focus";
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
  const nodes = sub.nodes.filter((node) => !papers.has(node.id)).map((node) => {
    const { x, y, ...rest } = node; // laid out again: fewer nodes
    return rest;
  });
  nodes.push({ id: id, kind: "Paper", group: "Paper", shape: "dot", size: 16, label: plural(papers.size, "paper"),
               tooltip: plural(papers.size, "paper") + " linked to it: click to draw them" });
  const seen = new Set(), edges = [];
  for (const edge of sub.edges) {
    const from = papers.has(edge.from) ? id : edge.from, to = papers.has(edge.to) ? id : edge.to;
    if (from === to || seen.has(from + " " + to)) continue;
    seen.add(from + " " + to);
    edges.push(Object.assign({}, edge, { from: from, to: to }));
  }
  collapsed = { id: id, sub: sub };
  return { center: sub.center, left_out: sub.left_out, nodes: nodes, edges: edges, layOut: true };
}

/** Draw the papers a collapsed node stands for (true), or do nothing if `id` is not that node. */
function expandPapers(id) {
  if (!collapsed || id !== collapsed.id) return false;
  const sub = collapsed.sub;
  collapsed = null;
  draw(sub.nodes, sub.edges, Boolean(sub.layOut));
  select(sub.center, false);
  return true;
}

function nameOf(id) {
  return summary(tables, indexOf(id)).label;
}

function showOverview() {
  if (!overview) return;
  collapsed = null;
  tables = overview.tables;
  draw(overview.nodes, overview.edges, false);
  overviewText.textContent = overviewSummary;
  backButton.hidden = true;
  document.body.dataset.view = "overview";
  const shown = panel.dataset.node;
  if (shown && nodes.get(shown) !== null) showPanel(shown);
  else showEmptyPanel();
}

backButton.addEventListener("click", showOverview);
