"""The explorer: one offline HTML page to browse the knowledge graph.

``render_html`` turns the ``MultiDiGraph`` of :mod:`kg.graph` into a pyvis
network and renders it with our own template (``explorer.html``) instead of
pyvis's, because every pyvis template links Bootstrap (and, in its default
mode, vis-network) from a CDN. The page inlines vis-network (shipped with
pyvis), ``explorer.css`` and its script, so it opens from disk with no
network at all; its Content-Security-Policy forbids any fetch and lets only
those inline scripts run.

The page opens on an overview (the most mentioned entities and their papers)
but holds the whole graph as compact tables (:func:`graph_tables`), from
which it searches, shows any node's panel and draws any neighbourhood; a
graph too large for ``PAGE_BYTES`` is held in part, most linked papers first,
and the page says so. Its script is the files of ``viz/explorer/`` joined in
order (:func:`explorer_script`).

Safety: the corpus (titles, abstracts, labels, aliases) reaches the page only
as JSON inside ``<script type="application/json">`` with ``<``, ``>`` and
``&`` escaped, and the script builds the DOM from it with
``textContent``, never ``innerHTML``.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import networkx as nx
import numpy as np
import pyvis
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from pyvis.network import Network

from kg.files import replacing
from kg.text import clean
from kg.views import limits
from kg.vocab import BROADER, ENTITY_TYPES, RELATIONS, ROLES, entity_node

ASSETS = Path(__file__).parent
VIS_NETWORK = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
#: The explorer's script: these files of ``viz/explorer/``, one job each, joined in this order
#: into one function scope (:func:`explorer_script`); main.js, last, starts the page.
EXPLORER_SCRIPTS = ("page.js", "dom.js", "tables.js", "views.js", "search.js", "graph.js", "neighbourhood.js",
                    "panel.js", "main.js")

PAPER = "Paper"
#: One colour per kind (Okabe-Ito, readable by colour-blind people); papers stay neutral.
KIND_COLOURS = {
    "Task": "#E69F00",
    "Method": "#0072B2",
    "Dataset": "#009E73",
    "Metric": "#CC79A7",
    "Model": "#D55E00",
    PAPER: "#A0A8B3",
}
OTHER_COLOUR = "#6B7280"  # a kind the palette does not know
ROLE_RANK = {role: i for i, role in enumerate(ROLES)}  # strongest claim first

#: Above this many shown nodes the layout is computed here and physics stays
#: off: vis-network's simulation takes seconds at 500 nodes (bench: MEASURED.md).
LAYOUT_ABOVE = 300
#: networkx lays out 500+ nodes only with scipy, which kg does not depend on.
DENSE_LAYOUT_LIMIT = 499
SPRING_K = 2.5  # networkx uses 1: hubs with many papers then overlap in the middle
LEAF_RING = 80  # pixels from a node to the ring of its single-neighbour nodes
LEAF_GAP = 36  # pixels between neighbours on such a ring
CORE_GAP = 60  # pixels between laid-out nodes, besides their rings
SEED = 7

PAPER_SIZE = 6  # pixels
#: vis-network scales an entity's dot and label between these by its ``value``
#: (the square root of its paper count, so that area follows the count). Labels
#: smaller than ``drawThreshold`` on screen are not drawn: zoomed out, only the
#: big entities are named.
ENTITY_SCALING = {"min": 8, "max": 36, "label": {"enabled": True, "min": 12, "max": 30, "drawThreshold": 5}}
LABEL_LIMIT = 40  # characters of an entity's label drawn on the canvas

#: The size (bytes) an offline page aims to stay under: the whole graph if it fits, else the most
#: linked part of it, the page saying what it holds. Chromium opens 15 MB in about a second.
PAGE_BYTES = 15_000_000
#: A large graph with a concept hierarchy opens on its top concepts (the roots that reach the most
#: papers), each with its largest narrower ones: labelled nodes a person can read, not a hairball.
OVERVIEW_CONCEPTS = 40
OVERVIEW_NARROWER = 3  # narrower concepts shown under each top concept


def render_html(G: nx.MultiDiGraph, path, *, title: str = "kg", max_nodes: int = 400,
                max_bytes: int = PAGE_BYTES) -> Path:
    """Write an interactive, offline HTML explorer of ``G`` to ``path``.

    Nodes are coloured by kind (with a legend that doubles as type filters)
    and sized by how many papers mention them; a search box completes over
    the labels, titles and aliases of the whole graph; a side panel shows any
    node: an entity's aliases, papers with their roles, relations, results and
    evidence sentences, or a paper's title, venue, abstract (its mentions
    marked) and entities. The page needs no network: vis-network is inlined,
    and the graph is embedded as compact tables (:func:`graph_tables`) from
    which the page draws any node's neighbourhood.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        The graph of :func:`kg.graph.build_graph`: nodes with ``kind`` and
        ``label`` (entities also ``aliases`` and ``papers``; papers ``title``,
        ``abstract`` and ``venue``), paper -> entity edges keyed by role.
    path : str or os.PathLike
        The HTML file to write. It is replaced atomically; missing parent
        folders are created.
    title : str, optional
        The page's title and heading.
    max_nodes : int, optional
        The most nodes the page opens on. A larger graph opens on an overview:
        the entities mentioned by the most papers plus their papers, the page
        saying how many nodes it leaves out. Above ``LAYOUT_ABOVE`` shown
        nodes the layout is computed in Python and physics is off.
    max_bytes : int, optional
        The size the page aims to stay under. A graph too large for it is held
        in part, the most linked papers first, and the page says what it holds.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        If ``max_nodes`` is smaller than 1.

    Examples
    --------
    >>> import tempfile
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("method/grpo", kind="Method", label="GRPO",
    ...            aliases=["group relative policy optimization"], papers=1)
    >>> G.add_node("paper/p1", kind="Paper", label="GRPO", title="GRPO",
    ...            abstract="We propose GRPO.", venue="ICLR")
    >>> _ = G.add_edge("paper/p1", "method/grpo", key="proposes", role="proposes")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     page = render_html(G, Path(folder) / "kg.html", title="demo")
    ...     html = page.read_text(encoding="utf-8")
    >>> page.name, "<title>demo</title>" in html, 'src="http' in html
    ('kg.html', True, False)
    """
    path = Path(path)
    with replacing(path) as (out,):
        # "replace": a lone surrogate in a corpus string must not stop the page being written
        out.write(render_page(G, title=title, max_nodes=max_nodes, max_bytes=max_bytes).encode("utf-8", "replace"))
    return path


def render_page(G: nx.MultiDiGraph, *, title: str = "kg", max_nodes: int = 400, served: bool = False,
                max_bytes: int = PAGE_BYTES) -> str:
    """The explorer page of ``G`` as HTML text: the page :func:`render_html` writes or, with
    ``served``, the one ``kg serve`` sends.

    A served page holds only what it draws and fetches the rest from the
    server it came from (and nowhere else): each node's evidence, related
    methods and SPARQL query, search over the whole graph, and the
    neighbourhood of any node. Parameters and errors are those of
    :func:`render_html`.

    >>> G = nx.MultiDiGraph()
    >>> G.add_node("task/qa", kind="Task", label="QA", aliases=[], papers=0)
    >>> html = render_page(G, title="demo", served=True)
    >>> "connect-src &#39;self&#39;" in html, '"served":true' in html  # the CSP meta, HTML-escaped
    (True, True)
    """
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be at least 1, got {max_nodes}.")
    concepts = select_concepts(G, max_nodes) if G.number_of_nodes() > max_nodes else None
    H = induced(G, concepts or select_overview(G, max_nodes))
    positions = layout(H) if len(H) > LAYOUT_ABOVE or concepts else None
    net = _network(H, positions, title, kinds=kinds_of(G), counts=bool(concepts))
    env = _environment()
    env.globals.update(total_nodes=G.number_of_nodes(), hidden_nodes=G.number_of_nodes() - H.number_of_nodes(),
                       concepts=len(concepts or ()), **_assets(served=served))
    net.templateEnv, net.path = env, "explorer.html"

    def page(tables: dict) -> str:
        explorer = _explorer_data(G, H, tables)
        explorer["meta"]["served"] = served
        env.globals.update(explorer=explorer, holds=tables["holds"])
        return net.generate_html()

    if served:
        return page(graph_tables(G, nodes=H))
    empty = graph_tables(G, nodes=())  # the page around its tables, measured once
    around = len(page(empty).encode("utf-8")) - _json_size(empty)
    return page(graph_tables(G, first=H, budget=max_bytes - around))


def subgraph_data(G: nx.MultiDiGraph, nodes, *, title: str = "kg") -> dict:
    """What the explorer draws when it focuses on ``nodes`` of ``G``: vis-network's nodes, edges and
    options, and the tables of those nodes for the side panel, laid out here (physics off) so the
    page draws at once.

    >>> G = nx.MultiDiGraph([("paper/1", "task/a")])
    >>> G.add_node("paper/1", kind="Paper", label="P1")
    >>> G.add_node("task/a", kind="Task", label="a", aliases=[], papers=1)
    >>> data = subgraph_data(G, ["paper/1", "task/a"])
    >>> sorted(data), [n["id"] for n in data["nodes"]], data["options"]["physics"]
    (['edges', 'explorer', 'nodes', 'options'], ['paper/1', 'task/a'], {'enabled': False})
    """
    H = induced(G, nodes)
    net = _network(H, layout(H) if len(H) else None, title, kinds=kinds_of(G))
    return {"nodes": net.nodes, "edges": net.edges, "options": net.options,
            "explorer": _explorer_data(G, H, graph_tables(G, nodes=H))}


def select_concepts(G: nx.MultiDiGraph, max_nodes: int) -> set | None:
    """The top concepts of ``G`` and their largest narrower ones, at most ``max_nodes`` nodes; None
    when ``G`` has no concept hierarchy (no ``broader`` link).

    Top concepts are the entities nothing is broader than, by the papers they reach
    (``reach``, their own and their narrower entities'), :data:`OVERVIEW_CONCEPTS` of them, each
    with its :data:`OVERVIEW_NARROWER` largest narrower entities that reach two papers or more.

    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from([("task/summarization", {"kind": "Task", "reach": 3}),
    ...                   ("task/document-summarization", {"kind": "Task", "reach": 2}),
    ...                   ("task/news-summarization", {"kind": "Task", "reach": 1}),
    ...                   ("task/parsing", {"kind": "Task", "reach": 1}), ("paper/1", {"kind": "Paper"})])
    >>> _ = G.add_edge("task/document-summarization", "task/summarization", key="broader")
    >>> _ = G.add_edge("task/news-summarization", "task/summarization", key="broader")
    >>> sorted(select_concepts(G, 10))
    ['task/document-summarization', 'task/parsing', 'task/summarization']
    """
    narrower = defaultdict(list)
    for source, target, key in G.edges(keys=True):
        if key == BROADER:
            narrower[target].append(source)
    if not narrower:
        return None
    order = lambda n: (-_reach(G.nodes[n]), str(n))  # noqa: E731
    below = {child for children in narrower.values() for child in children}
    roots = sorted((n for n, kind in G.nodes(data="kind") if kind != PAPER and n not in below), key=order)
    keep: set = set()
    for root in roots[:OVERVIEW_CONCEPTS]:
        largest = [n for n in sorted(narrower.get(root, ()), key=order) if _reach(G.nodes[n]) >= 2]  # a one-paper name says little
        for node in [root] + largest[:OVERVIEW_NARROWER]:
            if len(keep) < max_nodes:
                keep.add(node)
    return keep


def _reach(data: dict) -> int:
    """The papers an entity node reaches: its own and its narrower entities' (its own if unknown)."""
    return data.get("reach") or data.get("papers", 0)


def select_overview(G: nx.MultiDiGraph, max_nodes: int) -> set:
    """The at most ``max_nodes`` nodes of ``G`` an overview shows.

    All of them if they fit. Otherwise the entities mentioned by the most
    papers fill half the budget, then the papers linked to most of those
    entities fill the rest; budget still left (a corpus with few papers)
    takes the next entities, then the remaining papers, in the same order.

    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from([("task/a", {"kind": "Task", "papers": 2}),
    ...                   ("task/b", {"kind": "Task", "papers": 1}),
    ...                   ("paper/1", {"kind": "Paper"}), ("paper/2", {"kind": "Paper"})])
    >>> _ = G.add_edges_from([("paper/1", "task/a"), ("paper/2", "task/a"), ("paper/2", "task/b")])
    >>> sorted(select_overview(G, 3))
    ['paper/1', 'paper/2', 'task/a']
    """
    if G.number_of_nodes() <= max_nodes:
        return set(G)
    entities = sorted((n for n, kind in G.nodes(data="kind") if kind != PAPER),
                      key=lambda n: (-G.nodes[n].get("papers", 0), -G.degree(n), str(n)))
    keep = set(entities[: max(1, max_nodes // 2)])
    linked = Counter(p for e in keep for p in set(G.predecessors(e)) if G.nodes[p].get("kind") == PAPER)
    best_papers = sorted(linked, key=lambda p: (-linked[p], str(p)))
    rank = {p: i for i, p in enumerate(best_papers)}
    # First each entity's best paper, so that no shown entity floats alone; then the best papers.
    firsts = (min((p for p in G.predecessors(e) if p in rank), key=rank.get, default=None)
              for e in entities if e in keep)
    for paper in [p for p in firsts if p is not None] + best_papers:
        if len(keep) >= max_nodes:
            break
        keep.add(paper)
    papers = sorted((n for n, kind in G.nodes(data="kind") if kind == PAPER),
                    key=lambda n: (-G.degree(n), str(n)))
    for node in entities + papers:
        if len(keep) >= max_nodes:
            break
        keep.add(node)
    return keep


def layout(H: nx.MultiDiGraph) -> dict:
    """Canvas positions (pixels) for every node of ``H``, the same on every run.

    Each connected component is laid out on its own (a spring layout flings
    unconnected pieces to the edges and squeezes the rest), the largest in the
    middle and the others on rings around it.

    >>> pos = layout(nx.MultiDiGraph([("paper/1", "task/a"), ("paper/2", "task/b")]))
    >>> sorted(pos) == ["paper/1", "paper/2", "task/a", "task/b"]
    True
    """
    simple = nx.Graph(H)  # direction and parallel role edges do not matter here
    parts = sorted((induced(simple, c) for c in nx.connected_components(simple)),
                   key=lambda part: (-len(part), str(next(iter(part)))))
    pos, ring, angle, ring_width = {}, 0.0, 0.0, 0.0
    for i, part in enumerate(parts):
        spread = _spread(part)
        radius = max(math.hypot(x, y) for x, y in spread.values()) + LEAF_RING / 2
        if i == 0:
            centre = (0.0, 0.0)
            ring = radius + LEAF_RING
        else:
            step = radius / ring  # half the angle this part takes on the ring
            if angle + 2 * step > 2 * math.pi:  # the ring is full: start a wider one
                ring, angle, ring_width = ring + ring_width, 0.0, 0.0
                step = radius / ring
            angle += step
            centre = ((ring + radius) * math.cos(angle), (ring + radius) * math.sin(angle))
            angle += step
            ring_width = max(ring_width, 2 * radius)
        for node, (x, y) in spread.items():
            pos[node] = (round(centre[0] + x, 1), round(centre[1] + y, 1))
    return pos


def _spread(part: nx.Graph) -> dict:
    """Positions (pixels, around the origin) for one connected graph.

    The nodes with two or more neighbours (papers and shared entities) get a
    spring layout; each node with a single neighbour (an entity only one paper
    mentions) goes on a ring around that neighbour, where it neither hides
    behind it nor pulls the layout apart. networkx lays out 500+ nodes only
    with scipy, so past ``DENSE_LAYOUT_LIMIT`` core nodes the rest go next to
    their laid-out neighbours.
    """
    by_degree = sorted(part, key=lambda n: (-part.degree(n), str(n)))
    core = [n for n in by_degree if part.degree(n) > 1][:DENSE_LAYOUT_LIMIT] or by_degree[:1]
    in_core = set(core)
    leaves = defaultdict(list)  # core node -> its single-neighbour nodes
    for node in part:
        if node not in in_core and part.degree(node) == 1 and next(iter(part[node])) in in_core:
            leaves[next(iter(part[node]))].append(node)
    ring_of = {anchor: max(LEAF_RING, len(ring) * LEAF_GAP / (2 * math.pi)) for anchor, ring in leaves.items()}

    if len(core) == 1:
        pos = {core[0]: (0.0, 0.0)}
    else:  # room for each core node and its ring, then no two such discs overlapping
        room = {n: ring_of.get(n, 0) + CORE_GAP / 2 for n in core}
        radius = 2 * math.sqrt(sum(r * r for r in room.values()))
        spring = nx.spring_layout(induced(part, core), k=SPRING_K / math.sqrt(len(core)), iterations=100, seed=SEED)
        pos = _separate({n: (float(x) * radius, float(y) * radius) for n, (x, y) in spring.items()}, room)

    for anchor, ring in leaves.items():
        ax, ay = pos[anchor]
        start = math.atan2(ay, ax)  # the first leaf points away from the middle
        ring.sort(key=lambda n: (str(part.nodes[n].get("kind")), str(part.nodes[n].get("label", n))))
        for i, leaf in enumerate(ring):
            angle = start + 2 * math.pi * i / len(ring)
            pos[leaf] = (ax + ring_of[anchor] * math.cos(angle), ay + ring_of[anchor] * math.sin(angle))

    rest = [n for n in by_degree if n not in pos]
    while rest:  # past the dense limit: beside the neighbours already placed
        placed_any, waiting = False, []
        for i, node in enumerate(rest):
            near = [pos[m] for m in part[node] if m in pos]
            if not near:
                waiting.append(node)
                continue
            angle = 2.399963 * i  # the golden angle spreads nodes that share neighbours
            pos[node] = (sum(x for x, _ in near) / len(near) + LEAF_RING * math.cos(angle),
                         sum(y for _, y in near) / len(near) + LEAF_RING * math.sin(angle))
            placed_any = True
        if not placed_any:  # cannot happen in a connected graph; never loop forever
            pos.update({n: (0.0, 0.0) for n in waiting})
            break
        rest = waiting
    return pos


def _separate(points: dict, room: dict, rounds: int = 80) -> dict:
    """``points`` moved apart until no two discs of radius ``room`` overlap (or ``rounds`` run out).

    Each round pushes every overlapping pair apart along the line between
    them, so the spring layout keeps its shape while rings stop covering
    each other.
    """
    nodes = list(points)
    xy = np.array([points[n] for n in nodes], dtype=float)
    radii = np.array([room[n] for n in nodes], dtype=float)
    needed = radii[:, None] + radii[None, :]
    for _ in range(rounds):
        delta = xy[:, None, :] - xy[None, :, :]
        dist = np.hypot(delta[..., 0], delta[..., 1])
        overlap = np.clip(needed - dist, 0, None)
        np.fill_diagonal(overlap, 0)
        if overlap.max() < 1:
            break
        away = delta / np.maximum(dist, 1e-9)[..., None]
        xy += (away * (overlap / 4)[..., None]).sum(axis=1)
    return {n: (float(x), float(y)) for n, (x, y) in zip(nodes, xy)}


def induced(G: nx.Graph, nodes) -> nx.Graph:
    """The subgraph of ``G`` on ``nodes``, as a new graph whose nodes are in sorted order.

    Not ``G.subgraph``: a subgraph view may iterate the set it was given,
    whose order changes from run to run (string hashes are salted), and the
    spring layout, seed or not, depends on the order of the nodes.
    """
    keep = set(nodes)
    order = sorted(keep, key=str)
    S = G.__class__()
    S.add_nodes_from((n, G.nodes[n]) for n in order)
    edges = G.edges(order, keys=True, data=True) if G.is_multigraph() else G.edges(order, data=True)
    S.add_edges_from(e for e in edges if e[1] in keep)
    return S


def kinds_of(G: nx.MultiDiGraph) -> list[str]:
    """Kinds in legend order: entity types, then any unknown kind, then papers."""
    return _kinds_in({_kind(data) for _, data in G.nodes(data=True)})


def _kinds_in(present: set) -> list[str]:
    known = [k for k in ENTITY_TYPES if k in present]
    other = sorted(present - set(ENTITY_TYPES) - {PAPER}, key=str)
    return known + other + ([PAPER] if PAPER in present else [])


def _kind(data: dict) -> str:
    return str(data.get("kind") or "Entity")  # a node without a kind still gets drawn


def _network(H: nx.MultiDiGraph, positions: dict | None, title: str, *, kinds: list[str],
             counts: bool = False) -> Network:
    """The pyvis network of ``H``: node and edge lists built directly (``add_node`` is quadratic),
    with a colour for each of ``kinds`` (the page may later draw kinds ``H`` lacks). With ``counts``,
    entity labels end with the papers each reaches ("reinforcement learning · 153")."""
    net = Network(height="100%", width="100%", directed=True, heading=title, cdn_resources="in_line")
    nodes = []
    for node, data in H.nodes(data=True):
        kind = _kind(data)
        item = {"id": node, "kind": kind, "group": kind, "shape": "dot"}
        if kind == PAPER:
            item["size"] = PAPER_SIZE  # unlabelled: a paper's title shows in its tooltip
        else:
            label = str(data.get("label", node))
            item["label"] = label if len(label) <= LABEL_LIMIT else label[: LABEL_LIMIT - 1] + "…"
            if counts:
                item["label"] += f" · {_reach(data)}"
            item["value"] = round(math.sqrt(max(int(data.get("papers", 0)), 0)), 3)
        if positions:
            item["x"], item["y"] = positions[node]
        nodes.append(item)
    net.nodes, net.node_ids = nodes, [n["id"] for n in nodes]
    net.node_map = {n["id"]: n for n in nodes}

    roles = defaultdict(list)  # one drawn edge per (paper, entity) pair, whatever its roles
    for source, target, key, data in H.edges(keys=True, data=True):
        roles[source, target].append(str(data.get("role", key)))
    net.edges = [{"from": s, "to": t, "roles": _ordered_roles(r), "width": min(len(set(r)), 3)}
                 for (s, t), r in roles.items()]
    net.options = _options(H, physics=positions is None and len(H) > 0, kinds=kinds)
    return net


def _ordered_roles(roles) -> list[str]:
    return sorted(set(roles), key=_role_order)


def _options(H: nx.MultiDiGraph, *, physics: bool, kinds: list[str]) -> dict:
    """vis-network options: straight edges, a colour per kind, and physics only for a small graph."""
    groups = {kind: {"color": {"background": colour, "border": colour,
                               "highlight": {"background": colour, "border": "#111827"},
                               "hover": {"background": colour, "border": "#111827"}}}
              for kind in kinds for colour in [KIND_COLOURS.get(kind, OTHER_COLOUR)]}
    options = {
        "groups": groups,
        "nodes": {"shape": "dot", "borderWidth": 1, "borderWidthSelected": 3, "scaling": ENTITY_SCALING,
                  "font": {"size": 14, "face": "system-ui, sans-serif", "color": "#111827",
                           "strokeWidth": 4, "strokeColor": "#ffffff"}},
        # Smooth edges add a hidden physics node per edge (MEASURED.md).
        "edges": {"smooth": False, "width": 1, "selectionWidth": 1.5,
                  "color": {"color": "#C5CCD6", "highlight": "#374151", "hover": "#6B7280", "inherit": False}},
        "interaction": {"hover": True, "tooltipDelay": 150, "hideEdgesOnDrag": not physics,
                        "multiselect": False},
        "layout": {"randomSeed": SEED, "improvedLayout": H.number_of_nodes() <= 100},
    }
    options["physics"] = PHYSICS if physics else {"enabled": False}
    return options


#: vis-network's simulation for a small graph; the page turns it off once these iterations are done.
PHYSICS = {
    "enabled": True, "solver": "forceAtlas2Based",
    "forceAtlas2Based": {"gravitationalConstant": -60, "centralGravity": 0.012, "springLength": 70,
                         "springConstant": 0.08, "damping": 0.5, "avoidOverlap": 0.3},
    "maxVelocity": 60, "minVelocity": 1, "timestep": 0.5,
    "stabilization": {"enabled": True, "iterations": 250, "updateInterval": 25, "fit": True},
}


def _explorer_data(G: nx.MultiDiGraph, H: nx.MultiDiGraph, tables: dict) -> dict:
    """What the page needs besides vis-network's nodes and edges: the tables of the graph it holds,
    the legend (the kinds ``H`` draws, with counts), every kind's colour, and how to draw the
    neighbourhoods it lays out itself."""
    counts = Counter(_kind(data) for _, data in H.nodes(data=True))
    legend = [{"name": kind, "colour": KIND_COLOURS.get(kind, OTHER_COLOUR), "count": counts[kind]}
              for kind in kinds_of(H)]
    colours = {kind: KIND_COLOURS.get(kind, OTHER_COLOUR) for kind in kinds_of(G)}
    return {"tables": tables, "meta": {
        "kinds": legend, "colours": colours, "physics": PHYSICS, "paper_size": PAPER_SIZE,
        "label_limit": LABEL_LIMIT, **limits()}}


# ------------------------------------------------------------ the graph as tables


def graph_tables(G: nx.MultiDiGraph, *, nodes=None, first=(), budget: int | None = None) -> dict:
    """``G`` as compact tables, from which the explorer searches, draws and shows any node.

    Strings that repeat (venues, authors) are written once, in ``strings``;
    the rest is numbers. Nodes are columns
    (``kind``, ``id``, ``label``, ``papers``, ``reach``, ``aliases``) by position: entities
    first, most mentioned first, then papers, most linked first, whose own
    ``paper_*`` columns start at ``first_paper``. A paper's links are flat
    ``[entity, role, entity, role, ...]``; its mentions ``[link, start, length,
    ...]`` and its sentences ``[start, end, ...]``, offsets into its abstract
    in code points (as Python counts). ``relations`` is flat, ``RELATION_FIELDS``
    numbers each; ``results`` holds rows of ``RESULT_FIELDS`` (both in :mod:`kg.views`, which
    reads these tables for ``kg serve``). Codes index
    ``kinds``, ``roles`` (in the order a panel lists them) and ``strings``
    (venues and authors). A node's id is its kind's segment and ``id`` (0:
    the slug of its label in lower case), or ``id`` whole for the nodes in
    ``whole_ids``.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        The graph, as for :func:`render_html`.
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
    >>> short = graph_tables(G, budget=_json_size(t) - 1)  # one character short: no abstract
    >>> short["paper_abstract"], short["holds"]
    ([None], {'nodes': 2, 'of_nodes': 2, 'papers': 1, 'of_papers': 1, 'abstracts': 0, 'of_abstracts': 1})
    """
    held = set(G) if nodes is None else set(nodes)
    first = set(first) & held
    degree = dict(G.degree(held))
    entities = sorted((n for n in held if _kind(G.nodes[n]) != PAPER),
                      key=lambda n: (-int(G.nodes[n].get("papers") or 0), -degree[n], str(n)))
    papers = sorted((n for n in held if _kind(G.nodes[n]) == PAPER),
                    key=lambda n: (n not in first, -degree[n], str(n)))

    def core(count: int):
        kept = papers[:count]
        if count == len(papers):
            return _core_tables(G, entities, kept, whole=nodes is None)
        linked = {e for p in kept for e in G.successors(p)}
        return _core_tables(G, [e for e in entities if e in linked or e in first], kept, whole=False)

    tables, texts = core(len(papers))
    if budget is not None and _json_size(tables) > budget:  # the most papers whose core fits; at least the first
        low, high = sum(1 for p in papers if p in first), len(papers)
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if _json_size(core(middle)[0]) <= budget else (low, middle - 1)
        tables, texts = core(low)
    _add_texts(tables, texts, None if budget is None else budget - _json_size(tables))
    return tables


def _core_tables(G: nx.MultiDiGraph, entities: list, papers: list, *, whole: bool) -> tuple[dict, list]:
    """The tables of ``entities`` and ``papers`` without abstracts, and for each paper a function
    giving its texts (see :func:`_paper_text`), to add while they fit."""
    order = entities + papers
    index = {node: i for i, node in enumerate(order)}
    links = [(p, e, str(d.get("role", k)), d) for p in papers for _, e, k, d in G.out_edges(p, keys=True, data=True)
             if e in index]
    relations = [(e, o, str(d.get("role", k)), d) for e in entities for _, o, k, d in G.out_edges(e, keys=True, data=True)
                 if o in index and _kind(G.nodes[o]) != PAPER]
    roles = sorted({role for _, _, role, _ in links + relations}, key=_role_order)
    role_code = {role: i for i, role in enumerate(roles)}
    spans = defaultdict(list)  # paper -> (sentence, start, end) that relations and results point into
    tables = {"roles": roles, **_node_columns(G, order), "first_paper": len(entities),
              "relations": _relation_rows(G, relations, index, role_code, spans),
              "results": _result_rows(G, index, spans)}
    by_paper = defaultdict(list)
    for paper, entity, role, data in links:
        by_paper[paper].append((index[entity], role_code[role], data))
    columns, texts = _paper_columns(G, papers, by_paper, spans)
    tables.update(columns)
    if not whole:  # so that a panel can say how many of a node's links the page leaves out
        tables["links_total"] = [len(set(G.predecessors(n)) | set(G.successors(n))) for n in order]
    tables["holds"] = {"nodes": len(order), "of_nodes": G.number_of_nodes(), "papers": len(papers),
                       "of_papers": sum(1 for _, d in G.nodes(data=True) if _kind(d) == PAPER),
                       "abstracts": 0, "of_abstracts": sum(1 for p in papers if G.nodes[p].get("abstract"))}
    return tables, texts


def _node_columns(G: nx.MultiDiGraph, order: list) -> dict:
    """The columns every node has: kind, id, label, papers (mentioning an entity), reach (papers
    mentioning it or a narrower concept; 0 when that is ``papers``), aliases."""
    kinds = _kinds_in({_kind(G.nodes[n]) for n in order})
    code = {kind: i for i, kind in enumerate(kinds)}
    columns = {"kinds": kinds, "kind": [], "id": [], "label": [], "papers": [], "reach": [], "aliases": [],
               "whole_ids": []}
    for i, node in enumerate(order):
        data = G.nodes[node]
        kind, label = _kind(data), str(data.get("label", node))
        tail = _id_tail(str(node), kind, label)
        if tail is None:
            columns["whole_ids"].append(i)
        columns["kind"].append(code[kind])
        columns["id"].append(str(node) if tail is None else tail)
        columns["label"].append(label)
        columns["papers"].append(0 if kind == PAPER else int(data.get("papers") or 0))
        reach = 0 if kind == PAPER else _reach(data)
        columns["reach"].append(0 if reach == columns["papers"][-1] else reach)
        columns["aliases"].append([str(a) for a in data.get("aliases") or []] or 0)
    return columns


def _relation_rows(G: nx.MultiDiGraph, relations: list, index: dict, role_code: dict, spans: dict) -> list[int]:
    """``relations`` as flat ``RELATION_FIELDS`` rows, each with its first evidence in a held paper
    (whose sentence goes into ``spans``): first by paper and offset, not by the order the evidence
    came in, which a graph read back from the store (``kg serve``) does not keep."""
    paper_of = {G.nodes[n].get("paper_id"): n for n in index if _kind(G.nodes[n]) == PAPER}
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


def _result_rows(G: nx.MultiDiGraph, index: dict, spans: dict) -> list[list]:
    """The results reported in held papers about held entities, as ``RESULT_FIELDS`` rows (their
    sentences go into ``spans``)."""
    rows = []
    for result in getattr(G, "results", ()):  # a KnowledgeGraph's (kg.graph); a served graph has none
        ends = [index.get(result.get(part), -1) for part in ("metric", "dataset", "subject")]
        if result.get("paper") in index and max(ends) >= 0:
            spans[result["paper"]].append((result.get("sentence"), result.get("start"), result.get("end")))
            # The value as written, markup removed ("3.14\\%" reads 3.14%).
            rows.append([index[result["paper"]], clean(str(result.get("text", ""))).text, result.get("kind", "score"), *ends,
                         result.get("start", 0), result.get("value"), result.get("unit") or "", result.get("previous")])
    return sorted(rows, key=lambda row: (row[0], row[6]))  # by paper and offset: the store keeps no other order


def _paper_columns(G: nx.MultiDiGraph, papers: list, by_paper: dict, spans: dict) -> tuple[dict, list]:
    """The papers' own columns (venue, year, authors, url, links; abstracts empty for now) and the
    function giving each paper's texts. Venues and authors repeat: ``strings`` holds each once."""
    strings: dict[str, int] = {}

    def shared(text) -> int:
        return strings.setdefault(str(text), len(strings)) if text else -1

    columns = {name: [] for name in ("paper_venue", "paper_year", "paper_authors", "paper_url", "paper_links")}
    texts = []
    for p in papers:
        data = G.nodes[p]
        edges = sorted(by_paper[p], key=lambda edge: edge[:2])
        columns["paper_venue"].append(shared(data.get("venue")))
        columns["paper_year"].append(data.get("year") or 0)
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
        cost = sum(_json_size(part) for part in found) - _json_size([None, [], []]) + len("[,,]")
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
    # explorer.js's slug() mints the same as kg.vocab for ASCII text
    return 0 if label.isascii() and node == entity_node(kind, label.lower()) else node[len(segment):]


def _role_order(role: str) -> tuple:
    """Paper roles strongest first (``vocab.ROLES``), then relations (``vocab.RELATIONS``), then others."""
    if role in ROLE_RANK:
        return 0, ROLE_RANK[role], role
    return (1, RELATIONS.index(role), role) if role in RELATIONS else (2, 0, role)


def _json_size(value) -> int:
    """Characters (and bytes: it is ASCII) of ``value`` in the page."""
    return len(_escaped_json(value))


def script_json(value) -> Markup:
    """``value`` as JSON safe inside a ``<script>`` element.

    ``<``, ``>`` and ``&`` become ``\\u003c``-style escapes, so no string can
    close the element or open a comment; non-ASCII is escaped too (U+2028 and
    lone surrogates included). ``value`` may also be JSON text, as pyvis hands
    its options over serialized.

    >>> str(script_json({"t": "</script><b>&"}))
    '{"t":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    if isinstance(value, str):
        value = json.loads(value)
    return Markup(_escaped_json(value))


def _escaped_json(value) -> str:
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(ASSETS), autoescape=True, undefined=StrictUndefined,
                      keep_trailing_newline=True)
    env.filters["script_json"] = script_json
    return env


def _inline(text: str, tag: str) -> Markup:
    """A trusted asset as the body of an inline ``<script>``/``<style>`` element."""
    for marker in (f"</{tag}", "<!--"):  # either would change where the browser ends the element
        if marker in text.lower():
            raise ValueError(f"Cannot inline an asset that contains {marker!r} into a <{tag}> element: "
                             "it would end the element early. Escape it in the asset.")
    return Markup(text)


def explorer_script() -> str:
    """The explorer's script: the files of :data:`EXPLORER_SCRIPTS` joined in order into one strict
    function scope, where they share the page's data and elements and leave no global behind but
    ``window.kgExplorer``. The offline page and the one ``kg serve`` sends inline this same text,
    and their Content-Security-Policy lets only it (and vis-network) run (:func:`page_csp`).

    >>> script = explorer_script()
    >>> script.startswith('(function () {\\n  "use strict";'), "// viz/explorer/main.js" in script
    (True, True)
    """
    files = [f"// viz/explorer/{name}\n" + (ASSETS / "explorer" / name).read_text(encoding="utf-8")
             for name in EXPLORER_SCRIPTS]
    return '(function () {\n  "use strict";\n\n' + "\n".join(files) + "})();\n"


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def page_csp(*, served: bool = False) -> str:
    """The explorer's Content-Security-Policy: only its own inline scripts run, and it fetches
    nothing, or, ``served``, only from the server that sent it (``connect-src 'self'``)."""
    vis_js = (VIS_NETWORK / "vis-network.min.js").read_text(encoding="utf-8")
    connect = "'self'" if served else "'none'"
    return ("default-src 'none'; "
            f"script-src {_csp_hash(vis_js)} {_csp_hash(explorer_script())}; "
            "style-src 'unsafe-inline'; img-src data:; font-src data:; "
            f"connect-src {connect}; form-action 'none'; base-uri 'none'")


def _assets(*, served: bool = False) -> dict:
    """Inline CSS and JS, and a Content-Security-Policy that runs only these scripts."""
    vis_js = (VIS_NETWORK / "vis-network.min.js").read_text(encoding="utf-8")
    csp = page_csp(served=served)
    return {
        "vis_js": _inline(vis_js, "script"),
        "explorer_js": _inline(explorer_script(), "script"),
        "vis_css": _inline((VIS_NETWORK / "vis-network.css").read_text(encoding="utf-8"), "style"),
        "explorer_css": _inline((ASSETS / "explorer.css").read_text(encoding="utf-8"), "style"),
        "csp": csp,
    }


