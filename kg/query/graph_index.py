"""The index: a graph as a networkx graph, for the explorer, search, neighbourhoods, the server's
views, trends and the exports. :func:`graph_index` makes it from the tables the build kept
(:func:`index_from_tables`), and reads the store only for a graph without them (:func:`load_index`).

Read once per server from the store (kinds, labels, aliases, papers, their role edges and the
relations between entities), so that search and neighbourhoods never query the store. With
``texts``, also what a panel shows (abstracts, authors, URLs, every piece of evidence and the
results), in the shape :func:`kg.link.graph.build_graph` gives, so that the tables
:func:`kg.query.tables.graph_tables` writes of it are those the offline page embeds.
Node ids are the ids :mod:`kg.vocab` mints (``method/group-relative-policy-optimization``,
``paper/abc``), the same as in a built graph and its offline page.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from .. import vocab
from ..link.graph import KnowledgeGraph
from . import kg_terms, view, view_with, with_values
from ..similarity import Vectors
from ..store import PREFIXES, open_graph
from ..strings import fold, js_order
from .views import RELATION_FIELDS, SIMILAR_FIELDS, Tables, kept_tables


@dataclass
class GraphIndex:
    """The nodes and role edges of a graph; nodes carry the attributes
    :func:`kg.viz.render.render_html` reads (papers' abstracts only when loaded with ``texts``)."""

    graph: KnowledgeGraph
    iri: dict[str, str]  # node id -> IRI
    names: list[tuple[str, str, str]] = field(default_factory=list)  # (folded name, name, node id)
    ranks: list[tuple] = field(default_factory=list)  # per name, what search ranks it by (kg.serve.search.ranks)
    by_label: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, label) -> node id
    vectors: Vectors | None = None  # the entities' vectors (kg.similarity), for search by meaning
    panels: dict = field(default_factory=dict)  # node id -> its panel, the last few read (kg.serve.pages)
    tables: Tables | None = None  # the whole graph's tables the build kept, every panel's source

    def find(self, raw: str) -> str | None:
        """The node a URL path names: its id (as minted, or percent-decoded once), else, for
        people typing URLs, ``TYPE/NAME`` with a label or alias (case ignored; the entity most
        papers mention wins); None when nothing matches.

        >>> G = KnowledgeGraph()
        >>> G.add_node("method/group-relative-policy-optimization", kind="Method", papers=2)
        >>> index = GraphIndex(G, {}, names=[("grpo", "GRPO", "method/group-relative-policy-optimization")])
        >>> index.find("method/grpo"), index.find("task/grpo")
        ('method/group-relative-policy-optimization', None)
        """
        from urllib.parse import unquote

        try:  # decoded once; what is no percent-encoding of UTF-8 is taken as written (as the page does)
            decoded = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            decoded = raw
        for candidate in (raw, decoded):
            if candidate in self.graph:
                return candidate
        kind, _, name = decoded.partition("/")
        wanted = fold(name)
        matches = [node for folded, _, node in self.names
                   if folded == wanted and self.graph.nodes[node]["kind"].lower() == kind]
        return min(matches, key=lambda n: (-self.graph.nodes[n].get("papers", 0), js_order(n)), default=None)


def _terms(names) -> list:
    """The IRIs of kg's roles or links (``broader`` is SKOS's), as terms for a ``VALUES`` block."""
    return [ox.NamedNode(str(vocab.link_iri(name) if name in vocab.LINKS else vocab.role_iri(name))) for name in names]


