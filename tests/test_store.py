"""kg.store: filling the on-disk store a build writes beside its files."""
import pyoxigraph as ox

from kg import store


def test_a_store_filled_in_chunks_holds_what_one_bulk_load_does(sample, tmp_path, monkeypatch):
    nt = sample.with_name("sample.nt")
    whole = set(ox.Store.read_only(str(store.fill_store(nt, tmp_path / "whole.oxigraph"))))
    monkeypatch.setattr(store, "_LOAD_CHUNK", 20_000)  # bytes: dozens of chunks, each of whole lines
    chunked = set(ox.Store.read_only(str(store.fill_store(nt, tmp_path / "chunked.oxigraph"))))
    assert chunked == whole
    index = nt.with_name("sample.index.nt")  # loaded with the graph it indexes
    assert len(whole) == len(nt.read_text(encoding="utf-8").splitlines()) + len(index.read_text(encoding="utf-8").splitlines())
    assert len(index.read_text(encoding="utf-8").splitlines()) > 100
