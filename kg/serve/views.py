"""Views: the data behind each page of the server, as plain dicts.

Each HTML page renders one of these and its JSON twin is the same dict, so
the two cannot disagree. Entity and paper views read the store with small
indexed queries (:mod:`kg.queries`); lists come from the index.
"""
from __future__ import annotations

import itertools
from urllib.parse import urlencode

import pyoxigraph as ox

from .. import vocab
from ..queries import examples, kg_terms, view, view_with, with_values
from ..store import PREFIXES
from ..text import clean
from ..viz.render import EVIDENCE_LIMIT  # what a panel lists, offline or served
from .index import GraphIndex, value

PAPERS_LIMIT = 300  # papers an entity's page lists


def example_queries(index: GraphIndex | None = None) -> list[dict]:
    """The shipped example queries, ready to run: each parameter bound to the entity of its type
    that most papers of this graph mention (to the example's own value without an ``index``, or
    when the graph has no entity of that type), so that every example answers on any graph."""
    most_mentioned: dict[str, tuple] = {}  # kind -> (papers, links, label) of the entity chosen
    for node, data in (index.graph.nodes(data=True) if index else ()):
        rank = (data.get("papers", 0), index.graph.in_degree(node), data["label"])
        if rank > most_mentioned.get(data["kind"], (-1,)):
            most_mentioned[data["kind"]] = rank
    shipped = []
    for example in examples().values():
        chosen = {name: most_mentioned.get(example.param_types.get(name, ""), (0, 0, value))[-1]
                  for name, value in example.params.items()}
        shipped.append({"name": example.name, "description": example.description, "query": example.bind(chosen)})
    return shipped


def entity_view(store: ox.Store, index: GraphIndex, node: str) -> dict:
    """An entity: type, names, papers with roles, evidence sentences (mention offsets within
    each), its relations with other entities (with their support in papers), the results
    reported on it, by it or in it, and the SPARQL query listing the evidence.

    The explorer draws its panel from this view when served, and from a view of the same
    shape that it reads from its own tables when opened from disk (``viz/explorer.js``)."""
    data, iri = index.graph.nodes[node], ox.NamedNode(index.iri[node])
    query = with_values(view("panel-evidence"), "entity", iri)
    evidence, more = [], 0
    for row in store.query(query, prefixes=PREFIXES):
        if len(evidence) == EVIDENCE_LIMIT:
            more += 1
            continue
        start, end = int(row["start"].value), int(row["end"].value)
        marked = mark_in_sentence(row["sentence"].value, int(row["from"].value), start, end)
        evidence.append({"paper": vocab.node_of_iri(row["paper"].value), "title": row["title"].value,
                         "role": row["role"].value, "sentence": row["sentence"].value,
                         "start": marked[0] if marked else None, "end": marked[1] if marked else None})
    papers: dict[str, list[str]] = {}
    for paper, _, role in index.graph.in_edges(node, keys=True):
        if role in vocab.ROLES:  # not the relations other entities have with it
            papers.setdefault(paper, []).append(role)
    listed = sorted(papers, key=lambda p: (min(vocab.ROLES.index(r) for r in papers[p]), index.graph.nodes[p]["label"]))
    relations = [{"subject": vocab.node_of_iri(row["subject"].value), "subject_label": row["subjectLabel"].value,
                  "relation": row["relation"].value, "object": vocab.node_of_iri(row["object"].value),
                  "object_label": row["objectLabel"].value, "papers": int(row["papers"].value)}
                 for row in itertools.islice(store.query(with_values(view("entity-relations"), "entity", iri),
                                                         prefixes=PREFIXES), EVIDENCE_LIMIT)]
    def label(term) -> str:  # an entity's label, from the index
        node = vocab.node_of_iri(term.value) if term is not None else None
        return index.graph.nodes[node]["label"] if node in index.graph else ""

    results = sorted(({"paper": vocab.node_of_iri(row["paper"].value), "value": float(row["value"].value),
                       "text": clean(value(row["text"])).text or f"{float(row['value'].value):g}{value(row['unit'])}",
                       "unit": value(row["unit"]), "previous": float(row["previous"].value) if row["previous"] else None,
                       "kind": row["kind"].value, "metric": label(row["metric"]), "dataset": label(row["dataset"]),
                       "subject": label(row["subject"]), "sentence": row["sentence"].value}
                      for row in store.query(with_values(view("entity-results"), "entity", iri), prefixes=PREFIXES)),
                     key=lambda r: (r["dataset"], r["metric"], -r["value"], r["paper"], r["text"]))[:EVIDENCE_LIMIT]
    return {"id": node, "iri": iri.value, "type": data["kind"], "label": data["label"], "aliases": data["aliases"],
            "relations": relations, "results": results, "paper_count": data.get("reach") or data.get("papers", 0),
            "papers": [{"id": p, "title": index.graph.nodes[p]["label"],
                        "roles": sorted(papers[p], key=vocab.ROLES.index)} for p in listed[:PAPERS_LIMIT]],
            "links_left_out": max(0, len(listed) - PAPERS_LIMIT),
            "evidence": evidence, "evidence_not_listed": more, "sparql": query, "urls": urls(node, query)}


