"""The query workers: SPARQL answered in processes that can be stopped.

pyoxigraph evaluates a query in native code that no Python thread can
interrupt, but a process can be killed. So client queries run in worker
processes (:class:`QueryPool`), each holding the graph open read-only: a
query that outlives its deadline, or outgrows the worker's memory cap, is
answered with a 503 and its worker replaced. ``kg query`` runs its query the
same way (:func:`query_within`).

A worker answering from a graph of its own cannot open a network connection at
all: beside the SERVICE filter (:func:`kg.sparql.refuse_federation`), Linux
refuses it the sockets for one (:func:`kg.sandbox.deny_network`). Only the workers of
``kg serve --sparql`` (:func:`endpoint_engine`) keep the network, which they
need to ask their SPARQL server; there the filter is the guard.
"""
from __future__ import annotations

import errno
import json
import multiprocessing
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path  # noqa: F401 - QueryPool's doctest uses it

import pyoxigraph as ox

from ..errors import KGError
from ..sandbox import deny_network
from ..sparql import QueryRefused, refuse_federation
from ..store import (PREFIXES, NotAcceptable, graph_file, open_graph, serialize_results, store_dir,
                     syntax_message)
from ..store import fill_store  # noqa: F401 - QueryPool's doctest uses it

#: Worker processes answering SPARQL. Each may run one query at a time.
POOL_SIZE = 2
#: Workers kept for short queries while the others are busy, and the seconds a query may run on one.
SPARE_WORKERS = 1
BUSY_LIMIT = 1.0
#: Seconds a request waits for a free worker before it is told the server is busy.
QUEUE_WAIT = 2.0
#: Address space a worker may use (kg serve --worker-memory): its engine takes about 0.8 GB of it
#: before any query runs.
WORKER_MEMORY = 2048 << 20
#: Seconds a new worker may take to start (import kg, open its engine). Not counted in a query's
#: time limit, which is about evaluating it.
STARTUP_LIMIT = 60.0


class HTTPError(KGError):
    """An error answered to the client with ``status`` and a message meant for its user."""

    def __init__(self, status: int, message: str, *, headers: dict | None = None):
        self.status, self.headers = status, headers or {}
        super().__init__(message)


class QueryTimeout(HTTPError):
    def __init__(self, message: str):
        super().__init__(503, message)


class ServerBusy(HTTPError):
    """Every query worker is taken: the client should try again (the reply says when)."""

    def __init__(self, message: str):
        super().__init__(503, message, headers={"Retry-After": "2"})



# ------------------------------------------------------------------- the engine


def result_reply(result, request: dict) -> dict:
    """The reply a worker sends for a query's ``result``: ``status``, ``type`` (Content-Type),
    ``body`` and ``truncated``, in the format the request's ``accept`` prefers, capped at its
    ``max_results``. Raises ``NotAcceptable`` as :func:`kg.store.serialize_results` does."""
    media, body, truncated = serialize_results(result, request.get("accept", ""), max_results=request["max_results"])
    return {"status": 200, "type": media, "body": body, "truncated": truncated}


def _error_reply(status: int, message: str) -> dict:
    body = json.dumps({"status": status, "error": message}).encode("utf-8")
    return {"status": status, "type": "application/json", "body": body, "truncated": False}


def oxigraph_engine(path: str):
    """A function answering query requests from the graph at ``path`` (its store opened
    read-only, or its RDF file loaded: :func:`kg.store.open_graph`).

    It runs in a :class:`QueryPool` worker process: a request is a dict with
    ``query``, ``accept``, ``max_results`` and optionally ``bindings`` (variable
    name -> a literal's text, substituted), ``default_graph`` and
    ``named_graphs`` (lists of IRIs); the answer is a reply of :func:`result_reply`.
    """
    return _answering(open_graph(path))


def endpoint_engine(spec: str):
    """:func:`oxigraph_engine`'s twin for a SPARQL server (``kg serve --sparql``): ``spec`` is
    the JSON of :class:`kg.query.endpoint.SparqlEndpoint`'s ``url`` and ``default_graphs``."""
    from ..query.endpoint import SparqlEndpoint

    options = json.loads(spec)
    return _answering(SparqlEndpoint(options["url"], default_graphs=options["default_graphs"]))


