/* The views a panel shows, read from the tables (readTables): the JavaScript twin
 * of kg.query.views.Tables, which kg serve answers /entity/ID.json and /paper/ID.json with.
 */

/** An entity's panel (kg.query.views.Tables.entity_view): its papers, each with its roles and first evidence
 * sentence; relations, each with its support and first evidence sentence; results; evidence. */
function entityView(tables, i) {
  const { t, first, ids, papersOf, relationsOf, resultsOf, kindOf, nameOf, evidenceAt, linksLeftOut, rolesByNode } = tables;
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
    const [paper, written, kind, metric, dataset, subject, start, value, unit, previous, setting] = t.results[row];
    const found = evidenceAt(paper - first, start, 1);
    return { paper: ids[paper], value: value, unit: unit, previous: previous, kind: kind, setting: setting, text: written,
             metric: nameOf(metric), dataset: nameOf(dataset), subject: nameOf(subject),
             sentence: found ? found.sentence : "" };
  }).sort((a, b) => compareText(a.dataset, b.dataset) || compareText(a.metric, b.metric) || b.value - a.value);
  const view = { id: ids[i], type: kindOf(i), label: t.label[i], aliases: t.aliases[i] || [],
                 definition: definitionOf(tables, i), years: yearsOf(tables, i), paper_count: t.papers[i],
                 reach: t.reach[i] || t.papers[i], papers: listed.slice(0, meta.papers_limit),
                 papers_not_listed: Math.max(0, listed.length - meta.papers_limit), relations: relations, results: results,
                 evidence: evidence.slice(0, meta.evidence_limit),
                 evidence_not_listed: Math.max(0, evidence.length - meta.evidence_limit),
                 links_left_out: linksLeftOut(i) };
  const papersOfI = [...new Set(papers.map(([p]) => p))];
  if (view.type === meta.page_kinds.benchmark) { // a benchmark's page: its leaderboard, the methods run on it, its tasks
    const methods = linked(tables, papersOfI, meta.proposing, meta.actors);
    for (const row of resultsOf[i]) {
      const [paper, , , , dataset, subject] = t.results[row];
      if (dataset === i && subject >= 0 && meta.actors.includes(kindOf(subject))) {
        if (!methods.has(subject)) methods.set(subject, new Set());
        methods.get(subject).add(paper);
      }
    }
    view.leaderboard = leaderboardOf(tables, i);
    view.methods = counted(tables, methods);
    view.tasks = counted(tables, linked(tables, papersOfI, null, [meta.page_kinds.task]));
  } else if (view.type === meta.page_kinds.task) { // a task's page: its datasets, the methods proposed for it, a comparison
    view.datasets = counted(tables, linked(tables, papersOfI, null, [meta.page_kinds.benchmark]));
    view.methods = counted(tables, linked(tables, papersOfI, meta.proposing, meta.actors));
    view.comparison = comparisonOf(tables, papersOfI);
  }
  return view;
}

/** What a paper says the entity is (kg.query.views.Tables._definition). */
function definitionOf(tables, i) {
  const { t, ids, first, evidenceAt } = tables;
  const found = t.definition[i];
  if (!found) return null;
  const [text, paper, start, length] = found;
  const where = paper >= 0 ? evidenceAt(paper - first, start, length) : null;
  return { text: text, paper: paper >= 0 ? ids[paper] : "", title: paper >= 0 ? t.label[paper] : "",
           sentence: where ? where.sentence : "" };
}

/** [[year, papers], ...], earliest first (kg.query.views.Tables._years). */
function yearsOf(tables, i) {
  const { t, first, papersOf } = tables;
  const counts = new Map();
  for (const p of new Set(papersOf[i].map(([paper]) => paper))) {
    const year = t.paper_year[p - first];
    if (year) counts.set(year, (counts.get(year) || 0) + 1);
  }
  return [...counts.keys()].sort((a, b) => a - b).map((year) => [year, counts.get(year)]);
}

/** The entities of `kinds` that `papers` link to in one of `roles` (any, if null), each with those papers. */
function linked(tables, papers, roles, kinds) {
  const { t, first, kindOf } = tables;
  const found = new Map();
  for (const p of papers) {
    const links = t.paper_links[p - first];
    for (let k = 0; k < links.length; k += 2) {
      if (kinds.includes(kindOf(links[k])) && (roles === null || roles.includes(t.roles[links[k + 1]]))) {
        if (!found.has(links[k])) found.set(links[k], new Set());
        found.get(links[k]).add(p);
      }
    }
  }
  return found;
}

/** Entity -> papers as a list, most papers first (kg.query.views.Tables._counted). */
function counted(tables, found) {
  const { t, ids, kindOf } = tables;
  return [...found].sort(([a, pa], [b, pb]) => pb.size - pa.size || compareText(t.label[a], t.label[b])
    || compareText(ids[a], ids[b])).slice(0, meta.list_limit)
    .map(([e, papers]) => ({ id: ids[e], label: t.label[e], type: kindOf(e), papers: papers.size }));
}

/** The scores on dataset `i` (each with its sentence) by metric and setting, best first where the direction is
 * known (kg.query.views.Tables._leaderboard). */
