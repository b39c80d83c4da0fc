"""The graph as compact tables: the one source of every panel, search and neighbourhood.

:func:`graph_tables` writes them. The offline page embeds them and reads them in
``viz/explorer/tables.js`` (``readTables``); ``kg build`` keeps those of its whole graph beside it
(:func:`write_tables`), which ``kg serve`` and the commands read with :class:`kg.query.views.Tables`,
so that a panel is the same offline and served. The
explorer (:mod:`kg.viz.render`) holds as much of a large graph as its page has room for: the
tables are measured as the page writes them (:func:`escaped_json`).
"""
from __future__ import annotations

import json
from collections import defaultdict

import networkx as nx
import orjson

from ..lexicon import lower_is_better
from ..text import clean
from ..vocab import ENTITY_TYPES, RELATIONS, ROLES, entity_node

PAPER = "Paper"
ROLE_RANK = {role: i for i, role in enumerate(ROLES)}  # strongest claim first


def graph_tables(G: nx.MultiDiGraph, *, nodes=None, first=(), budget: int | None = None,
                 statements: bool = False) -> dict:
    """``G`` as compact tables, from which the explorer searches, draws and shows any node.

    Strings that repeat (venues, authors) are written once, in ``strings``;
    the rest is numbers. Nodes are columns
    (``kind``, ``id``, ``label``, ``papers``, ``reach``, ``aliases``) by position: entities
    first, most mentioned first, then papers, most linked first, whose own
    ``paper_*`` columns start at ``first_paper``. A paper's links are flat
    ``[entity, role, entity, role, ...]``; its mentions ``[link, start, length,
    ...]`` and its sentences ``[start, end, ...]``, offsets into its abstract
    in code points (as Python counts). ``relations`` is flat, ``RELATION_FIELDS``
    numbers each; ``results`` holds rows of ``RESULT_FIELDS`` (both in :mod:`kg.query.views`, which
    reads these tables for ``kg serve``). Codes index
    ``kinds``, ``roles`` (in the order a panel lists them) and ``strings``
    (venues and authors). A node's id is its kind's segment and ``id`` (0:
    the slug of its label in lower case), or ``id`` whole for the nodes in
    ``whole_ids``.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        The graph, as for :func:`kg.viz.render.render_html`.
    nodes : iterable, optional
        The nodes to hold (default: all). Counts stay ``G``'s, and
        ``links_total`` gives each node's links in ``G``.
    first : iterable, optional
        Nodes held before any other when the budget is short (what the page
        opens on).
    budget : int, optional
        The most characters of JSON. Past it, the least linked papers lose
        their abstracts (and evidence), then, if that is not enough, are left
        out with the entities only they mention. ``holds`` counts what is held.
    statements : bool, optional
        Also hold every statement behind an edge as the store holds it (``paper_statements``,
        :data:`kg.query.views.STATEMENT_FIELDS`), with the sentences they are read from: what
        ``kg explain`` reads, kept beside a graph but not in the page.

    Returns
    -------
    dict
        The tables, as JSON-ready lists.

    Examples
    --------
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("method/grpo", kind="Method", label="GRPO", aliases=[], papers=1)
    >>> G.add_node("paper/p1", kind="Paper", label="On GRPO", abstract="We propose GRPO.", venue="ICLR")
    >>> _ = G.add_edge("paper/p1", "method/grpo", key="proposes", role="proposes",
    ...                evidence=[{"start": 11, "end": 15, "sentence": "We propose GRPO."}])
    >>> t = graph_tables(G)
    >>> t["kinds"], t["id"], t["label"], t["roles"], t["first_paper"]
    (['Method', 'Paper'], [0, 'p1'], ['GRPO', 'On GRPO'], ['proposes'], 1)
    >>> t["paper_links"], t["paper_mentions"], t["paper_sentences"], t["strings"], t["paper_venue"]
    ([[0, 0]], [[0, 11, 4]], [[0, 16]], ['ICLR'], [0])
    >>> short = graph_tables(G, budget=json_size(t) - 1)  # one character short: no abstract
    >>> short["paper_abstract"], short["holds"]
    ([None], {'nodes': 2, 'of_nodes': 2, 'papers': 1, 'of_papers': 1, 'abstracts': 0, 'of_abstracts': 1})
    """
    held = set(G) if nodes is None else set(nodes)
    first = set(first) & held
    degree = dict(G.degree(held))
    # Ties are broken by what the graph records of a node, not by its links here: a page holding part of
    # a large graph lists a row's entities as the whole graph's tables do.
    entities = sorted((n for n in held if node_kind(G.nodes[n]) != PAPER),
                      key=lambda n: (-int(G.nodes[n].get("papers") or 0), -int(G.nodes[n].get("reach") or 0), str(n)))
    papers = sorted((n for n in held if node_kind(G.nodes[n]) == PAPER),
                    key=lambda n: (n not in first, -degree[n], str(n)))

    def core(count: int):
        kept = papers[:count]
        if count == len(papers):
            return _core_tables(G, entities, kept, whole=nodes is None, statements=statements)
        linked = {e for p in kept for e in G.successors(p)}
        return _core_tables(G, [e for e in entities if e in linked or e in first], kept, whole=False,
                            statements=statements)

    tables, texts = core(len(papers))
    if budget is not None and json_size(tables) > budget:  # the most papers whose core fits; at least the first
        low, high = sum(1 for p in papers if p in first), len(papers)
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if json_size(core(middle)[0]) <= budget else (low, middle - 1)
        tables, texts = core(low)
    _add_texts(tables, texts, None if budget is None else budget - json_size(tables))
    return tables


