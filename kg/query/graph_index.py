"""Every answer's one source: the graph's tables (:func:`read_tables`); the index the server looks
nodes up in and searches, made of them (:class:`GraphIndex`); and the graph as networkx, made of them
too, for the explorer's drawings, trends and the exports (:func:`index_graph`).

The tables are those the build kept beside the graph. A graph whose build kept none (an RDF file
alone, or a store a SPARQL server holds) has them made once from its store (:func:`store_tables`):
the whole graph read as :func:`kg.link.graph.build_graph` holds it (:func:`load_graph` with
``texts``), then written as the build writes them, which a test holds equal to those the build kept.
Node ids are the ids :mod:`kg.vocab` mints (``method/group-relative-policy-optimization``,
``paper/abc``), the same as in a built graph and its offline page.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import pyoxigraph as ox

from .. import vocab
from ..link.graph import KnowledgeGraph
from . import kg_terms, view, view_with
from ..similarity import Vectors
from ..store import PREFIXES, open_graph
from ..strings import fold, js_order
from .views import RELATION_FIELDS, SIMILAR_FIELDS, Tables, kept_tables


class GraphIndex:
    """What the server looks nodes up in, made of the graph's ``tables`` (:func:`read_tables`): each
    node's IRI (``iri``) and the entities by kind and label (``by_label``), in the order of the nodes'
    IRIs; made on first use, the names search finds each node by (``names``) and the graph as networkx
    (``graph``: its nodes, role edges and links, with the attributes :func:`kg.viz.render.render_html`
    reads), which only the explorer's drawings, trends and the exports need."""

    def __init__(self, tables: Tables, vectors: Vectors | Callable[[], Vectors | None] | None = None):
        self.tables = tables
        self._vectors = vectors  # the entities' vectors (kg.similarity), or what reads them when first asked
        self.panels: dict = {}  # node id -> its panel, the last few read (kg.serve.pages)
        self.ranks: list[tuple] = []  # per name, what search ranks it by (kg.serve.search.ranks)
        self._graph: KnowledgeGraph | None = None
        self._names: list[tuple[str, str, str]] | None = None
        self._making, self._naming = threading.Lock(), threading.Lock()  # one each: search need not wait for the graph
        t, ids, first = tables.t, tables.ids, tables.first
        self.iri = {ids[i]: t["base"] + ids[i] for i in _in_iri_order(tables)}  # node id -> IRI
        self.by_label: dict[tuple[str, str], str] = {}  # (kind, label) -> node id
        for node in self.iri:
            i = tables.index_of[node]
            if i < first:
                self.by_label.setdefault((t["kinds"][t["kind"][i]], t["label"][i]), node)

    @property
    def vectors(self) -> Vectors | None:
        """The entities' vectors (:func:`kg.similarity.graph_vectors`), for search by meaning and related
        methods; None for a graph without them."""
        with self._naming:
            if callable(self._vectors):
                self._vectors = self._vectors()
            return self._vectors

    @property
    def names(self) -> list[tuple[str, str, str]]:
        """``(folded name, name, node id)`` for every name search finds a node by: a paper's title, else its
        label; an entity's label and aliases."""
        with self._naming:
            if self._names is None:
                t, first, names = self.tables.t, self.tables.first, []
                for node in self.iri:
                    i = self.tables.index_of[node]
                    said = [t["label"][i], *sorted(t["aliases"][i] or ())] if i < first else \
                        [t["paper_title"][i - first] or t["label"][i]]
                    names += [(fold(name), name, node) for name in dict.fromkeys(said) if name]
                self._names = names
            return self._names

    @property
    def graph(self) -> KnowledgeGraph:
        """The graph as networkx (:func:`index_graph`), made on first use."""
        with self._making:
            if self._graph is None:
                self._graph = index_graph(self.tables)
            return self._graph

    def node(self, node: str) -> tuple[str, str, int]:
        """A node's label, kind and papers (none for a paper), as search lists it."""
        t, i = self.tables.t, self.tables.index_of[node]
        if i >= self.tables.first:
            return t["label"][i], "Paper", 0
        return t["label"][i], t["kinds"][t["kind"][i]], t["papers"][i]

    def find(self, raw: str) -> str | None:
        """The node a URL path names: its id (as minted, or percent-decoded once), else, for
        people typing URLs, ``TYPE/NAME`` with a label or alias (case ignored; the entity most
        papers mention wins); None when nothing matches.

        >>> from kg.query.tables import whole_tables
        >>> G = KnowledgeGraph()
        >>> G.add_node("method/group-relative-policy-optimization", kind="Method", label="Group Relative Policy Optimization",
        ...            aliases=["GRPO"], papers=2)
        >>> index = GraphIndex(Tables(whole_tables(G, base="https://example.org/")))
        >>> index.find("method/grpo"), index.find("task/grpo")
        ('method/group-relative-policy-optimization', None)
        """
        from urllib.parse import unquote

        try:  # decoded once; what is no percent-encoding of UTF-8 is taken as written (as the page does)
            decoded = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            decoded = raw
        for candidate in (raw, decoded):
            if candidate in self.iri:
                return candidate
        kind, _, name = decoded.partition("/")
        wanted = fold(name)
        matches = [node for folded, _, node in self.names if folded == wanted and self.node(node)[1].lower() == kind]
        return min(matches, key=lambda n: (-self.node(n)[2], js_order(n)), default=None)


