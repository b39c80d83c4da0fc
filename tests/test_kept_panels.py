"""The panels ``kg build`` keeps of its most linked entities are the panels the store gives: kept
for every entity (the threshold lowered to one paper), each equals the view ``kg serve`` reads of
the store for that node alone; a kept panel is what the server and ``kg compare`` answer; a damaged
file is named in one line and the store answers instead."""
from __future__ import annotations

import json
import shutil
import zipfile

import pytest

from kg import serve
from kg.query import graph_index
from kg.query.graph_index import KeptPanels, kept_panels, load_index, node_view
from kg.query.panels import compare
from kg.store import open_graph, panels_file
from support import FIXTURES, build


@pytest.fixture(scope="module", params=["sample", "hostile"])
def every_panel_kept(request, tmp_path_factory):
    """A graph built with every entity's panel kept."""
    patch = pytest.MonkeyPatch()
    patch.setattr(graph_index, "KEEP_PANELS_FROM", 1)
    try:
        yield build(FIXTURES / f"{request.param}.txt", tmp_path_factory.mktemp(request.param))
    finally:
        patch.undo()


def test_every_kept_panel_is_the_view_the_store_gives(every_panel_kept):
    store, kept = open_graph(every_panel_kept), kept_panels(every_panel_kept)
    index = load_index(store)
    entities = sorted(node for node, data in index.graph.nodes(data=True) if data["kind"] != "Paper")
    assert entities and sorted(kept._members) == [n for n in entities if index.graph.nodes[n]["papers"] >= 1]
    for node in entities:
        found = kept.get(node)
        if found is not None:
            assert found == node_view(store, node, index.iri[node]), node


def test_the_server_and_kg_compare_answer_from_the_kept_panel(every_panel_kept, monkeypatch):
    store = open_graph(every_panel_kept)
    task = next(node for node, data in load_index(store).graph.nodes(data=True)
                if data["kind"] == "Task" and data["papers"] >= 1)
    expected = kept_panels(every_panel_kept).get(task)
    monkeypatch.setattr(graph_index, "scope_of", lambda *args: pytest.fail("the store was read for a kept panel"))
    assert compare(every_panel_kept, expected["label"]).view == expected
    app = serve.make_app(every_panel_kept, timeout=10)
    try:
        status, _, body = serve.get(app, f"/entity/{task}.json?related=0")
        assert status == 200 and json.loads(body)["papers"] == expected["papers"]
    finally:
        app.close()


def test_a_damaged_panels_file_is_named_and_the_store_answers(every_panel_kept, tmp_path, capsys):
    copy = tmp_path / "graph"
    shutil.copytree(every_panel_kept.parent, copy, ignore=shutil.ignore_patterns(".kg-cache", f".{every_panel_kept.name}.*"))
    stem = copy / every_panel_kept.name
    file = panels_file(stem)
    store = open_graph(stem)
    index = load_index(store)
    node = sorted(KeptPanels(file)._members)[0]
    expected = node_view(store, node, index.iri[node])
    # Another node's panel under this node's name, then a file that is no zip at all.
    with zipfile.ZipFile(file, "a") as archive:
        archive.writestr(node + "/x", json.dumps({"id": "method/other"}))
    with zipfile.ZipFile(file) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(file, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, members[node + "/x"] if name == node else data)
    assert node_view(store, node, index.iri[node], kept_panels(stem)) == expected
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and str(file) in said and node in said
    file.write_bytes(b"PK\x05\x06 no zip")
    assert kept_panels(stem) is None
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and str(file) in said and "Reading the store instead" in said
