"""kg.viz: the offline HTML explorer, checked as a file and in a real (offline) Chromium."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import networkx as nx
import pytest

from kg.link.graph import KnowledgeGraph, build_graph
from kg.model import Entity, Mention, Paper, PaperExtraction
from kg.query.tables import graph_tables
from kg.vocab import entity_node
from kg.viz import render
from kg.viz.network import KIND_COLOURS, PAPER_SIZE
from kg.viz.overview import select_overview
from kg.viz.render import LAYOUT_ABOVE, render_html
from support import RECORD_DIALOGS, VIEWS, illegible, synthetic_conference, two_fields

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
# Odd unicode: a right-to-left override, zero-width space, combining accent,
# a line separator (invalid in old JS string literals), an astral emoji, a NUL.
ODD = "Ünïcødé 🚀 \u202eevil\u202c zero\u200bwidth e\u0301 \u2028line \U0001d54f \x00nul"
HOSTILE_TITLE = f"{SCRIPT} {IMG} {ODD}"
HOSTILE_ABSTRACT = (f"We propose {SCRIPT} for tasks. It uses {IMG} too. "
                    f"It closes </script><script>alert(2)</script> tags and opens <!-- comments. "
                    f"{ODD} reasoning is addressed. We evaluate on GSM8K.")
ODD_TASK = f"{ODD} reasoning"

GRPO_ALIAS = "Group Relative Policy Optimization"
ENTITY_NAMES = {  # key -> (type, label, aliases)
    "grpo": ("Method", "GRPO", [GRPO_ALIAS]),
    "mathematical reasoning": ("Task", "mathematical reasoning", []),
    "gsm8k": ("Dataset", "GSM8K", []),
    "math": ("Dataset", "MATH", []),
    "accuracy": ("Metric", "accuracy", []),
    "qwen2.5-7b": ("Model", "Qwen2.5-7B", []),
    SCRIPT: ("Method", SCRIPT, [IMG]),
    ODD_TASK: ("Task", ODD_TASK, []),
}
PAPERS = [  # id, title, abstract, [(mention as written, entity key, role)]
    ("p1", "Group Relative Policy Optimization for Math",
     f"We propose {GRPO_ALIAS} for mathematical reasoning. We evaluate on GSM8K and report accuracy.",
     [(GRPO_ALIAS, "grpo", "proposes"), ("mathematical reasoning", "mathematical reasoning", "addresses"),
      ("GSM8K", "gsm8k", "evaluatesOn"), ("accuracy", "accuracy", "measures")]),
    ("p2", "Scaling RL for Small Models",
     "We train Qwen2.5-7B with GRPO on GSM8K and MATH. Accuracy improves on mathematical reasoning.",
     [("Qwen2.5-7B", "qwen2.5-7b", "uses"), ("GRPO", "grpo", "uses"), ("GSM8K", "gsm8k", "evaluatesOn"),
      ("MATH", "math", "evaluatesOn"), ("Accuracy", "accuracy", "measures"),
      ("mathematical reasoning", "mathematical reasoning", "addresses")]),
    ("p3", HOSTILE_TITLE, HOSTILE_ABSTRACT,
     [(SCRIPT, SCRIPT, "proposes"), (IMG, SCRIPT, "uses"), (ODD_TASK, ODD_TASK, "addresses"),
      ("GSM8K", "gsm8k", "evaluatesOn")]),
]
HOSTILE_ENTITY = entity_node("Method", SCRIPT)  # its id, percent-encoded as its IRI
HOSTILE_PAPER = "paper/p3"


def build_fixture_graph() -> nx.MultiDiGraph:
    """Three papers, one hostile, through the real graph builder."""
    extractions, mentions_of = [], {key: [] for key in ENTITY_NAMES}
    for pid, title, abstract, names in PAPERS:
        mentions = []
        for text, key, role in names:
            start = abstract.index(text)
            mentions_of[key].append((pid, len(mentions)))
            mentions.append(Mention(start, start + len(text), text, ENTITY_NAMES[key][0], 0, 0.9, "test",
                                    role=role, role_confidence=0.9))
        paper = Paper(pid, abstract, title=title, venue="ICLR 2025", year=2025, authors=["A. Author"])
        extractions.append(PaperExtraction(paper, [(0, len(abstract))], mentions, {}))
    entities = [Entity(key, type_, label, aliases, mentions_of[key])
                for key, (type_, label, aliases) in ENTITY_NAMES.items()]
    return build_graph(extractions, entities)


@pytest.fixture(scope="module")
def graph() -> nx.MultiDiGraph:
    return build_fixture_graph()


@pytest.fixture
def page_path(graph, tmp_path) -> Path:
    return render_html(graph, tmp_path / "out" / "kg.html", title="kg test")


class _Tags(HTMLParser):
    """Start tags with their attributes, and the text of each <script>, as a browser parses them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self._in_script = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append([self._in_script, ""])

    def handle_data(self, data):
        if self._in_script is not None:
            self.scripts[-1][1] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None


def parse(html: str) -> _Tags:
    tags = _Tags()
    tags.feed(html)
    return tags


def embedded_data(html: str) -> dict:
    (data,) = [text for attrs, text in parse(html).scripts if attrs.get("id") == "kg-data"]
    return json.loads(data)


def held_nodes(tables: dict) -> dict:
    """The nodes of a page's tables by id, decoded as readTables decodes them (see kg.query.tables.graph_tables)."""
    found = {}
    for i, (kind, tail, label) in enumerate(zip(tables["kind"], tables["id"], tables["label"])):
        kind = tables["kinds"][kind]
        node = (tail if i in tables["whole_ids"] else entity_node(kind, label.lower()) if tail == 0
                else f"{kind.lower()}/{tail}")
        found[node] = {"kind": kind, "label": label, "aliases": tables["aliases"][i] or [], "papers": tables["papers"][i]}
        if i >= tables["first_paper"]:
            row = i - tables["first_paper"]
            found[node].update({name[len("paper_"):]: column[row] for name, column in tables.items()
                                if name.startswith("paper_")})
    return found


# ---------------------------------------------------------------- the file


