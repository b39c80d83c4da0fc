"""One producer per view: every node's panel is the same data whether the offline page computes it
from the tables it embeds (``viz/explorer/``, run in headless Chromium) or ``kg serve`` answers it
as the node's JSON twin (:class:`kg.query.views.Tables` over the tables of the graph read back from the
store). Compared whole: counts, papers with roles, evidence, relations with their evidence,
results and the hierarchy, for every node of the sample and of a hostile corpus."""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from kg import serve
from kg.link.graph import KnowledgeGraph
from kg.query.tables import graph_tables
from kg.query.views import Tables
from kg.viz.render import render_html
from support import FIXTURES, build

#: What only the server has: the node's IRI, the SPARQL query behind the panel, its pages' URLs.
SERVER_ONLY = ("iri", "sparql", "urls")


@pytest.fixture(scope="module", params=["sample", "hostile"])
def graph(request, sample, tmp_path_factory) -> Path:
    if request.param == "sample":
        return sample
    return build(FIXTURES / "hostile.txt", tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def served(graph) -> dict[str, dict]:
    """Every node's JSON twin from ``kg serve``, the server-only fields left out."""
    app = serve.make_app(graph)
    try:
        views = {}
        for node in sorted(app.index().graph):
            path = ("/" if node.startswith("paper/") else "/entity/") + urllib.parse.quote(node, safe="/")
            status, _, body = serve.get(app, path + ".json?related=0")
            assert status == 200, (node, body)
            views[node] = {key: value for key, value in json.loads(body).items() if key not in SERVER_ONLY}
        return views
    finally:
        app.close()


@pytest.fixture(scope="module")
def offline(browser, graph, served) -> dict[str, dict]:
    """Every node's view as the built page, opened from disk, computes it."""
    page = browser.new_page()
    try:
        page.goto(graph.with_name(graph.name + ".html").resolve().as_uri())
        page.wait_for_selector("body[data-state=ready]", state="attached")
        # Through JSON, as the server's views come: numbers and nulls compare alike.
        found = page.evaluate("(ids) => JSON.stringify(ids.map((id) => kgExplorer.view(id)))", list(served))
        return dict(zip(served, json.loads(found)))
    finally:
        page.close()


def test_every_node_has_one_view_offline_and_served(served, offline):
    assert served and all(offline[node] is not None for node in served), "the page holds every node of the graph"
    for node, view in served.items():
        mine = offline[node]
        if view["type"] == "Paper":
            # RDF keeps no order among a paper's authors: the store gives them in name order, the page in the input's.
            assert sorted(mine.pop("authors")) == view.pop("authors"), node
        assert mine == view, node


def test_papers_count_the_papers_that_mention_an_entity_and_reach_adds_narrower_ones(served, offline):
    entities = [view for view in served.values() if view["type"] != "Paper"]
    assert all(view["paper_count"] == len(view["papers"]) + view["papers_not_listed"] for view in entities)
    assert all(view["reach"] >= view["paper_count"] for view in entities)


def test_served_relations_carry_their_evidence(served, graph):
    relations = [r for view in served.values() if view["type"] != "Paper" for r in view["relations"]]
    assert relations and all(r["sentence"] for r in relations)
    if graph.name == "sample":  # the hierarchy: a concept's narrower names, each with the sentence behind it
        broader = [r for r in served["task/reasoning"]["relations"] if r["relation"] == "broader"]
        assert {r["subject"] for r in broader} >= {"task/mathematical-reasoning", "task/spatial-reasoning"}


def test_text_is_ordered_as_javascript_compares_it(browser, tmp_path):
    """Python orders text by code point, JavaScript by UTF-16 code unit, and past U+FFFF they
    disagree: "😀" (U+1F600, written D83D DE00) comes before "Ａ" (U+FF21) in JavaScript, after it
    in Python. kg.query.views sorts as the page does."""
    G = KnowledgeGraph()
    G.add_node("method/x", kind="Method", label="X", aliases=[], papers=2)
    for paper, title in (("a", "Ａ paper"), ("b", "😀 paper")):
        G.add_node(f"paper/{paper}", kind="Paper", label=title, abstract="We use X.", paper_id=paper)
        G.add_edge(f"paper/{paper}", "method/x", key="uses", role="uses",
                   evidence=[{"start": 7, "end": 8, "sentence": "We use X."}])
    served = Tables(graph_tables(G)).view("method/x")
    assert [paper["title"] for paper in served["papers"]] == ["😀 paper", "Ａ paper"]
    page = browser.new_page()
    try:
        page.goto(render_html(G, tmp_path / "kg.html").as_uri())
        page.wait_for_selector("body[data-state=ready]", state="attached")
        assert json.loads(page.evaluate("() => JSON.stringify(kgExplorer.view('method/x'))")) == served
    finally:
        page.close()


def test_entities_tied_on_papers_are_ordered_by_what_the_graph_records_not_by_the_links_held():
    """A page holding part of a large graph holds fewer links than the whole: the order of a row's
    entities (a comparison's datasets) must not follow the links held, or its view and the server's differ."""
    G = KnowledgeGraph()
    for node, reach in (("dataset/a", 3), ("dataset/b", 5)):
        G.add_node(node, kind="Dataset", label=node[-1], aliases=[], papers=2, reach=reach)
    for paper in ("p1", "p2", "p3"):
        G.add_node(f"paper/{paper}", kind="Paper", label=paper, abstract="", venue="")
    G.add_edge("paper/p1", "dataset/a", key="evaluatesOn", role="evaluatesOn")
    G.add_edge("paper/p2", "dataset/a", key="evaluatesOn", role="evaluatesOn")
    G.add_edge("paper/p3", "dataset/b", key="evaluatesOn", role="evaluatesOn")
    tables = graph_tables(G)
    part = graph_tables(G, nodes=["dataset/a", "dataset/b", "paper/p3"])
    assert tables["label"][:2] == part["label"][:2] == ["b", "a"]  # b reaches more papers; a has more links
