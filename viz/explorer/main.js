/* The start: the tables read, the graph drawn, the legend filled and, once the
 * graph is laid out and drawn, a node a link names opened.
 *
 * Tests and the console reach the explorer through window.kgExplorer;
 * <body data-state="ready"> once the graph is laid out and drawn.
 */

let tables = readTables(data.explorer.tables); // of the whole graph from disk; of what is drawn when served
const pageTables = tables; // the page's own: a served neighbourhood brings its own tables

/** The tables' index of a node id, or undefined. */
function indexOf(id) {
  return tables.indexOf.get(id);
}

const nodes = new vis.DataSet(visNodes(data.nodes));
const edges = new vis.DataSet(visEdges(data.edges));
const container = document.getElementById("kg-graph");
const network = new vis.Network(container, { nodes: nodes, edges: edges }, data.options);

const api = {
  network: network, nodes: nodes, edges: edges, select: select, focus: focus, goTo: goTo, showOverview: showOverview,
  openTopic: openTopic, followHash: followHash,
  /** The panel's data for a node the page holds (as kg serve's JSON twin), or null. */
  view: (id) => (indexOf(id) === undefined ? null
    : tables.isPaper(indexOf(id)) ? paperView(tables, indexOf(id)) : entityView(tables, indexOf(id))),
  /** The id of the node a search for `text` picks, or null. */
  find: (text) => (searchTables(tables, text, 1)[0] || { id: null }).id,
  /** The CSV a board downloads, for tests: csv(columns of {name, text(row)}, rows). */
  csv: csv,
  /** The functions kg serve has a Python twin of, for tests/test_twin_parity.py to compare. */
  twins: {
    search: (text, limit) => searchTables(tables, text, limit).map((found) => found.id),
    resolve: (raw) => resolveNode(tables, raw),
    neighbourhood: (id, hops, limit) => {
      const found = neighbourhood(tables, indexOf(id), hops, limit);
      return [found.nodes.map((i) => tables.ids[i]), found.leftOut];
    },
    drawnLabel: (id) => visNodeAt(tables, indexOf(id)).label,
    truncate: truncate,
    segments: (text, spans) => segments(text, spans).map(([piece, span]) => [piece, span !== null]),
    nodeUrl: nodeUrl,
  },
  ready: false,
};
window.kgExplorer = api;

// With physics on, vis-network simulates until told to stop: stop it once the
// stabilization iterations are done, so the page settles and stays still.
let settled = !(data.options.physics && data.options.physics.enabled);
if (settled) network.fit(); // positions were computed in Python: show them all
network.on("stabilizationProgress", function (params) {
  if (loading) loading.textContent = "Laying out… " + Math.round((100 * params.iterations) / params.total) + "%";
});
network.on("stabilizationIterationsDone", function () {
  network.setOptions({ physics: { enabled: false } });
  settled = true;
  network.redraw();
});

network.on("click", function (params) {
  const id = params.nodes[0];
  if (id === undefined) {
    if (!params.edges.length) showEmptyPanel();
  } else if (grouped.has(id)) {
    groupPanel(id, grouped.get(id));
  } else if (!openTopic(id) && !expandPapers(id)) {
    showPanel(id);
  }
});

for (const kind of meta.kinds) addToggle(kind.name, kind.count);

showEmptyPanel();
if (topics.size) showMap();
else setView("overview");

// ---------------------------------------------------------------- ready

// Last, once every binding above exists: vis-network may draw (and so run this
// handler, deep link and all) synchronously inside redraw().
network.on("afterDrawing", function onFirstSettledDraw() {
  if (!settled) return;
  network.off("afterDrawing", onFirstSettledDraw);
  if (!topics.size && data.nodes.length) { // laid out: now packed so that every label can be read
    overview = readableOverview();
    draw(overview.nodes, overview.edges);
  }
  fitAll(); // now that labels are measured
  api.ready = true;
  document.body.dataset.state = "ready";
  const wanted = new URLSearchParams(location.search).get("node"); // a link from /query or a node's page
  if (location.hash.length > 1) followHash(); // a view's own link, or Back to this page
  else if (wanted) goTo(wanted);
});
network.redraw();