def test_page_references_no_network(page_path):
    html = page_path.read_text(encoding="utf-8")
    assert '<script src="http' not in html
    assert not re.search(r"<link[^>]*href\s*=\s*[\"']?\s*(https?:)?//", html, re.I)
    for tag, attrs in parse(html).tags:  # nothing the browser would fetch
        for name in ("src", "href", "data", "srcset", "poster"):
            assert name not in attrs, f"<{tag} {name}={attrs[name]!r}>"
    assert not re.search(r"url\(\s*[\"']?\s*(https?:)?//", html, re.I)  # CSS
    (csp,) = [attrs["content"] for tag, attrs in parse(html).tags if attrs.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp  # fetches are forbidden anyway


def test_vis_network_is_inlined(page_path):
    scripts = parse(page_path.read_text(encoding="utf-8")).scripts
    assert len(scripts) == 3  # data, vis-network, the explorer's script
    assert any("vis-network" in text and "Network" in text for _, text in scripts)


def test_hostile_strings_never_appear_unescaped(page_path):
    html = page_path.read_text(encoding="utf-8")
    for hostile in (SCRIPT, IMG, "<img", "</script><script>alert(2)", "<!-- comments"):
        assert hostile not in html
    tags = parse(html)
    assert [tag for tag, _ in tags.tags if tag in ("img", "iframe", "object", "embed")] == []
    assert not any(name.startswith("on") for _, attrs in tags.tags for name in attrs)


def test_hostile_strings_survive_the_round_trip(page_path):
    """Escaped, not mangled: the page's JSON holds the corpus exactly."""
    held = held_nodes(embedded_data(page_path.read_text(encoding="utf-8"))["explorer"]["tables"])
    assert held[HOSTILE_PAPER]["label"] == HOSTILE_TITLE
    assert held[HOSTILE_PAPER]["abstract"] == HOSTILE_ABSTRACT
    assert held[HOSTILE_ENTITY]["label"] == SCRIPT
    assert held[HOSTILE_ENTITY]["aliases"] == [IMG]
    assert held[entity_node("Task", ODD_TASK)]["label"] == ODD_TASK


def test_hostile_page_title_is_escaped(graph, tmp_path):
    html = render_html(graph, tmp_path / "kg.html", title=SCRIPT).read_text(encoding="utf-8")
    assert SCRIPT not in html
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in html


def test_tables_hold_every_node_and_link_with_its_role(graph, page_path):
    data = embedded_data(page_path.read_text(encoding="utf-8"))
    tables = data["explorer"]["tables"]
    held = held_nodes(tables)
    assert set(held) == set(graph)
    grpo = held["method/grpo"]
    assert (grpo["kind"], grpo["label"], grpo["aliases"], grpo["papers"]) == ("Method", "GRPO", [GRPO_ALIAS], 2)
    assert tables["id"][list(held).index("method/grpo")] == 0  # the label's slug: not written twice
    ids = list(held)
    links = {(node, ids[e], tables["roles"][r]) for node, paper in held.items() if paper["kind"] == "Paper"
             for e, r in zip(paper["links"][::2], paper["links"][1::2])}
    assert links == {(p, e, role) for p, e, role in graph.edges(keys=True)}
    assert tables["roles"][:2] == ["proposes", "evaluatesOn"]  # vocab.ROLES order: the order panels list them
    assert tables["strings"] == ["ICLR 2025", "A. Author"]  # venues and authors once each
    assert {kind["name"] for kind in data["explorer"]["meta"]["kinds"]} == {
        "Task", "Method", "Dataset", "Metric", "Model", "Paper"}


def test_small_graph_uses_tuned_physics_and_straight_edges(page_path):
    data = embedded_data(page_path.read_text(encoding="utf-8"))
    assert data["options"]["edges"]["smooth"] is False
    physics = data["options"]["physics"]
    assert physics["enabled"] and physics["solver"] == "forceAtlas2Based" and physics["stabilization"]["enabled"]
    assert not any("x" in node for node in data["nodes"])
    nodes = {node["id"]: node for node in data["nodes"]}
    # Papers: small, neutral, unlabelled dots. Entities: scaled by vis from value = sqrt(papers).
    assert nodes["paper/p1"]["size"] == PAPER_SIZE < data["options"]["nodes"]["scaling"]["min"]
    assert "label" not in nodes["paper/p1"] and "value" not in nodes["paper/p1"]
    assert data["options"]["groups"]["Paper"]["color"]["background"] == KIND_COLOURS["Paper"]
    assert (nodes["method/grpo"]["label"], nodes["method/grpo"]["value"]) == ("GRPO", 1.414)
    assert nodes["dataset/gsm8k"]["value"] > nodes["dataset/math"]["value"]


def big_graph(n_entities=60, n_papers=400, kind="Metric") -> nx.MultiDiGraph:
    """Entity i is mentioned by the papers whose number is a multiple of i + 1. Metrics, by default:
    no topic is made of them, so the page opens on the overview, not the map."""
    G = nx.MultiDiGraph()
    for p in range(n_papers):
        G.add_node(f"paper/{p}", kind="Paper", label=f"Paper {p}", title=f"Paper {p}", abstract="", venue="V")
    for i in range(n_entities):
        node = f"method/m{i}"
        papers = [f"paper/{p}" for p in range(0, n_papers, i + 1)]
        G.add_node(node, kind=kind, label=f"m{i}", aliases=[], papers=len(papers))
        for paper in papers:
            G.add_edge(paper, node, key="uses", role="uses", evidence=[])
    return G


def test_large_graph_shows_an_overview_with_a_precomputed_layout(tmp_path):
    G = big_graph()
    html = render_html(G, tmp_path / "kg.html", max_nodes=350).read_text(encoding="utf-8")
    data = embedded_data(html)
    shown = {node["id"] for node in data["nodes"]}
    assert len(shown) == 350 > LAYOUT_ABOVE
    assert "Showing the 350 most connected of 460 nodes: search and neighbourhoods reach the other 110." in html
    assert {f"method/m{i}" for i in range(60)} <= shown  # 60 entities fit in half the budget
    assert data["options"]["physics"] == {"enabled": False}
    assert all(isinstance(node["x"], float) and isinstance(node["y"], float) for node in data["nodes"])
    assert data["options"]["edges"]["smooth"] is False
    assert all(e["from"] in shown and e["to"] in shown for e in data["edges"])


def test_overview_prefers_entities_with_most_papers_and_keeps_them_connected():
    G = big_graph(n_entities=300, n_papers=300)
    shown = select_overview(G, 100)
    entities = {n for n in shown if n.startswith("method/")}
    assert entities == {f"method/m{i}" for i in range(50)}  # mentioned by the most papers
    assert all(any(p in shown for p in G.predecessors(e)) for e in entities)
    assert len(shown) == 100


def test_a_large_graph_opens_on_the_map_of_its_topics_sized_by_their_papers(tmp_path):
    """Two fields that share nothing: two topics, each named by its members and holding its 30 papers;
    the page holds each topic's members, draws the map itself and says what it shows."""
    G = two_fields()
    html = render_html(G, tmp_path / "kg.html", max_nodes=20).read_text(encoding="utf-8")
    data = embedded_data(html)
    assert data["nodes"] == []  # the page packs the map itself, to its canvas
    topics = {topic["name"]: (topic["papers"], [member for member, _ in topic["members"]]) for topic in data["explorer"]["map"]}
    assert topics == {"GAN · CIFAR-10": (30, ["method/gan", "dataset/cifar-10", "dataset/mnist"]),
                      "RL · Atari": (30, ["task/rl", "dataset/atari", "dataset/mujoco"])}
    assert "The field's 2 topics: papers that read alike, each named by its most telling methods" in html


def test_the_maps_communities_are_found_on_a_graph_where_networkx_louvain_never_ends(monkeypatch):
    """networkx 3.6's Louvain moves nodes of this 7-node graph (the Graph Atlas's G674) back and forth
    for ever at resolution 1; the map's communities (Leiden, a bounded number of passes) end, and are
    the same on every run whatever the state of Python's random numbers."""
    import random
    import threading
    from kg.viz import overview
    monkeypatch.setattr(overview, "RESOLUTION", 1)
    edges = [(0, 1), (0, 2), (0, 5), (0, 6), (1, 2), (1, 4), (2, 3), (2, 5), (2, 6), (3, 4)]
    pairs = [(f"n{a}", f"n{b}", 1.0) for a, b in edges]
    nodes = [f"n{i}" for i in range(7)]
    found = []
    for seed in (1, 123):
        random.seed(seed)
        worker = threading.Thread(target=lambda: found.append(overview._communities(nodes, pairs)), daemon=True)
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive(), "the communities were not found within a minute"
    assert found[0] == found[1]
    assert sorted(node for community in found[0] for node in community) == nodes  # a partition of the nodes


LAYOUT_SCRIPT = """
import json, networkx as nx
from kg.viz.layout import layout
G = nx.MultiDiGraph([(f"paper/{p}", f"method/m{p % 7}") for p in range(40)]
                    + [(f"paper/{p}", f"task/t{p}") for p in range(40)] + [("paper/x", "task/y")])
G.add_node("task/alone")
print(json.dumps(sorted(layout(G).items())))
"""


def test_layout_is_the_same_in_every_process():
    """String hashes are salted per process: a layout that iterated a set would change between runs."""
    runs = [subprocess.run([sys.executable, "-c", LAYOUT_SCRIPT], env={**os.environ, "PYTHONHASHSEED": seed},
                           capture_output=True, text=True, check=True).stdout for seed in ("1", "2", "3")]
    assert runs[0] == runs[1] == runs[2]
    pos = dict(json.loads(runs[0]))
    assert len(pos) == 40 + 7 + 40 + 2 + 1 and len({tuple(xy) for xy in pos.values()}) == len(pos)


def test_writes_atomically_and_replaces(graph, tmp_path):
    target = tmp_path / "kg.html"
    target.write_text("old", encoding="utf-8")
    assert render_html(graph, str(target)) == target
    assert target.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kg.html"]  # no temporary file left


def test_rejects_a_max_nodes_below_one(graph, tmp_path):
    with pytest.raises(ValueError, match="max_nodes must be at least 1, got 0"):
        render_html(graph, tmp_path / "kg.html", max_nodes=0)


def test_empty_graph_renders(tmp_path):
    html = render_html(nx.MultiDiGraph(), tmp_path / "kg.html").read_text(encoding="utf-8")
    assert embedded_data(html)["nodes"] == []


# ---------------------------------------------------------------- the browser

class Offline:
    """A page that may load file: URLs only, recording anything else it tries and any dialog or error."""

    def __init__(self, browser, *, bypass_csp=False, viewport=None):
        self.context = browser.new_context(viewport=viewport or {"width": 1280, "height": 800}, bypass_csp=bypass_csp)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.network, self.dialogs, self.errors = [], [], []
        self.page.route("**/*", self._route)
        self.page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else self.network.append(r.url))
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.add_init_script(RECORD_DIALOGS)

    def _route(self, route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            self.network.append(route.request.url)
            route.abort()

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, path: Path, query: str = ""):
        self.page.goto(path.resolve().as_uri() + query)
        self.page.wait_for_selector("#kg-graph canvas")
        self.page.wait_for_selector("body[data-state=ready]", state="attached")
        return self.page

    def assert_clean(self):
        assert self.network == [], "the page tried to reach the network"
        assert self.dialogs == [] and self.page.evaluate("() => window.__kgDialogs") == []
        assert self.errors == []