function leaderboardOf(tables, i) {
  const { t, ids, resultsOf, nameOf, lower, higher } = tables;
  const boards = new Map();
  for (const row of resultsOf[i]) {
    const [paper, written, kind, metric, dataset, subject, start, value, unit, previous, setting] = t.results[row];
    if (dataset !== i || kind !== "score" || metric < 0) continue;
    const key = metric + "\u0000" + setting; // a zero-shot or adversarial score is ranked apart
    if (!boards.has(key)) boards.set(key, { metric: metric, setting: setting, entries: [] });
    const found = tables.evidenceAt(paper - tables.first, start, 1);
    boards.get(key).entries.push({ value: value, unit: unit, previous: previous, text: written, subject: nameOf(subject),
                              paper: ids[paper], title: t.label[paper], sentence: found ? found.sentence : "",
                              order: [paper, start] });
  }
  const listed = [];
  for (const { metric, setting, entries } of boards.values()) {
    const better = lower.has(metric) ? "lower" : higher.has(metric) ? "higher" : "";
    const sign = better === "lower" ? 1 : better === "higher" ? -1 : 0;
    entries.sort((a, b) => sign * a.value - sign * b.value || a.order[0] - b.order[0] || a.order[1] - b.order[1]);
    for (const entry of entries) delete entry.order;
    listed.push({ metric: t.label[metric], metric_id: ids[metric], setting: setting, better: better,
                  results: entries.slice(0, meta.leaderboard_limit),
                  not_listed: Math.max(0, entries.length - meta.leaderboard_limit) });
  }
  return listed.sort((a, b) => (b.results.length + b.not_listed) - (a.results.length + a.not_listed)
    || compareText(a.metric, b.metric) || compareText(a.setting, b.setting));
}

/** A task's papers as a table, each result with its sentence (kg.query.views.Tables._comparison). */
function comparisonOf(tables, papers) {
  const { t, ids, first, kindOf, nameOf, resultsIn } = tables;
  const rows = papers.map((p) => {
    const row = p - first;
    const links = t.paper_links[row];
    const cells = { proposes: [], datasets: [], metrics: [] };
    for (let k = 0; k < links.length; k += 2) {
      const e = links[k], role = t.roles[links[k + 1]], kind = kindOf(e);
      const column = meta.proposing.includes(role) && meta.actors.includes(kind) ? "proposes"
        : kind === meta.page_kinds.benchmark ? "datasets" : kind === meta.page_kinds.metric ? "metrics" : null;
      if (column && !cells[column].some((entry) => entry.id === ids[e])) cells[column].push({ id: ids[e], label: t.label[e] });
    }
    const results = resultsIn[row].map((r) => {
      const [, written, kind, metric, dataset, subject, start, , , , setting] = t.results[r];
      const found = tables.evidenceAt(row, start, 1);
      return { text: written, kind: kind, setting: setting, metric: nameOf(metric), dataset: nameOf(dataset), subject: nameOf(subject),
               sentence: found ? found.sentence : "" };
    });
    return Object.assign({ paper: ids[p], title: t.label[p], year: t.paper_year[row] || "" }, cells, { results: results });
  });
  return rows.sort((a, b) => b.results.length - a.results.length || (b.year || 0) - (a.year || 0)
    || compareText(a.title, b.title) || compareText(a.paper, b.paper)).slice(0, meta.comparison_limit);
}

/** A paper's panel (kg.query.views.Tables.paper_view): abstract null where the page does not hold it. */
function paperView(tables, i) {
  const { t, first, ids, kindOf, text, linksLeftOut, rolesByNode } = tables;
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
           year: t.paper_year[row] || "", decision: text(t.paper_decision[row]), url: t.paper_url[row], authors: t.paper_authors[row].map(text),
           abstract: t.paper_abstract[row], mentions: mentions, entities: entities, similar: similarOf(tables, row),
           links_left_out: linksLeftOut(i) };
}

/** Paper `row`'s similar papers, each with its scores and the entities both name, rarest first
 * (kg.query.views.Tables._similar). */
function similarOf(tables, row) {
  const { t, ids, first } = tables;
  const mine = new Set(t.paper_links[row].filter((_, k) => k % 2 === 0));
  const flat = t.paper_similar[row];
  const found = [];
  for (let k = 0; k < flat.length; k += meta.similar_width) {
    const [other, score, words, entities, meaning] = flat.slice(k, k + meta.similar_width);
    const theirs = new Set(t.paper_links[other - first].filter((_, n) => n % 2 === 0));
    const shared = [...mine].filter((e) => theirs.has(e))
      .sort((a, b) => t.papers[a] - t.papers[b] || compareText(t.label[a], t.label[b]) || compareText(ids[a], ids[b]));
    found.push({ id: ids[other], title: t.label[other], score: score, words: words, entities: entities, meaning: meaning,
                 shared: shared.slice(0, meta.shared_limit).map((e) => ({ id: ids[e], label: t.label[e] })) });
  }
  return found;
}

/** What a tooltip shows. */
function summary(tables, i) {
  const { t, first, isPaper, kindOf, text } = tables;
  if (!isPaper(i)) return { kind: kindOf(i), label: t.label[i], papers: t.papers[i], reach: t.reach[i] || t.papers[i],
                            aliases: t.aliases[i] || [] };
  const row = i - first;
  return { kind: "Paper", label: t.label[i], where: venueAndYear(text(t.paper_venue[row]), t.paper_year[row]),
           abstract: t.paper_abstract[row] || "" };
}

/** "ICLR 2018", or "ICLR · 2018" when the venue does not already name the year. */
function venueAndYear(venue, year) {
  year = year ? String(year) : "";
  return [venue, venue.includes(year) ? "" : year].filter(Boolean).join(" · ");
}