def store_answers(store) -> dict:
    """What the SPARQL ``store`` of a graph answers that ``kg serve`` shows as it starts, as
    :func:`write_tables` keeps it: its ``triples``, and each example query's parameter values
    (``examples``, :meth:`kg.query.Example.choices`)."""
    from . import examples

    ranked: dict = {}  # each type's names, ranked once for every example
    return {"triples": len(store),
            "examples": {name: example.choices(store, ranked=ranked) for name, example in examples().items()}}


def write_tables(G: nx.MultiDiGraph, path, **columns) -> None:
    """Write the whole graph's tables (:func:`whole_tables`) to ``path`` as JSON: the file ``kg build``
    keeps beside a graph (``NAME.tables.json``), which every answer reads (:func:`kg.query.graph_index.read_tables`).
    orjson writes the bytes ``json.dumps`` would (compact, in UTF-8) in a fifth of the time, and reads
    them in half."""
    with open(path, "wb") as file:
        file.write(orjson.dumps(whole_tables(G, **columns), option=orjson.OPT_NON_STR_KEYS))


def whole_tables(G: nx.MultiDiGraph, *, base: str, topics: list | None = None,
                 triples: int | None = None, examples: dict | None = None) -> dict:
    """The whole graph's tables (:func:`graph_tables`) with every statement behind its edges, as every
    panel, command and the index (:class:`kg.query.graph_index.GraphIndex`) read them. Beside the
    page's columns they hold what the index reads and the page does not: the layout's version
    (:data:`kg.query.views.TABLES_FORMAT`), the base IRI, each entity's salience as the store holds it,
    each paper's title.

    ``kg build`` also keeps in them what ``kg serve`` shows first, which would otherwise be worked out
    again each time it starts (seconds at 20,000 papers): the map of the field, ``topics``
    (:func:`kg.viz.overview.field_map`), and what the graph's SPARQL store answers of it
    (:func:`store_answers`)."""
    from ..write.triples import decimal_literal
    from .views import TABLES_FORMAT, Tables

    tables = graph_tables(G, statements=True)
    ids, first = Tables(tables).ids, tables["first_paper"]  # the nodes in the tables' order
    nodes, papers = ids[:first], ids[first:]
    tables["format"] = TABLES_FORMAT
    tables["base"] = base
    tables["salience"] = [float(decimal_literal(float(G.nodes[n].get("salience") or 0.0))[0]) for n in nodes]
    tables["paper_title"] = [str(G.nodes[n].get("title") or "") for n in papers]
    if topics is not None:
        tables["map"] = [topic.as_json() for topic in topics]
    if triples is not None:
        tables["triples"], tables["examples"] = triples, examples
    return tables


