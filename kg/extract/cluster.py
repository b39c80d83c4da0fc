"""Cluster: per-paper extraction on a Dask cluster (``kg build --cluster``).

Extraction is pure and per paper (:mod:`kg.extract`), so it spreads over any
number of machines: the abstracts that miss the extraction cache are cut into
chunks, each chunk is one Dask task, and the extractions come back to the
machine running ``kg build``, which caches them as they arrive and runs the
corpus-wide stages (resolution, relations, the graph) itself.

- A worker loads the spaCy pipeline and the models once, on its first chunk,
  and keeps them for the next (:func:`kg.extract.pipeline.load_pipeline` is
  cached per process).
- A worker lost mid-run has its chunks rerun elsewhere by the scheduler. Each
  result is stored under its chunk's position, so a chunk that runs twice is
  kept once, and a build only ends once every position is filled.
- Every chunk reports the extractor that produced it; a worker running
  another kg version is refused, since its extractions would differ.

Needs the ``cluster`` extra: ``pip install 'kg[cluster]'``.
"""
from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

from ..errors import KGError
from ..strings import counted
from . import Batches, Executor, ExtractionFailure, extract_chunk, extractor_name
from .pipeline import load_pipeline
from ..model import Paper, PaperExtraction

#: ``kg build --cluster local:N`` starts N single-threaded worker processes on this machine.
LOCAL_PREFIX = "local:"


def _dask():
    try:
        import distributed
    except ImportError:
        raise KGError("--cluster needs Dask: pip install 'kg[cluster]' (dask[distributed]).") from None
    return distributed


@contextlib.contextmanager
def connect(address: str, *, timeout: float = 30.0) -> Iterator[object]:
    """A Dask ``Client`` for ``address``: a scheduler (``tcp://HOST:8786``, reached within
    ``timeout`` seconds), or ``local:N`` for a LocalCluster of N worker processes of one
    thread each, closed on exit."""
    distributed = _dask()
    if address.startswith(LOCAL_PREFIX):
        try:
            workers = int(address[len(LOCAL_PREFIX):])
        except ValueError:
            workers = 0
        if workers < 1:
            raise KGError(f"--cluster {address}: give the number of local workers, e.g. local:2.")
        # One thread per worker: a spaCy pipeline is not shared between threads, and the
        # encoder's own threads would compete with the other workers for the cores.
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            yield client
        return
    try:
        client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as error:
        raise KGError(f"--cluster {address}: cannot reach the Dask scheduler ({error}).") from None
    with client:
        yield client


def chunk_task(papers: list[Paper]) -> tuple[str, list[PaperExtraction | ExtractionFailure]]:
    """One task: the extractions of ``papers`` (:func:`kg.extract.extract_chunk`), and the extractor that made them."""
    return extractor_name(load_pipeline(encoder_threads=1)), extract_chunk(papers, encoder_threads=1)


def on_cluster(client) -> Executor:
    """The :data:`kg.extract.Executor` that runs each chunk as one task on the workers of ``client``
    (a Dask client, from :func:`connect`): :func:`extract_chunks`, checked against this machine's extractor."""
    return lambda chunks: extract_chunks(client, chunks, extractor=extractor_name(load_pipeline()))


def extract_chunks(client, chunks: list[list[Paper]], *, extractor: str) -> Batches:
    """``(position, extractions)`` of every chunk, in the order they finish on ``client``'s workers.

    Raises ``KGError`` when a worker's extractor differs from ``extractor`` (another kg
    version), or when a chunk fails on every worker it was given to.
    """
    distributed = _dask()
    run = uuid.uuid4().hex[:12]  # keys of their own: builds sharing a scheduler never share a task
    futures = client.map(chunk_task, chunks, pure=False, key=[f"kg-extract-{run}-{i}" for i in range(len(chunks))])
    position = {future.key: i for i, future in enumerate(futures)}
    seen: set[int] = set()
    try:
        for future in distributed.as_completed(futures):
            i = position[future.key]
            try:
                worker_extractor, batch = future.result()
            except distributed.client.FutureCancelledError:
                raise KGError("The Dask cluster cancelled the extraction.") from None
            except Exception as error:  # noqa: BLE001 - a task's error, raised again with its chunk named
                if isinstance(error, KGError):
                    raise
                raise KGError(f"Extracting chunk {i} (papers {chunks[i][0].id} …) failed on the cluster: "
                              f"{type(error).__name__}: {error}") from error
            if worker_extractor != extractor:
                raise KGError(f"A Dask worker extracts with {worker_extractor}, this build with {extractor}: "
                              "install the same kg version on every worker.")
            if i not in seen:
                seen.add(i)
                yield i, batch
    finally:  # on an error or an interrupted build: the cluster stops working for it
        client.cancel([future for future in futures if not future.done()])
    if len(seen) != len(chunks):  # as_completed yields every future; this guards the invariant
        raise KGError(f"The cluster returned {len(seen):,} of {counted(len(chunks), 'chunk')}.")
