"""The files ``kg build`` keeps beside a graph for its answers (the graph's tables, the entities' vectors)
are read only as the build wrote them: the tables are those the store gives (:func:`store_tables`),
panel for panel; a kept file swapped in from another graph, edited, without its manifest, or
whose headers lie is named in one line, never read past what the build recorded, and the answer comes
from the tables made of the store, unchanged."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

from kg import serve
from kg.kept import Kept, sign_store, write_manifest
from kg.query import graph_index
from kg.query.graph_index import GraphIndex, index_graph, load_graph, read_tables, store_tables
from kg.query.explain import evidence_of
from kg.query.leaderboard import leaderboard
from kg.query.panels import compare
from kg.query.related import RelatedIndex, RelatedTables
from kg.query.views import kept_tables
from kg.similarity import graph_vectors
from kg.strings import fold
from kg.store import PREFIXES, TABLES_SUFFIX, VECTORS_SUFFIX, open_graph, store_dir
from support import FIXTURES, build

KEPT = (TABLES_SUFFIX, VECTORS_SUFFIX)


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    """The sample and the hostile corpus, each built once."""
    return {name: build(FIXTURES / f"{name}.txt", tmp_path_factory.mktemp(name)) for name in ("sample", "hostile")}


@pytest.fixture(scope="module")
def both(graphs):
    """Each graph's tables as the build kept them and as its store gives them."""
    return {name: (kept_tables(stem), store_tables(open_graph(stem))) for name, stem in graphs.items()}


def _copy(stem, folder):
    """The graph at ``stem`` copied into ``folder`` as plain files; its path there."""
    shutil.copytree(stem.parent, folder, ignore=shutil.ignore_patterns(".kg-cache", f".{stem.name}.*"))
    return folder / stem.name


def _file(stem, suffix):
    return stem.with_name(stem.name + suffix)


def _answers(stem) -> dict:
    """What each kept file is read for, asked of the graph at ``stem``."""
    tables = read_tables(stem)  # read once, as kg serve reads it
    node = next(node for node in tables.ids if node.startswith("method/"))
    return {"panel": tables.view(node), "related": RelatedIndex(tables).answer("GRPO").as_json(),
            "vectors": graph_vectors(stem) is not None}


def _rerecord(stem) -> None:
    """Record the kept files as they now are, as an attacker who rewrote the manifest and the store's mark would."""
    sign_store(store_dir(stem), write_manifest(stem, KEPT))


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_every_panel_of_the_kept_tables_is_the_view_the_store_gives(both, name):
    kept, made = both[name]
    assert kept is not None and kept.ids == made.ids and kept.ids
    for node in kept.ids:
        assert kept.view(node) == made.view(node), node


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_the_index_made_from_the_kept_tables_is_the_one_the_store_gives(graphs, name):
    """Search, neighbourhoods, the served page and the exports read this index: node for node, edge for
    edge, in the same order and with the same attributes, names and IRIs; and what the server counts
    and finds without the graph is what the graph holds."""
    stem = graphs[name]
    tables = kept_tables(stem)
    from_store, from_tables = load_graph(open_graph(stem)), index_graph(tables)
    assert list(from_tables.nodes(data=True)) == list(from_store.nodes(data=True))
    assert list(from_tables.edges(keys=True, data=True)) == list(from_store.edges(keys=True, data=True))
    assert from_tables.graph["base"] == from_store.graph["base"] == tables.t["base"]
    index, made = GraphIndex(tables), GraphIndex(store_tables(open_graph(stem)))
    assert (index.iri, index.names, index.by_label) == (made.iri, made.names, made.by_label)
    assert list(index.iri) == list(from_store) and tables.edges() == from_store.number_of_edges()
    for node, data in from_store.nodes(data=True):
        assert index.node(node) == (data["label"], data["kind"], data.get("papers", 0)), node
        names = [data.get("title") or data["label"], *data.get("aliases", ())]
        assert [(f, n) for f, n, found in index.names if found == node] == [(f, n) for f, n, _ in [
            (fold(name), name, node) for name in dict.fromkeys(names) if name]], node


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_every_leaderboard_of_the_kept_tables_is_the_one_the_store_gives(both, name):
    kept, made = both[name]
    datasets = [kept.t["label"][i] for i in range(kept.first) if kept.t["kinds"][kept.t["kind"][i]] == "Dataset"]
    ranked = 0
    for label in datasets:
        board = leaderboard(kept, label)
        assert board.as_json() == leaderboard(made, label).as_json(), label
        ranked += len(board.ranked)
    assert ranked or name == "hostile"


