"""kg build --cluster: extraction on a Dask cluster (a LocalCluster of two workers, started here)
gives the graph of a local build, triple for triple, and survives losing a worker mid-run."""
from __future__ import annotations

import os
import signal

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.extract.cluster import connect, on_cluster
from kg.errors import KGError
from kg.extract import extract_all
from kg.ingest import read_papers
from kg.store import open_graph
from support import FIXTURES

distributed = pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not installed")
pytestmark = pytest.mark.slow  # each test starts a cluster of worker processes


@pytest.fixture(scope="module")
def client():
    with connect("local:2") as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def test_a_cluster_build_writes_the_graph_of_a_local_build(sample_build, tmp_path):
    local, _ = sample_build
    result = CliRunner().invoke(main, ["build", "-q", str(FIXTURES / "sample.txt"), "-o", str(tmp_path / "sample"),
                                       "--no-cache", "--cluster", "local:2"])
    assert result.exit_code == 0, result.output
    for suffix in (".nt", ".index.nt", ".ttl", ".jsonld"):
        assert (tmp_path / f"sample{suffix}").read_bytes() == local.with_name(f"sample{suffix}").read_bytes(), suffix
    assert set(open_graph(tmp_path / "sample")) == set(open_graph(local))


def test_every_chunk_comes_back_once_and_in_place(client):
    papers = list(read_papers([FIXTURES / "sample.txt"]))
    expected = extract_all(papers)
    # One paper per task: eight tasks spread over both workers, finishing in any order.
    spread = extract_all(papers, chunk_size=1, executor=on_cluster(client))
    assert [e.to_json() for e in spread] == [e.to_json() for e in expected]


def test_a_worker_lost_mid_run_loses_and_duplicates_nothing(client):
    papers = list(read_papers([FIXTURES / "sample.txt"]))
    expected = [e.to_json() for e in extract_all(papers)]
    killed = []

    def kill_a_worker(done, total):
        # After the first results, kill one worker process outright; its nanny starts a new one
        # and the scheduler reruns the tasks it held.
        if not killed and done < total:
            pids = client.run(os.getpid)
            victim = sorted(pids)[0]
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    cached = []

    class Cache:  # records what a build would cache: each extraction exactly once
        def get(self, paper):
            return None

        def put(self, batch):
            cached.extend(e.paper.id for e in batch)

    spread = extract_all(papers, chunk_size=1, executor=on_cluster(client), progress=kill_a_worker, cache=Cache())
    assert killed
    assert [e.to_json() for e in spread] == expected
    assert sorted(cached) == sorted(p.id for p in papers)


def test_a_cluster_address_that_answers_nothing_is_a_clear_error():
    with pytest.raises(KGError, match="local:2"):
        with connect("local:two"):
            pass
    with pytest.raises(KGError, match="cannot reach the Dask scheduler"):
        with connect("tcp://127.0.0.1:9", timeout=2):  # the discard port: nothing listens
            pass
