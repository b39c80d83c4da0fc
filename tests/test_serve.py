"""kg serve over HTTP: the SPARQL 1.1 endpoint through real clients (SPARQLWrapper, rdflib's
SPARQLStore), the time limit and result cap, the JSON twins, --get, and what must never get out."""
from __future__ import annotations

import contextlib
import csv
import http.client
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from click.testing import CliRunner
from rdflib.plugins.stores.sparqlstore import SPARQLStore, SPARQLUpdateStore

from kg import serve
from kg.cli import main
from guard_support import listener
from support import FIXTURES, build
from kg.query import examples
from kg.store import RESULT_FORMATS, negotiate, open_graph, store_dir

SPARQLWrapper = pytest.importorskip("SPARQLWrapper")
from SPARQLWrapper import CSV, JSON, POST, TSV, TURTLE, XML  # noqa: E402

KG = "https://w3id.org/kg/ontology#"
GRPO = "method/group-relative-policy-optimization"
C_GRPO = "method/curriculum-aware-group-relative-policy-optimization"
# Five copies of every triple joined: billions of rows on the sample; only the time limit ends it.
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
LIMIT = 1.5  # seconds, the tests' --timeout
MAX_RESULTS = 50


@pytest.fixture(scope="module")
def count(sample) -> dict:
    """Nodes per kind, read from the store directly (the extractor decides how many there are)."""
    rows = open_graph(sample).query("SELECT ?c (COUNT(?x) AS ?n) WHERE { ?x a ?c } GROUP BY ?c")
    return {row["c"].value.rsplit("#", 1)[-1]: int(row["n"].value) for row in rows}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    return build(FIXTURES / "hostile.txt", tmp_path_factory.mktemp("graphs"))


@pytest.fixture(scope="module")
def server(sample):
    running = serve.start(serve.make_app(sample, timeout=LIMIT, max_results=MAX_RESULTS), port=0)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def hostile_server(hostile):
    running = serve.start(serve.make_app(hostile, timeout=LIMIT), port=0)
    yield running
    running.stop()


@pytest.fixture
def endpoint(server) -> str:
    return server.url + "/sparql"


def wrapper(endpoint: str, query: str, fmt) -> SPARQLWrapper.SPARQLWrapper:
    client = SPARQLWrapper.SPARQLWrapper(endpoint)
    client.setQuery(f"PREFIX kg: <{KG}>\n{query}")
    client.setReturnFormat(fmt)
    return client


def fetch(url: str, *, data: bytes | None = None, headers: dict | None = None):
    """(status, headers, body) of a request, whatever its status."""
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def raw_get(server, path: str, host: str | None = None):
    """A GET sent exactly as written: urllib would normalise ``/../`` away."""
    address = server.server.server_address
    connection = http.client.HTTPConnection(address[0], address[1], timeout=30)
    connection.putrequest("GET", path, skip_host=True)
    connection.putheader("Host", host or f"127.0.0.1:{address[1]}")
    connection.endheaders()
    response = connection.getresponse()
    result = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return result


# ---------------------------------------------------------------- the store


def test_build_fills_a_read_only_store_beside_the_files(sample):
    folder = store_dir(sample)
    assert folder == sample.with_name("sample.oxigraph") and folder.is_dir()
    store = open_graph(sample)
    assert len(store) == sum(1 for name in ("sample.nt", "sample.index.nt")
                             for _ in ox.parse(path=str(sample.with_name(name)), format=ox.RdfFormat.N_TRIPLES))
    with pytest.raises(RuntimeError):  # kg query and kg serve cannot change the graph
        store.update("INSERT DATA { <https://e.org/a> <https://e.org/b> <https://e.org/c> }")


def test_open_graph_falls_back_to_the_n_triples_without_a_store(sample, tmp_path):
    for name in ("sample.nt", "sample.index.nt"):
        (tmp_path / name).write_bytes(sample.with_name(name).read_bytes())
    assert store_dir(tmp_path / "sample") is None
    assert len(open_graph(tmp_path / "sample")) == len(open_graph(sample))


def test_a_rebuild_replaces_the_store(sample, tmp_path):
    stem = tmp_path / "graph"
    for source in ("papers.jsonl", "sample.txt"):
        result = CliRunner().invoke(main, ["build", "-q", str(FIXTURES / source), "-o", str(stem)])
        assert result.exit_code == 0, result.output
        if source == "papers.jsonl":
            before = len(open_graph(stem))
    assert len(open_graph(stem)) == len(open_graph(sample)) != before
    # The old store went away with the old build's folder: nothing else is left behind.
    names = sorted(p.name for p in tmp_path.iterdir())
    builds = [name for name in names if name.startswith(".graph.build-")]
    assert len(builds) == 1 and (tmp_path / ".graph.current").resolve() == (tmp_path / builds[0]).resolve()
    assert [name for name in names if name not in builds] == [
        ".graph.current", ".kg-cache", "graph.html", "graph.index.nt", "graph.jsonld", "graph.manifest.json", "graph.nt",
        "graph.oxigraph", "graph.tables.json", "graph.ttl", "graph.vectors.npz"]