def _core_tables(G: nx.MultiDiGraph, entities: list, papers: list, *, whole: bool,
                 statements: bool = False) -> tuple[dict, list]:
    """The tables of ``entities`` and ``papers`` without abstracts, and for each paper a function
    giving its texts (see :func:`_paper_text`), to add while they fit."""
    order = entities + papers
    index = {node: i for i, node in enumerate(order)}
    links = [(p, e, str(d.get("role", k)), d) for p in papers for _, e, k, d in G.out_edges(p, keys=True, data=True)
             if e in index]
    relations = [(e, o, str(d.get("role", k)), d) for e in entities for _, o, k, d in G.out_edges(e, keys=True, data=True)
                 if o in index and node_kind(G.nodes[o]) != PAPER]
    roles = sorted({role for _, _, role, _ in links + relations}, key=role_order)
    role_code = {role: i for i, role in enumerate(roles)}
    spans = defaultdict(list)  # paper -> (sentence, start, end) that relations and results point into
    paper_of = {G.nodes[p].get("paper_id"): p for p in papers}  # evidence names its paper by id
    tables = {"roles": roles, **_node_columns(G, order), "first_paper": len(entities),
              "relations": _relation_rows(G, relations, index, role_code, spans, paper_of),
              "results": _result_rows(G, index, spans)}
    tables.update(_entity_columns(G, entities, index, spans, paper_of))
    if statements:
        tables["paper_statements"] = _statement_rows(G, papers, relations, index, role_code, spans, paper_of)
    by_paper = defaultdict(list)
    for paper, entity, role, data in links:
        by_paper[paper].append((index[entity], role_code[role], data))
    columns, texts = _paper_columns(G, papers, by_paper, spans)
    tables.update(columns)
    # Each paper's similar papers held here (kg.link.similar), flat: other, score, words, entities, meaning.
    tables["paper_similar"] = [[x for other, *scores in G.nodes[p].get("similar") or () if other in index
                                for x in (index[other], *scores)] for p in papers]
    if not whole:  # so that a panel can say how many of a node's links the page leaves out
        tables["links_total"] = [len(set(G.predecessors(n)) | set(G.successors(n))) for n in order]
    tables["holds"] = {"nodes": len(order), "of_nodes": G.number_of_nodes(), "papers": len(papers),
                       "of_papers": sum(1 for _, d in G.nodes(data=True) if node_kind(d) == PAPER),
                       "abstracts": 0, "of_abstracts": sum(1 for p in papers if G.nodes[p].get("abstract"))}
    return tables, texts


def _node_columns(G: nx.MultiDiGraph, order: list) -> dict:
    """The columns every node has: kind, id, label, papers (mentioning an entity), reach (papers
    mentioning it or a narrower concept; 0 when that is ``papers``), aliases."""
    kinds = kinds_in({node_kind(G.nodes[n]) for n in order})
    code = {kind: i for i, kind in enumerate(kinds)}
    columns = {"kinds": kinds, "kind": [], "id": [], "label": [], "papers": [], "reach": [], "aliases": [],
               "whole_ids": []}
    for i, node in enumerate(order):
        data = G.nodes[node]
        kind, label = node_kind(data), str(data.get("label", node))
        tail = _id_tail(str(node), kind, label)
        if tail is None:
            columns["whole_ids"].append(i)
        columns["kind"].append(code[kind])
        columns["id"].append(str(node) if tail is None else tail)
        columns["label"].append(label)
        columns["papers"].append(0 if kind == PAPER else int(data.get("papers") or 0))
        reach = 0 if kind == PAPER else papers_reached(data)
        columns["reach"].append(0 if reach == columns["papers"][-1] else reach)
        columns["aliases"].append([str(a) for a in data.get("aliases") or []] or 0)
    return columns


def _entity_columns(G: nx.MultiDiGraph, entities: list, index: dict, spans: dict, paper_of: dict) -> dict:
    """Each entity's definition, ``[text, paper, start, length]`` (paper -1 where not held; its
    sentence goes into ``spans``) or 0, and the metrics whose lower or higher values are better."""
    definitions, lower, higher = [], [], []
    for i, node in enumerate(entities):
        data = G.nodes[node]
        found = data.get("definition")
        paper = paper_of.get(found.get("paper")) if found else None
        if found and paper is not None:
            spans[paper].append((found.get("sentence"), found["start"], found["end"]))
            definitions.append([found["text"], index[paper], found["start"], found["end"] - found["start"]])
        else:
            definitions.append([found["text"], -1, 0, 0] if found else 0)
        if node_kind(data) == "Metric":
            better = lower_is_better(str(data.get("label", "")))
            (lower if better else higher if better is False else []).append(i)
    return {"definition": definitions, "lower_is_better": lower, "higher_is_better": higher}


def _relation_rows(G: nx.MultiDiGraph, relations: list, index: dict, role_code: dict, spans: dict,
                   paper_of: dict) -> list[int]:
    """``relations`` as flat ``RELATION_FIELDS`` rows, each with its first evidence in a held paper
    (whose sentence goes into ``spans``): first by paper and offset, not by the order the evidence
    came in, which a graph read back from the store (``kg serve``) does not keep."""
    rows = []
    for s, o, relation, data in sorted(relations, key=lambda r: (index[r[0]], index[r[1]], role_code[r[2]])):
        item = min((item for item in data.get("evidence") or () if paper_of.get(item.get("paper"))
                    and isinstance(item.get("start"), int) and isinstance(item.get("end"), int)),
                   key=lambda item: (paper_of[item["paper"]], item["start"], item["end"]), default=None)
        where = [-1, 0, 0]
        if item:
            paper = paper_of[item["paper"]]
            spans[paper].append((item.get("sentence"), item["start"], item["end"]))
            where = [index[paper], item["start"], item["end"] - item["start"]]
        rows += [index[s], index[o], role_code[relation], int(data.get("papers") or 1), *where]
    return rows


