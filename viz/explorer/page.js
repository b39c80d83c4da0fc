/* The kg explorer: draws the graph that render.py embedded as JSON (#kg-data)
 * with vis-network, then wires the search box, the kind filters, the side
 * panel and the focus on a node's neighbourhood.
 *
 * The page carries the graph as compact tables (graph_tables):
 * from disk, the tables of the whole graph (or of as much of it as the page
 * could hold), from which it searches, shows any node's panel and draws any
 * neighbourhood; from `kg serve` (data.explorer.meta.served), the tables of
 * what it draws, fetching the rest from its own server: each node's evidence,
 * related methods and SPARQL query (/entity/ID.json, /paper/ID.json), search
 * (/search.json) and neighbourhoods (/neighbourhood.json).
 *
 * The script is the files of viz/explorer/, one job each, which render.py
 * (explorer_script) joins into one function scope in this order: page.js (what
 * the page was given: its data, its elements, its server), dom.js, tables.js,
 * views.js, search.js, graph.js, neighbourhood.js, panel.js, and main.js, which
 * draws the graph once every file's functions and state exist. Only main.js
 * draws or runs anything; the other files declare functions and their state,
 * and wire their own elements' events.
 */

const data = JSON.parse(document.getElementById("kg-data").textContent);
const meta = data.explorer.meta;
const served = Boolean(meta.served);
const colourOf = new Map(Object.entries(meta.colours));
// Limits and the tables' layout come in meta, from kg.query.views: written once, in Python.
const RELATION_WIDTH = meta.relation_width; // numbers per relation in the tables

const panel = document.getElementById("kg-panel");
const searchInput = document.getElementById("kg-search");
const searchOptions = document.getElementById("kg-search-options");
const searchStatus = document.getElementById("kg-search-status");
const legend = document.getElementById("kg-legend");
const loading = document.getElementById("kg-loading");
const overviewText = document.getElementById("kg-overview");
const backButton = document.getElementById("kg-back");

// ---------------------------------------------------------------- the server (kg serve only)

/** The server's page for a node (kg serve only; kg.serve.pages.urls is its twin). */
function nodeUrl(id) {
  return (id.startsWith("paper/") ? "/" : "/entity/") + id;
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error((body && body.error) || response.status + " " + response.statusText);
  return body;
}
