"""Every answer's one source: the graph's tables (:func:`read_tables`), and the index made of them,
a networkx graph for the explorer, search, neighbourhoods, the server's views, trends and the
exports (:func:`index_from_tables`).

The tables are those the build kept beside the graph. A graph whose build kept none (an RDF file
alone, or a store a SPARQL server holds) has them made once from its store (:func:`store_tables`):
the whole graph read as :func:`kg.link.graph.build_graph` holds it (:func:`load_index` with
``texts``), then written as the build writes them, which a test holds equal to those the build kept.
Node ids are the ids :mod:`kg.vocab` mints (``method/group-relative-policy-optimization``,
``paper/abc``), the same as in a built graph and its offline page.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from .. import vocab
from ..link.graph import KnowledgeGraph
from . import kg_terms, view, view_with
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


def load_index(store: ox.Store, vectors: Vectors | None = None, *, texts: bool = False) -> GraphIndex:
    """Read the nodes, names, role edges and links (relations and the hierarchy, with their
    support) of the graph in ``store``; ``vectors`` (:func:`kg.similarity.graph_vectors`) let
    search find entities by meaning. With ``texts``, also read papers' abstracts, authors (in
    name order: RDF keeps no other) and URLs, every edge's evidence and the results
    (``G.results``), as :func:`kg.link.graph.build_graph` holds them.

    Rows are taken in the order of their values, not the engine's: the index, and every page
    laid out from it, are the same from the embedded store and from a SPARQL server."""
    G, iris = KnowledgeGraph(), {}
    index = GraphIndex(G, iris, vectors=vectors)

    def add(iri: str, **data) -> str:
        node = vocab.node_of_iri(iri)
        iris[node] = iri
        G.add_node(node, **data)
        return node

    for row in ordered(_select(store, "index-entities", **{"class": kg_terms(vocab.ENTITY_TYPES)}), "e"):
        kind = row["class"].value.rsplit("#", 1)[-1]
        node = add(row["e"].value, kind=kind, label=row["label"].value, aliases=[],
                   papers=int(row["papers"].value) if row["papers"] else 0,
                   reach=int(row["reach"].value) if row["reach"] else 0,
                   salience=float(row["salience"].value) if row["salience"] else 0.0)
        index.by_label.setdefault((kind, row["label"].value), node)
    for row in ordered(_select(store, "index-aliases"), "e", "alias"):
        node = vocab.node_of_iri(row["e"].value)
        if node in G:
            G.nodes[node]["aliases"].append(row["alias"].value)
    for row in ordered(_select(store, "index-papers"), "p"):
        add(row["p"].value, kind="Paper", label=row["label"].value, title=value(row["title"]),
            venue=value(row["venue"]), year=int(row["year"].value) if row["year"] else None,
            decision=value(row["decision"]), url=value(row["url"]), abstract="", authors=[])
    for row in ordered(_select(store, "index-roles", property=kg_terms(vocab.ROLES)), "p", "e", "property"):
        paper, entity = vocab.node_of_iri(row["p"].value), vocab.node_of_iri(row["e"].value)
        if paper in G and entity in G:
            role = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(paper, entity, key=role, role=role)
    for row in ordered(_select(store, "index-relations", property=_terms(vocab.LINKS)), "s", "o", "property"):
        subject, other = vocab.node_of_iri(row["s"].value), vocab.node_of_iri(row["o"].value)
        if subject in G and other in G:
            link = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(subject, other, key=link, role=link, papers=int(row["papers"].value))
    # Each paper's similar papers: what its panel lists, and what the map's topics are found from.
    for row in sorted(_select(store, "index-similar"), key=lambda row: (row["p"].value, int(row["rank"].value.rsplit("#s", 1)[-1]))):
        paper, other = vocab.node_of_iri(row["p"].value), vocab.node_of_iri(row["other"].value)
        if paper in G and other in G:
            G.nodes[paper].setdefault("similar", []).append(
                (other, *(float(row[part].value) if row[part] else 0.0 for part in ("score", "words", "entities", "meaning"))))
    _name(index)
    if texts:
        _load_texts(store, G)
    return index


def _name(index: GraphIndex) -> None:
    """The names search finds each node of ``index`` by: a paper's title (else label), an entity's
    label and aliases."""
    for node, data in index.graph.nodes(data=True):
        names = [data.get("title") or data["label"]] + list(data.get("aliases", ()))
        index.names += [(fold(name), name, node) for name in dict.fromkeys(names) if name]


def graph_index(graph, vectors: Vectors | None = None) -> GraphIndex:
    """The index of the graph at ``graph``, made from its tables (:func:`read_tables`)."""
    return index_from_tables(read_tables(graph), vectors)


def read_tables(graph, store: ox.Store | None = None) -> Tables:
    """The tables of the graph at ``graph``: those its build kept (:func:`kg.query.views.kept_tables`),
    else made from its store (:func:`store_tables`): ``store`` where given (a SPARQL server's), else
    the graph's own."""
    tables = kept_tables(graph)
    return tables if tables is not None else store_tables(store if store is not None else open_graph(graph))


def store_tables(store: ox.Store) -> Tables:
    """The tables of the graph in ``store``, as the build writes them (:func:`kg.query.tables.whole_tables`),
    for a graph whose build kept none: seconds on a large graph, once per command or server."""
    from .tables import whole_tables

    index = load_index(store, texts=True)
    some = next(iter(index.iri.items()), None)  # an IRI minted by kg is the graph's base and the node id
    base = some[1][:len(some[1]) - len(some[0])] if some else vocab.DEFAULT_BASE
    return Tables(whole_tables(index.graph, base=base, triples=len(store)))


def index_from_tables(tables: Tables, vectors: Vectors | None = None) -> GraphIndex:
    """The index of a graph made from its ``tables`` (:func:`read_tables`): the nodes, attributes and
    edges :func:`load_index` reads of its store (without ``texts``), in the same order."""
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


def _select(store: ox.Store, name: str, **kinds) -> list:
    """The solutions of the view ``name`` whose variables in ``kinds`` (``class``, ``property``) take
    one of their terms."""
    return list(store.query(view_with(name, **kinds) if kinds else view(name), prefixes=PREFIXES))


def _load_texts(store: ox.Store, G: KnowledgeGraph) -> None:
    """Add to ``G`` (nodes and edges read by :func:`load_index`) what a panel shows."""
    for row in ordered(_select(store, "index-texts"), "p"):
        paper = vocab.node_of_iri(row["p"].value)
        if paper in G:
            G.nodes[paper].update(paper_id=row["id"].value, abstract=row["abstract"].value, url=value(row["url"]))
    for row in ordered(_select(store, "index-authors"), "p", "author"):
        paper = vocab.node_of_iri(row["p"].value)
        if paper in G:
            G.nodes[paper]["authors"].append(row["author"].value)
    sentences: dict[str, str] = {}  # each sentence's text held once, however many mentions it holds
    evidence = _select(store, "index-evidence", property=_terms(vocab.ROLES + vocab.LINKS))
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
    for row in ordered(_select(store, "index-definitions"), "e"):
        entity, paper = vocab.node_of_iri(row["e"].value), vocab.node_of_iri(row["paper"].value)
        if entity in G and paper in G:
            G.nodes[entity]["definition"] = {"text": row["text"].value, "paper": G.nodes[paper]["paper_id"],
                                             "start": int(row["start"].value), "end": int(row["end"].value),
                                             "sentence": row["sentence"].value}
    results = G.results = []
    for row in ordered(_select(store, "index-results"), "paper", "start"):
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