def _statement_rows(G: nx.MultiDiGraph, papers: list, relations: list, index: dict, role_code: dict, spans: dict,
                    paper_of: dict) -> list[list]:
    """Every statement behind an edge, as the store holds one (:mod:`kg.write.triples`: one per
    mention, a role's the most confident at its offset, a relation's the last), per paper it was read
    from: flat ``STATEMENT_FIELDS`` rows, a role's subject the paper itself, by offset. The
    sentences of the relations' go into ``spans``."""
    found: list[dict] = [{} for _ in papers]
    row_of = {p: row for row, p in enumerate(papers)}
    for p in papers:
        for _, target, key, data in G.out_edges(p, keys=True, data=True):
            if target not in index:
                continue
            code = role_code[str(data.get("role", key))]
            for item in data.get("evidence") or ():
                if _placed(item):
                    held = found[row_of[p]].get((code, target, item["start"]))
                    if held is None or item.get("confidence", 0.0) > held.get("confidence", 0.0):
                        found[row_of[p]][code, target, item["start"]] = item
    for s, o, relation, data in relations:
        for item in data.get("evidence") or ():
            paper = paper_of.get(item.get("paper"))
            if paper in row_of and _placed(item):
                spans[paper].append((item.get("sentence"), item["start"], item["end"]))
                found[row_of[paper]][role_code[relation], (s, o), item["start"]] = item
    rows = []
    for row, statements in enumerate(found):
        listed = []
        for (code, ends, start), item in statements.items():
            subject, other = ends if isinstance(ends, tuple) else (papers[row], ends)
            listed.append([index[subject], code, index[other], start, item["end"] - start,
                           round(float(item.get("confidence", 0.0)), 3)])  # as the store writes it
        rows.append([n for statement in sorted(listed, key=lambda s: (s[3], s[4], s[1], s[0], s[2])) for n in statement])
    return rows


def _placed(item: dict) -> bool:
    return isinstance(item.get("start"), int) and isinstance(item.get("end"), int) and item["start"] < item["end"]


def _result_rows(G: nx.MultiDiGraph, index: dict, spans: dict) -> list[list]:
    """The results reported in held papers about held entities, as ``RESULT_FIELDS`` rows (their
    sentences go into ``spans``)."""
    rows = []
    for result in getattr(G, "results", ()):  # a KnowledgeGraph's (kg.link.graph); a served graph has none
        ends = [index.get(result.get(part), -1) for part in ("metric", "dataset", "subject")]
        if result.get("paper") in index and max(ends) >= 0:
            spans[result["paper"]].append((result.get("sentence"), result.get("start"), result.get("end")))
            # The value as written, markup removed ("3.14\\%" reads 3.14%).
            rows.append([index[result["paper"]], clean(str(result.get("text", ""))).text, result.get("kind", "score"), *ends,
                         result.get("start", 0), result.get("value"), result.get("unit") or "", result.get("previous"),
                         result.get("setting") or "", result.get("end", 0) - result.get("start", 0),
                         round(float(result.get("confidence", 0.0)), 3)])  # as the store writes it
    return sorted(rows, key=lambda row: (row[0], row[6]))  # by paper and offset: the store keeps no other order


def _paper_columns(G: nx.MultiDiGraph, papers: list, by_paper: dict, spans: dict) -> tuple[dict, list]:
    """The papers' own columns (venue, year, decision, authors, url, links; abstracts empty for now)
    and the function giving each paper's texts. Venues, decisions and authors repeat: ``strings``
    holds each once."""
    strings: dict[str, int] = {}

    def shared(text) -> int:
        return strings.setdefault(str(text), len(strings)) if text else -1

    columns = {name: [] for name in ("paper_venue", "paper_year", "paper_decision", "paper_authors", "paper_url",
                                     "paper_links")}
    texts = []
    for p in papers:
        data = G.nodes[p]
        edges = sorted(by_paper[p], key=lambda edge: edge[:2])
        columns["paper_venue"].append(shared(data.get("venue")))
        columns["paper_year"].append(data.get("year") or 0)
        columns["paper_decision"].append(shared(data.get("decision")))
        columns["paper_authors"].append([shared(a) for a in data.get("authors") or []])
        columns["paper_url"].append(str(data.get("url") or ""))
        columns["paper_links"].append([n for entity, role, _ in edges for n in (entity, role)])
        texts.append(lambda p=p, edges=edges: _paper_text(G.nodes[p], [data for *_, data in edges], spans[p]))
    columns.update({"strings": list(strings), "paper_abstract": [None] * len(papers),
                    "paper_sentences": [[] for _ in papers], "paper_mentions": [[] for _ in papers]})
    return columns, texts