@pytest.fixture
def offline(browser):
    session = Offline(browser)
    yield session
    session.context.close()


def node_on_screen(page, node_id):
    """Centre the view on ``node_id`` and return its position in page coordinates."""
    return page.evaluate("""(id) => {
        const network = kgExplorer.network;
        network.moveTo({position: network.getPositions([id])[id], scale: 1.5});
        const dom = network.canvasToDOM(network.getPositions([id])[id]);
        const box = document.getElementById("kg-graph").getBoundingClientRect();
        return {x: box.left + dom.x, y: box.top + dom.y};
    }""", node_id)


def panel_shows(node_id):
    """A selector for the side panel once it shows ``node_id`` (wait_for_function would need eval, which the CSP forbids)."""
    return f"#kg-panel[data-node={json.dumps(node_id, ensure_ascii=False)}]"


def click_node(page, node_id):
    at = node_on_screen(page, node_id)
    page.mouse.click(at["x"], at["y"])
    page.wait_for_selector(panel_shows(node_id), state="attached")


def test_page_draws_offline(offline, page_path, graph):
    page = offline.open(page_path)
    drawn = page.evaluate("""() => {
        const canvas = document.querySelector("#kg-graph canvas");
        const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) return true;
        return false;
    }""")
    assert drawn
    assert page.evaluate("() => kgExplorer.nodes.length") == len(graph) == 11
    assert page.evaluate("() => kgExplorer.network.physics.physicsEnabled") is False  # off once stable
    assert page.text_content("#kg-legend").count("Paper") == 1
    offline.assert_clean()


