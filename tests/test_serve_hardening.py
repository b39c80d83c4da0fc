"""kg serve against hostile clients: lying Content-Length headers and bad graph IRIs."""
from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
import urllib.parse

import pytest

from kg import serve
from kg.serve.pool import QueryPool, oxigraph_engine
from kg.store import store_dir

ASK = "ASK { ?s ?p ?o }"
FORM = urllib.parse.urlencode({"query": ASK})


@pytest.fixture(scope="module")
def app(sample):
    """One application for every server of this module: one query worker, started once."""
    application = serve.make_app(sample, pool=QueryPool(oxigraph_engine, str(store_dir(sample)), size=1, spare=0,
                                                         timeout=10))
    yield application
    application.close()


@contextlib.contextmanager
def serving(app, **options):
    """A server for ``app`` with ``options`` (as for :func:`kg.serve.start`); the app outlives it."""
    running = serve.start(app, port=0, **options)
    try:
        yield running
    finally:
        running.server.shutdown()
        running.server.server_close()


@pytest.fixture(scope="module")
def server(app):
    with serving(app) as running:
        yield running


@pytest.fixture
def queries(app, monkeypatch) -> list[str]:
    """The queries that reach the query workers during a test."""
    ran: list[str] = []
    run = app.pool.run

    def spy(request, **options):
        ran.append(request["query"])
        return run(request, **options)

    monkeypatch.setattr(app.pool, "run", spy)
    return ran


def port(running) -> int:
    return running.server.server_address[1]


def request(running, method: str, path: str, *, body: str | None = None, headers: dict | None = None):
    """(status, body) of one request with exactly these headers (and Host, unless given)."""
    connection = http.client.HTTPConnection("127.0.0.1", port(running), timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def exchange(running, data: bytes, *, timeout: float = 10) -> tuple[int, bytes]:
    """Send ``data`` as it is, end the request, and return the answer's status and body."""
    with socket.create_connection(("127.0.0.1", port(running)), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


# -------------------------------------------------------- Content-Length


def post(running, length_headers: str, body: bytes) -> bytes:
    return (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port(running)}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\n{length_headers}\r\n").encode() + body


@pytest.mark.parametrize("lengths", ["Content-Length: -1\r\n", "Content-Length: +15\r\n", "Content-Length: 1_5\r\n",
                                     "Content-Length: 15abc\r\n", "Content-Length: abc\r\n",
                                     "Content-Length: 0x0f\r\n", "Content-Length: 15\r\nContent-Length: 4\r\n"])
def test_a_content_length_that_is_not_one_number_gets_400_and_no_body_is_read(server, queries, lengths):
    body = b"query=ASK%7B%7D"  # 15 bytes: each length above would read exactly this form, were it taken as a number
    status, answer = exchange(server, post(server, lengths, body))
    assert status == 400 and "Invalid Content-Length" in json.loads(answer)["error"]
    assert queries == []


def test_content_lengths_that_are_numbers_are_read_and_the_cap_holds(server):
    assert exchange(server, post(server, "Content-Length: 15 \r\n", b"query=ASK%7B%7D"))[0] == 200  # spaces around are no part of it
    started = time.monotonic()
    status, answer = exchange(server, post(server, f"Content-Length: {(1 << 20) + 1}\r\n", b""))
    assert status == 413 and time.monotonic() - started < 5


# ------------------------------------------------------------- graph IRIs


@pytest.mark.parametrize("name", ["default-graph-uri", "named-graph-uri"])
@pytest.mark.parametrize("iri", ["http://a b/", "http://a/\x01", "no-scheme", ""])
def test_a_bad_graph_iri_gets_400_naming_it(server, queries, name, iri):
    fields = urllib.parse.urlencode({"query": ASK, name: iri})
    for method, path, body in [("GET", "/sparql?" + fields, None), ("POST", "/sparql", fields)]:
        status, answer = request(server, method, path, body=body,
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 400 and json.loads(answer)["error"].startswith(f"Invalid {name} {iri!r}"), method
    assert queries == []


def test_a_good_graph_iri_is_still_used(server):
    fields = urllib.parse.urlencode({"query": ASK, "default-graph-uri": "https://e.org/nothing-here"})
    status, answer = request(server, "GET", "/sparql?" + fields)
    assert status == 200 and json.loads(answer)["boolean"] is False
