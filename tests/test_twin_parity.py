"""Twins held equal: what the offline page's script computes in JavaScript (``viz/explorer/``, run in
headless Chromium) and kg serve computes in Python give the same answer, for every node of the
sample and of a hostile corpus: search, the node a URL names, a neighbourhood, a node's drawn label,
the marks in a text and a node's page URL. The panels' twin is compared in test_view_parity.py.

The page hands its functions to tests as ``kgExplorer.twins`` (``viz/explorer/main.js``).
"""
from __future__ import annotations

import json
import urllib.parse

import pytest

from kg import serve
from kg.query.graph_index import graph_index
from kg.query.views import NEIGHBOURHOOD_LIMIT, SEARCH_LIMIT
from kg.serve.pages import segments, urls
from kg.serve.search import neighbourhood, search
from kg.strings import truncate
from kg.viz.network import LABEL_LIMIT, drawn_label
from support import FIXTURES, build

#: Texts where Python's and JavaScript's string functions part ways unless told one rule: case
#: folding (ß, İ, final sigma), white space JavaScript's \s and Python's str.split() disagree on
#: (U+001C, U+0085, U+FEFF), characters past U+FFFF, and a cut that lands on a space.
AWKWARD = ["STRASSE", "straße", "İstanbul", "ΟΔΟΣ", "a\x1cb", "a\x85b", "a\ufeffb", "😀 model", "Ａ",
           "x" * (LABEL_LIMIT - 2) + " tail", "y" * (LABEL_LIMIT - 3) + "\u3000\u3000tail", "😀" * (LABEL_LIMIT + 3)]


@pytest.fixture(scope="module", params=["sample", "hostile"])
def graph(request, sample, tmp_path_factory):
    if request.param == "sample":
        return sample
    return build(FIXTURES / "hostile.txt", tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def index(graph):
    """The graph read back as kg serve reads it (without vectors: search by meaning has no twin)."""
    return graph_index(graph)


@pytest.fixture(scope="module")
def page(browser, graph):
    """The built page opened from disk, ready."""
    page = browser.new_page()
    page.goto(graph.with_name(graph.name + ".html").resolve().as_uri())
    page.wait_for_selector("body[data-state=ready]", state="attached")
    yield page
    page.close()


def js(page, function: str, calls: list) -> list:
    """``kgExplorer.twins[function](...args)`` for each argument list of ``calls``, through JSON."""
    return json.loads(page.evaluate(
        "([name, calls]) => JSON.stringify(calls.map((args) => kgExplorer.twins[name](...args)))", [function, calls]))


def names_of(index) -> list[str]:
    return sorted({name for _, name, _ in index.names})


def test_search_finds_the_same_nodes_in_the_same_order(page, index):
    queries = [q for name in names_of(index) for q in (name, name.upper(), name[:3], f"  {name.lower()}  ")] + AWKWARD
    offline = js(page, "search", [[q, SEARCH_LIMIT] for q in queries])
    served = [[found["id"] for found in search(index, q)] for q in queries]
    assert any(offline) and dict(zip(queries, offline)) == dict(zip(queries, served))


def test_a_url_names_the_same_node(page, index):
    raws = [raw for folded, name, node in index.names
            for raw in (node, f"{index.graph.nodes[node]['kind'].lower()}/{name}",
                        f"{index.graph.nodes[node]['kind'].lower()}/{name.upper()}", urllib.parse.quote(node))]
    raws += [f"method/{text}" for text in AWKWARD] + ["method/%zz", "method/%E0", "nothing"]
    offline = js(page, "resolve", [[raw] for raw in raws])
    assert dict(zip(raws, offline)) == {raw: index.find(raw) for raw in raws}


@pytest.mark.parametrize("hops, limit", [(1, NEIGHBOURHOOD_LIMIT), (2, NEIGHBOURHOOD_LIMIT), (2, 5)])
def test_a_neighbourhood_holds_the_same_nodes_in_the_same_order(page, index, hops, limit):
    nodes = sorted(index.graph)
    offline = js(page, "neighbourhood", [[node, hops, limit] for node in nodes])
    served = [list(neighbourhood(index, node, hops, limit=limit)) for node in nodes]
    assert dict(zip(nodes, map(tuple, offline))) == dict(zip(nodes, map(tuple, served)))


def test_a_node_is_drawn_with_the_same_label(page, index):
    entities = sorted(node for node, data in index.graph.nodes(data=True) if data["kind"] != "Paper")
    offline = js(page, "drawnLabel", [[node] for node in entities])
    assert offline == [drawn_label(index.graph.nodes[node], node) for node in entities]
    cut = js(page, "truncate", [[text, LABEL_LIMIT] for text in AWKWARD])
    assert cut == [truncate(text, LABEL_LIMIT) for text in AWKWARD]
    assert cut == [drawn_label({"label": text}, "method/x") for text in AWKWARD]


def test_a_text_is_marked_at_the_same_places(page, graph, index):
    app = serve.make_app(graph)
    try:
        cases = []
        for node in sorted(n for n in index.graph if n.startswith("paper/")):
            view = json.loads(serve.get(app, urls(node)["json"] + "?related=0")[2])
            spans = [[m["start"], m["end"]] for m in view["mentions"]]
            # and a span overlapping the first, one past the end, one empty
            extra = [[spans[0][0], spans[0][1] + 1]] if spans else []
            cases.append([view["abstract"] or "", spans + extra + [[0, 10**6], [3, 3]]])
    finally:
        app.close()
    cases += [[text, [[0, 1], [1, 3]]] for text in AWKWARD]
    offline = js(page, "segments", cases)
    assert offline == [[[piece, marked] for piece, marked in segments(text, spans)] for text, spans in cases]


def test_a_node_has_one_page_url_and_it_answers(page, graph, index):
    nodes = sorted(index.graph)
    offline = js(page, "nodeUrl", [[node] for node in nodes])
    assert offline == [urls(node)["html"] for node in nodes]
    app = serve.make_app(graph)
    try:
        for node, url in zip(nodes, offline):
            status, _, body = serve.get(app, url + ".json?related=0")
            assert status == 200 and json.loads(body)["id"] == node, (url, body[:200])
    finally:
        app.close()
