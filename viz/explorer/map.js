/* The map of the field and what the URL says is drawn.
 *
 * The map draws the topics of kg.viz.overview.field_map (communities of papers that read alike),
 * each named by its most telling methods, tasks and datasets and sized by
 * its papers, packed (pack.js) so that every name can be read; a click opens a topic: its
 * members, packed the same way. The URL's fragment says what is drawn (#topic=…, #focus=…,
 * #map), so the browser's Back button and a copied link come back to it.
 */

const topics = new Map((data.explorer.map || []).map((topic) => [topic.id, topic]));
const TOPIC = "Topic"; // the kind of a map's node: drawn, never in the tables or the legend
const TOPIC_COLOUR = { background: "#4B5563", border: "#374151", highlight: { background: "#111827", border: "#111827" },
                       hover: { background: "#374151", border: "#111827" } };

/** Draw the map: the largest topics whose names fit the canvas legibly. */
function showMap() {
  tables = pageTables;
  setView("map"); // first: the legend it hides changes the canvas's size
  const items = sizeByPapers([...topics.values()].map((topic) => ({
    id: topic.id, label: truncate(topic.name, 2 * meta.label_limit) + " · " + topic.papers, papers: topic.papers })));
  const { placed } = pack(items, canvasFrame());
  draw(placed.map((item) => packedNode({ id: item.id, kind: TOPIC, group: TOPIC, shape: "dot", color: TOPIC_COLOUR,
                                         tooltip: topicTooltip(topics.get(item.id)) }, item)), []);
  overviewText.textContent = (placed.length < topics.size ? "The " + placed.length + " largest of the field's " : "The field's ")
    + plural(topics.size, "topic") + ": papers that read alike, each named by its most telling"
    + " methods, tasks and datasets and sized by its papers. Click one to open it; search reaches any node.";
}

function topicTooltip(topic) {
  return TOPIC + " · " + plural(topic.papers, "paper") + " · "
    + topic.members.filter(([id]) => indexOf(id) !== undefined).slice(0, 8).map(([id]) => tables.t.label[indexOf(id)]).join(", ");
}

/** Draw topic `id`'s most telling members that fit, each sized by its papers in the topic, with
 * the relations between them; the panel lists them all. False if there is no such topic. */
function openTopic(id, record = true) {
  const topic = topics.get(id);
  if (!topic) return false;
  tables = pageTables;
  setView("topic"); // first: the legend it shows changes the canvas's size
  const members = topic.members.filter(([member]) => indexOf(member) !== undefined);
  const items = sizeByPapers(members.map(([member, papers]) => ({
    id: member, label: truncate(tables.t.label[indexOf(member)], meta.label_limit) + " · " + papers, papers: papers })));
  const { placed } = pack(items, canvasFrame());
  draw(placed.map((item) => packedNode(visNodeAt(tables, indexOf(item.id)), item)),
       visEdgesAmong(tables, placed.map((item) => indexOf(item.id))));
  overviewText.replaceChildren("Topic ", bdi(topic.name), ": " + (placed.length < members.length
    ? "its " + placed.length + " most telling of " + members.length + " concepts" : plural(members.length, "concept"))
    + " of its " + plural(topic.papers, "paper") + ", each labelled with its papers in the topic. Back returns to the map.");
  topicPanel(topic, members);
  if (record) setHash("topic=" + encodeURIComponent(id));
  return true;
}

// ---------------------------------------------------------------- the URL

let drawnHash = location.hash; // the fragment of what is drawn now

/** Say in the URL what is now drawn: a new entry in the browser's history. */
function setHash(hash) {
  drawnHash = "#" + hash;
  if (location.hash !== drawnHash) location.hash = hash;
}

/** A node the fragment names, as kind/name, or null: anyone can write a link's fragment, and a
 * name holding a dot segment, "?", "#" or "\\" would lead the served page's request off the node's
 * own URL (to /sparql, say). */
function fragmentNode(raw) {
  const match = /^[a-z]+\/([^/?#\\]+)$/.exec(raw || "");
  return match && !/^(\.|%2e){1,2}$/i.test(match[1]) ? raw : null;
}

/** Draw what the URL's fragment names: a topic, a board, a node's neighbourhood, or the first view. */
function followHash() {
  drawnHash = location.hash;
  const wanted = new URLSearchParams(location.hash.slice(1));
  if (wanted.has("topic") && openTopic(wanted.get("topic"), false)) return Promise.resolve(true);
  for (const kind of Object.keys(BOARDS)) {
    const node = fragmentNode(wanted.get(kind));
    if (node) return openBoard(kind, node, false);
  }
  const focused = fragmentNode(wanted.get("focus"));
  if (focused) return focus(focused, Number(wanted.get("hops")) === 2 ? 2 : 1, false);
  showOverview(false);
  return Promise.resolve(true);
}

window.addEventListener("hashchange", () => {
  if (location.hash !== drawnHash) followHash();
});

/** What the page shows now ("map", "overview", "topic", "focus", "board"): on <body data-view>, with
 * the legend (no kinds on the map), the full-width board and the back button to match. */
function setView(view) {
  document.body.dataset.view = view;
  wide.hidden = view !== "board";
  legend.hidden = view === "map";
  backButton.hidden = view === "map" || view === "overview";
  backButton.textContent = topics.size ? "Back to the map" : "Back to overview";
}
