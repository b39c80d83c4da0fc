"""kg export: GraphML and GEXF that networkx reads back with the RDF's nodes and edges."""
from __future__ import annotations

import networkx as nx
import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from kg import vocab
from kg.cli import main
from kg.query import kg_terms, with_values
from kg.store import open_graph, run_query

READERS = {"graphml": nx.read_graphml, "gexf": nx.read_gexf}


def _count(store, query: str, variable: str, terms) -> int:
    return int(next(iter(run_query(store, with_values(query, variable, *terms))))["n"].value)


@pytest.mark.parametrize("to", ["graphml", "gexf"])
def test_an_export_reads_back_with_the_rdfs_nodes_edges_and_typed_attributes(sample, tmp_path, to):
    target = tmp_path / f"sample.{to}"
    result = CliRunner().invoke(main, ["export", "-g", str(sample), "--to", to, "-o", str(target)])
    assert result.exit_code == 0, result.output
    G = READERS[to](target)
    store = open_graph(sample)
    nodes = _count(store, "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ?class }", "class",
                   kg_terms(("Paper", *vocab.ENTITY_TYPES)))
    edges = _count(store, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "p",
                   kg_terms(vocab.ROLES + vocab.RELATIONS) + [ox.NamedNode(str(vocab.SKOS.broader))])
    assert (G.number_of_nodes(), G.number_of_edges()) == (nodes, edges)
    assert f"Wrote {target}: {nodes} nodes, {edges} edges." in result.output
    grpo = G.nodes["method/GRPO"] if "method/GRPO" in G else next(
        data for _, data in G.nodes(data=True) if data.get("label") == "GRPO")
    assert (grpo["kind"], grpo["papers"], grpo["aliases"]) == ("Method", 2, "Group Relative Policy Optimization")
    assert isinstance(grpo["salience"], float)
    roles = {data["role"] for _, _, data in G.edges(data=True)}
    assert {"proposes", "uses", "variantOf", "broader"} <= roles


def test_an_unknown_format_is_refused(sample, tmp_path):
    result = CliRunner().invoke(main, ["export", "-g", str(sample), "--to", "dot"])
    assert result.exit_code == 2 and "'dot' is not one of" in result.output


def test_the_neo4j_export_has_a_file_per_label_and_type_with_the_rdfs_counts(sample, tmp_path):
    import csv

    folder = tmp_path / "neo4j"
    result = CliRunner().invoke(main, ["export", "-g", str(sample), "--to", "neo4j", "-o", str(folder)])
    assert result.exit_code == 0, result.output
    graphml = tmp_path / "sample.graphml"
    CliRunner().invoke(main, ["export", "-g", str(sample), "--to", "graphml", "-o", str(graphml)])
    G = nx.read_graphml(graphml)
    ids, labels = set(), set()
    for path in folder.glob("nodes-*.csv"):
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        assert "id:ID" in rows[0] and "label:string" in rows[0]
        label = path.stem.removeprefix("nodes-")
        assert {row[":LABEL"] for row in rows} == {f"{label};KGNode"}
        ids |= {row["id:ID"] for row in rows}
        labels.add(label)
    assert ids == set(G.nodes) and labels == {"Paper", *vocab.ENTITY_TYPES}
    relationships = []
    for path in folder.glob("rels-*.csv"):
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        assert {row[":TYPE"] for row in rows} == {path.stem.removeprefix("rels-")}
        relationships += [(row[":START_ID"], row[":END_ID"]) for row in rows]
    assert len(relationships) == G.number_of_edges() and {n for pair in relationships for n in pair} <= ids
    script = (folder / "import.sh").read_text(encoding="utf-8")
    assert "neo4j-admin database import full" in script and script.count("--nodes=") == len(labels)
    cypher = (folder / "load.cypher").read_text(encoding="utf-8")
    assert cypher.count("LOAD CSV") == len(labels) + len(list(folder.glob("rels-*.csv")))