def _in_iri_order(tables: Tables, held: set[int] | None = None) -> list[int]:
    """The nodes of ``tables`` (those ``held``, if given), the entities then the papers, each in the
    order of their IRIs."""
    base, ids, first = tables.t["base"], tables.ids, tables.first
    nodes = range(len(ids)) if held is None else held
    return sorted((i for i in nodes if i < first), key=lambda i: base + ids[i]) + \
        sorted((j for j in nodes if j >= first), key=lambda j: base + ids[j])


def _terms(names) -> list:
    """The IRIs of kg's roles or links (``broader`` is SKOS's), as terms for a ``VALUES`` block."""
    return [ox.NamedNode(str(vocab.link_iri(name) if name in vocab.LINKS else vocab.role_iri(name))) for name in names]


def load_graph(store: ox.Store, *, texts: bool = False) -> KnowledgeGraph:
    """Read the nodes, role edges and links (relations and the hierarchy, with their support) of the
    graph in ``store``, as :func:`index_graph` makes them of its tables; the IRIs' base in
    ``G.graph["base"]``. With ``texts``, also read papers' abstracts, authors (in name order: RDF keeps
    no other) and URLs, every edge's evidence and the results (``G.results``), as
    :func:`kg.link.graph.build_graph` holds them.

    Rows are taken in the order of their values, not the engine's: the graph is the same from the
    embedded store and from a SPARQL server."""
    G = KnowledgeGraph()
    G.graph["base"] = vocab.DEFAULT_BASE

    def add(iri: str, **data) -> str:
        node = vocab.node_of_iri(iri)
        G.graph["base"] = iri[:len(iri) - len(node)]  # an IRI minted by kg is the graph's base and the node id
        G.add_node(node, **data)
        return node

    for row in ordered(_select(store, "index-entities", **{"class": kg_terms(vocab.ENTITY_TYPES)}), "e"):
        kind = row["class"].value.rsplit("#", 1)[-1]
        add(row["e"].value, kind=kind, label=row["label"].value, aliases=[],
            papers=int(row["papers"].value) if row["papers"] else 0,
            reach=int(row["reach"].value) if row["reach"] else 0,
            salience=float(row["salience"].value) if row["salience"] else 0.0)
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
    if texts:
        _load_texts(store, G)
    return G


def graph_index(graph, vectors: Vectors | None = None) -> GraphIndex:
    """The index of the graph at ``graph``, made from its tables (:func:`read_tables`)."""
    return GraphIndex(read_tables(graph), vectors)


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

    G = load_graph(store, texts=True)
    return Tables(whole_tables(G, base=G.graph["base"], triples=len(store)))


