"""The explorer: one offline HTML page to browse the knowledge graph.

``render_html`` turns the ``MultiDiGraph`` of :mod:`kg.graph` into a pyvis
network and renders it with our own template (``explorer.html``) instead of
pyvis's, because every pyvis template links Bootstrap (and, in its default
mode, vis-network) from a CDN. The page inlines vis-network (shipped with
pyvis), ``explorer.css`` and ``explorer.js``, so it opens from disk with no
network at all; its Content-Security-Policy forbids any fetch and lets only
those inline scripts run.

Safety: the corpus (titles, abstracts, labels, aliases) reaches the page only
as JSON inside ``<script type="application/json">`` with ``<``, ``>`` and
``&`` escaped, and ``explorer.js`` builds the DOM from it with
``textContent``, never ``innerHTML``.
"""
from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import os
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import networkx as nx
import numpy as np
import pyvis
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from pyvis.network import Network

from kg.vocab import ENTITY_TYPES, ROLES

ASSETS = Path(__file__).parent
VIS_NETWORK = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"

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


def render_html(G: nx.MultiDiGraph, path, *, title: str = "kg", max_nodes: int = 400) -> Path:
    """Write an interactive, offline HTML explorer of ``G`` to ``path``.

    Nodes are coloured by kind (with a legend that doubles as type filters)
    and sized by how many papers mention them; a search box completes over
    labels and aliases; a side panel shows the selected node, its aliases and
    the papers it is linked to with their roles, or a paper's title, venue and
    abstract. The page needs no network: vis-network is inlined.

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
        The most nodes drawn. A larger graph is shown as an overview: the
        entities mentioned by the most papers plus their papers, with the
        number of hidden nodes stated on the page. Above ``LAYOUT_ABOVE``
        shown nodes the layout is computed in Python and physics is off.

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
    _write_atomically(path, render_page(G, title=title, max_nodes=max_nodes))
    return path


def render_page(G: nx.MultiDiGraph, *, title: str = "kg", max_nodes: int = 400, served: bool = False) -> str:
    """The explorer page of ``G`` as HTML text: the page :func:`render_html` writes or, with
    ``served``, the one ``kg serve`` sends.

    A served page may fetch from the server it came from (and nowhere else):
    its side panel loads each node's evidence, related methods and SPARQL
    query, its search box completes over the whole graph, and it can focus on
    the neighbourhood of any node. Parameters and errors are those of
    :func:`render_html`.

    >>> G = nx.MultiDiGraph()
    >>> G.add_node("task/qa", kind="Task", label="QA", aliases=[], papers=0)
    >>> html = render_page(G, title="demo", served=True)
    >>> "connect-src &#39;self&#39;" in html, '"served":true' in html  # the CSP meta, HTML-escaped
    (True, True)
    """
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be at least 1, got {max_nodes}.")
    H = induced(G, select_overview(G, max_nodes))
    positions = layout(H) if len(H) > LAYOUT_ABOVE else None
    net = _network(H, positions, title)
    explorer = _explorer_data(G, H)
    explorer["meta"]["served"] = served
    env = _environment()
    env.globals.update(
        explorer=explorer,
        total_nodes=G.number_of_nodes(),
        hidden_nodes=G.number_of_nodes() - H.number_of_nodes(),
        **_assets(served=served),
    )
    net.templateEnv, net.path = env, "explorer.html"
    return net.generate_html()


def subgraph_data(G: nx.MultiDiGraph, nodes, *, title: str = "kg") -> dict:
    """What the explorer draws when it focuses on ``nodes`` of ``G``: vis-network's nodes, edges and
    options, and the side panel's details, laid out here (physics off) so the page draws at once.

    >>> G = nx.MultiDiGraph([("paper/1", "task/a")])
    >>> G.add_node("paper/1", kind="Paper", label="P1")
    >>> G.add_node("task/a", kind="Task", label="a", aliases=[], papers=1)
    >>> data = subgraph_data(G, ["paper/1", "task/a"])
    >>> sorted(data), [n["id"] for n in data["nodes"]], data["options"]["physics"]
    (['edges', 'explorer', 'nodes', 'options'], ['paper/1', 'task/a'], {'enabled': False})
    """
    H = induced(G, nodes)
    net = _network(H, layout(H) if len(H) else None, title)
    return {"nodes": net.nodes, "edges": net.edges, "options": net.options, "explorer": _explorer_data(G, H)}


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
    present = {_kind(data) for _, data in G.nodes(data=True)}
    known = [k for k in ENTITY_TYPES if k in present]
    other = sorted(present - set(ENTITY_TYPES) - {PAPER}, key=str)
    return known + other + ([PAPER] if PAPER in present else [])


def _kind(data: dict) -> str:
    return str(data.get("kind") or "Entity")  # a node without a kind still gets drawn


def _network(H: nx.MultiDiGraph, positions: dict | None, title: str) -> Network:
    """The pyvis network of ``H``: node and edge lists built directly (``add_node`` is quadratic)."""
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
    net.options = _options(H, physics=positions is None and len(H) > 0)
    return net


def _ordered_roles(roles) -> list[str]:
    return sorted(set(roles), key=lambda r: (ROLE_RANK.get(r, len(ROLE_RANK)), r))


def _options(H: nx.MultiDiGraph, *, physics: bool) -> dict:
    """vis-network options: straight edges, and physics only for a small graph."""
    groups = {kind: {"color": {"background": colour, "border": colour,
                               "highlight": {"background": colour, "border": "#111827"},
                               "hover": {"background": colour, "border": "#111827"}}}
              for kind in kinds_of(H) for colour in [KIND_COLOURS.get(kind, OTHER_COLOUR)]}
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
    if physics:
        options["physics"] = {
            "enabled": True, "solver": "forceAtlas2Based",
            "forceAtlas2Based": {"gravitationalConstant": -60, "centralGravity": 0.012, "springLength": 70,
                                 "springConstant": 0.08, "damping": 0.5, "avoidOverlap": 0.3},
            "maxVelocity": 60, "minVelocity": 1, "timestep": 0.5,
            # The page turns physics off once these iterations are done.
            "stabilization": {"enabled": True, "iterations": 250, "updateInterval": 25, "fit": True},
        }
    else:
        options["physics"] = {"enabled": False}
    return options


def _explorer_data(G: nx.MultiDiGraph, H: nx.MultiDiGraph) -> dict:
    """What the side panel, search box and legend need, beyond vis-network's nodes and edges."""
    details = {}
    results = _results_by_entity(G)
    for node, data in H.nodes(data=True):
        kind = _kind(data)
        links = defaultdict(lambda: {"roles": [], "evidence": ""})
        if kind == PAPER:
            edges = H.out_edges(node, keys=True, data=True)
        else:  # papers' roles towards it, and its relations with other entities both ways
            edges = itertools.chain(H.in_edges(node, keys=True, data=True), H.out_edges(node, keys=True, data=True))
        for source, target, key, edge in edges:
            other = target if source == node else source
            link = links[other]
            role = str(edge.get("role", key))
            if kind != PAPER and _kind(H.nodes[other]) != PAPER:
                role = f"{role} →" if source == node else f"← {role}"  # "E-GRPO: variantOf → GRPO"
            link["roles"].append(role)
            evidence = edge.get("evidence") or []
            if evidence and not link["evidence"]:
                link["evidence"] = str(evidence[0].get("sentence", ""))
        item = {"kind": kind, "label": str(data.get("label", node)),
                "links": sorted(({"id": other, "roles": _ordered_roles(link["roles"]), "evidence": link["evidence"]}
                                 for other, link in links.items()), key=lambda link: _link_order(H, link))}
        if kind == PAPER:
            item.update({key: str(data.get(key) or "") for key in ("title", "venue", "abstract", "url")})
            item["year"] = data.get("year") or ""
            item["authors"] = [str(a) for a in data.get("authors") or []]
            item["hidden_links"] = len(set(G.successors(node))) - len(links)
        else:
            item["aliases"] = [str(a) for a in data.get("aliases") or []]
            item["papers"] = int(data.get("papers", 0))
            item["results"] = results.get(node, [])
            item["hidden_links"] = len(set(G.predecessors(node)) | set(G.successors(node))) - len(links)
        details[node] = item
    counts = Counter(item["kind"] for item in details.values())
    kinds = [{"name": kind, "colour": KIND_COLOURS.get(kind, OTHER_COLOUR), "count": counts[kind]}
             for kind in kinds_of(H)]
    return {"details": details, "meta": {"kinds": kinds}}


