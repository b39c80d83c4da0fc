/* The kg explorer: draws the graph that render.py embedded as JSON (#kg-data)
 * with vis-network, then wires the search box, the kind filters and the side
 * panel.
 *
 * Every string from the corpus enters the page through textContent or a DOM
 * property, never innerHTML: a title that holds markup shows as that markup,
 * as text. Tooltips are DOM elements for the same reason (vis-network puts a
 * string tooltip into the page as markup in some versions).
 *
 * Tests and the console reach the explorer through window.kgExplorer;
 * <body data-state="ready"> once the graph is laid out and drawn.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("kg-data").textContent);
  const details = data.explorer.details; // node id -> what the panel shows
  const kinds = data.explorer.meta.kinds; // [{name, colour, count}] in legend order
  const colourOf = new Map(kinds.map((kind) => [kind.name, kind.colour]));

  const panel = document.getElementById("kg-panel");
  const searchInput = document.getElementById("kg-search");
  const searchOptions = document.getElementById("kg-search-options");
  const searchStatus = document.getElementById("kg-search-status");
  const legend = document.getElementById("kg-legend");
  const loading = document.getElementById("kg-loading");

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

  const nodes = new vis.DataSet(data.nodes.map((node) => Object.assign({}, node, { title: tooltipFor(node.id) })));
  const edges = new vis.DataSet(data.edges.map((edge, i) =>
    Object.assign({ id: "e" + i }, edge, { title: el("div", edge.roles.join(", "), "kg-tooltip") })));
  const container = document.getElementById("kg-graph");
  const network = new vis.Network(container, { nodes: nodes, edges: edges }, data.options);

  const api = { network: network, nodes: nodes, edges: edges, details: details, select: select, ready: false };
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
  network.on("afterDrawing", function onFirstSettledDraw() {
    if (!settled) return;
    network.off("afterDrawing", onFirstSettledDraw);
    api.ready = true;
    document.body.dataset.state = "ready";
  });
  network.redraw();

  network.on("click", function (params) {
    if (params.nodes.length) showPanel(params.nodes[0]);
    else if (!params.edges.length) showEmptyPanel();
  });

  /** Select node `id`, bring it into view and show it in the panel. */
  function select(id) {
    if (!Object.prototype.hasOwnProperty.call(details, id)) return false;
    setKindVisible(details[id].kind, true);
    network.selectNodes([id]);
    network.focus(id, { scale: Math.max(network.getScale(), 1.1), animation: { duration: 450, easingFunction: "easeInOutQuad" } });
    showPanel(id);
    return true;
  }

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
    if (d.kind === "Paper") paperPanel(d);
    else entityPanel(d);
  }

  function entityPanel(d) {
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
    panel.append(el("h3", "Linked papers (" + d.links.length + ")"));
    panel.append(linkList(d.links, false));
    if (d.hidden_links > 0) panel.append(el("p", plural(d.hidden_links, "more paper") + " not shown in this overview.", "kg-muted"));
  }

  function paperPanel(d) {
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
    panel.append(el("h3", "Abstract"));
    panel.append(el("p", d.abstract || "—", "kg-abstract"));
    panel.append(el("h3", "Entities (" + d.links.length + ")"));
    panel.append(linkList(d.links, true));
    if (d.hidden_links > 0) panel.append(el("p", plural(d.hidden_links, "more entity") + " not shown in this overview.", "kg-muted"));
  }

  /** The linked nodes, each with its roles; a click selects it. Hover shows the evidence sentence. */
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

  // ---------------------------------------------------------------- search

  const index = new Map(); // lower-cased label, title or alias -> node ids

  function addToIndex(text, id, hint) {
    if (!text) return;
    const key = text.trim().toLowerCase();
    if (!index.has(key)) index.set(key, []);
    if (index.get(key).includes(id)) return;
    index.get(key).push(id);
    const option = document.createElement("option");
    option.value = text;
    option.label = hint;
    searchOptions.append(option);
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

  function search(query) {
    const id = find(query);
    searchStatus.textContent = id === null && query.trim() ? "No match for “" + query.trim() + "”" : "";
    if (id !== null) select(id);
    return id;
  }

  // Picking a suggestion selects at once; typing waits for Enter, so typing
  // "BERT" does not jump to BERT on the way to "BERTScore".
  searchInput.addEventListener("input", function (event) {
    searchStatus.textContent = "";
    const picked = !event.inputType || event.inputType === "insertReplacementText";
    if (picked && index.has(searchInput.value.trim().toLowerCase())) search(searchInput.value);
  });
  searchInput.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
      search(searchInput.value);
    }
  });

  // ---------------------------------------------------------------- legend and filters

  const toggles = new Map(); // kind -> its checkbox

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

  for (const kind of kinds) {
    const row = el("label", null, "kg-kind-toggle");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = true;
    box.dataset.kind = kind.name;
    box.addEventListener("change", () => setKindVisible(kind.name, box.checked));
    toggles.set(kind.name, box);
    row.append(box, swatch(kind.name), el("span", kind.name), el("span", String(kind.count), "kg-count"));
    legend.append(row);
  }

  showEmptyPanel();
})();
