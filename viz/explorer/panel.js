/* The side panel: a node's view (views.js offline, the server's JSON twin when
 * served) drawn as DOM, with links to other nodes and, served, what only the server
 * has (related methods, the node's pages).
 */

function showEmptyPanel() {
  panel.replaceChildren(
    el("h2", "Nothing selected"),
    el("p", "Click a node, or search by name or alias. Untick a kind in the legend to hide it.", "kg-muted"),
  );
  delete panel.dataset.node;
}

/** A node's panel, drawn from its view: from the page's tables on disk, from the server's
 * /entity/ID.json or /paper/ID.json when served (kg.serve.pages: the same shape). */
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
  if (view.definition) panel.append(definitionBox(view.definition));
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
  if (view.years.length > 1) panel.append(yearChart(view.years));
  panel.append(focusButtons(view.id));
  if (view.leaderboard && view.leaderboard.length) {
    panel.append(el("h3", "Leaderboard"), boardButton("leaderboard", view.id));
    for (const board of view.leaderboard) panel.append(leaderboardBox(board));
  }
  if (view.comparison && view.comparison.length) {
    panel.append(el("h3", "Comparison (" + plural(view.comparison.length, "paper") + ")"), boardButton("comparison", view.id));
    const box = el("div", null, "kg-table-box"); // wider than the panel: it scrolls sideways
    box.append(comparisonTable(view.comparison));
    panel.append(box);
  }
  for (const [key, title] of [["methods", view.comparison ? "Methods proposed for it" : "Methods evaluated on it"],
                              ["datasets", "Datasets"], ["tasks", "Tasks"]]) {
    if (!view[key] || !view[key].length) continue;
    panel.append(el("h3", title));
    panel.append(linkList(view[key].map((e) => ({ id: e.id, name: e.label, kind: e.type, roles: [plural(e.papers, "paper")] }))));
  }
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

/** What a paper says the entity is, with the paper it says it in. */
function definitionBox(definition) {
  const box = corpus("p", definition.text, "kg-definition");
  if (definition.paper) {
    box.append(el("span", " — ", "kg-muted"), nodeButton(definition.paper, truncate(definition.title, 60)));
  }
  if (definition.sentence) box.title = definition.sentence;
  return box;
}

/** Papers per year as a small bar chart: inline SVG, nothing fetched. */
function yearChart(years) {
  const ns = "http://www.w3.org/2000/svg";
  const width = 260, height = 64, bar = Math.min(36, Math.floor(width / years.length) - 4);
  const most = Math.max(...years.map(([, n]) => n));
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "kg-years");
  svg.setAttribute("viewBox", "0 0 " + width + " " + (height + 28));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Papers per year: " + years.map(([y, n]) => y + ": " + n).join(", "));
  years.forEach(([year, count], k) => {
    const x = k * (bar + 4), h = Math.max(1, Math.round(height * count / most));
    const rect = document.createElementNS(ns, "rect");
    for (const [name, value] of [["x", x], ["y", height - h + 12], ["width", bar], ["height", h]]) rect.setAttribute(name, value);
    const tip = document.createElementNS(ns, "title");
    tip.textContent = year + ": " + plural(count, "paper");
    rect.append(tip);
    const value = document.createElementNS(ns, "text");
    value.setAttribute("x", x + bar / 2);
    value.setAttribute("y", height - h + 9);
    value.textContent = String(count);
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", x + bar / 2);
    label.setAttribute("y", height + 26);
    label.textContent = String(year);
    svg.append(rect, value, label);
  });
  return svg;
}

/** One metric's ranked scores on a dataset: value, who reached it, the paper. */
function leaderboardBox(board) {
  const box = el("div", null, "kg-board");
  const head = el("h4");
  head.append(bdi(board.metric + (board.setting ? " (" + board.setting + ")" : "")), el("span", board.better ? " · " + board.better + " is better" : " · papers' order", "kg-muted"));
  const list = el("ol", null, "kg-leaderboard");
  for (const entry of board.results) {
    const row = el("li");
    row.append(el("span", entry.text, "kg-value"), " ", corpus("span", entry.subject || "(not named)", "kg-subject"), " ",
               nodeButton(entry.paper, truncate(entry.title, 50)));
    list.append(row);
  }
  box.append(head, list);
  if (board.not_listed) box.append(el("p", board.not_listed + " more not listed.", "kg-muted"));
  return box;
}