def load_index(store: ox.Store, vectors: Vectors | None = None, *, texts: bool = False,
               scope: Scope | None = None) -> GraphIndex:
    """Read the nodes, names, role edges and links (relations and the hierarchy, with their
    support) of the graph in ``store``; ``vectors`` (:func:`kg.similarity.graph_vectors`) let
    search find entities by meaning. With ``texts``, also read papers' abstracts, authors (in
    name order: RDF keeps no other) and URLs, every edge's evidence and the results
    (``G.results``), as :func:`kg.link.graph.build_graph` holds them.

    With ``scope`` (:func:`scope_of`), only its papers and entities are read, with the papers' edges,
    texts and results and the entities' relations: what one node's panel reads, and no more.

    Rows are taken in the order of their values, not the engine's: the index, and every page
    laid out from it, are the same from the embedded store and from a SPARQL server."""
    G, iris = KnowledgeGraph(), {}
    index = GraphIndex(G, iris, vectors=vectors)

    def add(iri: str, **data) -> str:
        node = vocab.node_of_iri(iri)
        iris[node] = iri
        G.add_node(node, **data)
        return node

    for row in ordered(_select(store, "index-entities", scope and {"e": scope.entities},
                               **{"class": kg_terms(vocab.ENTITY_TYPES)}), "e"):
        kind = row["class"].value.rsplit("#", 1)[-1]
        node = add(row["e"].value, kind=kind, label=row["label"].value, aliases=[],
                   papers=int(row["papers"].value) if row["papers"] else 0,
                   reach=int(row["reach"].value) if row["reach"] else 0,
                   salience=float(row["salience"].value) if row["salience"] else 0.0)
        index.by_label.setdefault((kind, row["label"].value), node)
    for row in ordered(_select(store, "index-aliases", scope and {"e": scope.entities}), "e", "alias"):
        node = vocab.node_of_iri(row["e"].value)
        if node in G:
            G.nodes[node]["aliases"].append(row["alias"].value)
    for row in ordered(_select(store, "index-papers", scope and {"p": scope.papers}), "p"):
        add(row["p"].value, kind="Paper", label=row["label"].value, title=value(row["title"]),
            venue=value(row["venue"]), year=int(row["year"].value) if row["year"] else None,
            decision=value(row["decision"]), url=value(row["url"]), abstract="", authors=[])
    roles = scope.read.get("index-roles") if scope else None
    if roles is None:
        roles = _select(store, "index-roles", scope and {"p": scope.papers}, property=kg_terms(vocab.ROLES))
    for row in ordered(roles, "p", "e", "property"):
        paper, entity = vocab.node_of_iri(row["p"].value), vocab.node_of_iri(row["e"].value)
        if paper in G and entity in G:
            role = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(paper, entity, key=role, role=role)
    relations = scope.read.get("index-relations") if scope else None
    if relations is None:
        relations = _select(store, "index-relations", scope and {"s": scope.focus, "o": scope.focus},
                            property=_terms(vocab.LINKS))
    for row in ordered(relations, "s", "o", "property"):
        subject, other = vocab.node_of_iri(row["s"].value), vocab.node_of_iri(row["o"].value)
        if subject in G and other in G:
            link = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(subject, other, key=link, role=link, papers=int(row["papers"].value))
    # Each paper's similar papers: what its panel lists, and what the map's topics are found from.
    rows = _select(store, "index-similar", scope and {"p": scope.papers})
    for row in sorted(rows, key=lambda row: (row["p"].value, int(row["rank"].value.rsplit("#s", 1)[-1]))):
        paper, other = vocab.node_of_iri(row["p"].value), vocab.node_of_iri(row["other"].value)
        if paper in G and other in G:
            G.nodes[paper].setdefault("similar", []).append(
                (other, *(float(row[part].value) if row[part] else 0.0 for part in ("score", "words", "entities", "meaning"))))
    _name(index)
    if texts:
        _load_texts(store, G, scope)
    return index


def _name(index: GraphIndex) -> None:
    """The names search finds each node of ``index`` by: a paper's title (else label), an entity's
    label and aliases."""
    for node, data in index.graph.nodes(data=True):
        names = [data.get("title") or data["label"]] + list(data.get("aliases", ()))
        index.names += [(fold(name), name, node) for name in dict.fromkeys(names) if name]


def graph_index(graph, vectors: Vectors | None = None) -> GraphIndex:
    """The index of the graph at ``graph``: made from the tables its build kept, else read from its store."""
    tables = kept_tables(graph)
    return index_from_tables(tables, vectors) if tables is not None else load_index(open_graph(graph), vectors)