def _results_by_entity(G: nx.MultiDiGraph) -> dict[str, list[dict]]:
    """The results reported on each dataset and by each method or model, for their panels: the value
    as written, the metric, the dataset and subject by name, and the sentence."""
    def name(node):
        return str(G.nodes[node]["label"]) if node else ""

    found = defaultdict(list)
    for result in G.graph.get("results", ()):
        shown = {"value": str(result["text"]), "kind": result["kind"], "metric": name(result["metric"]),
                 "dataset": name(result["dataset"]), "subject": name(result["subject"]),
                 "sentence": str(result["sentence"])}
        for part in ("dataset", "subject"):
            if result[part]:
                found[result[part]].append(shown)
    return found


def _link_order(H: nx.MultiDiGraph, link: dict) -> tuple:
    """Strongest role first (the order of ``vocab.ROLES``), then by name."""
    other = H.nodes[link["id"]]
    return ROLE_RANK.get(link["roles"][0], len(ROLE_RANK)), str(other.get("title") or other.get("label", "")).lower()


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
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)


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


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def page_csp(*, served: bool = False) -> str:
    """The explorer's Content-Security-Policy: only its own inline scripts run, and it fetches
    nothing, or, ``served``, only from the server that sent it (``connect-src 'self'``)."""
    vis_js = (VIS_NETWORK / "vis-network.min.js").read_text(encoding="utf-8")
    explorer_js = (ASSETS / "explorer.js").read_text(encoding="utf-8")
    connect = "'self'" if served else "'none'"
    return ("default-src 'none'; "
            f"script-src {_csp_hash(vis_js)} {_csp_hash(explorer_js)}; "
            "style-src 'unsafe-inline'; img-src data:; font-src data:; "
            f"connect-src {connect}; form-action 'none'; base-uri 'none'")


def _assets(*, served: bool = False) -> dict:
    """Inline CSS and JS, and a Content-Security-Policy that runs only these scripts."""
    vis_js = (VIS_NETWORK / "vis-network.min.js").read_text(encoding="utf-8")
    explorer_js = (ASSETS / "explorer.js").read_text(encoding="utf-8")
    csp = page_csp(served=served)
    return {
        "vis_js": _inline(vis_js, "script"),
        "explorer_js": _inline(explorer_js, "script"),
        "vis_css": _inline((VIS_NETWORK / "vis-network.css").read_text(encoding="utf-8"), "style"),
        "explorer_css": _inline((ASSETS / "explorer.css").read_text(encoding="utf-8"), "style"),
        "csp": csp,
    }


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a page is meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