def suggestions(page, text):
    """What the search box suggests for ``text``, once it has."""
    page.fill("#kg-search", text)
    page.wait_for_selector(f"#kg-search-options[data-query={json.dumps(text)}]", state="attached")
    return page.eval_on_selector_all("#kg-search-options option", "options => options.map(o => o.value)")


def test_search_by_alias_selects_and_shows_the_entity(offline, page_path):
    page = offline.open(page_path)
    assert suggestions(page, "group relative") == [GRPO_ALIAS, "Group Relative Policy Optimization for Math"]
    assert suggestions(page, "<") == [SCRIPT, HOSTILE_TITLE]
    assert suggestions(page, "onerror") == [IMG, HOSTILE_TITLE]  # an alias, and the title holding it
    page.fill("#kg-search", GRPO_ALIAS.lower())
    page.press("#kg-search", "Enter")
    page.wait_for_selector(panel_shows("method/grpo"), state="attached")
    assert page.evaluate("() => kgExplorer.network.getSelectedNodes()") == ["method/grpo"]
    assert page.text_content("#kg-panel h2") == "GRPO"
    assert page.text_content("#kg-panel .kg-kind") == "Method"
    assert page.eval_on_selector_all("#kg-panel .kg-aliases li", "items => items.map(i => i.textContent)") == [GRPO_ALIAS]
    assert page.text_content("#kg-panel .kg-paper-count") == "2"
    links = page.eval_on_selector_all("#kg-panel .kg-links li", "items => items.map(i => i.innerText)")
    assert links == ["proposes\nGroup Relative Policy Optimization for Math", "uses\nScaling RL for Small Models"]
    # A part of an alias finds it too; nonsense says so.
    page.fill("#kg-search", "onerror=alert")
    page.press("#kg-search", "Enter")
    page.wait_for_selector(panel_shows(HOSTILE_ENTITY), state="attached")
    page.fill("#kg-search", "no such thing")
    page.press("#kg-search", "Enter")
    assert page.text_content("#kg-search-status") == "No match for “no such thing”"
    offline.assert_clean()


@pytest.mark.parametrize("kind", ["Dataset", "Paper"])
def test_kind_filter_hides_and_shows_nodes(offline, page_path, kind):
    page = offline.open(page_path)
    hidden = "(kind) => kgExplorer.nodes.get().filter(n => Boolean(n.hidden)).map(n => n.kind)"
    page.uncheck(f"#kg-legend input[data-kind='{kind}']")
    kinds_hidden = page.evaluate(hidden, kind)
    assert kinds_hidden and set(kinds_hidden) == {kind}
    assert len(kinds_hidden) == page.evaluate("(kind) => kgExplorer.nodes.get().filter(n => n.kind === kind).length", kind)
    page.check(f"#kg-legend input[data-kind='{kind}']")
    assert page.evaluate(hidden, kind) == []
    offline.assert_clean()


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "escaping-alone"])
def test_clicking_hostile_nodes_shows_text_and_runs_nothing(browser, page_path, bypass_csp):
    """With the CSP bypassed, escaping alone must still keep the hostile fixture inert."""
    session = Offline(browser, bypass_csp=bypass_csp)
    try:
        page = session.open(page_path)
        click_node(page, HOSTILE_ENTITY)
        assert page.get_attribute("#kg-panel", "data-node") == HOSTILE_ENTITY
        assert page.text_content("#kg-panel h2") == SCRIPT
        assert page.eval_on_selector_all("#kg-panel .kg-aliases li", "items => items.map(i => i.textContent)") == [IMG]
        assert "&lt;script&gt;" in page.inner_html("#kg-panel")

        page.click("#kg-panel .kg-link")  # its paper, from the panel's list
        page.wait_for_selector(panel_shows(HOSTILE_PAPER), state="attached")
        page.mouse.click(5, 5)  # deselect, then click the paper on the canvas
        click_node(page, HOSTILE_PAPER)
        assert page.get_attribute("#kg-panel", "data-node") == HOSTILE_PAPER
        assert page.text_content("#kg-panel h2") == HOSTILE_TITLE
        assert page.text_content("#kg-panel .kg-abstract") == HOSTILE_ABSTRACT
        assert page.text_content("#kg-panel .kg-venue") == "ICLR 2025"

        at = node_on_screen(page, HOSTILE_PAPER)  # the tooltip is text too
        page.mouse.move(at["x"] + 1, at["y"] + 1)
        page.mouse.move(at["x"], at["y"])
        page.wait_for_selector("div.vis-tooltip strong")
        assert SCRIPT in page.text_content("div.vis-tooltip strong")

        assert page.evaluate("() => document.querySelectorAll('img, iframe, object, embed').length") == 0
        assert page.evaluate("() => document.scripts.length") == 3
        session.assert_clean()
    finally:
        session.context.close()