def index_from_tables(tables: Tables, vectors: Vectors | None = None) -> GraphIndex:
    """The index :func:`load_index` reads of the store (without ``texts``), made from the tables the
    build kept (:func:`kg.query.views.kept_tables`): the same nodes, attributes and edges in the same
    order, which a test holds for whole graphs, in milliseconds where the store takes seconds."""
    t, ids, first = tables.t, tables.ids, tables.first
    G, iris = KnowledgeGraph(), {node: t["base"] + node for node in ids}
    index = GraphIndex(G, iris, vectors=vectors, tables=tables)

    def string(code: int) -> str:
        return t["strings"][code] if code >= 0 else ""

    for i in sorted(range(first), key=lambda i: iris[ids[i]]):
        kind, label = t["kinds"][t["kind"][i]], t["label"][i]
        G.add_node(ids[i], kind=kind, label=label, aliases=sorted(t["aliases"][i] or ()), papers=t["papers"][i],
                   reach=t["reach"][i] or t["papers"][i], salience=t["salience"][i])
        index.by_label.setdefault((kind, label), ids[i])
    for j in sorted(range(first, len(ids)), key=lambda j: iris[ids[j]]):
        row = j - first
        G.add_node(ids[j], kind="Paper", label=t["label"][j], title=t["paper_title"][row],
                   venue=string(t["paper_venue"][row]), year=t["paper_year"][row] or None,
                   decision=string(t["paper_decision"][row]), url=t["paper_url"][row], abstract="", authors=[])
    step = len(SIMILAR_FIELDS)
    for row, similar in enumerate(t["paper_similar"]):  # flat: other, score, words, entities, meaning
        if similar:
            G.nodes[ids[first + row]]["similar"] = [(ids[similar[k]], *similar[k + 1:k + step]) for k in range(0, len(similar), step)]
    roles = [(ids[first + row], ids[links[k]], t["roles"][links[k + 1]])
             for row, links in enumerate(t["paper_links"]) for k in range(0, len(links), 2)]
    for paper, entity, role in sorted(roles, key=lambda r: (iris[r[0]], iris[r[1]], str(vocab.role_iri(r[2])))):
        G.add_edge(paper, entity, key=role, role=role)
    width, rows = len(RELATION_FIELDS), t["relations"]
    links = [(ids[rows[r]], ids[rows[r + 1]], t["roles"][rows[r + 2]], rows[r + 3]) for r in range(0, len(rows), width)]
    for subject, other, link, papers in sorted(links, key=lambda r: (iris[r[0]], iris[r[1]], str(vocab.link_iri(r[2])))):
        G.add_edge(subject, other, key=link, role=link, papers=papers)
    _name(index)
    return index


@dataclass
class Scope:
    """What one node's panel reads (:func:`scope_of`): IRIs of papers and entities, and of the focus
    entity whose relations are read (none for a paper's panel)."""

    papers: list = field(default_factory=list)
    entities: list = field(default_factory=list)
    focus: list = field(default_factory=list)
    read: dict = field(default_factory=dict)  # view name -> the rows scope_of read of it, bound as load_index binds it


#: Terms bound in one query: the engine's time grows with the square of a ``VALUES`` block's length
#: (3,420 papers' results: 7.1 s in one query, 0.8 s in chunks of 100 to 500).
VALUES_CHUNK = 256


def _select(store: ox.Store, name: str, bound: dict | None = None, **kinds) -> list:
    """The solutions of the view ``name`` whose variables in ``kinds`` (``class``, ``property``) take
    one of their terms; with ``bound`` (variable -> terms), only those binding one of its variables
    to one of its terms, each solution once.

    Bound to a few nodes, the kinds are checked here rather than in the query: the engine joins a
    second ``VALUES`` block late, which made one task's evidence take 4 s instead of 0.2 s."""
    if bound is None:
        return list(store.query(view_with(name, **kinds) if kinds else view(name), prefixes=PREFIXES))
    wanted = {variable: {term.value for term in terms} for variable, terms in kinds.items()}
    found = {}
    for variable, terms in bound.items():
        for start in range(0, len(terms), VALUES_CHUNK):
            query = with_values(view(name), variable, *terms[start:start + VALUES_CHUNK])
            for row in store.query(query, prefixes=PREFIXES):
                if all(row[k] is not None and row[k].value in values for k, values in wanted.items()):
                    found.setdefault(tuple(map(str, row)), row)
    return list(found.values())


def scope_of(store: ox.Store, node: str, iri: str) -> Scope:
    """What the panel of ``node`` (its IRI ``iri``) reads: for a paper, it and its similar papers
    with their entities; for an entity, its papers (those linking to it or reporting a result about
    it), their entities and its relations' other ends."""
    term, roles = ox.NamedNode(iri), kg_terms(vocab.ROLES)
    if node.startswith(vocab.paper_node("")):
        papers = {iri} | {row["other"].value for row in _select(store, "index-similar", {"p": [term]})}
        focus = []
    else:
        papers = {row["p"].value for row in _select(store, "index-roles", {"e": [term]}, property=roles)}
        papers |= {row["paper"].value for row in _select(store, "index-result-papers", {"e": [term]})}
        focus = [term]
        # the papers a relation of it is read from: its panel shows their sentences
        papers |= {row["paper"].value for row in _select(store, "index-evidence", {"s": focus, "o": focus},
                                                          property=_terms(vocab.LINKS))}
    paper_terms = [ox.NamedNode(p) for p in sorted(papers)]
    entities = {iri} if focus else set()
    read = {"index-roles": _select(store, "index-roles", {"p": paper_terms}, property=roles),
            "index-relations": _select(store, "index-relations", {"s": focus, "o": focus}, property=_terms(vocab.LINKS))}
    entities |= {row["e"].value for row in read["index-roles"]}
    for row in read["index-relations"]:
        entities |= {row["s"].value, row["o"].value}
    return Scope(paper_terms, [ox.NamedNode(e) for e in sorted(entities)], focus, read)