def _answering(store):
    def answer(request: dict) -> dict:
        try:
            graphs = {key: [ox.NamedNode(iri) for iri in request[key]] for key in ("default_graph", "named_graphs")
                      if request.get(key)}
            substitutions = {ox.Variable(name): ox.Literal(value) for name, value in request.get("bindings", {}).items()}
            refuse_federation(request["query"])  # in this process: the server reads no query text
            result = store.query(request["query"], prefixes=PREFIXES, substitutions=substitutions or None, **graphs)
            return result_reply(result, request)
        except NotAcceptable as error:
            return _error_reply(406, str(error))
        except QueryRefused as error:  # SERVICE (403), or a query kg does not hand to its engine (400)
            return _error_reply(error.status, str(error))
        except SyntaxError as error:
            return _error_reply(400, syntax_message(error))
        except KGError as error:  # the SPARQL server's own refusal
            return _error_reply(502, str(error))
        except (ValueError, RuntimeError, OSError) as error:  # bad IRIs, evaluation errors
            return _error_reply(400, query_failed(error))

    return answer


#: Whether this process is a query worker whose network access :func:`kg.sandbox.deny_network`
#: closed (set by :func:`_worker`).
_network_denied = False
_NO_NETWORK = ("This endpoint never contacts another server: its query workers have no network access, so a "
               "query that reaches out (SERVICE, a remote graph) cannot run here.")


def query_failed(error: Exception) -> str:
    """The message for a query the engine failed on. In a worker without the network, the engine's
    bare "Operation not permitted (os error 1)" is the sandbox refusing it a socket: say so.

    >>> print(query_failed(ValueError("Unbound variable")))
    Query failed: Unbound variable
    """
    message = f"Query failed: {error}"
    if _network_denied and (getattr(error, "errno", None) == errno.EPERM or "(os error 1)" in str(error)):
        message += f". {_NO_NETWORK}"
    return message


def query_within(graph, query: str, bindings: dict[str, str] | None = None, *, timeout: float = 10.0):
    """Run ``query`` on ``graph`` (as :func:`kg.store.open_graph` takes it) in a worker process
    stopped after ``timeout`` seconds: ``kg query``'s engine.

    Returns what :func:`kg.store.run_query` returns, with the same ``bindings``;
    raises ``KGError`` with the reason when the query is refused, invalid, or
    out of time or memory.
    """
    refuse_federation(query)
    if store_dir(graph) is None:
        graph_file(graph)  # raises GraphNotFound before a worker is started
    pool = QueryPool(oxigraph_engine, str(graph), size=1, spare=0, timeout=timeout)
    try:
        reply = pool.run({"query": query, "bindings": bindings or {}, "max_results": None,
                          "accept": "application/sparql-results+json, application/n-triples"})
    except HTTPError as error:
        raise KGError(str(error).replace("(kg serve --timeout)", "(kg query --timeout)")) from None
    finally:
        pool.close()
    if reply["status"] != 200:
        raise KGError(json.loads(reply["body"])["error"])
    if reply["type"].startswith("application/n-triples"):  # CONSTRUCT, DESCRIBE
        return list(ox.parse(reply["body"], format=ox.RdfFormat.N_TRIPLES))
    return ox.parse_query_results(reply["body"], format=ox.QueryResultsFormat.JSON)


# ------------------------------------------------------------------- the pool


def _worker(conn, engine, args, memory_limit: int | None, offline: bool = True) -> None:
    """A worker process: cap its memory, close the network to it (``offline``), make the engine,
    say whether it is ready, then answer requests until the pipe closes."""
    global _network_denied
    if offline:
        _network_denied = deny_network()  # first, so every thread started from here on is covered too
    # Ctrl-C in a terminal reaches the whole process group; the server stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    if memory_limit is not None:
        # One query (a cross join under ORDER BY, say) could otherwise take the machine's memory.
        # Past the cap an allocation fails and the worker dies; the server answers 503 and replaces it.
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        os.environ["RUST_BACKTRACE"] = "0"  # the engine's failed allocation: one line in the log, not a backtrace
    try:
        answer = engine(*args)
    except Exception as error:  # noqa: BLE001 - reported to the server, which says what failed
        conn.send({"ready": False, "error": f"{type(error).__name__}: {error}"})
        return
    conn.send({"ready": True})
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = answer(request)
        except MemoryError:
            reply = _error_reply(503, _OUT_OF_MEMORY.format(limit=_megabytes(memory_limit)))
        except Exception as error:  # noqa: BLE001 - one bad query must not stop the worker
            reply = _error_reply(500, f"Query failed: {type(error).__name__}: {error}")
        conn.send(reply)


_OUT_OF_MEMORY = ("The query worker stopped: the query needed more than the {limit} of memory a worker may use "
                  "(kg serve --worker-memory). Narrow its patterns, add a LIMIT, or avoid ORDER BY over a large join.")