#: Every statement behind an edge, as the store holds it: what kg explain read of the store before it read the tables.
STATEMENTS = """
SELECT ?subject ?property ?object ?paper ?start ?end ?sentence ?confidence WHERE {
  ?s a kg:Statement ; rdf:subject ?subject ; rdf:predicate ?property ; rdf:object ?object ;
     prov:wasDerivedFrom ?evidence ; kg:confidence ?confidence ; oa:hasSelector ?selector .
  ?evidence rdf:value ?sentence ; dcterms:isPartOf ?paper .
  ?selector oa:start ?start ; oa:end ?end .
}"""


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_the_statements_kg_explain_reads_of_the_kept_tables_are_the_stores(graphs, both, name):
    """Every statement about every entity, from the kept tables and from the tables of the store, is one the
    store holds, with its offsets, confidence and sentence, and every statement the store holds is there."""
    store, (tables, made) = open_graph(graphs[name]), both[name]
    stored = {(r["subject"].value, r["property"].value.rsplit("#", 1)[-1], r["object"].value, r["paper"].value,
               int(r["start"].value), int(r["end"].value), float(r["confidence"].value)): r["sentence"].value
              for r in store.query(STATEMENTS, prefixes=PREFIXES)}
    read = set()
    for i in range(tables.first):
        found = evidence_of(tables, i)
        assert found == evidence_of(made, made.index_of[tables.ids[i]]), tables.ids[i]
        for e in found:
            statement = (e.subject, e.relation, e.object, e.paper, e.start, e.end, e.confidence)
            assert e.before + e.mention + e.after == stored[statement], statement
            read.add(statement)
    assert read == set(stored) and read


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_what_kg_related_ranks_from_the_kept_tables_is_what_it_reads_of_the_store(both, name):
    kept, stored = (RelatedTables.of(tables) for tables in both[name])
    assert (kept.entities, kept.labels, kept.types, kept.papers) == (stored.entities, stored.labels, stored.types, stored.papers)
    assert kept.entities and np.array_equal(kept.salience, stored.salience)
    for role, matrix in stored.roles.items():
        assert (kept.roles[role] != matrix).nnz == 0 and kept.roles[role].shape == matrix.shape, role
    for links in ("variants", "broader", "listed"):
        assert np.array_equal(getattr(kept, links), getattr(stored, links)), links


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_the_served_map_page_made_of_the_tables_is_the_one_the_graph_gives(both, name):
    """kg serve's first page opens on the map, made of the tables alone (no graph to make first): byte
    for byte the page the graph gives, whichever entities the map draws."""
    from kg.viz.overview import Topic
    from kg.viz.render import render_page, served_map_page

    tables = both[name][0]
    entities = tables.ids[:tables.first]
    topics = [Topic("topic/1", "first", 3, tuple((e, 2) for e in entities[::2])),
              Topic("topic/2", "second", 2, tuple((e, 1) for e in entities[1::3]))]
    page = served_map_page(tables, topics, title=name)
    assert page == render_page(index_graph(tables), title=name, max_nodes=5, served=True, topics=topics)
    assert '"links_total":[' in page and '"of_nodes":' in page


@pytest.mark.parametrize("name", ["sample", "hostile"])
def test_every_neighbourhood_made_of_the_tables_is_the_one_the_graph_gives(both, name):
    """kg serve draws a neighbourhood from the graph's part around it, made of the tables: for every node
    and 1 or 2 hops, the drawing and its tables are those the whole graph gives."""
    from kg.serve.search import neighbourhood
    from kg.viz.render import served_subgraph_data, subgraph_data

    tables = both[name][0]
    index, G = GraphIndex(tables), index_graph(tables)
    for node in tables.ids:
        for hops in (1, 2):
            nodes, _ = neighbourhood(index, node, hops, limit=40)
            assert served_subgraph_data(tables, nodes, title=name) == subgraph_data(G, nodes, title=name), (node, hops)


def test_the_server_and_kg_compare_answer_from_the_kept_tables(graphs, monkeypatch):
    stem = graphs["sample"]
    tables = kept_tables(stem)
    task = next(node for node in tables.ids if node.startswith("task/"))
    expected = tables.view(task)
    monkeypatch.setattr(graph_index, "store_tables", lambda *args: pytest.fail("the store was read for the tables"))
    monkeypatch.setattr(graph_index, "_select", lambda *args, **kinds: pytest.fail("the store was read for the index"))
    assert compare(stem, expected["label"]).view == expected
    # A panel, a search, a neighbourhood and the graph's summary need no networkx graph: the server answers
    # them as it starts.
    part_of = graph_index.index_graph
    monkeypatch.setattr(graph_index, "index_graph", lambda tables, nodes=None: part_of(tables, nodes) if nodes is not None
                        else pytest.fail("the whole graph was made for a first page"))
    app = serve.make_app(stem, timeout=10)
    try:
        status, _, body = serve.get(app, f"/entity/{task}.json?related=0")
        assert status == 200 and json.loads(body)["papers"] == expected["papers"]
        status, _, body = serve.get(app, "/search.json?q=grpo")
        assert status == 200 and "GRPO" in [found["label"] for found in json.loads(body)["results"]]
        status, _, body = serve.get(app, "/index.json")
        assert status == 200 and json.loads(body)["nodes"]["Paper"] == len(tables.ids) - tables.first
        status, _, body = serve.get(app, f"/neighbourhood.json?id={task}&k=2")
        assert status == 200 and json.loads(body)["center"] == task
    finally:
        app.close()


