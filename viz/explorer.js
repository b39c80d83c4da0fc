/* The kg explorer: draws the graph that render.py embedded as JSON (#kg-data)
 * with vis-network, then wires the search box, the kind filters, the side
 * panel and the focus on a node's neighbourhood.
 *
 * The page carries the graph as compact tables (render.py's graph_tables):
 * from disk, the tables of the whole graph (or of as much of it as the page
 * could hold), from which it searches, shows any node's panel and draws any
 * neighbourhood; from `kg serve` (data.explorer.meta.served), the tables of
 * what it draws, fetching the rest from its own server: each node's evidence,
 * related methods and SPARQL query (/entity/ID.json, /paper/ID.json), search
 * (/search.json) and neighbourhoods (/neighbourhood.json).
 *
 * Every string from the corpus enters the page through textContent or a DOM
 * property, never innerHTML: a title that holds markup shows as that markup,
 * as text. Corpus text sits in <bdi> elements, so that a right-to-left
 * override in a label cannot reorder the page's own words around it.
 * Highlights are <mark> elements around text nodes. Tooltips are DOM elements
 * for the same reason (vis-network puts a string tooltip into the page as
 * markup in some versions).
 *
 * Tests and the console reach the explorer through window.kgExplorer;
 * <body data-state="ready"> once the graph is laid out and drawn.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("kg-data").textContent);
  const meta = data.explorer.meta;
  const served = Boolean(meta.served);
  const colourOf = new Map(Object.entries(meta.colours));
  // Limits and the tables' layout come in meta, from kg.views: written once, in Python.
  const RELATION_WIDTH = meta.relation_width; // numbers per relation in the tables

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

  /** Corpus text, isolated: its own direction, whatever bidi controls it holds. */
  function bdi(text) {
    return el("bdi", text);
  }

  /** A `tag` element holding corpus text, isolated. */
  function corpus(tag, text, className) {
    const node = el(tag, null, className);
    node.append(bdi(text));
    return node;
  }

  /** Plain text that mixes our words with corpus text (an <option>'s label): the corpus part isolated. */
  function isolated(text) {
    return "\u2068" + text + "\u2069"; // FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE
  }

  function plural(count, noun) {
    return count + " " + noun + (count === 1 ? "" : "s");
  }

  /** `text` cut to `limit` code points (an emoji is never split), with an ellipsis. */
  function truncate(text, limit) {
    const chars = Array.from(text);
    return chars.length <= limit ? text : chars.slice(0, limit - 1).join("").trimEnd() + "…";
  }

  function compareText(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** "ICLR 2018", or "ICLR · 2018" when the venue does not already name the year. */
  function venueAndYear(venue, year) {
    year = year ? String(year) : "";
    return [venue, venue.includes(year) ? "" : year].filter(Boolean).join(" · ");
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
    const inner = bdi();
    const chars = Array.from(text);
    let at = 0;
    for (const [start, end, title] of spans.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
      if (start < at || end > chars.length || start >= end) continue; // overlapping or out of range
      inner.append(document.createTextNode(chars.slice(at, start).join("")));
      const mark = el("mark", chars.slice(start, end).join(""));
      if (title) mark.title = title;
      inner.append(mark);
      at = end;
    }
    inner.append(document.createTextNode(chars.slice(at).join("")));
    box.append(inner);
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

  // ---------------------------------------------------------------- tables

  /**
   * The graph's tables (render.py's graph_tables) made searchable: node ids both
   * ways, each entity's papers, relations and results, and the views a panel
   * shows. kg serve reads the same tables of its whole graph with kg.views.Tables
   * for /entity/ID.json and /paper/ID.json: the two readers are written alike,
   * function for function, and tests/test_view_parity.py compares their views.
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
    t.results.forEach((result, row) => {
      for (const end of new Set(result.slice(3, 6))) if (end >= 0) resultsOf[end].push(row);
    });

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

    /** An entity's panel (kg.views.Tables.entity_view): its papers, each with its roles and first evidence
     * sentence; relations, each with its support and first evidence sentence; results; evidence. */
    function entityView(i) {
      const papers = [...rolesByNode(papersOf[i])]
        .sort(([a, ra], [b, rb]) => ra[0] - rb[0] || compareText(t.label[a], t.label[b]));
      const evidence = [];
      const listed = papers.map(([p, roles]) => {
        const row = p - first;
        const links = t.paper_links[row];
        const mentions = t.paper_mentions[row];
        let sentence = "";
        for (let m = 0; m < mentions.length; m += 3) {
          if (links[2 * mentions[m]] !== i) continue;
          const found = evidenceAt(row, mentions[m + 1], mentions[m + 2]);
          if (!found) continue;
          sentence = sentence || found.sentence;
          evidence.push(Object.assign({ paper: ids[p], title: t.label[p], role: t.roles[links[2 * mentions[m] + 1]] }, found));
        }
        return { id: ids[p], title: t.label[p], roles: roles.map((code) => t.roles[code]), evidence: sentence };
      });
      evidence.sort((a, b) => compareText(a.title, b.title) || a.start - b.start);
      const relations = relationsOf[i].map((r) => {
        const [subject, object, relation, support, paper, start, length] = t.relations.slice(r, r + RELATION_WIDTH);
        const found = paper >= 0 ? evidenceAt(paper - first, start, length) : null;
        return { subject: ids[subject], subject_label: t.label[subject], relation: t.roles[relation],
                 object: ids[object], object_label: t.label[object], papers: support,
                 sentence: found ? found.sentence : "" };
      }).sort((a, b) => b.papers - a.papers || compareText(a.relation, b.relation)
        || compareText(a.subject_label, b.subject_label) || compareText(a.object_label, b.object_label));
      const results = resultsOf[i].map((row) => {
        const [paper, written, kind, metric, dataset, subject, start, value, unit, previous] = t.results[row];
        const found = evidenceAt(paper - first, start, 1);
        return { paper: ids[paper], value: value, unit: unit, previous: previous, kind: kind, text: written,
                 metric: nameOf(metric), dataset: nameOf(dataset), subject: nameOf(subject),
                 sentence: found ? found.sentence : "" };
      }).sort((a, b) => compareText(a.dataset, b.dataset) || compareText(a.metric, b.metric) || b.value - a.value);
      return { id: ids[i], type: kindOf(i), label: t.label[i], aliases: t.aliases[i] || [], paper_count: t.papers[i],
               reach: t.reach[i] || t.papers[i], papers: listed.slice(0, meta.papers_limit),
               papers_not_listed: Math.max(0, listed.length - meta.papers_limit), relations: relations, results: results,
               evidence: evidence.slice(0, meta.evidence_limit),
               evidence_not_listed: Math.max(0, evidence.length - meta.evidence_limit),
               links_left_out: linksLeftOut(i) };
    }

    /** A paper's panel (kg.views.Tables.paper_view): abstract null where the page does not hold it. */
    function paperView(i) {
      const row = i - first;
      const links = t.paper_links[row];
      const pairs = [];
      for (let k = 0; k < links.length; k += 2) pairs.push([links[k], links[k + 1]]);
      const entities = [...rolesByNode(pairs)]
        .sort(([a, ra], [b, rb]) => ra[0] - rb[0] || compareText(t.label[a], t.label[b]))
        .map(([e, roles]) => ({ id: ids[e], label: t.label[e], type: kindOf(e), roles: roles.map((code) => t.roles[code]) }));
      const mentions = [];
      const spans = t.paper_mentions[row];
      for (let m = 0; m < spans.length; m += 3) {
        const e = links[2 * spans[m]];
        mentions.push({ entity: ids[e], label: t.label[e], type: kindOf(e), role: t.roles[links[2 * spans[m] + 1]],
                        start: spans[m + 1], end: spans[m + 1] + spans[m + 2] });
      }
      return { id: ids[i], type: "Paper", label: t.label[i], title: t.label[i], venue: text(t.paper_venue[row]),
               year: t.paper_year[row] || "", url: t.paper_url[row], authors: t.paper_authors[row].map(text),
               abstract: t.paper_abstract[row], mentions: mentions, entities: entities, links_left_out: linksLeftOut(i) };
    }

    /** What a tooltip shows. */
    function summary(i) {
      if (!isPaper(i)) return { kind: kindOf(i), label: t.label[i], papers: t.papers[i], aliases: t.aliases[i] || [] };
      const row = i - first;
      return { kind: "Paper", label: t.label[i], where: venueAndYear(text(t.paper_venue[row]), t.paper_year[row]),
               abstract: t.paper_abstract[row] || "" };
    }

    let names = null; // [folded name, name, node] for every label, title and alias
    function fold(name) {
      return name.split(/\s+/).filter(Boolean).join(" ").toLowerCase();
    }
    function allNames() {
      if (names === null) {
        names = [];
        for (let i = 0; i < count; i++) {
          for (const name of new Set([t.label[i]].concat(t.aliases[i] || []))) if (name) names.push([fold(name), name, i]);
        }
      }
      return names;
    }

    /** Nodes whose label, title or alias holds `query`: as kg serve's search, exact names first,
     * then names starting with it, then the rest; entities of more papers first. */
    function search(query, limit) {
      const wanted = fold(query);
      if (!wanted) return [];
      const best = new Map(); // node -> [rank, name]
      for (const [folded, name, i] of allNames()) {
        const at = folded.indexOf(wanted);
        if (at < 0) continue;
        const rank = [folded === wanted ? 0 : at === 0 ? 1 : 2, -t.papers[i], name.length, name];
        if (!best.has(i) || compareRank(rank, best.get(i)[0]) < 0) best.set(i, [rank, name]);
      }
      return [...best].sort((a, b) => compareRank(a[1][0], b[1][0])).slice(0, limit)
        .map(([i, [, name]]) => ({ id: ids[i], name: name, label: t.label[i], kind: kindOf(i), papers: t.papers[i] }));
    }

    /** The node a link names: its id, or (as kg serve takes them) TYPE/NAME with a label or alias. */
    function resolve(raw) {
      if (indexOf.has(raw)) return raw;
      const cut = raw.indexOf("/");
      const segment = raw.slice(0, cut), wanted = fold(raw.slice(cut + 1));
      let found = null;
      for (const [folded, , i] of allNames()) {
        if (folded === wanted && kindOf(i).toLowerCase() === segment && (found === null || t.papers[i] > t.papers[found])) found = i;
      }
      return found === null ? null : ids[found];
    }

    /** The nodes at most `hops` links from node `i`, nearest first and, at each distance, the most
     * mentioned first (as kg serve's neighbourhood); at most `limit`, and how many were left out. */
    function neighbourhood(i, hops, limit) {
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

    /** vis-network's node for `i`, as render.py's _network draws it. */
    function visNode(i) {
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
    function visEdges(nodes) {
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

    return { indexOf: indexOf, ids: ids, holds: t.holds, kindOf: kindOf, isPaper: isPaper, entityView: entityView,
             paperView: paperView, summary: summary, search: search, resolve: resolve, neighbourhood: neighbourhood,
             visNode: visNode, visEdges: visEdges };
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

  let tables = readTables(data.explorer.tables); // of the whole graph from disk; of what is drawn when served

  /** The tables' index of a node id, or undefined. */
  function indexOf(id) {
    return tables.indexOf.get(id);
  }

  // ---------------------------------------------------------------- network

  function tooltipFor(id) {
    const d = tables.summary(indexOf(id));
    const box = el("div", null, "kg-tooltip");
    box.append(corpus("strong", d.label));
    if (d.kind === "Paper") {
      if (d.where) box.append(corpus("div", d.where, "kg-muted"));
      if (d.abstract) box.append(corpus("p", truncate(d.abstract, 420), "kg-tooltip-abstract"));
    } else {
      box.append(el("div", d.kind + " · " + plural(d.papers, "paper"), "kg-muted"));
      if (d.aliases.length) box.append(isolatedList("div", "Also: ", d.aliases, 8));
    }
    return box;
  }

  /** "Also: a, b, c, …": each item of corpus text isolated from the others. */
  function isolatedList(tag, lead, items, limit) {
    const box = el(tag, lead);
    items.slice(0, limit).forEach((item, i) => box.append(i ? ", " : "", bdi(truncate(item, 60))));
    if (items.length > limit) box.append(", …");
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

  const api = {
    network: network, nodes: nodes, edges: edges, select: select, focus: focus, goTo: goTo, showOverview: showOverview,
    /** The panel's data for a node the page holds (as kg serve's JSON twin), or null. */
    view: (id) => (indexOf(id) === undefined ? null
      : tables.isPaper(indexOf(id)) ? tables.paperView(indexOf(id)) : tables.entityView(indexOf(id))),
    /** The id of the node a search for `text` picks, or null. */
    find: (text) => (tables.search(text, 1)[0] || { id: null }).id,
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
    if (params.nodes.length) showPanel(params.nodes[0]);
    else if (!params.edges.length) showEmptyPanel();
  });

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
    if (!served) id = tables.resolve(id) || id;
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
      positions: positions,
      tables: tables,
    };
  }

  /** The nodes within `hops` links of `id` from the page's own tables (the page opened from disk):
   * where the overview placed them all, there; else laid out here. */
  function localNeighbourhood(id, hops) {
    const resolved = tables.resolve(id);
    if (resolved === null) throw new Error("No node “" + id + "” in this page.");
    const found = tables.neighbourhood(indexOf(resolved), hops, meta.neighbourhood_limit);
    const placed = found.nodes.every((i) => overview.positions[tables.ids[i]]);
    return {
      center: resolved, left_out: found.leftOut, layOut: !placed,
      nodes: found.nodes.map((i) => Object.assign(tables.visNode(i), placed ? overview.positions[tables.ids[i]] : {})),
      edges: tables.visEdges(found.nodes),
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
      network.fit();
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
    draw(sub.nodes, sub.edges, Boolean(sub.layOut));
    overviewText.replaceChildren("Within " + plural(hops, "link") + " of ", bdi(nameOf(sub.center)),
      ": " + plural(sub.nodes.length, "node") + (sub.left_out ? ", " + sub.left_out + " more not shown." : "."));
    backButton.hidden = false;
    document.body.dataset.view = "focus";
    return select(sub.center, false); // the whole neighbourhood stays in view
  }

  function nameOf(id) {
    return tables.summary(indexOf(id)).label;
  }

  function showOverview() {
    if (!overview) return;
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

  // ---------------------------------------------------------------- panel

  function showEmptyPanel() {
    panel.replaceChildren(
      el("h2", "Nothing selected"),
      el("p", "Click a node, or search by name or alias. Untick a kind in the legend to hide it.", "kg-muted"),
    );
    delete panel.dataset.node;
  }

  /** A node's panel, drawn from its view: from the page's tables on disk, from the server's
   * /entity/ID.json or /paper/ID.json when served (kg.serve.views: the same shape). */
  function showPanel(id) {
    if (served) {
      showServedPanel(id);
      return;
    }
    const view = api.view(id);
    if (view !== null) renderPanel(id, view);
  }

  function renderPanel(id, view) {
    panel.replaceChildren();
    panel.dataset.node = id;
    const badge = el("div", null, "kg-kind");
    badge.append(swatch(view.type), el("span", view.type));
    panel.append(badge);
    if (view.type === "Paper") paperPanel(view);
    else entityPanel(view);
  }

  function showServedPanel(id) {
    panel.dataset.node = id;
    panel.replaceChildren(el("p", "Loading…", "kg-muted"));
    getJSON(nodeUrl(id) + ".json?related=0").then((view) => {
      if (panel.dataset.node !== id) return; // another node was selected meanwhile
      renderPanel(id, view);
      const box = el("section", null, "kg-served"); // what only the server has: related methods, pages
      if (view.type !== "Paper") box.append(relatedSection(id));
      box.append(pageLinks(view));
      box.dataset.loaded = "true";
      panel.append(box);
    }).catch((error) => {
      if (panel.dataset.node === id) panel.replaceChildren(el("p", "Could not load the details: " + error.message, "kg-error"));
    });
  }

  function entityPanel(view) {
    panel.append(corpus("h2", view.label, "kg-label"));
    const facts = el("dl", null, "kg-facts");
    facts.append(el("dt", "Papers"), el("dd", String(view.paper_count), "kg-paper-count"));
    if (view.reach !== view.paper_count) { // a concept: the papers of its narrower names too, said so
      facts.append(el("dt", "With narrower concepts"), el("dd", String(view.reach), "kg-reach"));
    }
    facts.append(el("dt", "Also known as"));
    const aliases = el("dd");
    if (view.aliases.length) {
      const list = el("ul", null, "kg-aliases");
      for (const alias of view.aliases) list.append(corpus("li", alias));
      aliases.append(list);
    } else {
      aliases.append(el("span", "—", "kg-muted"));
    }
    facts.append(aliases);
    panel.append(facts);
    panel.append(focusButtons(view.id));
    panel.append(el("h3", "Linked papers (" + (view.papers.length + view.papers_not_listed) + ")"));
    panel.append(linkList(view.papers.map((p) => ({ id: p.id, name: p.title, roles: p.roles, evidence: p.evidence }))));
    if (view.papers_not_listed) panel.append(el("p", view.papers_not_listed + " more not listed.", "kg-muted"));
    const related = relationLinks(view);
    if (related.length) {
      panel.append(el("h3", "Relations (" + related.length + ")")); // entities, each with its relations
      panel.append(linkList(related));
    }
    if (view.results.length) {
      panel.append(el("h3", "Results (" + view.results.length + ")"));
      panel.append(resultList(view.results));
    }
    if (view.evidence.length) {
      panel.append(el("h3", "Evidence (" + (view.evidence.length + view.evidence_not_listed) + ")"));
      panel.append(evidenceList(view.evidence));
      if (view.evidence_not_listed) panel.append(el("p", view.evidence_not_listed + " more not listed.", "kg-muted"));
    }
    leftOutNote(view.links_left_out, "link", "links");
  }

  /** An entity's relations as links to the entity at the other end, with the relation's direction
   * ("E-GRPO: variantOf → GRPO"; "GRPO: ← variantOf E-GRPO"; "summarization: narrower → document
   * summarization"); several relations with one entity share a row. */
  function relationLinks(view) {
    const byOther = new Map();
    for (const r of view.relations) {
      const outgoing = r.subject === view.id;
      const other = outgoing ? r.object : r.subject;
      if (!byOther.has(other)) byOther.set(other, { id: other, name: outgoing ? r.object_label : r.subject_label, roles: [], evidence: "" });
      const link = byOther.get(other);
      // The hierarchy reads both ways: "broader →" a concept above, "narrower →" a name below.
      if (r.relation === "broader") link.roles.push(outgoing ? "broader →" : "narrower →");
      else link.roles.push(outgoing ? r.relation + " →" : "← " + r.relation);
      link.evidence = link.evidence || r.sentence;
    }
    return [...byOther.values()];
  }

  function paperPanel(view) {
    panel.append(corpus("h2", view.title || view.label, "kg-label"));
    const where = venueAndYear(view.venue, view.year);
    if (where) panel.append(corpus("p", where, "kg-venue"));
    if (view.authors.length) panel.append(authorList(view.authors));
    if (/^https?:\/\//i.test(view.url)) {
      const link = el("a", view.url, "kg-url");
      link.href = view.url;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      panel.append(link);
    }
    panel.append(focusButtons(view.id));
    panel.append(el("h3", "Abstract"));
    if (view.abstract !== null) {
      panel.append(markedText("p", view.abstract, view.mentions.map((m) => [m.start, m.end, m.label + " · " + m.type + " · " + m.role]), "kg-abstract"));
    } else {
      panel.append(el("p", "Not in this page, which holds the abstracts of the " + tables.holds.abstracts.toLocaleString("en")
        + " most linked papers: kg serve shows it.", "kg-abstract kg-muted"));
    }
    panel.append(el("h3", "Entities (" + view.entities.length + ")"));
    panel.append(linkList(view.entities.map((e) => ({ id: e.id, name: e.label, roles: e.roles, kind: e.type }))));
    leftOutNote(view.links_left_out, "entity", "entities");
  }

  function authorList(authors) {
    const list = isolatedList("p", "", authors, 50);
    list.className = "kg-authors kg-muted";
    return list;
  }

  /** "3 more links not shown in this view." (served) or "… not in this page" (a page too small for the graph). */
  function leftOutNote(count, one, many) {
    if (count > 0) {
      panel.append(el("p", count + " more " + (count === 1 ? one : many)
        + (served ? " not shown in this view." : " not in this page: kg serve shows them."), "kg-muted"));
    }
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

  /** Linked nodes ({id, name, roles, kind?, evidence?}), each with its roles; a click goes to it.
   * Hover shows the evidence sentence. */
  function linkList(links) {
    const list = el("ul", null, "kg-links");
    for (const link of links) {
      const item = el("li");
      const roles = el("span", null, "kg-roles");
      for (const role of link.roles) roles.append(el("span", role, "kg-role"));
      const target = el("button", null, "kg-link");
      target.type = "button";
      if (link.kind) target.append(swatch(link.kind));
      target.append(corpus("span", link.name));
      if (link.evidence) target.title = link.evidence;
      target.addEventListener("click", () => goTo(link.id));
      item.append(roles, target);
      list.append(item);
    }
    return list;
  }

  /** Reported results: the value as written, what reached it on which dataset; hover shows the sentence. */
  function resultList(results) {
    const list = el("ul", null, "kg-results");
    for (const result of results) {
      const item = el("li");
      item.append(corpus("span", result.text + (result.kind === "gain" ? " gain" : ""), "kg-role"));
      const about = el("span");
      if (result.metric) about.append(bdi(result.metric), " ");
      if (result.dataset) about.append("on ", bdi(result.dataset), " ");
      if (result.subject) about.append("by ", bdi(result.subject));
      item.append(about);
      item.title = result.sentence;
      list.append(item);
    }
    return list;
  }

  /** Evidence: each sentence with the mention marked, under the paper's role and title. */
  function evidenceList(items) {
    const list = el("ul", null, "kg-evidence");
    for (const item of items) {
      const row = el("li");
      const head = el("div", null, "kg-evidence-head");
      head.append(el("span", item.role, "kg-role"), nodeButton(item.paper, item.title));
      const spans = item.start === null ? [] : [[item.start, item.end]];
      row.append(head, markedText("p", item.sentence, spans, "kg-sentence"));
      list.append(row);
    }
    return list;
  }

  function nodeButton(id, label) {
    const button = el("button", null, "kg-node-button");
    button.append(bdi(label));
    button.type = "button";
    if (id) button.addEventListener("click", () => goTo(id));
    else button.disabled = true;
    return button;
  }

  // ------------------------------------------------------- panel, served

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
      : tables.search(query, meta.search_limit);
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
    for (const [kind, count] of drawn) if (!toggles.has(kind)) addToggle(kind, count);
    for (const [kind, span] of counts) span.textContent = String(drawn.get(kind) || 0);
  }

  for (const kind of meta.kinds) addToggle(kind.name, kind.count);

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