_CRASHED = ("The query crashed its worker (signal {signal}); nested too deeply? The engine reads a query "
            "recursively, and deep nesting or very long chains of operators overflow its stack. Flatten the query.")
_STOPPED = "The query worker stopped ({how}) while answering; try again."
# How a worker's end reads: the engine aborts when an allocation fails (past the cap), and the
# system's out-of-memory killer sends SIGKILL; a stack overflow or another fault is a crash.
_MEMORY_SIGNALS = {signal.SIGABRT, signal.SIGKILL}
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE}


def _death_message(exitcode: int | None, memory_limit: int | None) -> str:
    """Why a worker that died mid-query stopped, for the client, from its exit code.

    >>> print(_death_message(-11, 2048 << 20))  # doctest: +ELLIPSIS
    The query crashed its worker (signal SIGSEGV); nested too deeply? ...
    >>> print(_death_message(-6, 2048 << 20))  # doctest: +ELLIPSIS
    The query worker stopped: the query needed more than the 2048 MB of memory a worker may use ...
    """
    if exitcode is not None and exitcode < 0:
        number = -exitcode
        if number in _CRASH_SIGNALS:
            return _CRASHED.format(signal=signal.Signals(number).name)
        if number in _MEMORY_SIGNALS:
            return _OUT_OF_MEMORY.format(limit=_megabytes(memory_limit))
        try:
            return _STOPPED.format(how=f"signal {signal.Signals(number).name}")
        except ValueError:
            return _STOPPED.format(how=f"signal {number}")
    if exitcode is None:  # its pipe broke, yet it runs: it is killed in its turn
        return _OUT_OF_MEMORY.format(limit=_megabytes(memory_limit))
    return _STOPPED.format(how=f"exit status {exitcode}")


def _megabytes(limit: int | None) -> str:
    return "unlimited amount" if limit is None else f"{limit // (1 << 20)} MB"


