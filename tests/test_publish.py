"""kg publish into real SPARQL servers (an Oxigraph server and Virtuoso, started here on free
loopback ports), and kg serve --sparql reading from them: every example query answers as the
embedded store does, a new build replaces the old one whole, and a failed load changes nothing."""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from kg import vocab
from kg.cli import main
from kg.query.endpoint import SparqlEndpoint, current_builds, published_build
from kg.errors import KGError
from kg.query.publish import OxigraphServer, Virtuoso, publish
from kg.query import examples
from kg.serve import get, make_app
from kg.store import PREFIXES, open_graph
from servers import answer_rows, concatenated, oxigraph_command, oxigraph_server, virtuoso_command, virtuoso_server

ENGINES = ["oxigraph", "virtuoso"]
PAPER = "paper/ad67365e363be8e1"  # the sample's GRPO paper


@pytest.fixture(scope="module", params=ENGINES)
def server(request, tmp_path_factory):
    """A running server of each kind, and the target kg publish loads it through."""
    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "oxigraph":
        if oxigraph_command() is None:
            pytest.skip("the oxigraph CLI is not installed (pip install oxigraph)")
        with oxigraph_server(folder) as url:
            yield OxigraphServer(url)
    else:
        if virtuoso_command() is None:
            pytest.skip("Virtuoso is not installed (apt-get install virtuoso-opensource)")
        load_dir = folder / "load"
        load_dir.mkdir()
        with virtuoso_server(folder, load_dir) as (url, isql):
            yield Virtuoso(url, isql=isql, load_dir=load_dir)


@pytest.fixture(scope="module")
def published(server, sample):
    return publish(sample, server)


def test_publish_loads_every_triple_of_the_build_into_a_named_graph_of_its_own(published, server, sample):
    endpoint = SparqlEndpoint(server.query_url)
    expected = len(open_graph(sample))
    assert published.triples == expected
    [row] = endpoint.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{published.build}> {{ ?s ?p ?o }} }}")
    assert int(row["n"].value) == expected
    assert current_builds(endpoint, "sample") == [published.build]
    assert published.build.startswith(str(vocab.published_graph_iri(vocab.DEFAULT_BASE, "sample")) + "/build/")
    # The ontology and its shapes in their own named graph.
    ontology = endpoint.query(f"ASK {{ GRAPH <{vocab.ONTOLOGY_GRAPH}> {{ <{vocab.KG.Method}> a <{vocab.OWL.Class}> . "
                              f"?shape <http://www.w3.org/ns/shacl#targetClass> <{vocab.KG.Paper}> }} }}")
    assert bool(ontology)


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_query_answers_through_the_server_as_in_the_embedded_store(published, server, sample, name):
    query = examples()[name].bind({})
    local = open_graph(sample).query(query, prefixes=PREFIXES)
    remote = published_build(server.query_url, "sample").query(query, prefixes=PREFIXES)
    expected, got = answer_rows(local, concatenated(query)), answer_rows(remote, concatenated(query))
    assert got == expected
    assert expected, f"{name} answers nothing on the sample: the comparison would prove nothing"


def test_kg_serve_sparql_shows_the_pages_of_the_embedded_store(published, server, sample):
    local, remote = make_app(sample), make_app(sample, sparql=server.query_url)
    try:
        for path in ("/index.json", "/entity/method/grpo.json", f"/{PAPER}.json", "/related.json?id=method/grpo",
                     "/neighbourhood.json?id=method/grpo&k=2", "/search.json?q=grpo"):
            status, _, body = get(remote, path)
            assert status == 200, (path, body[:300])
            assert json.loads(body) == json.loads(get(local, path)[2]), path
        status, headers, body = get(remote, "/sparql?query=" + "SELECT%20(COUNT(*)%20AS%20%3Fn)%20%7B%3Fs%20%3Fp%20%3Fo%7D",
                                    accept="application/sparql-results+json")
        assert status == 200
        assert int(json.loads(body)["results"]["bindings"][0]["n"]["value"]) == published.triples
        construct = "/sparql?query=" + urllib.parse.quote("CONSTRUCT { ?m a kg:Method } WHERE { ?m a kg:Method }")
        status, _, body = get(remote, construct, accept="application/n-triples")
        assert status == 200, body[:300]
        assert set(ox.parse(body, format=ox.RdfFormat.N_TRIPLES)) == set(
            ox.parse(get(local, construct, accept="application/n-triples")[2], format=ox.RdfFormat.N_TRIPLES))
    finally:
        local.close()
        remote.close()


def test_a_new_build_replaces_the_old_one_whole(server, sample, tmp_path):
    first = publish(sample, server, name="replaced")
    second = publish(sample, server, name="replaced")
    endpoint = SparqlEndpoint(server.query_url)
    assert current_builds(endpoint, "replaced") == [second.build]
    assert second.dropped == [first.build]
    [row] = endpoint.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{first.build}> {{ ?s ?p ?o }} }}")
    assert int(row["n"].value) == 0


def test_a_failed_load_leaves_the_current_build_in_place(server, sample, tmp_path):
    good = publish(sample, server, name="guarded")
    broken = tmp_path / "guarded.nt"
    broken.write_bytes(Path(f"{sample}.nt").read_bytes() + b"<https://example.org/s> <not an iri> .\n")
    with pytest.raises(KGError):
        publish(broken, server, name="guarded")
    endpoint = SparqlEndpoint(server.query_url)
    assert current_builds(endpoint, "guarded") == [good.build]
    builds = endpoint.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert not [row["g"].value for row in builds if "/graph/guarded/build/" in row["g"].value and row["g"].value != good.build]


def test_kg_publish_reports_triples_per_second_and_how_to_serve_it(server, sample):
    options = ["--isql", server.isql, "--load-dir", str(server.load_dir)] if isinstance(server, Virtuoso) else []
    result = CliRunner().invoke(main, ["publish", "-g", str(sample), "--to", server.engine,
                                       "--url", server.url, "--name", "cli", *options])
    assert result.exit_code == 0, result.output
    assert "triples/s" in result.output and "current build of" in result.output
    assert f"--sparql {server.query_url}" in result.output


def test_kg_serve_sparql_names_a_graph_the_server_does_not_hold(server, tmp_path):
    with pytest.raises(KGError, match="no published graph named 'absent'"):
        make_app(tmp_path / "absent", sparql=server.query_url)


def test_an_unreachable_server_is_a_clear_error(sample):
    with pytest.raises(KGError, match="Cannot reach the SPARQL endpoint http://127.0.0.1:9/query"):
        publish(sample, OxigraphServer("http://127.0.0.1:9"))  # the discard port: nothing listens


def test_a_virtuoso_whose_isql_port_is_closed_is_named_in_the_error(server, sample):
    if not isinstance(server, Virtuoso):
        pytest.skip("isql is Virtuoso's")
    closed = Virtuoso(server.url, isql="127.0.0.1:9", load_dir=server.load_dir)
    with pytest.raises(KGError, match="isql at 127.0.0.1:9"):
        publish(sample, closed, name="unreachable")
    assert current_builds(SparqlEndpoint(server.query_url), "unreachable") == []