def _without_kept_files(stem, folder) -> dict:
    """The answers of the graph at ``stem`` read from its store alone (its vectors aside)."""
    bare = _copy(stem, folder)
    for suffix in KEPT:
        _file(bare, suffix).unlink()
    return {**_answers(bare), "vectors": False}


def _swapped(stem, other, suffix):
    shutil.copyfile(_file(other, suffix), _file(stem, suffix))


def _swapped_with_its_manifest(stem, other, suffix):
    _swapped(stem, other, suffix)
    shutil.copyfile(_file(other, ".manifest.json"), _file(stem, ".manifest.json"))


def _one_byte_changed(stem, other, suffix):
    file = _file(stem, suffix)
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0x01
    file.write_bytes(bytes(data))


def _manifest_gone(stem, other, suffix):
    _file(stem, ".manifest.json").unlink()


@pytest.mark.parametrize("damage, said", [
    (_swapped, "bytes where the build wrote"),
    (_swapped_with_its_manifest, "is not the one built with it"),
    (_one_byte_changed, "changed since the build wrote it"),
    (_manifest_gone, "no manifest records it"),
], ids=["swapped", "swapped-with-its-manifest", "edited", "no-manifest"])
@pytest.mark.parametrize("suffix", KEPT)
def test_a_kept_file_not_as_the_build_wrote_it_is_named_in_one_line_and_the_store_answers(
        graphs, tmp_path, capsys, suffix, damage, said):
    stem = _copy(graphs["sample"], tmp_path / "graph")
    expected = _answers(stem)
    bare = _without_kept_files(graphs["sample"], tmp_path / "bare")
    capsys.readouterr()
    damage(stem, graphs["hostile"], suffix)
    answers = _answers(stem)
    message = capsys.readouterr().err
    lines = message.splitlines()
    file = _file(stem, suffix)
    if damage in (_manifest_gone, _swapped_with_its_manifest):  # every kept file is refused, each in its line
        assert len(lines) == len(KEPT) and answers == bare
    else:
        assert len(lines) == 1 and str(file) in message
        parts = {TABLES_SUFFIX: ("panel", "related"), VECTORS_SUFFIX: ("vectors",)}[suffix]
        assert answers == {**expected, **{part: bare[part] for part in parts}}
    assert said in message
    assert all(line.endswith(("Reading the store instead.", "Answering without the entities' vectors."))
               for line in lines)


def test_tables_an_older_kg_kept_are_named_in_one_line_and_the_store_answers(graphs, tmp_path, capsys):
    """Tables of another layout (an older build's, recorded in its own manifest) are never misread."""
    stem = _copy(graphs["sample"], tmp_path / "graph")
    expected = _answers(stem)
    file = _file(stem, TABLES_SUFFIX)
    tables = json.loads(file.read_text(encoding="utf-8"))
    del tables["format"]
    file.write_text(json.dumps(tables), encoding="utf-8")
    _rerecord(stem)
    capsys.readouterr()
    assert kept_tables(stem) is None
    [line] = capsys.readouterr().err.splitlines()
    assert str(file) in line and "layout 1" in line and line.endswith("Reading the store instead.")
    assert _answers(stem) == expected