/** A task's papers side by side: what each proposes, where it is evaluated, with what, and its results. */
function comparisonTable(rows) {
  const table = el("table", null, "kg-comparison");
  const head = el("tr");
  for (const title of ["Paper", "Proposes", "Datasets", "Metrics", "Results"]) head.append(el("th", title));
  table.append(head);
  for (const row of rows) {
    const line = el("tr");
    const paper = el("td");
    paper.append(nodeButton(row.paper, truncate(row.title, 60)));
    if (row.year) paper.append(el("span", " " + row.year, "kg-muted"));
    line.append(paper);
    for (const key of ["proposes", "datasets", "metrics"]) {
      const cell = el("td");
      row[key].forEach((entry, k) => cell.append(k ? ", " : "", nodeButton(entry.id, entry.label)));
      line.append(cell);
    }
    const results = el("td");
    row.results.forEach((r, k) => results.append(k ? "; " : "", bdi(resultText(r))));
    line.append(results);
    table.append(line);
  }
  return table;
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
    else if (meta.symmetric.includes(r.relation)) link.roles.push(r.relation + " ↔"); // no direction: "listed with"
    else link.roles.push(outgoing ? r.relation + " →" : "← " + r.relation);
    link.evidence = link.evidence || r.sentence;
  }
  return [...byOther.values()];
}

function paperPanel(view) {
  panel.append(corpus("h2", view.title || view.label, "kg-label"));
  const where = [venueAndYear(view.venue, view.year), view.decision].filter(Boolean).join(" · ");
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
  if (view.similar.length) {
    panel.append(el("h3", "Similar papers (" + view.similar.length + ")"));
    panel.append(similarList(view.similar));
  }
  leftOutNote(view.links_left_out, "entity", "entities");
}

/** Similar papers, each with why: the entities both name (rarest first) and the parts of its score. */
function similarList(items) {
  const list = el("ol", null, "kg-similar");
  for (const item of items) {
    const row = el("li");
    row.append(nodeButton(item.id, truncate(item.title, 80)));
    const why = el("div", null, "kg-muted");
    if (item.shared.length) {
      why.append("both name ");
      item.shared.forEach((e, k) => why.append(k ? ", " : "", nodeButton(e.id, e.label)));
      why.append(" · ");
    }
    why.append("score " + item.score.toFixed(2) + " (words " + item.words.toFixed(2) + ", entities "
               + item.entities.toFixed(2) + ", meaning " + item.meaning.toFixed(2) + ")");
    row.append(why);
    list.append(row);
  }
  return list;
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
    if (result.setting) about.append("(", bdi(result.setting), ") ");
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

/** kg.query.related's methods for an entity: fetched apart, as they can take seconds on a large graph. */
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
    if (info.variants && info.variants.length) { // "soft attention" for attention: its name says how they relate
      const variants = el("ul", null, "kg-variants");
      for (const item of info.variants) {
        const row = el("li");
        row.append(nodeButton(item.id, item.label), el("span", " · " + item.papers + " papers", "kg-muted"));
        variants.append(row);
      }
      box.append(el("h3", "More variants of its name"), variants);
    }
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

// ------------------------------------------------------- panel, the map's

/** A topic's panel: its papers, and its members, most telling first, each with its papers in it. */
function topicPanel(topic, members) {
  panel.replaceChildren();
  panel.dataset.node = topic.id;
  const badge = el("div", null, "kg-kind");
  badge.append(el("span", TOPIC));
  panel.append(badge, corpus("h2", topic.name, "kg-label"));
  const facts = el("dl", null, "kg-facts");
  facts.append(el("dt", "Papers"), el("dd", String(topic.papers), "kg-paper-count"),
               el("dt", "Concepts"), el("dd", String(members.length)));
  panel.append(facts, el("h3", "Its concepts, most telling first"));
  const list = el("ul", null, "kg-links kg-topic-members");
  for (const [id, papers] of members) {
    const item = el("li");
    item.append(swatch(tables.kindOf(indexOf(id))), nodeButton(id, tables.t.label[indexOf(id)]),
                el("span", " · " + plural(papers, "paper"), "kg-muted"));
    list.append(item);
  }
  panel.append(list);
}

/** The panel of a node that stands for a neighbourhood's nodes that did not fit: them, listed. */
function groupPanel(id, ids) {
  panel.replaceChildren();
  panel.dataset.node = id;
  const kind = id.slice(MORE.length);
  panel.append(el("h2", moreLabel(ids.length, kind)),
               el("p", "Within reach of the centre, but not drawn: more would make the labels too small to read.", "kg-muted"));
  const list = el("ul", null, "kg-links");
  for (const other of ids) {
    const item = el("li");
    item.append(nodeButton(other, indexOf(other) === undefined ? other : tables.t.label[indexOf(other)]));
    list.append(item);
  }
  panel.append(list);
}
