/* The kg explorer: draws the graph that render.py embedded as JSON (#kg-data)
 * with vis-network, then wires the search box, the kind filters, the side
 * panel and the focus on a node's neighbourhood.
 *
 * The same page works from disk and from `kg serve` (data.explorer.meta.served).
 * Served, it also fetches from its own server: each node's evidence, related
 * methods and SPARQL query for the panel (/entity/ID.json, /paper/ID.json),
 * search over the whole graph (/search.json) and neighbourhoods of nodes the
 * overview leaves out (/neighbourhood.json). From disk, neighbourhoods are
 * taken from the embedded graph.
 *
 * Every string from the corpus enters the page through textContent or a DOM
 * property, never innerHTML: a title that holds markup shows as that markup,
 * as text. Highlights are <mark> elements around text nodes. Tooltips are DOM
 * elements for the same reason (vis-network puts a string tooltip into the
 * page as markup in some versions).
 *
 * Tests and the console reach the explorer through window.kgExplorer;
 * <body data-state="ready"> once the graph is laid out and drawn.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("kg-data").textContent);
  const details = data.explorer.details; // node id -> what the panel shows
  const kinds = data.explorer.meta.kinds; // [{name, colour, count}] in legend order
  const served = Boolean(data.explorer.meta.served);
  const colourOf = new Map(kinds.map((kind) => [kind.name, kind.colour]));

  const panel = document.getElementById("kg-panel");
  const searchInput = document.getElementById("kg-search");
  const searchOptions = document.getElementById("kg-search-options");
  const searchStatus = document.getElementById("kg-search-status");
  const legend = document.getElementById("kg-legend");
  const loading = document.getElementById("kg-loading");
  const overviewText = document.getElementById("kg-overview");
  const backButton = document.getElementById("kg-back");

  // ---------------------------------------------------------------- helpers

  /** A new element holding `text` as text (never parsed as HTML). */
  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function plural(count, noun) {
    return count + " " + noun + (count === 1 ? "" : "s");
  }

  function truncate(text, limit) {
    return text.length <= limit ? text : text.slice(0, limit - 1).trimEnd() + "…";
  }

  function nameOf(id) {
    const d = details[id];
    return d.kind === "Paper" ? d.title || d.label : d.label;
  }

  /** "ICLR 2018", or "ICLR · 2018" when the venue does not already name the year. */
  function venueAndYear(d) {
    const year = d.year ? String(d.year) : "";
    return [d.venue, d.venue.includes(year) ? "" : year].filter(Boolean).join(" · ");
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
    const chars = Array.from(text);
    let at = 0;
    for (const [start, end, title] of spans.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
      if (start < at || end > chars.length || start >= end) continue; // overlapping or out of range
      box.append(document.createTextNode(chars.slice(at, start).join("")));
      const mark = el("mark", chars.slice(start, end).join(""));
      if (title) mark.title = title;
      box.append(mark);
      at = end;
    }
    box.append(document.createTextNode(chars.slice(at).join("")));
    return box;
  }

  /** The server's page for a node (kg serve only). */
  function nodeUrl(id) {
    return (id.startsWith("paper/") ? "/" : "/entity/") + id;
  }

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new Error((body && body.error) || response.status + " " + response.statusText);
    return body;
  }

  // ---------------------------------------------------------------- network

  function tooltipFor(id) {
    const d = details[id];
    const box = el("div", null, "kg-tooltip");
    if (d.kind === "Paper") {
      box.append(el("strong", d.title || d.label));
      const where = venueAndYear(d);
      if (where) box.append(el("div", where, "kg-muted"));
      if (d.abstract) box.append(el("p", truncate(d.abstract, 420), "kg-tooltip-abstract"));
    } else {
      box.append(el("strong", d.label));
      box.append(el("div", d.kind + " · " + plural(d.papers, "paper"), "kg-muted"));
      if (d.aliases.length) box.append(el("div", "Also: " + truncate(d.aliases.join(", "), 160)));
    }
    return box;
  }

  function visNodes(list) {
    return list.map((node) => Object.assign({}, node, { title: tooltipFor(node.id) }));
  }

  function visEdges(list) {
    return list.map((edge, i) => Object.assign({ id: "e" + i }, edge, { title: el("div", edge.roles.join(", "), "kg-tooltip") }));
  }

  const nodes = new vis.DataSet(visNodes(data.nodes));
  const edges = new vis.DataSet(visEdges(data.edges));
  const container = document.getElementById("kg-graph");
  const network = new vis.Network(container, { nodes: nodes, edges: edges }, data.options);

  const api = { network: network, nodes: nodes, edges: edges, details: details, select: select, focus: focus,
                showOverview: showOverview, ready: false };
  window.kgExplorer = api;

  // With physics on, vis-network simulates until told to stop: stop it once the
  // stabilization iterations are done, so the page settles and stays still.
  let settled = !(data.options.physics && data.options.physics.enabled);
  if (settled) network.fit(); // positions were computed in Python: show them all
  network.on("stabilizationProgress", function (params) {
    if (loading) loading.textContent = "Laying out… " + Math.round((100 * params.iterations) / params.total) + "%";
  });
  network.once("stabilizationIterationsDone", function () {
    network.setOptions({ physics: { enabled: false } });
    settled = true;
    network.redraw();
  });

  network.on("click", function (params) {
    if (params.nodes.length) showPanel(params.nodes[0]);
    else if (!params.edges.length) showEmptyPanel();
  });

  /** Select node `id` (drawn now), bring it into view (unless `zoom` is false) and show it in the panel. */
  function select(id, zoom = true) {
    if (!Object.prototype.hasOwnProperty.call(details, id) || nodes.get(id) === null) return false;
    setKindVisible(details[id].kind, true);
    network.selectNodes([id]);
    if (zoom) network.focus(id, { scale: Math.max(network.getScale(), 1.1), animation: { duration: 450, easingFunction: "easeInOutQuad" } });
    showPanel(id);
    return true;
  }

  /** Select `id` if it is drawn, else focus on its neighbourhood. */
  function goTo(id) {
    return select(id) ? Promise.resolve(true) : focus(id, 1);
  }

  // ---------------------------------------------------------------- focus

  let overview = null; // what the overview draws, kept while a neighbourhood is shown
  const overviewSummary = overviewText.textContent;

  /** The overview as drawn: nodes at their current positions (physics may have placed them). */
  function snapshot() {
    const positions = network.getPositions();
    return {
      nodes: data.nodes.map((node) => Object.assign({}, node, positions[node.id] || {})),
      edges: data.edges,
      details: Object.assign({}, details),
    };
  }

  /** The nodes at most `hops` links from `id` in the embedded graph (the page opened from disk). */
  function localNeighbourhood(id, hops) {
    const adjacent = new Map();
    for (const edge of data.edges) {
      for (const [a, b] of [[edge.from, edge.to], [edge.to, edge.from]]) {
        if (!adjacent.has(a)) adjacent.set(a, []);
        adjacent.get(a).push(b);
      }
    }
    const keep = new Set([id]);
    let frontier = [id];
    for (let i = 0; i < hops; i++) {
      const next = [];
      for (const node of frontier) for (const other of adjacent.get(node) || []) {
        if (!keep.has(other)) { keep.add(other); next.push(other); }
      }
      frontier = next;
    }
    return {
      center: id, left_out: 0, options: null, explorer: { details: {}, meta: { kinds: [] } },
      nodes: overview.nodes.filter((node) => keep.has(node.id)),
      edges: data.edges.filter((edge) => keep.has(edge.from) && keep.has(edge.to)),
    };
  }

  function draw(nodeList, edgeList, options) {
    nodes.clear();
    edges.clear();
    nodes.add(visNodes(nodeList));
    edges.add(visEdges(edgeList));
    network.setOptions(Object.assign({ physics: { enabled: false } }, options && options.groups ? { groups: options.groups } : {}));
    for (const [kind, box] of toggles) if (!box.checked) setKindVisible(kind, false);
    updateLegend();
    network.fit();
  }

  /** Draw only the nodes within `hops` links of `id` (from the server when served: the whole graph). */
  async function focus(id, hops) {
    if (!overview) overview = snapshot();
    let sub;
    try {
      sub = served ? await getJSON("/neighbourhood.json?" + new URLSearchParams({ id: id, k: String(hops) }))
                   : localNeighbourhood(id, hops);
    } catch (error) {
      searchStatus.textContent = error.message;
      return false;
    }
    if (!Object.prototype.hasOwnProperty.call(details, sub.center) && !sub.explorer.details[sub.center]) return false;
    Object.assign(details, sub.explorer.details);
    for (const kind of sub.explorer.meta.kinds) if (!colourOf.has(kind.name)) colourOf.set(kind.name, kind.colour);
    draw(sub.nodes, sub.edges, sub.options);
    overviewText.textContent = "Within " + plural(hops, "link") + " of " + nameOf(sub.center) + ": " + plural(sub.nodes.length, "node")
      + (sub.left_out ? ", " + sub.left_out + " more not shown." : ".");
    backButton.hidden = false;
    document.body.dataset.view = "focus";
    return select(sub.center, false); // the whole neighbourhood stays in view
  }

  function showOverview() {
    if (!overview) return;
    Object.assign(details, overview.details);
    draw(overview.nodes, overview.edges, null);
    overviewText.textContent = overviewSummary;
    backButton.hidden = true;
    document.body.dataset.view = "overview";
    const shown = panel.dataset.node;
    if (shown && nodes.get(shown) !== null) showPanel(shown);
    else showEmptyPanel();
  }

  backButton.addEventListener("click", showOverview);

  // ---------------------------------------------------------------- panel

  function showEmptyPanel() {
    panel.replaceChildren(
      el("h2", "Nothing selected"),
      el("p", "Click a node, or search by name or alias. Untick a kind in the legend to hide it.", "kg-muted"),
    );
    delete panel.dataset.node;
  }

  function showPanel(id) {
    const d = details[id];
    panel.replaceChildren();
    panel.dataset.node = id;
    const badge = el("div", null, "kg-kind");
    badge.append(swatch(d.kind), el("span", d.kind));
    panel.append(badge);
    if (d.kind === "Paper") paperPanel(id, d);
    else entityPanel(id, d);
  }

  function entityPanel(id, d) {
    panel.append(el("h2", d.label, "kg-label"));
    const facts = el("dl", null, "kg-facts");
    facts.append(el("dt", "Papers"), el("dd", String(d.papers), "kg-paper-count"));
    facts.append(el("dt", "Also known as"));
    const aliases = el("dd");
    if (d.aliases.length) {
      const list = el("ul", null, "kg-aliases");
      for (const alias of d.aliases) list.append(el("li", alias));
      aliases.append(list);
    } else {
      aliases.append(el("span", "—", "kg-muted"));
    }
    facts.append(aliases);
    panel.append(facts);
    panel.append(focusButtons(id));
    if (served) panel.append(servedSection(id));
    const papers = d.links.filter((link) => (details[link.id] || {}).kind === "Paper");
    const relations = d.links.filter((link) => (details[link.id] || {}).kind !== "Paper");
    panel.append(el("h3", "Linked papers (" + papers.length + ")"));
    panel.append(linkList(papers, false));
    if (relations.length) {
      panel.append(el("h3", "Relations (" + relations.length + ")"));
      panel.append(linkList(relations, false));
    }
    if (d.results && d.results.length) {
      panel.append(el("h3", "Results (" + d.results.length + ")"));
      panel.append(resultList(d.results));
    }
    if (d.hidden_links > 0) panel.append(el("p", plural(d.hidden_links, "more link") + " not shown in this view.", "kg-muted"));
  }

  function paperPanel(id, d) {
    panel.append(el("h2", d.title || d.label, "kg-label"));
    const where = venueAndYear(d);
    if (where) panel.append(el("p", where, "kg-venue"));
    if (d.authors.length) panel.append(el("p", d.authors.join(", "), "kg-authors kg-muted"));
    if (/^https?:\/\//i.test(d.url)) {
      const link = el("a", d.url, "kg-url");
      link.href = d.url;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      panel.append(link);
    }
    panel.append(focusButtons(id));
    panel.append(el("h3", "Abstract"));
    panel.append(el("p", d.abstract || (served ? "Loading…" : "—"), "kg-abstract"));
    if (served) panel.append(servedSection(id));
    panel.append(el("h3", "Entities (" + d.links.length + ")"));
    panel.append(linkList(d.links, true));
    if (d.hidden_links > 0) panel.append(el("p", plural(d.hidden_links, "more entity") + " not shown in this view.", "kg-muted"));
  }

  function focusButtons(id) {
    const row = el("p", null, "kg-focus-row");
    row.append(el("span", "Neighbourhood:", "kg-muted"));
    for (const hops of [1, 2]) {
      const button = el("button", plural(hops, "link"), "kg-focus");
      button.type = "button";
      button.dataset.hops = String(hops);
      button.addEventListener("click", () => focus(id, hops));
      row.append(button);
    }
    return row;
  }

  /** The linked nodes, each with its roles; a click selects it. Hover shows the evidence sentence. */
  /** Reported results: the value as written, what reached it on which dataset; hover shows the sentence. */
  function resultList(results) {
    const list = el("ul", null, "kg-results");
    for (const result of results) {
      const item = el("li");
      item.append(el("span", result.value + (result.kind === "gain" ? " gain" : ""), "kg-role"));
      const about = [result.metric, result.dataset && "on " + result.dataset, result.subject && "by " + result.subject];
      item.append(el("span", about.filter(Boolean).join(" ")));
      item.title = result.sentence;
      list.append(item);
    }
    return list;
  }

  function linkList(links, withKind) {
    const list = el("ul", null, "kg-links");
    for (const link of links) {
      const item = el("li");
      const roles = el("span", null, "kg-roles");
      for (const role of link.roles) roles.append(el("span", role, "kg-role"));
      const target = el("button", null, "kg-link");
      target.type = "button";
      if (withKind) target.append(swatch(details[link.id].kind));
      target.append(el("span", nameOf(link.id)));
      if (link.evidence) target.title = link.evidence;
      target.addEventListener("click", () => select(link.id));
      item.append(roles, target);
      list.append(item);
    }
    return list;
  }

  // ------------------------------------------------------- panel, served

  /** A placeholder filled from the server: evidence, related methods, links (kg serve only). */
  function servedSection(id) {
    const box = el("section", null, "kg-served");
    box.append(el("p", "Loading evidence…", "kg-muted"));
    getJSON(nodeUrl(id) + ".json?related=0").then((info) => {
      if (panel.dataset.node !== id) return; // another node was selected meanwhile
      box.replaceChildren();
      if (info.type === "Paper") paperDetails(box, info);
      else entityDetails(box, info);
      box.append(pageLinks(info));
      box.dataset.loaded = "true";
    }).catch((error) => {
      box.replaceChildren(el("p", "Could not load the details: " + error.message, "kg-error"));
    });
    return box;
  }

  function nodeButton(id, label) {
    const button = el("button", label, "kg-node-button");
    button.type = "button";
    if (id) button.addEventListener("click", () => goTo(id));
    else button.disabled = true;
    return button;
  }

  function entityDetails(box, info) {
    box.append(el("h3", "Evidence (" + info.evidence.length + ")"));
    const list = el("ul", null, "kg-evidence");
    for (const item of info.evidence) {
      const row = el("li");
      const head = el("div", null, "kg-evidence-head");
      head.append(el("span", item.role, "kg-role"), nodeButton(item.paper, item.title));
      const spans = item.start === null ? [] : [[item.start, item.end]];
      row.append(head, markedText("p", item.sentence, spans, "kg-sentence"));
      list.append(row);
    }
    box.append(list);
    box.append(relatedSection(info.id));
  }

  /** kg.related's methods for an entity: fetched apart, as they can take seconds on a large graph. */
  function relatedSection(id) {
    const box = el("div", null, "kg-related-box");
    box.append(el("h3", "Related methods"), el("p", "Finding related methods…", "kg-muted"));
    getJSON("/related.json?" + new URLSearchParams({ id: id })).then((info) => {
      const list = el("ol", null, "kg-related");
      for (const item of info.related) {
        const row = el("li");
        row.append(nodeButton(item.id, item.label), el("div", "score " + item.score.toFixed(2) + " · " + item.reason, "kg-muted"));
        list.append(row);
      }
      const note = info.related_note || (info.related.length ? "" : "None: nothing shares a task, dataset or paper with it.");
      box.replaceChildren(el("h3", "Related methods"), list);
      if (note) box.append(el("p", note, "kg-muted"));
      box.dataset.loaded = "true";
    }).catch((error) => {
      box.replaceChildren(el("h3", "Related methods"), el("p", "Could not load them: " + error.message, "kg-error"));
    });
    return box;
  }

  function paperDetails(box, info) {
    const spans = info.mentions.map((m) => [m.start, m.end, m.label + " · " + m.type + " · " + m.role]);
    const abstract = panel.querySelector(".kg-abstract");
    if (abstract) abstract.replaceWith(markedText("p", info.abstract, spans, "kg-abstract"));
    if (info.authors.length && !panel.querySelector(".kg-authors")) box.append(el("p", info.authors.join(", "), "kg-authors kg-muted"));
  }

  function pageLinks(info) {
    const row = el("p", null, "kg-page-links");
    for (const [label, href, name] of [["Page", info.urls.html, "page"], ["JSON", info.urls.json, "json"],
                                       ["SPARQL query", info.urls.query, "sparql"]]) {
      const link = el("a", label, "kg-page-link");
      link.href = href;
      link.dataset.link = name;
      row.append(link);
    }
    return row;
  }

  // ---------------------------------------------------------------- search

  const index = new Map(); // lower-cased label, title or alias -> node ids

  function option(value, hint) {
    const item = document.createElement("option");
    item.value = value;
    item.label = hint;
    return item;
  }

  function addToIndex(text, id, hint) {
    if (!text) return;
    const key = text.trim().toLowerCase();
    if (!index.has(key)) index.set(key, []);
    if (index.get(key).includes(id)) return;
    index.get(key).push(id);
    searchOptions.append(option(text, hint));
  }

  for (const id of Object.keys(details)) {
    const d = details[id];
    addToIndex(nameOf(id), id, d.kind);
    for (const alias of d.aliases || []) addToIndex(alias, id, d.kind + " · " + d.label);
  }

  function weight(id) {
    const d = details[id];
    return d.kind === "Paper" ? 0 : d.papers;
  }

  function heaviest(ids) {
    return ids.reduce((best, id) => (weight(id) > weight(best) ? id : best));
  }

  /** The node a query means: an exact label or alias, else the best prefix, else the best substring. */
  function find(query) {
    const q = query.trim().toLowerCase();
    if (!q) return null;
    if (index.has(q)) return heaviest(index.get(q));
    let best = null;
    let bestScore = null;
    for (const [key, ids] of index) {
      const at = key.indexOf(q);
      if (at < 0) continue;
      const id = heaviest(ids);
      const score = [at === 0 ? 0 : 1, -weight(id), key.length];
      if (bestScore === null || compare(score, bestScore) < 0) {
        best = id;
        bestScore = score;
      }
    }
    return best;
  }

  function compare(a, b) {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
  }

  function noMatch(query) {
    searchStatus.textContent = "No match for “" + query.trim() + "”";
  }

  function search(query) {
    const id = find(query);
    searchStatus.textContent = id === null && query.trim() ? "No match for “" + query.trim() + "”" : "";
    if (id !== null) select(id);
    return id;
  }

  // Served, the server searches the whole graph, not only what the overview draws.
  const suggested = new Map(); // lower-cased suggestion -> node id
  let lastSearch = 0;

  async function serverSearch(query) {
    const ticket = ++lastSearch;
    const found = await getJSON("/search.json?" + new URLSearchParams({ q: query }));
    if (ticket === lastSearch) { // else a later keystroke's suggestions will do
      suggested.clear();
      searchOptions.replaceChildren();
      for (const item of found.results) {
        suggested.set(item.name.trim().toLowerCase(), item.id);
        searchOptions.append(option(item.name, item.kind + (item.name === item.label ? "" : " · " + item.label)));
      }
    }
    return found.results;
  }

  async function searchEverywhere(query) {
    searchStatus.textContent = "";
    if (!query.trim()) return null;
    const exact = suggested.get(query.trim().toLowerCase());
    const results = exact ? [{ id: exact }] : await serverSearch(query).catch(() => []);
    if (!results || !results.length) {
      noMatch(query);
      return null;
    }
    await goTo(results[0].id);
    return results[0].id;
  }

  // Picking a suggestion selects at once; typing waits for Enter, so typing
  // "BERT" does not jump to BERT on the way to "BERTScore".
  let typingTimer = null;
  searchInput.addEventListener("input", function (event) {
    searchStatus.textContent = "";
    const picked = !event.inputType || event.inputType === "insertReplacementText";
    const key = searchInput.value.trim().toLowerCase();
    if (served) {
      if (picked && suggested.has(key)) searchEverywhere(searchInput.value);
      clearTimeout(typingTimer);
      if (key) typingTimer = setTimeout(() => serverSearch(searchInput.value).catch(() => null), 150);
    } else if (picked && index.has(key)) {
      search(searchInput.value);
    }
  });
  searchInput.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
      clearTimeout(typingTimer);
      if (served) searchEverywhere(searchInput.value);
      else search(searchInput.value);
    }
  });

  // ---------------------------------------------------------------- legend and filters

  const toggles = new Map(); // kind -> its checkbox
  const counts = new Map(); // kind -> its count in the legend

  function setKindVisible(kind, visible) {
    const box = toggles.get(kind);
    if (box && box.checked !== visible) box.checked = visible;
    const changes = nodes.get({ filter: (node) => node.kind === kind && Boolean(node.hidden) === visible });
    if (changes.length) nodes.update(changes.map((node) => ({ id: node.id, hidden: !visible })));
    if (!visible && panel.dataset.node && details[panel.dataset.node].kind === kind) {
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
    for (const [kind, count] of drawn) if (!toggles.has(kind)) addToggle(kind, count);
    for (const [kind, span] of counts) span.textContent = String(drawn.get(kind) || 0);
  }

  for (const kind of kinds) addToggle(kind.name, kind.count);

  showEmptyPanel();

  // ---------------------------------------------------------------- start

  // Last, once every binding above exists: vis-network may draw (and so run this
  // handler, deep link and all) synchronously inside redraw().
  network.on("afterDrawing", function onFirstSettledDraw() {
    if (!settled) return;
    network.off("afterDrawing", onFirstSettledDraw);
    api.ready = true;
    document.body.dataset.state = "ready";
    const wanted = new URLSearchParams(location.search).get("node"); // a link from /query or a node's page
    if (wanted) goTo(wanted);
  });
  network.redraw();
})();