def _npz(**arrays) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _lying_header(data: bytes, member: str, shape: tuple) -> bytes:
    """The npz ``data`` with the header of ``member`` claiming ``shape``, its length kept."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    array = members[member]
    header_end = array.index(b"\n") + 1
    header = array[10:header_end].decode("latin1")
    start, end = header.index("'shape': (") + len("'shape': ("), header.index(")", header.index("'shape'"))
    claimed = header[:start] + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + header[end:]
    claimed = claimed.rstrip("\n").rstrip(" ")
    claimed = claimed + " " * (len(header) - 1 - len(claimed)) + "\n"
    assert len(claimed) == len(header)
    members[member] = array[:10] + claimed.encode("latin1") + array[header_end:]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def test_an_array_header_claiming_more_than_its_member_holds_is_refused_before_allocating(graphs, tmp_path, capsys):
    """A vectors file whose array header claims 10^12 elements, its manifest and mark rewritten to
    match: refused in one line, nothing of that size allocated, and the server and kg related answer."""
    stem = _copy(graphs["sample"], tmp_path / "graph")
    expected = _answers(stem)["related"]
    file = _file(stem, VECTORS_SUFFIX)
    file.write_bytes(_lying_header(file.read_bytes(), "matrix.npy", (10**12, 1)))
    _rerecord(stem)
    capsys.readouterr()
    tracemalloc.start()
    try:
        assert graph_vectors(stem) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = capsys.readouterr().err
    assert peak < 16 << 20
    assert message.count("\n") == 1 and str(file) in message and "1,000,000,000,000 elements" in message
    assert RelatedIndex(read_tables(stem)).answer("GRPO").as_json() == expected
    app = serve.make_app(stem, timeout=10)
    try:
        status, _, body = serve.get(app, "/entity/method/grpo.json")
        assert status == 200 and json.loads(body)["label"] == "GRPO"
    finally:
        app.close()


def _understated(data: bytes, member: str, size: int) -> bytes:
    """The zip ``data`` with ``member``'s uncompressed size, in its local and central headers, set to ``size``."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(member)
    struct.pack_into("<I", data, info.header_offset + 22, size)  # the local header's uncompressed size
    central = bytes(data).index(b"PK\x01\x02")
    while bytes(data)[central + 46:central + 46 + len(member)] != member.encode():
        central = bytes(data).index(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", data, central + 24, size)  # the central directory's
    return bytes(data)


def test_a_zip_member_holding_more_than_its_header_says_is_read_no_further(tmp_path):
    """An npz member whose headers say 300 bytes and which inflates to 64 MB is read no further than
    the size recorded: refused, with a few kilobytes read."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("matrix.npy", b"\x93NUMPY" + b"\0" * (64 << 20))
    file = tmp_path / "g.vectors.npz"
    file.write_bytes(_understated(out.getvalue(), "matrix.npy", 300))
    kept = Kept.of(file)
    assert kept.members == {"matrix.npy": 300}
    tracemalloc.start()
    try:
        with pytest.raises((ValueError, zipfile.BadZipFile)):
            kept.arrays()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_a_member_the_build_did_not_record_is_refused(tmp_path):
    file = tmp_path / "g.vectors.npz"
    file.write_bytes(_npz(papers=np.arange(3)))
    recorded = Kept.of(file)
    file.write_bytes(_npz(papers=np.arange(3), planted=np.zeros(1000)))
    with pytest.raises(ValueError, match="member 'papers.npy' is none the build wrote|'planted.npy' is none"):
        Kept(file, file.stat().st_size, recorded.members).arrays()


def test_the_manifest_is_the_same_for_the_same_files_and_the_store_carries_its_mark(graphs, tmp_path):
    stem = graphs["sample"]
    manifest = _file(stem, ".manifest.json").read_bytes()
    again = build(FIXTURES / "sample.txt", tmp_path)
    assert _file(again, ".manifest.json").read_bytes() == manifest
    assert (store_dir(stem) / "kg-build-mark").read_text() == hashlib.sha256(manifest).hexdigest()
    assert sorted(json.loads(manifest)["files"]) == sorted(KEPT)


def _first_pages(stem) -> dict:
    """What kg serve shows as it starts, for the graph at ``stem``: the explorer, the query page, the summary."""
    app = serve.make_app(stem, timeout=10, overview_nodes=20)
    try:
        return {path: serve.get(app, path)[2] for path in ("/", "/query.json", "/index.json")}
    finally:
        app.close()


def test_what_the_server_shows_first_is_read_kept_and_is_what_the_store_gives(tmp_path, monkeypatch):
    """The map of the field, the example queries' values and the triples are worked out by the build and
    kept in the tables: the server reads them there, neither mapping the field nor asking the store
    again, and shows what it would show working them out from the store."""
    from kg.build import write_outputs
    from kg.query import Example
    from kg.viz import render
    from kg.vocab import DEFAULT_BASE
    from support import two_fields

    stem = tmp_path / "kept" / "g"
    write_outputs(two_fields(), stem, base=DEFAULT_BASE, title="kg", formats=("nt",))
    bare = _copy(stem, tmp_path / "bare")
    _file(bare, TABLES_SUFFIX).unlink()
    from_store = _first_pages(bare)
    assert b"CIFAR-10" in from_store["/"] and json.loads(from_store["/index.json"])["triples"] > 0  # a map, a count

    monkeypatch.setattr(render, "field_map", lambda G: pytest.fail("the server mapped the field again"))
    monkeypatch.setattr(Example, "choices", lambda *args: pytest.fail("the server asked the store for examples"))
    assert _first_pages(stem) == from_store
