"""The explorer: one offline HTML page to browse the knowledge graph.

``render_html`` turns the ``MultiDiGraph`` of :mod:`kg.link.graph` into a pyvis
network and renders it with our own template (``explorer.html``) instead of
pyvis's, because every pyvis template links Bootstrap (and, in its default
mode, vis-network) from a CDN. The page inlines vis-network (shipped with
pyvis), ``explorer.css`` and its script, so it opens from disk with no
network at all; its Content-Security-Policy forbids any fetch and lets only
those inline scripts run.

A graph too large to draw whole opens on the map of its field (:mod:`.overview`:
topics, communities of papers that read alike), which the page lays
out itself (``viz/explorer/pack.js``) so that every label can be read; a graph
whose papers share too little opens on its most mentioned entities and their
papers, laid out by :mod:`.layout` when large. Either way the page holds the whole graph as compact
tables (:func:`kg.query.tables.graph_tables`), from which it searches, shows any
node's panel and draws any neighbourhood; a graph too large for
``PAGE_BYTES`` is held in part, most linked papers first, and the page says
so. Its script is the files of ``viz/explorer/`` joined in order
(:func:`explorer_script`).

Safety: the corpus (titles, abstracts, labels, aliases) reaches the page only
as JSON inside ``<script type="application/json">`` with ``<``, ``>`` and
``&`` escaped, and the script builds the DOM from it with
``textContent``, never ``innerHTML``.
"""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import networkx as nx
import pyvis
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from kg.files import replacing
from kg.query.tables import escaped_json, graph_tables, json_size
from kg.query.views import Tables, limits

from .layout import induced, layout
from .network import drawing_meta, kinds_of, vis_network
from .overview import Topic, field_map, select_overview

ASSETS = Path(__file__).parent
VIS_NETWORK = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
#: The explorer's script: these files of ``viz/explorer/``, one job each, joined in this order
#: into one function scope (:func:`explorer_script`); main.js, last, starts the page.
EXPLORER_SCRIPTS = ("page.js", "dom.js", "tables.js", "views.js", "search.js", "graph.js", "pack.js", "neighbourhood.js",
                    "map.js", "boards.js", "panel.js", "main.js")

#: Above this many shown nodes the layout is computed here and physics stays
#: off: vis-network's simulation takes seconds at 500 nodes (bench: MEASURED.md).
LAYOUT_ABOVE = 300
#: The size (bytes) an offline page aims to stay under: the whole graph if it fits, else the most
#: linked part of it, the page saying what it holds. Chromium opens 15 MB in about a second.
PAGE_BYTES = 15_000_000


def render_html(G: nx.MultiDiGraph, path, *, title: str = "kg", max_nodes: int = 400,
                max_bytes: int = PAGE_BYTES, topics: list[Topic] | None = None) -> Path:
    """Write an interactive, offline HTML explorer of ``G`` to ``path``.

    Nodes are coloured by kind (with a legend that doubles as type filters)
    and sized by how many papers mention them; a search box completes over
    the labels, titles and aliases of the whole graph; a side panel shows any
    node: an entity's aliases, papers with their roles, relations, results and
    evidence sentences, or a paper's title, venue, abstract (its mentions
    marked) and entities. The page needs no network: vis-network is inlined,
    and the graph is embedded as compact tables (:func:`kg.query.tables.graph_tables`) from
    which the page draws any node's neighbourhood.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        The graph of :func:`kg.link.graph.build_graph`: nodes with ``kind`` and
        ``label`` (entities also ``aliases`` and ``papers``; papers ``title``,
        ``abstract`` and ``venue``), paper -> entity edges keyed by role.
    path : str or os.PathLike
        The HTML file to write. It is replaced atomically; missing parent
        folders are created.
    title : str, optional
        The page's title and heading.
    max_nodes : int, optional
        The most nodes the page opens on. A larger graph opens on the map of its
        topics or, if it has fewer than two, on an overview: the entities mentioned
        by the most papers plus their papers, the page saying how many nodes it leaves out. Above ``LAYOUT_ABOVE`` shown
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
        out.write(render_page(G, title=title, max_nodes=max_nodes, max_bytes=max_bytes, topics=topics)
                  .encode("utf-8", "replace"))
    return path


def render_page(G: nx.MultiDiGraph, *, title: str = "kg", max_nodes: int = 400, served: bool = False,
                max_bytes: int = PAGE_BYTES, topics: list[Topic] | None = None) -> str:
    """The explorer page of ``G`` as HTML text: the page :func:`render_html` writes or, with
    ``served``, the one ``kg serve`` sends. ``topics`` is the map of ``G``'s field where it was made
    already (:func:`kg.viz.overview.field_map`, which it is made by otherwise).

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
    if G.number_of_nodes() <= max_nodes:
        topics = []
    elif topics is None:
        topics = field_map(G)
    if len(topics) < 2:  # papers share too little to map: the most mentioned entities and their papers
        topics = []
        H = induced(G, select_overview(G, max_nodes))
        net = vis_network(H, layout(H) if len(H) > LAYOUT_ABOVE else None, title, kinds=kinds_of(G))
    else:  # the page draws the map itself (viz/explorer/map.js); it holds each topic's members
        H = induced(G, {entity for topic in topics for entity, _ in topic.members})
        net = vis_network(nx.MultiDiGraph(), None, title, kinds=kinds_of(G))
    page = _page(net, H, kinds_of(G), G.number_of_nodes(), topics, served=served)
    if served:
        return page(graph_tables(G, nodes=H))
    empty = graph_tables(G, nodes=())  # the page around its tables, measured once
    around = len(page(empty).encode("utf-8")) - json_size(empty)
    return page(graph_tables(G, first=H, budget=max_bytes - around))


