"""The explorer's drawing of a graph as vis-network takes it: nodes coloured by kind and sized by
their papers, one edge per linked pair with its roles, and the options (physics for a small
graph only)."""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import networkx as nx
from pyvis.network import Network

from kg.query.tables import PAPER, kinds_in, node_kind, role_order
from kg.strings import truncate
from kg.vocab import COLOURS, SYMMETRIC_RELATIONS

from .layout import SEED

#: One colour per kind: each entity type's from kg.vocab's table; papers stay neutral.
KIND_COLOURS = {**COLOURS, PAPER: "#A0A8B3"}
OTHER_COLOUR = "#6B7280"  # a kind the palette does not know

PAPER_SIZE = 6  # pixels
#: vis-network scales an entity's dot and label between these by its ``value``
#: (the square root of its paper count, so that area follows the count). Labels
#: smaller than ``drawThreshold`` on screen are not drawn: zoomed out, only the
#: big entities are named.
ENTITY_SCALING = {"min": 8, "max": 36, "label": {"enabled": True, "min": 12, "max": 30, "drawThreshold": 5}}
LABEL_LIMIT = 40  # characters of an entity's label drawn on the canvas
#: How the page lays out what it draws (viz/explorer/pack.js): labels and dots sized by papers
#: between these (pixels at zoom 1), each label's box clear of every other by LABEL_GAP, and no more
#: boxes than leave the smallest label MIN_LABEL_PX high on screen once the view is fitted.
LABEL_FONT = (14, 22)
DOT_SIZE = (7, 22)
LABEL_GAP = 10
MIN_LABEL_PX = 11


def kinds_of(G: nx.MultiDiGraph) -> list[str]:
    """Kinds in legend order: entity types, then any unknown kind, then papers."""
    return kinds_in({node_kind(data) for _, data in G.nodes(data=True)})


def drawn_label(data: dict, node: str) -> str:
    return truncate(str(data.get("label", node)), LABEL_LIMIT)


def vis_network(H: nx.MultiDiGraph, positions: dict | None, title: str, *, kinds: list[str]) -> Network:
    """The pyvis network of ``H``: node and edge lists built directly (``add_node`` is quadratic),
    with a colour for each of ``kinds`` (the page may later draw kinds ``H`` lacks)."""
    net = Network(height="100%", width="100%", directed=True, heading=title, cdn_resources="in_line")
    nodes = []
    for node, data in H.nodes(data=True):
        kind = node_kind(data)
        item = {"id": node, "kind": kind, "group": kind, "shape": "dot"}
        if kind == PAPER:
            item["size"] = PAPER_SIZE  # unlabelled: a paper's title shows in its tooltip
        else:
            item["label"] = drawn_label(data, node)
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


def drawing_meta(H: nx.MultiDiGraph, kinds: list[str]) -> dict:
    """How the page draws what it adds itself: the legend (the kinds ``H`` draws, with counts),
    the colour of each of ``kinds`` (the whole graph's, :func:`kinds_of`), the physics of a
    neighbourhood it lays out, and node sizes."""
    counts = Counter(node_kind(data) for _, data in H.nodes(data=True))
    legend = [{"name": kind, "colour": KIND_COLOURS.get(kind, OTHER_COLOUR), "count": counts[kind]}
              for kind in kinds_of(H)]
    colours = {kind: KIND_COLOURS.get(kind, OTHER_COLOUR) for kind in kinds}
    return {"kinds": legend, "colours": colours, "physics": PHYSICS, "paper_size": PAPER_SIZE,
            "label_limit": LABEL_LIMIT, "label_font": LABEL_FONT, "dot_size": DOT_SIZE, "label_gap": LABEL_GAP,
            "min_label_px": MIN_LABEL_PX, "symmetric": sorted(SYMMETRIC_RELATIONS)}


def _ordered_roles(roles) -> list[str]:
    return sorted(set(roles), key=role_order)


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
