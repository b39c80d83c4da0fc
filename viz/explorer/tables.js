/* Reading the graph's tables (graph_tables); views.js, search.js, graph.js
 * and neighbourhood.js read what readTables returns.
 */

/**
 * The graph's tables made readable: node ids both ways, each entity's papers,
 * relations and results. kg serve reads the same tables of its whole graph with
 * kg.query.views.Tables for /entity/ID.json and /paper/ID.json: the two readers are
 * written alike, function for function (this and views.js), and
 * tests/test_view_parity.py compares their views.
 */
function readTables(t) {
  const first = t.first_paper;
  const count = t.kind.length;
  const whole = new Set(t.whole_ids);
  const ids = t.id.map((tail, i) => (whole.has(i) ? tail
    : t.kinds[t.kind[i]].toLowerCase() + "/" + (tail === 0 ? slug(t.label[i].toLowerCase()) : tail)));
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const papersOf = Array.from({ length: first }, () => []); // entity -> [[paper, role], ...]
  const relationsOf = Array.from({ length: first }, () => []); // entity -> offsets into t.relations
  const resultsOf = Array.from({ length: first }, () => []); // entity -> rows of t.results
  t.paper_links.forEach((links, row) => {
    for (let k = 0; k < links.length; k += 2) papersOf[links[k]].push([first + row, links[k + 1]]);
  });
  for (let r = 0; r < t.relations.length; r += RELATION_WIDTH) {
    relationsOf[t.relations[r]].push(r);
    if (t.relations[r + 1] !== t.relations[r]) relationsOf[t.relations[r + 1]].push(r);
  }
  const resultsIn = t.paper_links.map(() => []); // paper row -> rows of t.results
  t.results.forEach((result, row) => {
    resultsIn[result[0] - first].push(row);
    for (const end of new Set(result.slice(3, 6))) if (end >= 0) resultsOf[end].push(row);
  });
  const lower = new Set(t.lower_is_better);
  const higher = new Set(t.higher_is_better);

  const isPaper = (i) => i >= first;
  const kindOf = (i) => t.kinds[t.kind[i]];
  const text = (code) => (code >= 0 ? t.strings[code] : "");
  const nameOf = (i) => (i >= 0 ? t.label[i] : "");

  const chars = new Map(); // paper row -> its abstract split into code points
  function slice(row, start, end) {
    if (!chars.has(row)) chars.set(row, Array.from(t.paper_abstract[row]));
    return chars.get(row).slice(start, end).join("");
  }

  /** The sentence of paper `row` holding a mention, with the mention's offsets in it; null if not held. */
  function evidenceAt(row, start, length) {
    if (t.paper_abstract[row] === null) return null;
    const spans = t.paper_sentences[row];
    for (let k = 0; k < spans.length; k += 2) {
      if (spans[k] <= start && start + length <= spans[k + 1]) {
        return { sentence: slice(row, spans[k], spans[k + 1]), start: start - spans[k], end: start + length - spans[k] };
      }
    }
    return null;
  }

  /** A node's neighbours in the tables: an entity's papers and related entities, a paper's entities. */
  function neighbours(i) {
    if (isPaper(i)) return [...new Set(t.paper_links[i - first].filter((_, k) => k % 2 === 0))];
    const found = new Set(papersOf[i].map(([paper]) => paper));
    for (const r of relationsOf[i]) found.add(t.relations[r] === i ? t.relations[r + 1] : t.relations[r]);
    return [...found];
  }

  /** How many of the node's links in the whole graph these tables leave out. */
  function linksLeftOut(i) {
    return t.links_total ? Math.max(0, t.links_total[i] - neighbours(i).length) : 0;
  }

  function rolesByNode(pairs) { // [[node, role code], ...] -> Map node -> sorted role codes
    const roles = new Map();
    for (const [node, role] of pairs) {
      if (!roles.has(node)) roles.set(node, []);
      if (!roles.get(node).includes(role)) roles.get(node).push(role);
    }
    for (const codes of roles.values()) codes.sort((a, b) => a - b);
    return roles;
  }

  return { t: t, first: first, count: count, ids: ids, indexOf: indexOf, holds: t.holds, papersOf: papersOf,
           relationsOf: relationsOf, resultsOf: resultsOf, resultsIn: resultsIn, lower: lower, higher: higher, isPaper: isPaper, kindOf: kindOf, text: text, nameOf: nameOf,
           evidenceAt: evidenceAt, neighbours: neighbours, linksLeftOut: linksLeftOut, rolesByNode: rolesByNode };
}

/** `text` as kg.vocab.entity_node mints it into ids (for ASCII text): spaces as hyphens, percent-encoded. */
function slug(text) {
  return encodeURIComponent(text.replace(/ /g, "-"))
    .replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

function compareRank(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

function compareText(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
