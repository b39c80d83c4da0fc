"""Canvas positions for the explorer's nodes, computed here when vis-network's simulation would
take too long (:data:`kg.viz.render.LAYOUT_ABOVE`): the same positions on every run."""
from __future__ import annotations

import math
from collections import defaultdict

import networkx as nx
import numpy as np

#: networkx lays out 500+ nodes only with scipy, which kg does not depend on.
DENSE_LAYOUT_LIMIT = 499
SPRING_K = 2.5  # networkx uses 1: hubs with many papers then overlap in the middle
LEAF_RING = 80  # pixels from a node to the ring of its single-neighbour nodes
LEAF_GAP = 36  # pixels between neighbours on such a ring
CORE_GAP = 60  # pixels between laid-out nodes, besides their rings
SEED = 7


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
