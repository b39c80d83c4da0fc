/* The views a panel shows, read from the tables (readTables): the JavaScript twin
 * of kg.views.Tables, which kg serve answers /entity/ID.json and /paper/ID.json with.
 */

/** An entity's panel (kg.views.Tables.entity_view): its papers, each with its roles and first evidence
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
           year: t.paper_year[row] || "", url: t.paper_url[row], authors: t.paper_authors[row].map(text),
           abstract: t.paper_abstract[row], mentions: mentions, entities: entities, links_left_out: linksLeftOut(i) };
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
