"""kg serve answers only the Host names it serves: a web page on a DNS name of its own, rebound to
this computer's address (DNS rebinding), is on the same origin as the server to the browser, and
could read its answers; its requests still name its own host. Every request here goes through a
real running server, exactly as written on the socket."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import urllib.parse

import pytest

from kg import serve
from kg.errors import KGError
from kg.serve.pool import QueryPool, oxigraph_engine
from kg.store import store_dir

ASK = "ASK { ?s ?p ?o }"
QUERY = "/sparql?" + urllib.parse.urlencode({"query": ASK})


def pool(sample) -> QueryPool:
    return QueryPool(oxigraph_engine, str(store_dir(sample)), size=1, spare=0, timeout=10)


@pytest.fixture(scope="module", params=["127.0.0.1", "0.0.0.0"])
def server(sample, request):
    """A server with the default names: 127.0.0.1, localhost and [::1], with its own port. Made
    for ``--host 127.0.0.1`` and for ``--host 0.0.0.0`` (no name given), it listens on 127.0.0.1."""
    app = serve.make_app(sample, host=request.param, pool=pool(sample))
    running = serve.start(app, port=0)
    yield running
    running.stop()


@pytest.fixture
def queries(server, monkeypatch) -> list[str]:
    """The queries that reach the query workers during a test."""
    ran: list[str] = []
    run = server.app.pool.run

    def spy(request, **options):
        ran.append(request["query"])
        return run(request, **options)

    monkeypatch.setattr(server.app.pool, "run", spy)
    return ran


def send(running, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """The status and body of the answer to ``head`` (a request line and headers, no blank line
    after them) and ``body``, sent as they are."""
    with socket.create_connection(("127.0.0.1", running.server.server_address[1]), timeout=30) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\n" + body)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def get(running, host: str | None, path: str = QUERY, version: str = "HTTP/1.1") -> tuple[int, bytes]:
    return send(running, f"GET {path} {version}\r\n" + (f"Host: {host}\r\n" if host is not None else ""))


def refused(status: int, body: bytes) -> bool:
    """A refusal: 400 or 421 with a one-line body that says nothing of the graph."""
    return status in (400, 421) and body.count(b"\n") <= 1 and b"sample" not in body


def own(running) -> int:
    return running.server.server_address[1]


@pytest.mark.parametrize("form", [
    "{ip}:{port}.evil.example",   # the port read as the start of a name
    "{ip}:{port}@evil.example",   # user-info syntax, as in a URL
    "{ip}:{other}",               # the right address, another port
    "{ip}",                       # no port: HTTP's 80, not this server's
    "evil.example",               # a foreign name
    "evil.example:{port}",        # a foreign name on this server's port: a rebound DNS name
    "localhost.evil.example:{port}",
    "{ip}:{port}, evil.example",  # two values
    "{ip}:{port} evil.example",
    "",                           # empty
])
def test_a_host_this_server_does_not_serve_is_refused_and_no_query_runs(server, queries, form):
    host = form.format(ip="127.0.0.1", port=own(server), other=own(server) + 1)
    status, body = get(server, host)
    assert refused(status, body), (host, status, body)
    assert "Host" in json.loads(body)["error"]  # /sparql answers in JSON, in one line
    status, body = get(server, host, "/")  # a page: one line of text, not the error page
    assert refused(status, body) and body.startswith((b"Unexpected Host", b"Invalid Host")), body
    assert queries == []


def test_a_request_without_exactly_one_host_is_refused_unless_http_1_0_sends_none(server, queries):
    status, body = get(server, None)
    assert refused(status, body) and b"No Host header" in body
    port = own(server)
    status, body = send(server, f"GET {QUERY} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example:{port}\r\n")
    assert refused(status, body)
    assert queries == []
    assert get(server, None, version="HTTP/1.0")[0] == 200  # no browser sends HTTP/1.0 without Host
    assert queries == [ASK]


def test_an_absolute_request_target_naming_another_host_is_refused(server, queries):
    port = own(server)
    status, body = send(server, f"GET http://evil.example:{port}{QUERY} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n")
    assert refused(status, body)
    assert send(server, f"GET http://127.0.0.1:{port}{QUERY} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n")[0] == 200
    assert queries == [ASK]


@pytest.mark.parametrize("server", ["0.0.0.0"], indirect=True)
def test_a_post_whose_origin_and_host_are_both_a_foreign_name_runs_nothing(server, queries):
    """The rebinding attack itself, on a server made for --host 0.0.0.0: the attacker's page posts
    to its own origin, whose name now points to this computer."""
    port, form = own(server), urllib.parse.urlencode({"query": ASK})
    status, body = send(server, f"POST /sparql HTTP/1.1\r\nHost: evil.example:{port}\r\n"
                                f"Origin: http://evil.example:{port}\r\nSec-Fetch-Site: same-origin\r\n"
                                "Content-Type: application/x-www-form-urlencoded\r\n"
                                f"Content-Length: {len(form)}\r\n", form.encode())
    assert refused(status, body)
    assert queries == []


def test_a_post_whose_origin_is_not_its_host_is_refused_whatever_sec_fetch_site_says(server, queries):
    port, form = own(server), urllib.parse.urlencode({"query": ASK})
    for origin in (f"http://evil.example:{port}", f"http://127.0.0.1:{port + 1}", f"https://127.0.0.1:{port}"):
        status, body = send(server, f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n"
                                    "Sec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                    f"Content-Length: {len(form)}\r\n", form.encode())
        assert status == 403 and "Cross-site request refused" in json.loads(body)["error"], origin
    assert queries == []


def test_allowed_names_are_answered_on_their_port_and_no_other(sample):
    """``--allow-host NAME`` adds NAME with the server's port, ``NAME:PORT`` that port (a proxy's)."""
    app = serve.make_app(sample, host="0.0.0.0", allow_hosts=["kg.lab.example", "proxy.example:80"], pool=pool(sample))
    running = serve.start(app, port=0)  # listening on 127.0.0.1: what is checked is the name asked for
    try:
        port = own(running)
        for host in (f"kg.lab.example:{port}", "proxy.example", "proxy.example:80", f"127.0.0.1:{port}",
                     f"localhost:{port}", f"LocalHost:{port}", f"[::1]:{port}"):
            assert get(running, host)[0] == 200, host
        for host in ("kg.lab.example", f"kg.lab.example:{port + 1}", f"proxy.example:{port}", f"evil.example:{port}",
                     f"kg.lab.example:{port}.evil.example"):
            assert refused(*get(running, host)), host
    finally:
        running.stop()


def test_kg_serve_answers_names_given_with_allow_host(sample):
    process = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--port", "0",
                                "--allow-host", "kg.lab.example", "--allow-host", "other.example"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = urllib.parse.urlsplit(re.search(r"at (http://\S+)/ ", process.stdout.readline()).group(1))
        running = type("Running", (), {"server": type("Server", (), {"server_address": (url.hostname, url.port)})})
        assert get(running, f"kg.lab.example:{url.port}", "/index.json")[0] == 200
        assert get(running, f"other.example:{url.port}", "/index.json")[0] == 200
        assert refused(*get(running, f"evil.example:{url.port}", "/index.json"))
    finally:
        process.kill()
        process.wait()


def test_an_invalid_allow_host_is_refused_at_start(sample):
    with pytest.raises(KGError, match="Invalid host name 'a b'"):
        serve.make_app(sample, allow_hosts=["a b"])