def served_map_page(tables: Tables, topics: list[Topic], *, title: str = "kg") -> str:
    """The page :func:`render_page` serves (``served``) of the graph whose ``tables`` are given
    (:func:`kg.query.graph_index.read_tables`) where it opens on the map of ``topics`` (two or more, and
    more nodes than it draws), made of the tables alone: ``kg serve``'s first page, with no graph to
    make first. A test holds the two pages equal."""
    from kg.query.graph_index import index_graph, part_tables

    members = {entity for topic in topics for entity, _ in topic.members}
    part = index_graph(tables, members)
    H = induced(part, members)
    net = vis_network(nx.MultiDiGraph(), None, title, kinds=tables.t["kinds"])
    return _page(net, H, tables.t["kinds"], len(tables.ids), topics, served=True)(part_tables(tables, part, H))


def _page(net, H: nx.MultiDiGraph, kinds: list[str], total: int, topics: list[Topic], *, served: bool):
    """The page of ``net`` around the tables it is given: ``H`` what it draws first, ``kinds`` the
    whole graph's (its legend's colours), ``total`` its nodes."""
    env = _environment()
    env.globals.update(total_nodes=total, hidden_nodes=total - H.number_of_nodes(), topics=len(topics),
                       **_assets(served=served))
    net.templateEnv, net.path = env, "explorer.html"

    def page(tables: dict) -> str:
        explorer = {"tables": tables, "meta": {**drawing_meta(H, kinds), **limits()}}
        explorer["meta"]["served"] = served
        explorer["map"] = [topic.as_json() for topic in topics]
        env.globals.update(explorer=explorer, holds=tables["holds"])
        return net.generate_html()

    return page


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
    return _drawing(H, kinds_of(G), graph_tables(G, nodes=H), title)


def served_subgraph_data(tables: Tables, nodes, *, title: str = "kg") -> dict:
    """:func:`subgraph_data` of the graph whose ``tables`` are given, made of them alone (of the graph's
    part around ``nodes``, :func:`kg.query.graph_index.part_tables`): ``kg serve``'s neighbourhoods, with
    no whole graph to make first. A test holds the two equal."""
    from kg.query.graph_index import index_graph, part_tables

    part = index_graph(tables, nodes)
    H = induced(part, nodes)
    return _drawing(H, tables.t["kinds"], part_tables(tables, part, H), title)


def _drawing(H: nx.MultiDiGraph, kinds: list[str], tables: dict, title: str) -> dict:
    """``H`` laid out for the page to draw, with ``tables``, those of its nodes, for the side panel;
    ``kinds`` are the whole graph's."""
    net = vis_network(H, layout(H) if len(H) else None, title, kinds=kinds)
    return {"nodes": net.nodes, "edges": net.edges, "options": net.options,
            "explorer": {"tables": tables, "meta": {**drawing_meta(H, kinds), **limits()}}}


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
    return Markup(escaped_json(value))


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