def _exit_with_parent(parent: int) -> None:
    """End this worker once its server is gone (killed, say), even in the middle of a query:
    pyoxigraph releases the GIL while it evaluates, so this thread still runs."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


@dataclass(eq=False)  # hashed by identity: the pool keeps a set of them
class _Worker:
    process: multiprocessing.Process
    conn: object
    spare: bool  # kept for short queries while the others are busy
    ready: bool = False


class QueryPool:
    """Worker processes that each answer one query at a time, within a deadline.

    ``engine(*args)`` runs in each worker and returns the function answering a
    request (see :func:`oxigraph_engine`). A worker that misses a deadline is
    killed, which stops its query wherever it is, and a new one is started in
    its place. Workers are started with ``spawn``: the server is threaded, and
    forking a threaded process can copy a lock some other thread holds. So, as
    with any spawned process, a script that starts a pool (or a server) must
    do so under ``if __name__ == "__main__":``.

    Long queries cannot starve short ones: besides its ``size`` workers the
    pool keeps ``spare`` workers that take a query only while all the others
    are busy, and then give it at most ``busy_limit`` seconds. A request that
    finds every worker busy waits at most ``queue_wait`` seconds for one, then
    is told the server is busy (:class:`ServerBusy`). Each worker's memory is
    capped at ``memory_limit`` bytes (None: no cap). Workers are ``offline``
    (:func:`kg.sandbox.deny_network`) unless the engine is :func:`endpoint_engine`, whose
    workers ask a SPARQL server over HTTP.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     nt = Path(folder) / "g.nt"
    ...     _ = nt.write_text('<https://e.org/a> <https://e.org/p> "x" .\\n', encoding="utf-8")
    ...     store = fill_store(nt, Path(folder) / "g.oxigraph")
    ...     pool = QueryPool(oxigraph_engine, str(store), size=1, spare=0, timeout=30)
    ...     reply = pool.run({"query": "SELECT ?o { ?s ?p ?o }", "accept": "text/csv", "max_results": 10})
    ...     pool.close()
    >>> reply["body"]
    b'o\\r\\nx\\r\\n'
    """

    def __init__(self, engine, *args, size: int = POOL_SIZE, spare: int = SPARE_WORKERS, timeout: float = 10.0,
                 busy_limit: float = BUSY_LIMIT, queue_wait: float = QUEUE_WAIT,
                 memory_limit: int | None = WORKER_MEMORY, offline: bool | None = None):
        if size < 1 or spare < 0:
            raise ValueError(f"A pool needs at least one worker and no negative spares, got size={size}, spare={spare}.")
        self.engine, self.args, self.size, self.spare = engine, args, size, spare
        self.timeout, self.busy_limit, self.queue_wait, self.memory_limit = timeout, busy_limit, queue_wait, memory_limit
        self.offline = engine is not endpoint_engine if offline is None else offline
        self._context = multiprocessing.get_context("spawn")
        self._free: list[_Worker] = []  # idle workers, spares among them
        self._workers: set[_Worker] = set()
        self._changed = threading.Condition()
        self._closed = False
        for number in range(size + spare):
            self._release(self._start(spare=number >= size))

    def _start(self, *, spare: bool) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_worker, name="kg-query-worker", daemon=True,
                                        args=(theirs, self.engine, self.args, self.memory_limit, self.offline))
        process.start()
        theirs.close()
        worker = _Worker(process, ours, spare)
        with self._changed:
            self._workers.add(worker)
        return worker

    def _stop(self, worker: _Worker) -> None:
        worker.process.kill()
        worker.process.join(timeout=5)
        worker.conn.close()
        with self._changed:
            self._workers.discard(worker)

    def _release(self, worker: _Worker) -> None:
        with self._changed:
            self._free.append(worker)
            self._changed.notify_all()

    def _acquire(self, wait: float) -> _Worker:
        """A free worker, a regular one if any is free; waits at most ``wait`` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._free, timeout=wait):
                raise ServerBusy(f"All {self.size + self.spare} query workers are busy with long queries "
                                 f"(each may run {self.timeout:g} s, kg serve --timeout); try again shortly.")
            worker = min(self._free, key=lambda w: w.spare)
            self._free.remove(worker)
            return worker

    @property
    def busy(self) -> int:
        """How many workers are answering a request now."""
        with self._changed:
            return len(self._workers) - len(self._free)

    def wait_ready(self, timeout: float) -> None:
        """Wait until every worker has opened its engine (a benchmark's warm-up)."""
        deadline = time.monotonic() + timeout
        workers = [self._acquire(max(0.0, deadline - time.monotonic())) for _ in range(self.size + self.spare)]
        try:
            for worker in workers:
                self._ensure_ready(worker, deadline)
        finally:
            for worker in workers:
                self._release(worker)

    def _ensure_ready(self, worker: _Worker, deadline: float) -> None:
        if worker.ready:
            return
        if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
            raise QueryTimeout("The query worker did not start in time; try again.")
        hello = worker.conn.recv()
        if not hello["ready"]:
            raise KGError(f"The query worker could not open the graph: {hello['error']}")
        worker.ready = True

    def run(self, request: dict, *, timeout: float | None = None) -> dict:
        """Answer ``request`` in a worker within ``timeout`` seconds (default: the pool's).

        The time counts from when a worker gets the request: a worker still
        starting has up to :data:`STARTUP_LIMIT` more. A spare worker gives it
        at most ``busy_limit`` seconds. Raises ``QueryTimeout`` when the worker
        does not answer in time, ``ServerBusy`` when no worker is free within
        ``queue_wait`` seconds or the query outgrew a spare's limit.
        """
        timeout = self.timeout if timeout is None else timeout
        worker = self._acquire(min(timeout, self.queue_wait))
        limit = min(timeout, self.busy_limit) if worker.spare else timeout
        healthy = False
        try:
            self._ensure_ready(worker, time.monotonic() + STARTUP_LIMIT)
            deadline = time.monotonic() + limit
            worker.conn.send(request)
            if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
                if limit < timeout:
                    raise ServerBusy(f"All {self.size} query workers are busy with long queries, and while they are, "
                                     f"a query may run {limit:g} s only; this one took longer. Try again shortly.")
                raise QueryTimeout(f"Query stopped after the time limit of {timeout:g} s (kg serve --timeout). "
                                   "Narrow its patterns or add a LIMIT.")
            reply = worker.conn.recv()
            healthy = True
            return reply
        except (EOFError, OSError):  # the worker died: over its memory cap, crashed, or killed by the system
            worker.process.join(timeout=2)  # it has closed its end of the pipe: its exit code comes now
            raise HTTPError(503, _death_message(worker.process.exitcode, self.memory_limit)) from None
        finally:
            if healthy:
                self._release(worker)
            else:  # killing the process is what stops a query pyoxigraph is still evaluating
                self._stop(worker)
                if not self._closed:
                    self._release(self._start(spare=worker.spare))

    def close(self) -> None:
        """Stop every worker, busy or not."""
        self._closed = True
        with self._changed:
            workers = list(self._workers)
        for worker in workers:
            self._stop(worker)