# ---------------------------------------------------------------- SPARQL through real clients


def test_select_as_json_with_sparqlwrapper(endpoint, count):
    result = wrapper(endpoint, "SELECT ?d WHERE { ?d a kg:Dataset } ORDER BY ?d", JSON).queryAndConvert()
    datasets = [b["d"]["value"] for b in result["results"]["bindings"]]
    assert result["head"]["vars"] == ["d"] and len(datasets) == count["Dataset"] > 5
    assert "https://w3id.org/kg/id/dataset/gsm8k" in datasets


def test_select_as_xml_with_sparqlwrapper(endpoint, count):
    document = wrapper(endpoint, "SELECT ?d WHERE { ?d a kg:Dataset }", XML).queryAndConvert()
    assert len(document.getElementsByTagName("result")) == count["Dataset"]


@pytest.mark.parametrize("fmt, delimiter", [(CSV, ","), (TSV, "\t")])
def test_select_as_csv_and_tsv_with_sparqlwrapper(endpoint, count, fmt, delimiter):
    client = wrapper(endpoint, 'SELECT ?label WHERE { ?d a kg:Dataset ; skos:prefLabel ?label } ORDER BY ?label', fmt)
    rows = list(csv.reader(io.StringIO(client.queryAndConvert().decode("utf-8")), delimiter=delimiter))
    assert rows[0] == (["label"] if fmt == CSV else ["?label"])
    labels = [row[0] for row in rows[1:]]
    assert len(labels) == count["Dataset"] and ("GSM8K" in labels or '"GSM8K"' in labels)


def test_ask_with_sparqlwrapper(endpoint):
    assert wrapper(endpoint, "ASK { ?p a kg:Paper }", JSON).queryAndConvert() == {"head": {}, "boolean": True}
    assert wrapper(endpoint, "ASK { ?p a kg:Nothing }", JSON).queryAndConvert()["boolean"] is False


def test_construct_as_turtle_with_sparqlwrapper(endpoint, count):
    client = wrapper(endpoint, "CONSTRUCT { ?d a kg:Dataset } WHERE { ?d a kg:Dataset }", TURTLE)
    graph = rdflib.Graph().parse(data=client.queryAndConvert(), format="turtle")
    assert len(graph) == count["Dataset"]
    assert (rdflib.URIRef("https://w3id.org/kg/id/dataset/gsm8k"), rdflib.RDF.type, rdflib.URIRef(KG + "Dataset")) in graph


@pytest.mark.parametrize("accept, parse_as", [("application/n-triples", "nt"), ("application/ld+json", "json-ld"),
                                              ("application/rdf+xml", "xml")])
def test_construct_in_other_formats_by_accept(endpoint, count, accept, parse_as):
    query = urllib.parse.urlencode({"query": "CONSTRUCT WHERE { ?d a kg:Metric }"})
    status, headers, body = fetch(f"{endpoint}?{query}", headers={"Accept": accept})
    assert status == 200 and headers["Content-Type"].startswith(accept)
    assert len(rdflib.Graph().parse(data=body, format=parse_as)) == count["Metric"]


def test_rdflib_sparqlstore_reads_the_endpoint(endpoint, count):
    graph = rdflib.Graph(store=SPARQLStore(endpoint))
    rows = list(graph.query(f"PREFIX kg: <{KG}> SELECT ?m WHERE {{ ?m a kg:Metric }}"))
    assert len(rows) == count["Metric"] and all(isinstance(row[0], rdflib.URIRef) for row in rows)
    assert graph.query(f"PREFIX kg: <{KG}> ASK {{ ?m a kg:Metric }}").askAnswer is True
    constructed = graph.query(f"PREFIX kg: <{KG}> CONSTRUCT WHERE {{ ?m a kg:Metric }}").graph
    assert len(constructed) == count["Metric"]