def test_large_graph_overview_draws_without_physics_from_the_precomputed_layout_every_label_legible(offline, tmp_path):
    """350 of 460 nodes, laid out in Python: the page packs them from there, no physics, each label it
    draws legible and clear of the others; a node whose label would not fit is a dot its tooltip names."""
    path = render_html(big_graph(), tmp_path / "kg.html", max_nodes=350)
    page = offline.open(path)
    assert page.text_content("#kg-overview") == ("Showing the 350 most connected of 460 nodes: "
                                                 "search and neighbourhoods reach the other 110.")
    assert page.evaluate("() => [kgExplorer.nodes.length, kgExplorer.network.physics.physicsEnabled]") == [350, False]
    assert illegible(page) == []
    labelled = page.evaluate("() => kgExplorer.nodes.get().filter((n) => n.label).map((n) => n.id)")
    assert "method/m0" in labelled
    # Near where the layout put it: m0, the hub, stays nearer the middle than the median entity.
    at = page.evaluate("() => kgExplorer.network.getPositions()")
    entities = sorted(abs(at[n]["x"]) + abs(at[n]["y"]) for n in at if n.startswith("method/"))
    assert abs(at["method/m0"]["x"]) + abs(at["method/m0"]["y"]) <= entities[len(entities) // 2]
    offline.assert_clean()


def test_empty_graph_page_gets_ready(offline, tmp_path):
    page = offline.open(render_html(nx.MultiDiGraph(), tmp_path / "kg.html"))
    assert page.text_content("#kg-panel h2") == "Nothing selected"
    offline.assert_clean()


def texts(page, selector):
    return page.eval_on_selector_all(selector, "nodes => nodes.map(n => n.textContent)")


def search_for(page, text):
    page.fill("#kg-search", text)
    page.press("#kg-search", "Enter")


def test_the_page_reaches_every_node_beyond_its_overview(offline, graph, tmp_path, monkeypatch):
    """An overview of 4 of the 11 nodes, laid out in Python as a large graph's is (the page draws at once):
    a deep link, search and the panel's links still reach every node."""
    monkeypatch.setattr(render, "LAYOUT_ABOVE", 2)
    path = render_html(graph, tmp_path / "kg.html", max_nodes=4)
    drawn = {node["id"] for node in embedded_data(path.read_text(encoding="utf-8"))["nodes"]}
    assert len(drawn) == 4 and "model/qwen2.5-7b" not in drawn and "method/grpo" in drawn

    page = offline.open(path, "?node=model/qwen2.5-7b")  # a deep link: its neighbourhood, its panel
    page.wait_for_selector(panel_shows("model/qwen2.5-7b"), state="attached")
    assert page.text_content("#kg-panel h2") == "Qwen2.5-7B"
    assert texts(page, "#kg-panel .kg-links .kg-link") == ["Scaling RL for Small Models"]
    assert sorted(page.evaluate("() => kgExplorer.nodes.getIds()")) == ["model/qwen2.5-7b", "paper/p2"]
    assert page.text_content("#kg-overview") == "Within 1 link of Qwen2.5-7B: 2 nodes."
    assert {"Model", "Paper"} <= set(page.eval_on_selector_all("#kg-legend input", "boxes => boxes.map(b => b.dataset.kind)"))

    search_for(page, "scaling rl")  # a paper's panel marks every mention in its abstract
    page.wait_for_selector(panel_shows("paper/p2"), state="attached")
    # in a neighbourhood, a search draws the found node's: the header says what is drawn
    assert page.text_content("#kg-overview").startswith("Within 1 link of Scaling RL for Small Models")
    assert texts(page, "#kg-panel .kg-abstract mark") == ["Qwen2.5-7B", "GRPO", "GSM8K", "MATH", "Accuracy",
                                                         "mathematical reasoning"]
    page.click("#kg-panel .kg-link:has-text('GRPO')")  # an entity's evidence, each mention marked
    page.wait_for_selector(panel_shows("method/grpo"), state="attached")
    assert texts(page, "#kg-panel .kg-evidence mark") == [GRPO_ALIAS, "GRPO"]
    assert texts(page, "#kg-panel .kg-evidence .kg-node-button") == [p[1] for p in PAPERS[:2]]
    offline.assert_clean()


def test_a_page_too_small_for_its_graph_says_what_it_holds(offline, graph, tmp_path):
    whole = render_html(graph, tmp_path / "whole.html").stat().st_size
    path = render_html(graph, tmp_path / "kg.html", max_bytes=whole - 100)
    assert path.stat().st_size <= whole - 100
    page = offline.open(path)
    assert " ".join(page.text_content("#kg-holds").split()) == (
        "This page holds every node and link, and the abstracts of 2 of the 3 papers (the most linked): "
        "kg serve shows them all.")
    page.evaluate("(id) => kgExplorer.select(id)", HOSTILE_PAPER)  # the least linked paper lost its abstract
    assert page.text_content("#kg-panel .kg-abstract").startswith("Not in this page")
    offline.assert_clean()

    tiny = render_html(graph, tmp_path / "tiny.html", max_nodes=4, max_bytes=1)  # the overview and no more
    data = embedded_data(tiny.read_text(encoding="utf-8"))
    held, drawn = held_nodes(data["explorer"]["tables"]), {node["id"] for node in data["nodes"]}
    papers = {node for node in held if node.startswith("paper/")}
    assert drawn <= set(held) and papers == {node for node in drawn if node.startswith("paper/")} and len(papers) < 3
    page = offline.open(tiny)
    assert f"This page holds {len(papers)} of the graph's 3 papers (the most linked)" in page.text_content("#kg-holds")
    (left_out,) = [title for pid, title, *_ in PAPERS if f"paper/{pid}" not in papers][:1]
    search_for(page, left_out)
    page.wait_for_selector("#kg-search-status:has-text('No match')")
    offline.assert_clean()


RLO_NAME = "abc\u202edef"  # a right-to-left override, never closed


def test_corpus_text_is_isolated_from_the_words_around_it(offline, tmp_path):
    """A label with an unclosed RLO reverses itself only, not the page's words after it."""
    G = nx.MultiDiGraph()
    sentence = f"We use {RLO_NAME} here."
    G.add_node("method/x", kind="Method", label=RLO_NAME, aliases=[f"\u202e{RLO_NAME}"], papers=1)
    G.add_node("paper/1", kind="Paper", label=f"On {RLO_NAME}", title=f"On {RLO_NAME}", abstract=sentence, venue="V")
    G.add_edge("paper/1", "method/x", key="uses", role="uses",
               evidence=[{"start": 7, "end": 7 + len(RLO_NAME), "sentence": sentence}])
    page = offline.open(render_html(G, tmp_path / "kg.html"))
    page.evaluate("(id) => kgExplorer.focus(id, 1)", "method/x")
    page.wait_for_selector("body[data-view=focus]", state="attached")
    assert page.text_content("#kg-overview") == f"Within 1 link of {RLO_NAME}: 2 nodes."
    name_right, rest_left = page.evaluate("""() => {
        const line = document.getElementById("kg-overview");
        const rest = document.createRange();
        rest.selectNode(line.lastChild);  // ": 2 nodes."
        return [line.querySelector("bdi").getBoundingClientRect().right, rest.getBoundingClientRect().left];
    }""")
    assert rest_left >= name_right - 1  # still after the name
    unisolated = """() => {
        const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        const found = [];
        for (let node = walk.nextNode(); node; node = walk.nextNode()) {
            if (node.data.includes("\\u202e") && !node.parentElement.closest("bdi, script")) found.push(node.data);
        }
        return found;
    }"""
    assert page.evaluate(unisolated) == []
    assert page.text_content("#kg-panel h2") == RLO_NAME and texts(page, "#kg-panel .kg-evidence mark") == [RLO_NAME]
    page.click("#kg-panel .kg-evidence .kg-node-button")
    page.wait_for_selector(panel_shows("paper/1"), state="attached")
    assert page.evaluate(unisolated) == []
    offline.assert_clean()


def test_a_results_value_is_shown_without_its_markup():
    G = KnowledgeGraph()
    G.add_node("paper/p", kind="Paper", label="P", title="P", abstract=r"We reach 3.14\% on X.", venue="", paper_id="p")
    G.add_node("dataset/x", kind="Dataset", label="X", aliases=[], papers=1)
    G.add_edge("paper/p", "dataset/x", key="evaluatesOn", evidence=[])
    G.results = [{"paper": "paper/p", "text": r"3.14\%", "kind": "score", "dataset": "dataset/x",
                  "metric": None, "subject": None, "start": 9, "end": 15, "value": 3.14, "unit": "%",
                  "previous": None, "sentence": r"We reach 3.14\% on X."}]
    [row] = graph_tables(G)["results"]
    assert row[1] == "3.14%"


def test_a_search_from_the_map_draws_the_found_nodes_neighbourhood_fitted_and_names_it_in_the_url(offline, tmp_path):
    page = offline.open(render_html(two_fields(), tmp_path / "kg.html", max_nodes=20))
    search_for(page, "mujoco")
    page.wait_for_selector(panel_shows("dataset/mujoco"), state="attached")
    assert page.evaluate("() => document.body.dataset.view") == "focus"
    assert page.evaluate("() => location.hash") == "#focus=dataset%2Fmujoco&hops=1"
    assert page.text_content("#kg-overview").startswith("Within 1 link of MuJoCo")
    assert illegible(page) == [("fewer than 3 labels", 2)]  # legible: MuJoCo, and its 15 papers as one node
    search_for(page, "GAN")  # from a neighbourhood: the found node's own, replacing it
    page.wait_for_selector(panel_shows("method/gan"), state="attached")
    assert page.evaluate("() => location.hash") == "#focus=method%2Fgan&hops=1"
    assert "dataset/mujoco" not in page.evaluate("() => kgExplorer.nodes.getIds()")
    offline.assert_clean()


def test_a_topic_opens_on_a_click_the_url_says_so_and_back_returns_to_the_map(offline, tmp_path):
    """A click on a topic draws its members and lists them in the panel; the URL's fragment names it, so the
    browser's Back draws the map again, and Forward (or the link) the topic."""
    page = offline.open(render_html(two_fields(), tmp_path / "kg.html", max_nodes=20))
    assert page.evaluate("() => document.body.dataset.view") == "map"
    assert sorted(page.evaluate("() => kgExplorer.nodes.getIds()")) == ["topic/1", "topic/2"]
    assert page.is_hidden("#kg-legend") and page.is_hidden("#kg-back")
    at = node_on_screen(page, "topic/2")
    page.mouse.click(at["x"], at["y"])
    page.wait_for_selector(panel_shows("topic/2"), state="attached")
    assert sorted(page.evaluate("() => kgExplorer.nodes.getIds()")) == ["dataset/atari", "dataset/mujoco", "task/rl"]
    assert page.evaluate("() => location.hash") == "#topic=topic%2F2"
    assert page.text_content("#kg-overview").startswith("Topic RL · Atari: 3 concepts of its 30 papers")
    assert texts(page, "#kg-panel .kg-topic-members .kg-node-button") == ["RL", "Atari", "MuJoCo"]
    page.go_back()
    page.wait_for_selector("body[data-view=map]", state="attached")
    assert sorted(page.evaluate("() => kgExplorer.nodes.getIds()")) == ["topic/1", "topic/2"]
    page.go_forward()
    page.wait_for_selector("body[data-view=topic]", state="attached")
    page.click("#kg-panel .kg-node-button:has-text('MuJoCo')")  # drawn: selected where it is
    page.wait_for_selector(panel_shows("dataset/mujoco"), state="attached")
    page.click("#kg-panel .kg-focus[data-hops='1']")  # its neighbourhood, named in the URL
    page.wait_for_selector("body[data-view=focus]", state="attached")
    assert page.evaluate("() => location.hash") == "#focus=dataset%2Fmujoco&hops=1"
    page.go_back()
    page.wait_for_selector("body[data-view=topic]", state="attached")
    page.click("#kg-back")
    page.wait_for_selector("body[data-view=map]", state="attached")
    offline.assert_clean()


@pytest.fixture(scope="module")
def conference_page(tmp_path_factory):
    return render_html(synthetic_conference(), tmp_path_factory.mktemp("conference") / "kg.html")


@pytest.mark.parametrize("window", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_every_label_of_every_view_is_legible_inside_the_canvas_and_clear_of_the_others(browser, conference_page, window):
    """On a synthetic 20,000-paper graph, at the zoom each view opens on: the map, a topic, a task's, a
    dataset's, a method's and a paper's neighbourhood. Each label is at least 11 px high, inside the
    canvas, and overlaps no other label; the legend is below the canvas, never over it."""
    session = Offline(browser, viewport={"width": window[0], "height": window[1]})
    try:
        page = session.open(conference_page)
        for view, draw in VIEWS.items():
            page.evaluate(draw)
            assert illegible(page) == [], view
        session.assert_clean()
    finally:
        session.context.close()


def test_a_datasets_neighbourhood_draws_its_papers_as_one_node_a_click_expands(offline, tmp_path):
    """CIFAR-like: 15 papers evaluate on a dataset that the hierarchy links to a task. Its neighbourhood
    draws the dataset, the task and one node for the 15 papers; clicking that node draws them all. A
    method's neighbourhood keeps its papers."""
    G = KnowledgeGraph()
    G.add_node("dataset/d", kind="Dataset", label="D", aliases=[], papers=15)
    G.add_node("task/t", kind="Task", label="T", aliases=[], papers=0)
    G.add_node("method/m", kind="Method", label="M", aliases=[], papers=15)
    G.add_edge("dataset/d", "task/t", key="benchmarkFor", role="benchmarkFor", evidence=[], papers=1)
    for p in range(15):
        G.add_node(f"paper/{p}", kind="Paper", label=f"P{p}", title=f"P{p}", abstract="", venue="V", paper_id=str(p))
        G.add_edge(f"paper/{p}", "dataset/d", key="evaluatesOn", role="evaluatesOn", evidence=[])
        G.add_edge(f"paper/{p}", "method/m", key="uses", role="uses", evidence=[])
    page = offline.open(render_html(G, tmp_path / "kg.html", max_nodes=3))
    page.evaluate("() => kgExplorer.focus('dataset/d', 1)")
    page.wait_for_selector("body[data-view=focus]", state="attached")
    drawn = page.evaluate("() => kgExplorer.nodes.get().map((n) => [n.id, n.label || ''])")
    assert sorted(drawn) == [["dataset/d", "D"], ["kg-papers-of:dataset/d", "15 papers"], ["task/t", "T"]]
    assert page.text_content("#kg-overview").endswith("its papers are one node: click it to draw them.")
    page.evaluate("() => kgExplorer.network.body.emitter.emit('click', {nodes: ['kg-papers-of:dataset/d'], edges: []})")
    assert page.evaluate("() => kgExplorer.nodes.length") == 17
    page.evaluate("() => kgExplorer.focus('method/m', 1)")
    assert page.evaluate("() => kgExplorer.nodes.get().filter((n) => n.id.startsWith('paper/')).length") == 15
    offline.assert_clean()


def scored_task() -> KnowledgeGraph:
    """Three papers on image classification, each proposing a method and reporting its top-1 accuracy
    on ImageNet, one of them in a sentence with a comma and a formula-looking method name."""
    G = KnowledgeGraph()
    G.add_node("task/ic", kind="Task", label="image classification", aliases=[], papers=3)
    G.add_node("dataset/imagenet", kind="Dataset", label="ImageNet", aliases=[], papers=3)
    G.add_node("metric/top-1", kind="Metric", label="top-1 accuracy", aliases=[], papers=3)
    for p, (method, value, year) in enumerate([("ResNet", 76.1, 2016), ("=ViT", 81.8, 2021), ("ConvNeXt", 82.1, 2022)]):
        sentence = f"{method} reaches {value}% top-1 accuracy on ImageNet, a new result."
        paper = f"paper/{p}"
        G.add_node(paper, kind="Paper", label=f"{method} paper", title=f"{method} paper", abstract=sentence,
                   sentences=[(0, len(sentence))], venue="V", year=year, paper_id=str(p))
        G.add_node(f"method/m{p}", kind="Method", label=method, aliases=[], papers=1)
        for entity, role in ((f"method/m{p}", "proposes"), ("task/ic", "addresses"), ("dataset/imagenet", "evaluatesOn"),
                             ("metric/top-1", "measures")):
            G.add_edge(paper, entity, key=role, role=role, evidence=[])
        start = sentence.index(str(value))
        G.results.append({"paper": paper, "text": f"{value}%", "kind": "score", "dataset": "dataset/imagenet",
                          "metric": "metric/top-1", "subject": f"method/m{p}", "start": start, "end": start + len(f"{value}%"),
                          "value": value, "unit": "%", "previous": None, "sentence": sentence})
    return G


@pytest.mark.parametrize("window", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_a_tasks_comparison_opens_at_full_width_sorts_by_any_column_and_downloads_as_csv(browser, tmp_path, window):
    """From a task's panel, its comparison opens in a view of its own: every cell inside the view (or
    its own scrolling box), a score's sentence on hover, a click on a header sorting by it, the URL
    naming it, Back returning to the graph, and a CSV download of the rows as shown."""
    session = Offline(browser, viewport={"width": window[0], "height": window[1]})
    try:
        page = session.open(render_html(scored_task(), tmp_path / "kg.html"), "?node=task/ic")
        page.wait_for_selector(panel_shows("task/ic"), state="attached")
        page.click("#kg-panel .kg-open-board[data-board=comparison]")
        page.wait_for_selector("body[data-view=board]", state="attached")
        assert page.evaluate("() => location.hash") == "#comparison=task%2Fic"
        assert page.is_hidden("#kg-graph-area") and page.is_hidden("#kg-panel")
        header = texts(page, "#kg-wide th")
        assert header == ["Paper", "Year", "Proposes", "Datasets", "Metrics", "Results"]
        view = page.eval_on_selector(".kg-wide-table", "e => e.getBoundingClientRect().toJSON()")
        cells = page.eval_on_selector_all("#kg-wide td", "cells => cells.map(c => c.getBoundingClientRect().toJSON())")
        assert cells and all(view["left"] <= c["left"] and c["right"] <= view["right"] + 1 for c in cells)
        assert all(c["width"] >= 30 for c in cells)  # no column squeezed to a letter a line
        assert page.get_attribute(".kg-score >> nth=0", "title").endswith("top-1 accuracy on ImageNet, a new result.")
        page.click("#kg-wide th:has-text('Year') .kg-sort")
        assert texts(page, "#kg-wide td:nth-child(2)") == ["2016", "2021", "2022"]
        page.click("#kg-wide th:has-text('Year') .kg-sort")
        assert texts(page, "#kg-wide td:nth-child(2)") == ["2022", "2021", "2016"]
        with page.expect_download() as download:
            page.click("#kg-wide .kg-download")
        assert download.value.suggested_filename == "image-classification-comparison.csv"
        lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        assert lines[0] == "Paper,Year,Proposes,Datasets,Metrics,Results"
        assert "'=ViT paper,2021,'=ViT,ImageNet,top-1 accuracy,81.8% top-1 accuracy on ImageNet by =ViT" in lines
        page.go_back()
        page.wait_for_selector("body[data-view=overview]", state="attached")  # nine nodes: all drawn, no map
        assert page.is_visible("#kg-graph-area")
        session.assert_clean()
    finally:
        session.context.close()


#: A cell a board may hold, and how its CSV writes it: a spreadsheet runs none as a formula (OWASP's
#: CSV-injection rule), shows every control character, and reads a plain number as a number.
SPREADSHEET_CELLS = [
    ("=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("+1+cmd", "'+1+cmd"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "\"'\r=1+1\""),
    ("-", "'-"),
    ("ESC\x1b[31m BEL\x07 NUL\x00 C1\x9b", "ESC\\x1b[31m BEL\\x07 NUL\\x00 C1\\x9b"),
    ("\x1b=cmd", "\\x1b=cmd"),
    ("-0.5", "-0.5"), ("+1.6%", "+1.6%"), ("81.8%", "81.8%"), ("1e-3", "1e-3"),
    ("ResNet-50", "ResNet-50"), ("a, b", "\"a, b\""), ("two\nlines", "\"two\nlines\""),
]


def test_a_boards_csv_defuses_every_cell_a_spreadsheet_would_run(offline, tmp_path):
    page = offline.open(render_html(scored_task(), tmp_path / "kg.html"))
    written = page.evaluate("""(cells) => kgExplorer.csv([{ name: "=cell", text: (row) => row }], cells)""",
                            [cell for cell, _ in SPREADSHEET_CELLS])
    assert written.split("\r\n") == ["'=cell", *[expected for _, expected in SPREADSHEET_CELLS], ""]


def test_a_datasets_leaderboard_opens_at_full_width_ranked_by_its_metric(offline, tmp_path):
    page = offline.open(render_html(scored_task(), tmp_path / "kg.html"))
    page.evaluate("() => { location.hash = 'leaderboard=dataset%2Fimagenet'; }")  # a link to it, or Forward
    page.wait_for_selector("body[data-view=board]", state="attached")
    assert texts(page, "#kg-wide th") == ["Metric", "Rank", "Score", "Reached by", "Paper"]
    assert texts(page, "#kg-wide td:nth-child(4)") == ["ConvNeXt", "=ViT", "ResNet"]  # higher is better
    page.click("#kg-wide th:has-text('Score') .kg-sort")
    assert texts(page, "#kg-wide td:nth-child(3)") == ["76.1%", "81.8%", "82.1%"]
    offline.assert_clean()


def test_a_neighbourhood_too_large_to_read_draws_its_strongest_and_counts_the_rest_by_kind(offline, tmp_path):
    """A method used for 150 tasks and evaluated on 60 datasets: its neighbourhood draws the tasks and
    datasets of most papers that fit legibly, and one node per kind for the rest, labelled with their
    count; a click on it lists them, each a link."""
    G = KnowledgeGraph()
    G.add_node("method/hub", kind="Method", label="Hub", aliases=[], papers=500)
    for kind, n in (("task", 150), ("dataset", 60)):
        for i in range(n):
            node = f"{kind}/{kind}-{i}"
            G.add_node(node, kind=kind.title(), label=f"{kind} number {i} of a long name", aliases=[], papers=1000 - i)
            relation = "usedFor" if kind == "task" else "evaluatedOn"
            G.add_edge("method/hub", node, key=relation, role=relation, evidence=[], papers=1)
    page = offline.open(render_html(G, tmp_path / "kg.html"))
    page.evaluate("() => kgExplorer.focus('method/hub', 1)")
    assert illegible(page) == []
    drawn = page.evaluate("() => kgExplorer.nodes.get().map((n) => [n.id, n.label])")
    groups = dict(label for label in drawn if label[0].startswith("kg-more:"))
    tasks = [node for node, _ in drawn if node.startswith("task/")]
    assert 5 <= len(tasks) < 150 and tasks == [f"task/task-{i}" for i in range(len(tasks))]  # the strongest
    assert groups["kg-more:Task"] == f"{150 - len(tasks)} more tasks"
    header = page.text_content("#kg-overview")
    assert header.startswith(f"Within 1 link of Hub: {len(drawn)} nodes, {211 - len(drawn) + len(groups)} more not drawn")
    page.evaluate("() => kgExplorer.network.body.emitter.emit('click', {nodes: ['kg-more:Task'], edges: []})")
    listed = texts(page, "#kg-panel .kg-node-button")
    assert listed[0] == f"task number {len(tasks)} of a long name" and len(listed) == 150 - len(tasks)
    offline.assert_clean()


@pytest.mark.parametrize("window", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_the_sample_drawn_whole_keeps_its_shape_and_every_label_legible(browser, tmp_path, window):
    """The README's first page: the sample's 62 nodes, laid out by vis-network's simulation, then packed
    so that no label overlaps another or is under 11 px."""
    from support import build

    session = Offline(browser, viewport={"width": window[0], "height": window[1]})
    try:
        page = session.open(build(Path(__file__).parent / "fixtures" / "sample.txt", tmp_path).with_suffix(".html"))
        assert page.evaluate("() => document.body.dataset.view") == "overview"
        assert illegible(page) == []
        assert page.evaluate("() => kgExplorer.nodes.length") == 62  # every node drawn, labelled or not
        session.assert_clean()
    finally:
        session.context.close()