def paper_view(store: ox.Store, index: GraphIndex, node: str) -> dict:
    """A paper: its fields, its abstract with every mention's offsets, its entities, and the
    SPARQL query listing the mentions."""
    iri = ox.NamedNode(index.iri[node])
    fields = next(iter(store.query(with_values(view("paper-fields"), "paper", iri), prefixes=PREFIXES)))
    query = with_values(view_with("paper-mentions", **{"class": kg_terms(vocab.ENTITY_TYPES)}), "paper", iri)
    mentions, entities = [], {}
    for row in store.query(query, prefixes=PREFIXES):
        entity = vocab.node_of_iri(row["entity"].value)
        mentions.append({"entity": entity, "label": row["label"].value, "type": row["type"].value,
                         "role": row["role"].value, "start": int(row["start"].value), "end": int(row["end"].value)})
        item = entities.setdefault(entity, {"id": entity, "label": row["label"].value,
                                            "type": row["type"].value, "roles": []})
        if row["role"].value not in item["roles"]:
            item["roles"].append(row["role"].value)
    authors = [row["author"].value for row in store.query(with_values(view("paper-authors"), "paper", iri), prefixes=PREFIXES)]
    return {"id": node, "iri": iri.value, "type": "Paper", "label": fields["label"].value,
            "title": value(fields["title"]), "venue": value(fields["venue"]), "year": value(fields["date"]),
            "url": value(fields["url"]), "authors": authors, "abstract": fields["abstract"].value,
            "mentions": mentions,
            "entities": sorted(entities.values(), key=lambda e: (vocab.ROLES.index(e["roles"][0]), e["label"])),
            "links_left_out": 0, "sparql": query, "urls": urls(node, query)}


def urls(node: str, query: str | None = None) -> dict:
    """A node's page, its JSON twin, its place in the explorer and (given) its query on /query."""
    page = f"/{node}" if node.startswith("paper/") else f"/entity/{node}"
    found = {"html": page, "json": page + ".json", "explorer": "/?" + urlencode({"node": node})}
    if query is not None:
        found["query"] = "/query?" + urlencode({"query": query})
    return found


def mark_in_sentence(sentence: str, at: int, start: int, end: int) -> tuple[int, int] | None:
    """The mention's offsets within ``sentence``, which starts at ``at`` in the abstract, given its
    offsets in the abstract (None if it is not inside the sentence).

    >>> mark_in_sentence("We propose GRPO.", 100, 111, 115), mark_in_sentence("We propose GRPO.", 100, 90, 95)
    ((11, 15), None)
    """
    if at <= start and end <= at + len(sentence):
        return start - at, end - at
    return None


def segments(text: str, spans) -> list[tuple[str, bool]]:
    """``text`` cut at ``spans`` (start, end): ``(piece, marked)`` pairs, overlapping spans skipped.

    >>> segments("We propose GRPO.", [(11, 15)])
    [('We propose ', False), ('GRPO', True), ('.', False)]
    """
    pieces, at = [], 0
    for start, end in sorted(spans):
        if start < at or end > len(text) or start >= end:
            continue
        pieces += [(text[at:start], False), (text[start:end], True)]
        at = end
    pieces.append((text[at:], False))
    return [piece for piece in pieces if piece[0]]