def test_post_forms_and_sparql_query_bodies(endpoint):
    form = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"}).encode()
    status, _, body = fetch(endpoint, data=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and json.loads(body)["boolean"] is True
    status, _, body = fetch(endpoint, data=b"ASK { ?s ?p ?o }", headers={"Content-Type": "application/sparql-query"})
    assert status == 200 and json.loads(body)["boolean"] is True
    status, _, body = fetch(endpoint, data=b"ASK {}", headers={"Content-Type": "text/plain"})
    assert status == 415


# ---------------------------------------------------------------- read-only


def test_updates_are_refused_with_a_message(endpoint):
    client = SPARQLWrapper.SPARQLWrapper(endpoint)
    client.setQuery("INSERT DATA { <https://e.org/a> <https://e.org/b> <https://e.org/c> }")
    client.setMethod(POST)
    with pytest.raises(urllib.error.HTTPError) as refused:
        client.query()
    assert refused.value.code == 403 and b"read-only" in refused.value.read()

    updater = SPARQLUpdateStore(query_endpoint=endpoint, update_endpoint=endpoint)
    with pytest.raises(urllib.error.HTTPError, match="403"):
        updater.update("DELETE WHERE { ?s ?p ?o }")

    update = b"CLEAR ALL"
    assert fetch(endpoint, data=update, headers={"Content-Type": "application/sparql-update"})[0] == 403
    sneaky = urllib.parse.urlencode({"query": "PREFIX x: <https://e.org/>\n# a comment\nDROP ALL"})
    status, _, body = fetch(f"{endpoint}?{sneaky}")
    assert status == 403 and "read-only" in json.loads(body)["error"]
    assert wrapper(endpoint, "ASK { <https://e.org/a> ?p ?o }", JSON).queryAndConvert()["boolean"] is False
    assert wrapper(endpoint, "ASK { ?p a kg:Paper }", JSON).queryAndConvert()["boolean"] is True


# ---------------------------------------------------------------- limits


def test_a_runaway_query_is_stopped_at_its_time_limit_and_its_worker_replaced(endpoint):
    client = wrapper(endpoint, RUNAWAY, JSON)
    with pytest.raises(urllib.error.HTTPError) as stopped:
        client.query()  # unchecked, the join runs for minutes
    assert stopped.value.code == 503 and b"time limit of 1.5 s" in stopped.value.read()
    assert wrapper(endpoint, "ASK { ?p a kg:Paper }", JSON).queryAndConvert()["boolean"] is True


def test_three_runaway_queries_at_once_all_stop(endpoint):
    """Two hold the regular workers to their time limit; the third gets the spare's shorter one."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda _: fetch(f"{endpoint}?{urllib.parse.urlencode({'query': RUNAWAY})}"), range(3)))
    assert [status for status, _, _ in answers] == [503, 503, 503]
    messages = sorted(json.loads(body)["error"] for _, _, body in answers)
    assert sum("time limit" in m for m in messages) >= 2 and wrapper(endpoint, "ASK { ?p a kg:Paper }", JSON).query()


@pytest.mark.parametrize("keyword", ["SERVICE", "service SILENT"])
def test_federated_queries_are_refused_and_nothing_is_contacted(endpoint, keyword):
    with listener() as (port, connections):
        query = f"SELECT * WHERE {{ ?paper a kg:Paper {keyword} <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}"
        status, _, body = fetch(f"{endpoint}?{urllib.parse.urlencode({'query': query})}")
        posted = fetch(endpoint, data=query.encode(), headers={"Content-Type": "application/sparql-query"})
    assert status == posted[0] == 403 and "SERVICE (federated query) is refused" in json.loads(body)["error"]
    assert connections == []


def test_kg_query_refuses_federated_queries_too(sample):
    with listener() as (port, connections):
        result = CliRunner().invoke(main, ["query", "-g", str(sample),
                                           f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/> {{ ?s ?p ?o }} }}"])
    assert result.exit_code == 1 and "SERVICE (federated query) is refused" in result.output
    assert connections == []


def test_a_query_over_the_memory_cap_gets_a_503_and_the_worker_is_replaced(sample):
    """An ORDER BY over a cross join holds every row: without the cap it grows until the machine swaps."""
    app = serve.make_app(sample, timeout=120, worker_memory=1536 << 20)
    try:
        sort_all = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?c ?f ?i LIMIT 1"
        status, _, body = serve.get(app, "/sparql?" + urllib.parse.urlencode({"query": sort_all}))
        assert status == 503 and "--worker-memory" in json.loads(body)["error"]
        status, _, body = serve.get(app, "/sparql?" + urllib.parse.urlencode({"query": "ASK { ?p a kg:Paper }"}))
        assert status == 200 and json.loads(body)["boolean"] is True
    finally:
        app.close()


def test_short_queries_are_answered_while_long_ones_hold_every_regular_worker():
    """The spare worker takes a query only while the two regular ones are busy, and then for at
    most busy_limit seconds: a short query gets through, a long one is told the server is busy."""
    from support import sleepy_engine

    pool = serve.QueryPool(sleepy_engine, size=2, spare=1, timeout=4, busy_limit=0.5, queue_wait=30)
    pool.wait_ready(timeout=120)
    try:
        long_ones = [threading.Thread(target=lambda: pytest.raises(serve.QueryTimeout, pool.run, {"sleep": 600}))
                     for _ in range(2)]
        for thread in long_ones:
            thread.start()
        while pool.busy < 2:  # both regular workers are now sleeping through their 600 s
            time.sleep(0.05)
        assert json.loads(pool.run({"sleep": 0, "n": 1})["body"]) == {"sleep": 0, "n": 1}
        with pytest.raises(serve.ServerBusy, match="busy with long queries"):
            pool.run({"sleep": 600})
        for thread in long_ones:
            thread.join()
    finally:
        pool.close()


def test_a_request_that_finds_every_worker_busy_waits_a_bounded_time_and_is_told_to_retry():
    from support import sleepy_engine

    pool = serve.QueryPool(sleepy_engine, size=1, spare=0, timeout=3, queue_wait=0.2)
    pool.wait_ready(timeout=120)
    try:
        long_one = threading.Thread(target=lambda: pytest.raises(serve.QueryTimeout, pool.run, {"sleep": 600}))
        long_one.start()
        while pool.busy < 1:
            time.sleep(0.05)
        with pytest.raises(serve.ServerBusy) as busy:
            pool.run({"sleep": 0})
        assert busy.value.status == 503 and busy.value.headers == {"Retry-After": "2"}
        long_one.join()
    finally:
        pool.close()


def test_results_are_capped_and_the_cap_is_said(endpoint):
    query = urllib.parse.urlencode({"query": "SELECT * WHERE { ?s ?p ?o }"})
    status, headers, body = fetch(f"{endpoint}?{query}")
    assert status == 200 and len(json.loads(body)["results"]["bindings"]) == MAX_RESULTS
    assert headers["KG-Results-Truncated"] == f"first {MAX_RESULTS} results (kg serve --max-results)"
    status, headers, body = fetch(f"{endpoint}?{urllib.parse.urlencode({'query': 'CONSTRUCT WHERE { ?s ?p ?o }'})}",
                                  headers={"Accept": "application/n-triples"})
    assert status == 200 and len(body.decode().splitlines()) == MAX_RESULTS and "KG-Results-Truncated" in headers
    query = urllib.parse.urlencode({"query": "SELECT ?d WHERE { ?d a kg:Dataset }"})
    assert "KG-Results-Truncated" not in fetch(f"{endpoint}?{query}")[1]


# ---------------------------------------------------------------- protocol errors


@pytest.mark.parametrize("query, status, message", [
    ("SELECT ?x WHERE { ?x ", 400, "Invalid SPARQL"),
    ("", 400, "Give exactly one SPARQL query"),
])
def test_bad_queries_get_a_json_error(endpoint, query, status, message):
    code, headers, body = fetch(f"{endpoint}?{urllib.parse.urlencode({'query': query})}")
    assert code == status and headers["Content-Type"] == "application/json"
    assert message in json.loads(body)["error"] and b"Traceback" not in body


def test_unacceptable_accept_gets_406_and_format_overrides_accept(endpoint):
    query = urllib.parse.urlencode({"query": "SELECT ?d WHERE { ?d a kg:Dataset }"})
    status, _, body = fetch(f"{endpoint}?{query}", headers={"Accept": "image/png"})
    assert status == 406 and "text/csv" in json.loads(body)["error"]
    status, headers, body = fetch(f"{endpoint}?{query}&format=csv", headers={"Accept": "image/png"})
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    assert headers["Content-Disposition"] == 'attachment; filename="results.csv"'


@pytest.mark.parametrize("accept, expected", [
    ("", ox.QueryResultsFormat.JSON),
    ("text/html,application/xhtml+xml,*/*;q=0.8", ox.QueryResultsFormat.JSON),
    ("application/sparql-results+xml", ox.QueryResultsFormat.XML),
    ("text/csv;q=0.2, text/tab-separated-values;q=0.9", ox.QueryResultsFormat.TSV),
    ("text/*", ox.QueryResultsFormat.XML),  # text/xml is the first text/ type offered
    ("application/json;q=0, text/csv", ox.QueryResultsFormat.CSV),
    ("image/png", None),
])
def test_negotiate(accept, expected):
    assert negotiate(accept, RESULT_FORMATS, ox.QueryResultsFormat.JSON) == expected


# ---------------------------------------------------------------- pages and their JSON twins


def test_entity_json_twin_has_evidence_offsets_into_each_sentence(server):
    for _ in range(3):  # related methods get the tests' short time limit: a busy machine may need another try
        status, headers, body = fetch(server.url + f"/entity/{GRPO}.json")
        view = json.loads(body)
        if not view["related_note"]:
            break
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert (view["type"], view["label"], view["aliases"], view["paper_count"]) == (
        "Method", "GRPO", ["Group Relative Policy Optimization"], 2)
    marked = {item["sentence"][item["start"]:item["end"]] for item in view["evidence"]}
    assert marked == {"GRPO", "Group Relative Policy Optimization"}
    assert {item["role"] for item in view["evidence"]} == {"uses", "comparesWith"}
    # C-GRPO is GRPO's name with a letter added: a variant of it, ranked with the related methods
    # (so not listed again among the variants the list had no room for).
    assert {"C-GRPO", "PhoneRL"} <= {r["label"] for r in view["related"]} and view["variants"] == []
    assert all(r["id"] and r["id"].startswith("method/") for r in view["related"])
    # The panel's SPARQL link runs the panel's own query.
    assert view["urls"]["query"] == "/query?" + urllib.parse.urlencode({"query": view["sparql"]})
    rows = wrapper(server.url + "/sparql", view["sparql"], JSON).queryAndConvert()["results"]["bindings"]
    assert len(rows) == len(view["evidence"])


def test_related_methods_read_the_graph_once_and_answer_from_the_index(sample, monkeypatch):
    """The related-methods index is made of the graph's tables on the first request only."""
    from kg.query import related

    loads = []
    original = related.RelatedIndex.__init__

    def counting(self, tables):
        loads.append(tables)
        original(self, tables)

    monkeypatch.setattr(related.RelatedIndex, "__init__", counting)
    app = serve.make_app(sample, timeout=10)
    try:
        for _ in range(2):
            status, _, body = serve.get(app, f"/related.json?id={GRPO}")
            assert status == 200 and "PhoneRL" in [r["label"] for r in json.loads(body)["related"]]
        view = json.loads(serve.get(app, f"/entity/{GRPO}.json?related=0")[2])
        assert "related" not in view and view["evidence"]
        assert len(loads) == 1
    finally:
        app.close()


def test_an_entity_page_without_its_related_methods_renders_as_html_too(sample):
    """``?related=0`` leaves the related methods out of the HTML page as it does of its JSON twin."""
    app = serve.make_app(sample, timeout=10)
    try:
        status, _, body = serve.get(app, f"/entity/{GRPO}?related=0")
        assert status == 200 and "Group Relative Policy Optimization" in body.decode()
        assert "Related methods" not in body.decode()
    finally:
        app.close()


@pytest.mark.parametrize("path", [f"/entity/{GRPO}", "/entity/method/grpo", "/entity/METHOD/Group%20Relative%20Policy%20Optimization",
                                  "/entity/method/group%20relative%20policy%20optimization"])
def test_entity_ids_as_node_ids_iri_tails_or_names(server, path):
    status, _, body = fetch(server.url + path + ".json")
    if "METHOD" in path:  # the type segment is a node id's, lower case
        assert status == 404
        return
    assert status == 200 and json.loads(body)["id"] == GRPO


def test_entity_page_marks_the_mention(server):
    status, headers, body = fetch(server.url + f"/entity/{GRPO}")
    html = body.decode()
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert "<mark>GRPO</mark>" in html and "<h1>GRPO</h1>" in html


def test_entity_page_lists_its_relations_and_results(server):
    status, _, body = fetch(server.url + "/entity/model/phonerl9b.json")
    assert status == 200, body
    view = json.loads(body)
    assert {(r["relation"], r["object_label"], r["papers"]) for r in view["relations"]} >= {
        ("evaluatedOn", "AndroidWorld", 1), ("variantOf", "PhoneRL", 1)}
    assert [(r["value"], r["unit"], r["dataset"], r["metric"]) for r in view["results"]] == [
        (61.3, "%", "AndroidWorld", "success rate")]
    html = fetch(server.url + "/entity/model/phonerl9b")[2].decode()
    assert "<h2>Relations (" in html and "<h2>Results (1)</h2>" in html and "61.3%" in html


def test_paper_page_and_json_twin(server):
    paper = json.loads(fetch(server.url + f"/entity/{GRPO}.json")[2])["papers"][0]["id"]
    view = json.loads(fetch(server.url + f"/{paper}.json")[2])
    assert view["type"] == "Paper" and view["venue"] == "Sample Workshop 2025"
    assert {view["abstract"][m["start"]:m["end"]] for m in view["mentions"] if m["entity"] == GRPO} == {
        "GRPO", "Group Relative Policy Optimization"}
    html = fetch(server.url + f"/{paper}")[2].decode()
    assert "<mark>Group Relative Policy Optimization</mark>" in html


def test_index_search_and_neighbourhood_json(server, count):
    index = json.loads(fetch(server.url + "/index.json")[2])
    assert index["nodes"] == {kind: n for kind, n in count.items() if kind in index["nodes"]} and index["triples"] > 1000
    names = [r["name"] for r in json.loads(fetch(server.url + "/search.json?q=grp")[2])["results"]]
    assert names[0] == "GRPO" and "C-GRPO" in names  # the exact name first, then prefixes, then the rest
    assert all(names.index(n) < names.index("C-GRPO") for n in names if n.lower().startswith("grp"))
    hood = json.loads(fetch(server.url + f"/neighbourhood.json?id={GRPO}&k=1")[2])
    assert hood["center"] == GRPO and hood["options"]["physics"] == {"enabled": False}
    # One link from GRPO: its two papers, and the entities related to it (C-GRPO variantOf GRPO), as offline.
    drawn = {node["id"] for node in hood["nodes"]}
    assert {GRPO, "paper/a9f7eaad9627b871", "paper/a7db03a50a5fa476", C_GRPO} <= drawn
    assert fetch(server.url + f"/neighbourhood.json?id={GRPO}&k=9")[0] == 400


def test_search_finds_an_entity_by_meaning_after_names(server):
    """No name contains "smartphone app navigation": the graph's vectors find the entity it means."""
    results = json.loads(fetch(server.url + "/search.json?q=smartphone+app+navigation")[2])["results"]
    assert results[0]["label"] == "mobile GUI navigation" and results[0]["similar"] >= 0.6
    # Names first: "GRPO" is found by name, and what is only close in meaning comes after.
    results = json.loads(fetch(server.url + "/search.json?q=grpo")[2])["results"]
    assert results[0]["name"] == "GRPO" and "similar" not in results[0]


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_on_the_query_page_runs_through_the_endpoint(server, name):
    """Posted as the query page posts them (SPARQLWrapper mistakes a query opening with two comment lines
    that mention "add..." for an update)."""
    shipped = {e["name"]: e for e in json.loads(fetch(server.url + "/query.json")[2])["examples"]}
    form = urllib.parse.urlencode({"query": shipped[name]["query"]}).encode()
    status, _, body = fetch(server.url + "/sparql", data=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and json.loads(body)["results"]["bindings"], f"{name} returned nothing"


def test_query_page_prefills_the_editor_escaped(server):
    query = "SELECT * { ?s ?p ?o } # </textarea><script>alert(1)</script>"
    html = fetch(server.url + "/query?" + urllib.parse.urlencode({"query": query}))[2].decode()
    assert "&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert '<script src="/static/query.js"></script>' in html


# ---------------------------------------------------------------- safety


@pytest.mark.parametrize("path", [
    "/static/../kg/store.py", "/static/%2e%2e/%2e%2e/pyproject.toml", "/static/..%2f..%2fpyproject.toml",
    "/static/%2E%2E%5Crender.py", "/../pyproject.toml", "/static//etc/passwd", "/static/render.py",
    "/static/explorer.html", "/entity/../../../etc/passwd",
])
def test_no_path_escapes_the_static_folder(server, path):
    status, headers, body = raw_get(server, path)
    assert status == 404
    assert b"[build-system]" not in body and b"root:" not in body and b"import" not in body
    assert headers["Content-Type"] == "text/html; charset=utf-8"


def test_static_assets_are_served(server):
    status, headers, body = raw_get(server, "/static/query.js")
    assert status == 200 and headers["Content-Type"] == "text/javascript; charset=utf-8" and b"use strict" in body


def test_every_response_sets_safe_headers(server):
    for path in ["/", "/query", f"/entity/{GRPO}", f"/entity/{GRPO}.json", "/sparql?query=ASK%7B%7D", "/nope",
                 "/static/page.css"]:
        status, headers, _ = raw_get(server, path)
        assert headers["X-Content-Type-Options"] == "nosniff", path
        csp = headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, path
        assert not re.search(r"https?:|\*", csp), f"{path}: a remote source in {csp}"


def test_the_explorer_may_fetch_only_from_its_own_server(server):
    status, headers, body = raw_get(server, "/")
    assert status == 200 and "connect-src 'self'" in headers["Content-Security-Policy"]
    assert not re.search(rb"""(src|href)\s*=\s*["']?(https?:)?//""", body)


def test_requests_for_another_host_name_are_refused(server):
    """A page elsewhere cannot reach the server through a DNS name rebound to 127.0.0.1."""
    status, _, body = raw_get(server, "/index.json", host="attacker.example:80")
    assert status == 400 and "Unexpected Host" in json.loads(body)["error"]
    assert raw_get(server, "/index.json", host=f"localhost:{server.server.server_address[1]}")[0] == 200


def test_errors_are_pages_never_tracebacks(server, monkeypatch):
    def broken(*args):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(server.app, "index_view", broken)
    status, _, body = raw_get(server, "/index.json")
    assert status == 500 and json.loads(body) == {"status": 500, "error": "Internal error; the server's log has the details."}


def _handlers(html: str) -> list[str]:
    """The event-handler attributes (``onerror``, ``onclick``...) on the tags of ``html``, as a browser parses them."""
    from html.parser import HTMLParser

    found = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend(f"{tag} {name}" for name, _ in attrs if name.startswith("on"))

    Parser().feed(html)
    return found


def test_hostile_corpus_is_escaped_in_pages_and_exact_in_json(hostile_server):
    # Evil-Net's evidence is the sentence with the script in it ("alert(1)</script", a fragment, is no node)
    found = json.loads(fetch(hostile_server.url + "/search.json?q=" + urllib.parse.quote("Evil-Net"))[2])["results"]
    entity = found[0]["id"]
    view = json.loads(fetch(hostile_server.url + f"/entity/{entity}.json")[2])
    assert "<script>" in json.loads(fetch(hostile_server.url + f"/{view['papers'][0]['id']}.json")[2])["abstract"]
    for path in (f"/entity/{entity}", f"/{view['papers'][0]['id']}"):
        html = fetch(hostile_server.url + path)[2].decode()
        # The hostile text is text: no tag of it, no handler on any tag (it stands escaped, even cut short)
        assert "<script>alert" not in html and "<img" not in html and not _handlers(html)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "alert(1)&lt;/script" in html


# ---------------------------------------------------------------- the command


def test_get_answers_one_request_in_process(sample):
    result = subprocess.run([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--get", f"/entity/{GRPO}.json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and json.loads(result.stdout)["label"] == "GRPO"
    sparql = "/sparql?" + urllib.parse.urlencode({"query": "SELECT ?m WHERE { ?m a kg:Metric }", "format": "csv"})
    result = subprocess.run([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--get", sparql],
                            capture_output=True, text=True, timeout=120)
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0] == "m" and len(lines) > 1
    assert all(line.startswith("https://w3id.org/kg/id/metric/") for line in lines[1:])
    missing = subprocess.run([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--get", "/entity/method/nope"],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "No node &#39;method/nope&#39;" in missing.stdout
    assert "Traceback" not in missing.stderr


def test_serve_answers_before_its_query_workers_have_started(sample):
    """Start-up does not wait for the workers (seconds on a large graph): with workers that never
    get ready, the server still listens and answers its pages."""
    from support import never_ready_engine

    never_ready = serve.QueryPool(never_ready_engine, size=1, spare=0, timeout=1)
    app = serve.make_app(sample, pool=never_ready)
    running = serve.start(app, port=0)
    try:
        status, _, body = fetch(running.url + "/index.json")
        assert status == 200 and json.loads(body)["title"] == "sample"
        assert never_ready.busy == 0  # nothing was sent to a worker
    finally:
        running.stop()


def test_kg_serve_says_where_it_listens_and_stops_on_ctrl_c(sample):
    process = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+)/ ", line)
        assert match, line + process.stderr.read()
        assert json.loads(fetch(match.group(1) + "/index.json")[2])["title"] == "sample"
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    assert process.returncode == 0 and "Stopping." in out


def test_help_says_why_the_default_host_is_loopback():
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0 and "127.0.0.1" in result.output and "no login" in " ".join(result.output.split())


def test_a_graph_that_is_not_there_is_one_clear_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "kg.cli", "serve", "-g", str(tmp_path / "nope"), "--get", "/"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "No graph at" in result.stderr and "Traceback" not in result.stderr


def test_serving_an_n_triples_file_loads_it_into_a_temporary_store(sample, tmp_path):
    copy = tmp_path / "copy.nt"
    copy.write_bytes(sample.with_name("sample.nt").read_bytes())
    app = serve.make_app(copy)
    try:
        status, _, body = serve.get(app, "/index.json")
        scratch = Path(app.store_path)
        assert status == 200 and json.loads(body)["nodes"]["Paper"] == 8 and scratch.is_dir()
    finally:
        app.close()
    assert not scratch.exists() and os.listdir(tmp_path) == ["copy.nt"]


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_workers_end_with_a_killed_server_even_mid_query(sample):
    process = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--port", "0",
                                "--timeout", "300", "--worker-memory", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    workers: list[int] = []
    try:
        url = re.search(r"at (http://\S+)/ ", process.stdout.readline()).group(1)

        def runaway():
            with contextlib.suppress(OSError):  # the server is killed before it answers
                fetch(f"{url}/sparql?{urllib.parse.urlencode({'query': RUNAWAY})}")

        threading.Thread(target=runaway, daemon=True).start()
        # Mid-query means a worker has spent seconds of CPU: starting one takes well under one.
        while not any(_cpu_seconds(worker) > 3 for worker in workers):
            assert process.poll() is None, "the server stopped"
            workers = [p for p in _children(process.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
            time.sleep(0.1)
    finally:
        process.kill()
        process.wait()
    # Each worker looks at its parent once a second; on a loaded machine that can take a while,
    # so the bound is generous (it only lengthens a failing run).
    deadline = time.monotonic() + 90
    while any(_alive(worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert workers and not any(_alive(worker) for worker in workers)


def test_a_syntax_error_says_where_and_what_was_expected_in_a_line(endpoint):
    _, _, body = fetch(f"{endpoint}?{urllib.parse.urlencode({'query': 'SELECT ?x WHERE { ?x a kg:Paper'})}")
    error = json.loads(body)["error"]
    # The engine also lists the grammar's character classes ('\u{00C0}'..='\u{00D6}' ...): left out.
    assert error.startswith("Invalid SPARQL: error at 1:") and "expected one of" in error
    assert "\\u{" not in error and len(error) < 200


def test_the_query_pages_examples_name_entities_of_the_graph_served(hostile_server):
    """On a graph without the sample's GRPO or RULER, each example still names one of its entities."""
    shipped = json.loads(fetch(hostile_server.url + "/query.json")[2])["examples"]
    bound = [value for e in shipped for value in re.findall(r'VALUES \?\w+ \{ "([^"]*)" \}', e["query"])]
    assert bound and not {"grpo", "ruler", "phonerl", "visual grounding"} & set(bound)
    for value in bound:  # bound as kg:lookupKey holds names: in lower case
        found = json.loads(fetch(hostile_server.url + "/search.json?" + urllib.parse.urlencode({"q": value}))[2])
        assert value in [r["name"].lower() for r in found["results"]]


@pytest.mark.parametrize("which", ["server", "hostile_server"])
def test_every_example_on_the_query_page_answers_where_the_graph_has_an_answer(which, request):
    """Each example is bound to a name for which it answers, as kg query --list cites them."""
    running = request.getfixturevalue(which)
    shipped = json.loads(fetch(running.url + "/query.json")[2])["examples"]
    answered = {}
    for example in shipped:
        body = json.loads(fetch(running.url + "/sparql?" + urllib.parse.urlencode({"query": example["query"]}),
                                headers={"Accept": "application/sparql-results+json"})[2])
        answered[example["name"]] = len(body["results"]["bindings"]) if "results" in body else int(body["boolean"])
    if which == "server":  # the sample has an answer for every example
        assert all(answered.values()), answered
    assert sum(map(bool, answered.values())) >= len(answered) // 2, answered


@contextlib.contextmanager
def _started_until(sample, warmed: str):
    """A server of the sample, started, once its attribute ``warmed`` is read (or after 60 s)."""
    app = serve.make_app(sample)
    running = serve.start(app, port=0)
    try:
        deadline = time.monotonic() + 60
        while getattr(app, warmed) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        yield app
    finally:
        running.stop()
        app.close()


def test_a_started_server_reads_its_index_before_the_first_request_and_no_panel_until_asked(sample):
    with _started_until(sample, "_index") as app:
        assert app._index is not None  # no page was asked for: the warm-up read it
        assert app._index.panels == {}  # a panel reads its own part of the graph when asked: milliseconds
        status, _, _ = serve.get(app, "/entity/method/group-relative-policy-optimization.json")
        assert status == 200 and list(app._index.panels) == ["method/group-relative-policy-optimization"]


def test_a_started_server_reads_what_first_pages_need_before_they_are_asked(sample):
    """The related-methods index, the explorer's page and the query page's examples take seconds on
    a large graph: the warm-up reads them, so that no first visitor waits for them."""
    with _started_until(sample, "_related") as app:
        assert app._related is not None and app._explorer and app._examples and app._summary
        assert app._answers == {}  # no related methods asked for yet


def test_the_query_page_opened_bare_holds_the_first_example_and_a_given_query_stays(sample):
    app = serve.make_app(sample)
    try:
        bare = json.loads(serve.get(app, "/query.json")[2])
        assert bare["query"] == bare["examples"][0]["query"] and "SELECT" in bare["query"]
        given = json.loads(serve.get(app, "/query.json?query=ASK%7B%7D")[2])
        assert given["query"] == "ASK{}"
    finally:
        app.close()


def test_the_query_page_opened_bare_runs_its_first_example_as_is_and_its_menu_names_it(sample):
    """The editor's query is the example the menu shows chosen, and the endpoint answers it as it stands."""
    app = serve.make_app(sample)
    try:
        page = serve.get(app, "/query")[2].decode()
        first = json.loads(serve.get(app, "/query.json")[2])["examples"][0]
        chosen = re.findall(r'<option value="([^"]*)"[^>]*\sselected>', page)
        assert chosen == [first["name"]], chosen
        status, _, body = serve.get(app, "/sparql?" + urllib.parse.urlencode({"query": first["query"]}),
                                    accept="application/sparql-results+json")
        assert status == 200 and json.loads(body)["results"]["bindings"]
    finally:
        app.close()


def test_a_task_page_says_comparison_of_1_paper_not_1_papers(sample):
    app = serve.make_app(sample)
    try:
        status, _, body = serve.get(app, "/entity/task/mathematical-reasoning")
        assert status == 200 and "<h2>Comparison (1 paper)</h2>" in body.decode()
    finally:
        app.close()