def index_graph(tables: Tables, nodes=None) -> KnowledgeGraph:
    """The graph whose ``tables`` are given (:func:`read_tables`) as networkx: the nodes, attributes and
    edges :func:`load_graph` reads of its store (without ``texts``), in the same order; with ``nodes``,
    only those, the links between them and every role edge of a paper among them, with the entity at
    its other end (so that a paper's degree is the whole graph's)."""
    t, ids, first = tables.t, tables.ids, tables.first
    G = KnowledgeGraph()
    G.graph["base"] = base = t["base"]
    held = None if nodes is None else {tables.index_of[node] for node in nodes if node in tables.index_of}
    named = held if held is None else held | {links[k] for i in held if i >= first
                                              for links in [t["paper_links"][i - first]] for k in range(0, len(links), 2)}

    def string(code: int) -> str:
        return t["strings"][code] if code >= 0 else ""

    for i in _in_iri_order(tables, named):
        if i < first:
            G.add_node(ids[i], kind=t["kinds"][t["kind"][i]], label=t["label"][i], aliases=sorted(t["aliases"][i] or ()),
                       papers=t["papers"][i], reach=t["reach"][i] or t["papers"][i], salience=t["salience"][i])
            continue
        row = i - first
        G.add_node(ids[i], kind="Paper", label=t["label"][i], title=t["paper_title"][row],
                   venue=string(t["paper_venue"][row]), year=t["paper_year"][row] or None,
                   decision=string(t["paper_decision"][row]), url=t["paper_url"][row], abstract="", authors=[])
    step = len(SIMILAR_FIELDS)
    for row, similar in enumerate(t["paper_similar"]):  # flat: other, score, words, entities, meaning
        if similar and (held is None or first + row in held):
            G.nodes[ids[first + row]]["similar"] = [(ids[similar[k]], *similar[k + 1:k + step]) for k in range(0, len(similar), step)]
    role_iri = functools.cache(lambda role: str(vocab.role_iri(role)))  # edges sort as load_graph reads them
    link_iri = functools.cache(lambda link: str(vocab.link_iri(link)))
    rows = range(len(t["paper_links"])) if held is None else sorted(i - first for i in held if i >= first)
    roles = [(ids[first + row], ids[links[k]], t["roles"][links[k + 1]])
             for row in rows for links in [t["paper_links"][row]] for k in range(0, len(links), 2)]
    roles.sort(key=lambda r: (base + r[0], base + r[1], role_iri(r[2])))
    G.add_edges_from((paper, entity, role, {"role": role}) for paper, entity, role in roles)
    width, rows = len(RELATION_FIELDS), t["relations"]
    links = [(ids[rows[r]], ids[rows[r + 1]], t["roles"][rows[r + 2]], rows[r + 3]) for r in range(0, len(rows), width)
             if held is None or (rows[r] in held and rows[r + 1] in held)]
    links.sort(key=lambda r: (base + r[0], base + r[1], link_iri(r[2])))
    G.add_edges_from((subject, other, link, {"role": link, "papers": papers}) for subject, other, link, papers in links)
    return G


def part_tables(tables: Tables, part: KnowledgeGraph, nodes) -> dict:
    """The tables :func:`kg.query.tables.graph_tables` writes of ``nodes`` of the graph whose whole
    ``tables`` are given, made without the whole graph: of ``part``, the graph's part around them
    (:func:`index_graph` of ``tables`` and ``nodes``), with what the whole says of them (each one's
    links in it, how many nodes and papers it has). What ``kg serve``'s explorer opens on (its map's
    members) and draws as a neighbourhood. A test holds them equal to the whole graph's."""
    from .tables import graph_tables

    found = graph_tables(part, nodes=nodes)
    found["links_total"] = [len(tables.neighbours(tables.index_of[node])) for node in Tables(found).ids]
    found["holds"].update(of_nodes=len(tables.ids), of_papers=len(tables.ids) - tables.first)
    return found


def _select(store: ox.Store, name: str, **kinds) -> list:
    """The solutions of the view ``name`` whose variables in ``kinds`` (``class``, ``property``) take
    one of their terms."""
    return list(store.query(view_with(name, **kinds) if kinds else view(name), prefixes=PREFIXES))


def _load_texts(store: ox.Store, G: KnowledgeGraph) -> None:
    """Add to ``G`` (nodes and edges read by :func:`load_graph`) what a panel shows."""
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
