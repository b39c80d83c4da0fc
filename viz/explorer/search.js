/* Search: the nodes a name finds in the tables (as kg serve's /search.json finds
 * them), the node a link names, and the search box with its suggestions.
 */

const namesOf = new WeakMap(); // tables -> [folded name, name, node] for every label, title and alias

/** A name as search compares it (kg.strings.fold is its twin). */
function fold(name) {
  return name.split(/\s+/).filter(Boolean).join(" ").toLowerCase();
}

function allNames(tables) {
  const { t, count } = tables;
  if (!namesOf.has(tables)) {
    const names = [];
    for (let i = 0; i < count; i++) {
      for (const name of new Set([t.label[i]].concat(t.aliases[i] || []))) if (name) names.push([fold(name), name, i]);
    }
    namesOf.set(tables, names);
  }
  return namesOf.get(tables);
}

/** Nodes whose label, title or alias holds `query`: as kg serve's search, exact names first,
 * then names starting with it, then the rest; entities of more papers first. */
function searchTables(tables, query, limit) {
  const { t, ids, kindOf } = tables;
  const wanted = fold(query);
  if (!wanted) return [];
  const best = new Map(); // node -> [rank, name]
  for (const [folded, name, i] of allNames(tables)) {
    const at = folded.indexOf(wanted);
    if (at < 0) continue;
    const rank = [folded === wanted ? 0 : at === 0 ? 1 : 2, -t.papers[i], name.length, name];
    if (!best.has(i) || compareRank(rank, best.get(i)[0]) < 0) best.set(i, [rank, name]);
  }
  return [...best].sort((a, b) => compareRank(a[1][0], b[1][0])).slice(0, limit)
    .map(([i, [, name]]) => ({ id: ids[i], name: name, label: t.label[i], kind: kindOf(i), papers: t.papers[i] }));
}

/** The node a link names: its id (as given, or percent-decoded once), or (as kg serve takes them)
 * TYPE/NAME with a label or alias, the node of most papers first, then the first id. */
function resolveNode(tables, raw) {
  const { t, ids, kindOf } = tables;
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch (error) { // no percent-encoding of UTF-8: taken as written
  }
  for (const candidate of [raw, decoded]) if (tables.indexOf.has(candidate)) return candidate;
  const cut = decoded.indexOf("/");
  const segment = cut < 0 ? decoded : decoded.slice(0, cut), wanted = fold(cut < 0 ? "" : decoded.slice(cut + 1));
  let found = null;
  for (const [folded, , i] of allNames(tables)) {
    if (folded !== wanted || kindOf(i).toLowerCase() !== segment) continue;
    if (found === null || t.papers[i] > t.papers[found] || (t.papers[i] === t.papers[found] && ids[i] < ids[found])) found = i;
  }
  return found === null ? null : ids[found];
}

// ---------------------------------------------------------------- the search box

// Suggestions come from the whole graph: the page's own tables from disk, the server when served.
const suggested = new Map(); // lower-cased suggestion -> node id
let lastSearch = 0;

function option(value, hint) {
  const item = document.createElement("option");
  item.value = value;
  item.label = hint;
  return item;
}

async function suggest(query) {
  const ticket = ++lastSearch;
  const results = served ? (await getJSON("/search.json?" + new URLSearchParams({ q: query }))).results
    : searchTables(tables, query, meta.search_limit);
  if (ticket === lastSearch) { // else a later keystroke's suggestions will do
    suggested.clear();
    searchOptions.replaceChildren();
    for (const item of results) {
      const key = item.name.trim().toLowerCase();
      if (!suggested.has(key)) suggested.set(key, item.id); // two "GAN"s: the one of more papers
      const hint = item.similar ? " · close in meaning" : item.name === item.label ? "" : " · " + isolated(item.label);
      searchOptions.append(option(item.name, item.kind + hint));
    }
    searchOptions.dataset.query = query; // what the suggestions are for (tests wait for it)
  }
  return results;
}

function noMatch(query) {
  searchStatus.replaceChildren("No match for “", bdi(query.trim()), "”");
}

/** Go to the node a search means: a suggestion picked, else the best match. */
async function search(query) {
  searchStatus.textContent = "";
  if (!query.trim()) return null;
  const exact = suggested.get(query.trim().toLowerCase());
  const results = exact ? [{ id: exact }] : await suggest(query).catch(() => []);
  if (!results || !results.length) {
    noMatch(query);
    return null;
  }
  // Looking at a neighbourhood, a search draws the found node's own, so that the header, the URL
  // and what is drawn agree; from the overview it selects the node where it is drawn.
  const id = results[0].id;
  if (document.body.dataset.view === "focus") await focus(served ? id : resolveNode(tables, id) || id, 1);
  else await goTo(id);
  return id;
}

// Picking a suggestion selects at once; typing waits for Enter, so typing
// "BERT" does not jump to BERT on the way to "BERTScore".
let typingTimer = null;
searchInput.addEventListener("input", function (event) {
  searchStatus.textContent = "";
  const picked = !event.inputType || event.inputType === "insertReplacementText";
  const key = searchInput.value.trim().toLowerCase();
  if (picked && suggested.has(key)) search(searchInput.value);
  clearTimeout(typingTimer);
  if (key) typingTimer = setTimeout(() => suggest(searchInput.value).catch(() => null), served ? 150 : 60);
});
searchInput.addEventListener("keydown", function (event) {
  if (event.key === "Enter") {
    event.preventDefault();
    clearTimeout(typingTimer);
    search(searchInput.value);
  }
});