def node_view(store: ox.Store, node: str, iri: str, tables: Tables | None = None) -> dict | None:
    """The panel of ``node`` (its IRI ``iri``): the view of the whole graph's tables the build kept
    (``tables``: :func:`kg.query.views.kept_tables`), else the view of the tables of only what the panel
    reads of the store (:func:`scope_of`), the same view, which a test holds for every node of a graph."""
    return node_tables(store, node, iri, tables).view(node)


def node_tables(store: ox.Store, node: str, iri: str, tables: Tables | None = None) -> Tables:
    """The tables to read ``node`` (its IRI ``iri``) from: the whole graph's the build kept (``tables``) where
    they hold it, else the tables of only what its panel reads of the store (:func:`scope_of`), with the
    base IRI the kept ones carry."""
    from .tables import graph_tables

    if tables is not None and node in tables.index_of:
        return tables
    scoped = graph_tables(load_index(store, texts=True, scope=scope_of(store, node, iri)).graph, statements=True)
    scoped["base"] = iri[:len(iri) - len(node)]  # an IRI minted here is the graph's base and the node id
    return Tables(scoped)


def _load_texts(store: ox.Store, G: KnowledgeGraph, scope: Scope | None = None) -> None:
    """Add to ``G`` (nodes and edges read by :func:`load_index`) what a panel shows."""
    papers = scope and {"p": scope.papers}
    for row in ordered(_select(store, "index-texts", papers), "p"):
        paper = vocab.node_of_iri(row["p"].value)
        if paper in G:
            G.nodes[paper].update(paper_id=row["id"].value, abstract=row["abstract"].value, url=value(row["url"]))
    for row in ordered(_select(store, "index-authors", papers), "p", "author"):
        paper = vocab.node_of_iri(row["p"].value)
        if paper in G:
            G.nodes[paper]["authors"].append(row["author"].value)
    sentences: dict[str, str] = {}  # each sentence's text held once, however many mentions it holds
    # An entity's panel shows the evidence of its own links only; a paper's, of all its links.
    bound = scope and ({"s": scope.focus, "o": scope.focus} if scope.focus else {"s": scope.papers})
    evidence = _select(store, "index-evidence", bound, property=_terms(vocab.ROLES + vocab.LINKS))
    for row in ordered(evidence, "s", "o", "property", "start"):
        subject, other, paper = (vocab.node_of_iri(row[name].value) for name in ("s", "o", "paper"))
        key = row["property"].value.rsplit("#", 1)[-1]
        if not G.has_edge(subject, other, key) or paper not in G:
            continue
        sentence = sentences.setdefault(row["sentence"].value, row["sentence"].value)
        item = {"start": int(row["start"].value), "end": int(row["end"].value), "sentence": sentence,
                "confidence": float(row["confidence"].value) if row["confidence"] else 0.0}
        if key in vocab.LINKS:  # a relation's evidence names its paper; a role's is its paper's own
            item["paper"] = G.nodes[paper]["paper_id"]
        G.edges[subject, other, key].setdefault("evidence", []).append(item)
    for row in ordered(_select(store, "index-definitions", scope and {"e": scope.entities}), "e"):
        entity, paper = vocab.node_of_iri(row["e"].value), vocab.node_of_iri(row["paper"].value)
        if entity in G and paper in G:
            G.nodes[entity]["definition"] = {"text": row["text"].value, "paper": G.nodes[paper]["paper_id"],
                                             "start": int(row["start"].value), "end": int(row["end"].value),
                                             "sentence": row["sentence"].value}
    results = G.results = []
    for row in ordered(_select(store, "index-results", scope and {"paper": scope.papers}), "paper", "start"):
        paper = vocab.node_of_iri(row["paper"].value)
        if paper not in G:
            continue
        start, end = int(row["start"].value), int(row["end"].value)
        ends = {part: vocab.node_of_iri(row[part].value) if row[part] else None for part in ("metric", "dataset", "subject")}
        results.append({"paper": paper, "value": float(row["value"].value), "unit": value(row["unit"]),
                        "previous": float(row["previous"].value) if row["previous"] else None,
                        "kind": row["kind"].value, "setting": value(row["setting"]) or "", "start": start, "end": end,
                        "confidence": float(row["confidence"].value) if row["confidence"] else 0.0,
                        "text": G.nodes[paper]["abstract"][start:end], "sentence": row["sentence"].value, **ends})


def ordered(rows, *variables: str) -> list:
    """Query solutions sorted by the values of ``variables``."""
    return sorted(rows, key=lambda row: tuple(value(row[name]) for name in variables))


def value(term) -> str:
    """A query solution's value as text, "" when unbound."""
    return term.value if term is not None else ""