def _add_texts(tables: dict, texts: list, budget: int | None) -> None:
    """Fill in the papers' abstracts, sentences and mentions, in table order, as long as they fit
    in ``budget`` more characters of JSON."""
    for row, text in enumerate(texts):
        found = text()
        if found is None:
            continue
        cost = sum(json_size(part) for part in found) - json_size([None, [], []]) + len("[,,]")
        if budget is not None:
            if cost > budget:
                break
            budget -= cost
        tables["paper_abstract"][row], tables["paper_sentences"][row], tables["paper_mentions"][row] = found
        tables["holds"]["abstracts"] += 1


def _paper_text(paper: dict, edges: list[dict], spans: list[tuple]) -> tuple[str, list, list] | None:
    """A paper's abstract; the sentences its evidence, relations and results lie in, as flat
    ``[start, end, ...]``; and its mentions as flat ``[link, start, length, ...]`` (``link``: the
    position of the edge in ``edges``)."""
    abstract = str(paper.get("abstract") or "")
    if not abstract:
        return None
    sentences, mentions = set(), set()
    items = [(None, sentence, start, end) for sentence, start, end in spans]
    items += [(link, item.get("sentence"), item.get("start"), item.get("end"))
              for link, data in enumerate(edges) for item in data.get("evidence") or ()]
    for link, sentence, start, end in items:
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(abstract)):
            continue
        if link is not None:
            mentions.add((start, end - start, link))
        if sentence:  # the sentence's occurrence around the mention
            at = abstract.find(str(sentence), max(0, end - len(sentence)))
            if 0 <= at <= start:
                sentences.add((at, at + len(sentence)))
    return (abstract, [n for span in sorted(sentences) for n in span],
            [n for start, length, link in sorted(mentions) for n in (link, start, length)])


def _id_tail(node: str, kind: str, label: str) -> str | int | None:
    """How the tables write ``node``: after its kind's segment (``method/``), 0 if that is the slug of
    its label in lower case (the page mints it back), or None if the id is not ``segment/...`` (it is
    then written whole).

    >>> _id_tail("method/group-relative-policy-optimization", "Method", "Group Relative Policy Optimization")
    0
    >>> _id_tail("method/grpo-2", "Method", "GRPO"), _id_tail("grpo", "Method", "GRPO")
    ('grpo-2', None)
    """
    segment = kind.lower() + "/"
    if not kind.isascii() or not node.startswith(segment):
        return None
    # slug() in viz/explorer/tables.js mints the same as kg.vocab for ASCII text
    return 0 if label.isascii() and node == entity_node(kind, label.lower()) else node[len(segment):]


def role_order(role: str) -> tuple:
    """Paper roles strongest first (``vocab.ROLES``), then relations (``vocab.RELATIONS``), then others."""
    if role in ROLE_RANK:
        return 0, ROLE_RANK[role], role
    return (1, RELATIONS.index(role), role) if role in RELATIONS else (2, 0, role)


def json_size(value) -> int:
    """Characters (and bytes: it is ASCII) of ``value`` in the page (:func:`escaped_json`)."""
    return len(escaped_json(value))


def escaped_json(value) -> str:
    """``value`` as compact ASCII JSON with ``<``, ``>`` and ``&`` escaped, as the page holds it."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def papers_reached(data: dict) -> int:
    """The papers an entity node reaches: its own and its narrower entities' (its own if unknown)."""
    return data.get("reach") or data.get("papers", 0)


def kinds_in(present: set) -> list[str]:
    """``present`` kinds in legend order: entity types, then any unknown kind, then papers."""
    known = [k for k in ENTITY_TYPES if k in present]
    other = sorted(present - set(ENTITY_TYPES) - {PAPER}, key=str)
    return known + other + ([PAPER] if PAPER in present else [])


def node_kind(data: dict) -> str:
    """The kind of a node with attributes ``data``."""
    return str(data.get("kind") or "Entity")  # a node without a kind still gets drawn
