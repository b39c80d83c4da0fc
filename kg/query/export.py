"""Export: a built graph for graph tools, as GraphML or GEXF (Gephi, Cytoscape, networkx), or as
the CSV files Neo4j imports.

Nodes are the graph's papers and entities, edges its paper -> entity roles, its entity ->
entity relations and its concept hierarchy (``broader``), read as ``kg serve`` reads them (from the
graph's tables, :func:`kg.query.graph_index.index_graph`): a tool
shows what the explorer shows. Every
attribute is a typed column: ``kind``, ``label``, ``aliases`` (joined by `` | ``), ``papers``,
``reach`` and ``salience`` for entities; ``kind``, ``label``, ``title``, ``venue``, ``year``,
``decision`` and ``url`` for papers; ``role`` and ``support`` (papers stating it; 1 for a paper's own role) for edges.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from ..errors import KGError

#: The formats ``kg export --to`` writes, by name: the file's extension and networkx's writer.
FORMATS = {"graphml": (".graphml", nx.write_graphml), "gexf": (".gexf", nx.write_gexf)}
_FIELDS = ("kind", "label", "aliases", "papers", "reach", "salience", "title", "venue", "year", "decision", "url")


def tool_graph(graph: str | Path) -> nx.MultiDiGraph:
    """The graph at ``graph`` (``graphs/NAME``) with the attributes of the module's doc, each a
    str, int or float, so GraphML and GEXF can type its column."""
    from .graph_index import graph_index

    source = graph_index(graph).graph
    G = nx.MultiDiGraph()
    for node, data in source.nodes(data=True):
        attributes = {}
        for field in _FIELDS:
            value = data.get(field)
            if isinstance(value, list):
                value = " | ".join(value)
            if value not in (None, ""):
                attributes[field] = value
        G.add_node(node, **attributes)
    for subject, other, key, data in source.edges(keys=True, data=True):
        G.add_edge(subject, other, key=key, role=data.get("role", key), support=int(data.get("papers") or 1))
    return G


def export(graph: str | Path, target: str | Path, to: str) -> tuple[Path, int, int]:
    """Write the graph at ``graph`` to ``target`` as ``to`` (``graphml`` or ``gexf``: a file;
    ``neo4j``: a folder, see :func:`export_neo4j`); return it, the number of nodes and of edges."""
    if to == "neo4j":
        return export_neo4j(graph, target)
    if to not in FORMATS:
        raise KGError(f"Cannot export to {to!r}; choose one of {', '.join(FORMATS)}, neo4j.")
    G = tool_graph(graph)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    FORMATS[to][1](G, target)
    return target, G.number_of_nodes(), G.number_of_edges()


#: Neo4j column types of the node attributes (``neo4j-admin database import`` headers).
_NEO4J_TYPES = {"kind": "string", "label": "string", "aliases": "string[]", "papers": "int", "reach": "int",
                "salience": "float", "title": "string", "venue": "string", "year": "int",
                "decision": "string", "url": "string"}


def neo4j_type(role: str) -> str:
    """A role or relation as a Neo4j relationship type.

    >>> neo4j_type("evaluatesOn"), neo4j_type("broader")
    ('EVALUATES_ON', 'BROADER')
    """
    return "".join(f"_{c}" if c.isupper() else c.upper() for c in role)


def export_neo4j(graph: str | Path, folder: str | Path) -> tuple[Path, int, int]:
    """Write the graph at ``graph`` into ``folder`` for Neo4j: one CSV of nodes per label
    (``nodes-Method.csv``…) and one of relationships per type (``rels-PROPOSES.csv``…), with
    the headers ``neo4j-admin database import full`` reads, plus ``import.sh`` running that
    import and ``load.cypher`` loading the same files with ``LOAD CSV`` into a running database.
    Returns the folder and the numbers of nodes and relationships."""
    import csv
    import shlex

    G = tool_graph(graph)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    by_label: dict[str, list] = {}
    for node, data in G.nodes(data=True):
        by_label.setdefault(data.get("kind", "Node"), []).append((node, data))
    cypher = ["// Load with: cypher-shell -f load.cypher (the CSV files in Neo4j's import folder).",
              "CREATE CONSTRAINT kg_node_id IF NOT EXISTS FOR (n:KGNode) REQUIRE n.id IS UNIQUE;"]
    node_files, rel_files = [], []
    for label, nodes in sorted(by_label.items()):
        fields = [f for f in _NEO4J_TYPES if any(f in data for _, data in nodes)]
        name = f"nodes-{label}.csv"
        with (folder / name).open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["id:ID"] + [f"{f}:{_NEO4J_TYPES[f]}" for f in fields] + [":LABEL"])
            for node, data in nodes:
                values = [str(data.get(f, "")).replace(" | ", ";") if f == "aliases" else data.get(f, "") for f in fields]
                writer.writerow([node, *values, f"{label};KGNode"])
        node_files.append(name)
        props = ", ".join(f"{f}: " + (f"split(row.`{f}:{t}`, ';')" if t == "string[]" else
                                       f"to{'Integer' if t == 'int' else 'Float'}(row.`{f}:{t}`)" if t in ("int", "float")
                                       else f"row.`{f}:{t}`") for f, t in ((f, _NEO4J_TYPES[f]) for f in fields))
        cypher.append(f"LOAD CSV WITH HEADERS FROM 'file:///{name}' AS row "
                      f"CREATE (:{label}:KGNode {{id: row.`id:ID`, {props}}});")
    by_type: dict[str, list] = {}
    for subject, other, data in G.edges(data=True):
        by_type.setdefault(neo4j_type(data["role"]), []).append((subject, other, data["support"]))
    for kind, edges in sorted(by_type.items()):
        name = f"rels-{kind}.csv"
        with (folder / name).open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow([":START_ID", ":END_ID", ":TYPE", "support:int"])
            writer.writerows((subject, other, kind, support) for subject, other, support in edges)
        rel_files.append(name)
        cypher.append(f"LOAD CSV WITH HEADERS FROM 'file:///{name}' AS row "
                      f"MATCH (a:KGNode {{id: row.`:START_ID`}}), (b:KGNode {{id: row.`:END_ID`}}) "
                      f"CREATE (a)-[:{kind} {{support: toInteger(row.`support:int`)}}]->(b);")
    (folder / "load.cypher").write_text("\n".join(cypher) + "\n", encoding="utf-8")
    arguments = [f"--nodes={name}" for name in node_files] + [f"--relationships={name}" for name in rel_files]
    (folder / "import.sh").write_text(
        "#!/bin/sh\n# Run in this folder, Neo4j stopped: a new database 'kg' from these files.\n"
        "neo4j-admin database import full --array-delimiter=';' "
        + " ".join(shlex.quote(a) for a in arguments) + " kg\n", encoding="utf-8")
    return folder, G.number_of_nodes(), G.number_of_edges()
