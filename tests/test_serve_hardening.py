"""kg serve against hostile clients: pages of other sites driving the endpoint (CSRF), lying
Content-Length headers, bad graph IRIs, and idle or slow connections (slowloris)."""
from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


@pytest.fixture
def answers(app, monkeypatch) -> list[tuple[str, int]]:
    """(method, status) of each answer to /sparql during a test, as the server sent it (a
    browser may show a page nothing of an answer: ORB drops an image's JSON)."""
    answered: list[tuple[str, int]] = []
    respond = app.respond

    def spy(environ):
        response = respond(environ)
        if environ["PATH_INFO"] == "/sparql":
            answered.append((environ["REQUEST_METHOD"], response.status))
        return response

    monkeypatch.setattr(app, "respond", spy)
    return answered


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


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds``."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1 << 16) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def threads(pid: int) -> int:
    return int(re.search(r"^Threads:\s+(\d+)", Path(f"/proc/{pid}/status").read_text(), re.M).group(1))


# ------------------------------------------------------------------- CSRF


def cross_site(running) -> list[tuple[str, str, str | None, dict]]:
    """Requests a page elsewhere makes a browser send: (name, method, body, headers)."""
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    return [
        ("form from another site", "POST", FORM, {**form, "Origin": "https://attacker.example",
                                                  "Sec-Fetch-Site": "cross-site"}),
        ("form from a file:// page", "POST", FORM, {**form, "Origin": "null", "Sec-Fetch-Site": "cross-site"}),
        ("form from a file:// page, older browser", "POST", FORM, {**form, "Origin": "null"}),
        ("form from another local port", "POST", FORM, {**form, "Origin": f"http://127.0.0.1:{port(running) + 1}",
                                                        "Sec-Fetch-Site": "same-site"}),
        ("query body, foreign origin only", "POST", ASK, {"Content-Type": "application/sparql-query",
                                                          "Origin": "http://attacker.example"}),
        # The same address under another name is another origin.
        ("localhost page to 127.0.0.1", "POST", FORM, {**form, "Origin": f"http://localhost:{port(running)}"}),
        ("<img src=/sparql?...>", "GET", None, {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"}),
        ("<img> from another local port", "GET", None, {"Sec-Fetch-Site": "same-site"}),
        ("HEAD", "HEAD", None, {"Sec-Fetch-Site": "cross-site"}),
    ]


def test_cross_site_requests_to_sparql_are_refused_before_any_query_runs(server, queries):
    for name, method, body, headers in cross_site(server):
        path = "/sparql" if method == "POST" else "/sparql?" + FORM
        status, answer = request(server, method, path, body=body, headers=headers)
        assert status == 403, name
        if method != "HEAD":
            assert json.loads(answer)["error"].startswith("Cross-site request refused"), name
    assert queries == []


def test_same_origin_pages_and_clients_without_origin_still_query(server, queries):
    own = f"http://127.0.0.1:{port(server)}"
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    allowed = [
        ("POST", FORM, {**form, "Origin": own, "Sec-Fetch-Site": "same-origin"}),  # the query page's fetch
        # A form posted by a page of this server: its Referrer-Policy (no-referrer) makes the Origin null.
        ("POST", FORM, {**form, "Origin": "null", "Sec-Fetch-Site": "same-origin"}),
        ("POST", FORM, {**form, "Host": f"localhost:{port(server)}", "Origin": f"http://localhost:{port(server)}"}),
        ("POST", FORM, form),  # curl, SPARQLWrapper
        ("POST", ASK, {"Content-Type": "application/sparql-query"}),
        ("GET", None, {}),
        ("GET", None, {"Origin": own}),
        ("GET", None, {"Sec-Fetch-Site": "none"}),  # typed into the address bar
        ("GET", None, {"Sec-Fetch-Site": "same-origin"}),  # the query page's download link
    ]
    for method, body, headers in allowed:
        status, answer = request(server, method, "/sparql" if body else "/sparql?" + FORM, body=body, headers=headers)
        assert status == 200 and json.loads(answer)["boolean"] is True, (method, headers)
    assert queries == [ASK] * len(allowed)


def test_other_sites_may_still_link_to_pages(server):
    headers = {"Sec-Fetch-Site": "cross-site", "Origin": "https://elsewhere.example"}
    for path in ["/", "/query?" + FORM, "/entity/method/grpo", "/index.json", "/static/page.css"]:
        assert request(server, "GET", path, headers=headers)[0] == 200, path
    assert request(server, "POST", "/", body="x=1", headers=headers)[0] == 403


class _Page(BaseHTTPRequestHandler):
    """Serves ``html`` (set on a subclass) at every path: a page of another local web app."""

    html = b""

    def do_GET(self):  # noqa: N802 - the base class's naming
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.html)))
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args):
        pass


def attacks(target: str) -> dict[str, str]:
    """Pages that make a browser ask ``target`` for a query, each on loading."""
    query = urllib.parse.quote(ASK)
    return {
        "post form": f'<form method="post" action="{target}/sparql"><input name="query" value="{ASK}"></form>'
                     "<script>document.forms[0].submit()</script>",
        "get form": f'<form method="get" action="{target}/sparql"><input name="query" value="{ASK}"></form>'
                    "<script>document.forms[0].submit()</script>",
        "img": f'<img src="{target}/sparql?query={query}">',
    }


def test_a_browser_on_a_file_or_another_port_cannot_run_a_query(browser, server, queries, answers, tmp_path):
    context = browser.new_context()
    page = context.new_page()
    try:
        for kind, html in attacks(server.url).items():
            file = tmp_path / f"{kind.replace(' ', '-')}.html"
            file.write_text(html, encoding="utf-8")
            other = ThreadingHTTPServer(("127.0.0.1", 0), type("Page", (_Page,), {"html": html.encode()}))
            threading.Thread(target=other.serve_forever, daemon=True).start()
            try:
                for where in (file.as_uri(), f"http://127.0.0.1:{other.server_address[1]}/"):
                    answers.clear()
                    page.goto(where)
                    deadline = time.monotonic() + 10
                    while not answers and time.monotonic() < deadline:
                        time.sleep(0.05)
                    assert answers == [("POST" if kind == "post form" else "GET", 403)], (kind, where)
            finally:
                other.shutdown()
                other.server_close()
        assert queries == []
        # The server's own pages still query it: a fetch and a form posted from /query.
        page.goto(server.url + "/query")
        status = page.evaluate("""async query => (await fetch("/sparql", {method: "POST",
            headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: new URLSearchParams({query})})).status""",
                               ASK)
        assert status == 200
        answers.clear()
        page.evaluate("""query => { const form = document.createElement("form"); form.method = "post";
            form.action = "/sparql"; const field = document.createElement("input"); field.name = "query";
            field.value = query; form.append(field); document.body.append(form); form.submit(); }""", ASK)
        deadline = time.monotonic() + 10
        while not answers and time.monotonic() < deadline:  # the browser downloads the answer: no page to read
            time.sleep(0.05)
        assert answers == [("POST", 200)]
        assert queries == [ASK, ASK]
    finally:
        context.close()


def test_a_query_page_opened_from_another_site_waits_for_run(browser, server, queries, tmp_path):
    # The query page runs a query in its URL on load, from this origin: opened by another site's link,
    # it shows the query and waits, so that site cannot run queries through it.
    link = f"{server.url}/query?{FORM}"
    file = tmp_path / "link.html"
    file.write_text(f'<a id="go" href="{link}">go</a><script>document.getElementById("go").click()</script>')
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(file.as_uri())
        page.wait_for_url(link)
        page.wait_for_selector("#kg-query-status:not(:empty)", state="attached")
        assert "came from a link on another site" in page.text_content("#kg-query-status")
        assert page.input_value("#kg-query-text") == ASK and queries == []
        page.click("#kg-run")
        page.wait_for_selector("body[data-state=done]", state="attached")
        assert queries == [ASK]
        page.goto(link)  # typed or bookmarked: it runs at once
        page.wait_for_selector("body[data-state=done]", state="attached")
        assert queries == [ASK, ASK]
    finally:
        context.close()


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


# -------------------------------------------------------------- slowloris


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="counts threads in /proc")
def test_idle_connections_take_no_thread_and_others_are_still_answered(sample):
    process = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    idle: list[socket.socket] = []
    try:
        url = re.search(r"at (http://\S+)/ ", process.stdout.readline()).group(1)
        address = urllib.parse.urlsplit(url)
        with urllib.request.urlopen(url + "/index.json", timeout=60) as response:  # the index is built
            assert response.status == 200
        time.sleep(0.5)
        before = threads(process.pid)
        idle = [socket.create_connection((address.hostname, address.port), timeout=10) for _ in range(200)]
        time.sleep(1)
        assert threads(process.pid) <= before + 4  # old: one thread per connection, 200 more
        with urllib.request.urlopen(url + "/index.json", timeout=10) as response:
            assert response.status == 200
    finally:
        for sock in idle:
            sock.close()
        process.kill()
        process.wait()


def test_a_silent_connection_is_closed_after_the_read_timeout(app):
    with serving(app, read_timeout=1) as running, socket.create_connection(("127.0.0.1", port(running))) as sock:
        started = time.monotonic()
        assert closed_within(sock, 10)
        assert 0.8 < time.monotonic() - started < 5


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(app):
    """Each byte comes well within the read timeout, but the whole head must come within it too."""
    with serving(app, read_timeout=1) as running, socket.create_connection(("127.0.0.1", port(running))) as sock:
        sock.sendall(b"GET /index.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        with contextlib.suppress(OSError):  # a reset connection refuses the next byte
            while time.monotonic() - started < 10:
                sock.sendall(b"a")
                if closed_within(sock, 0.2):
                    break
        assert time.monotonic() - started < 5


def test_a_body_that_stops_arriving_gets_408(app, queries):
    with serving(app, read_timeout=1) as running, socket.create_connection(("127.0.0.1", port(running))) as sock:
        sock.sendall(post(running, "Content-Length: 100\r\n", b"query=ASK"))
        sock.settimeout(10)
        assert sock.recv(1 << 16).startswith(b"HTTP/1.0 408 ")
    assert queries == []


def test_connections_past_the_cap_get_503_at_once_and_the_cap_frees(app, monkeypatch):
    # Two requests that came whole and whose answers wait hold both threads.
    release, held_now = threading.Event(), threading.Semaphore(0)
    respond = app.respond

    def held(environ):
        if environ["PATH_INFO"] == "/hold":
            held_now.release()
            release.wait(30)
        return respond(environ)

    monkeypatch.setattr(app, "respond", held)
    with serving(app, read_timeout=30, max_connections=2) as running:
        holders = [socket.create_connection(("127.0.0.1", port(running))) for _ in range(2)]
        try:
            # One after the other: of two threads, one at most serves a request still arriving, so a
            # second arriving in the same moment would close the first to make room.
            for sock in holders:
                sock.sendall(f"GET /hold HTTP/1.1\r\nHost: 127.0.0.1:{port(running)}\r\n\r\n".encode())
                assert held_now.acquire(timeout=10)
            started = time.monotonic()
            status, body = exchange(running, f"GET /index.json HTTP/1.1\r\nHost: 127.0.0.1:{port(running)}\r\n\r\n"
                                    .encode())
            assert status == 503 and b"Too many connections" in body and time.monotonic() - started < 2
        finally:
            release.set()
            for sock in holders:
                sock.close()
        deadline = time.monotonic() + 10
        while request(running, "GET", "/index.json")[0] != 200:
            assert time.monotonic() < deadline, "the threads were not given back"
            time.sleep(0.1)


def test_when_too_many_connections_wait_the_longest_waiting_is_closed(app):
    with serving(app) as running:
        running.server.max_waiting = 3
        idle = []
        try:
            for _ in range(5):
                idle.append(socket.create_connection(("127.0.0.1", port(running))))
                time.sleep(0.1)
            assert [closed_within(sock, 2 if i < 2 else 0.2) for i, sock in enumerate(idle)] == [True] * 2 + [False] * 3
            assert request(running, "GET", "/index.json")[0] == 200
        finally:
            for sock in idle:
                sock.close()


def test_a_worker_answers_a_bad_graph_iri_with_400_whoever_sent_it():
    # The server checks graph IRIs first; a worker reached another way must not fail with a 500 either.
    import pyoxigraph as ox

    from kg.serve.pool import _answering

    reply = _answering(ox.Store())({"query": ASK, "default_graph": ["http://a b/"], "accept": ""})
    assert reply["status"] == 400 and "Invalid IRI" in reply["body"].decode()


# ---------------------------------------------------------- slow senders


class SlowSenders:
    """``count`` connections that each send a request a byte per :meth:`tick`: half send their
    head that slowly, half a whole head and then a 100,000-byte body that slowly; every other
    one of each opens a new connection whenever the server closes its own."""

    def __init__(self, running, count: int):
        self.address = ("127.0.0.1", port(running))
        host = f"Host: 127.0.0.1:{port(running)}\r\n"
        head = f"GET /index.json HTTP/1.1\r\n{host}X-Slow: ".encode()
        body = (f"POST /sparql HTTP/1.1\r\n{host}Content-Type: application/x-www-form-urlencoded\r\n"
                "Content-Length: 100000\r\n\r\nquery=").encode()
        self.starts = [head if number % 2 else body for number in range(count)]
        self.reconnects = [number % 4 < 2 for number in range(count)]
        self.socks: list[socket.socket | None] = [self._open(start) for start in self.starts]
        self.closed_by_server = 0

    def _open(self, start: bytes) -> socket.socket:
        sock = socket.create_connection(self.address, timeout=5)
        sock.sendall(start)
        sock.setblocking(False)
        return sock

    def tick(self) -> None:
        for number, sock in enumerate(self.socks):
            if sock is None:
                continue
            try:
                if sock.recv(1 << 16) == b"":  # an answer (408, 503) ends with the server closing
                    raise ConnectionResetError
            except BlockingIOError:  # still open, nothing said: one more byte
                with contextlib.suppress(OSError):
                    sock.send(b"a")
                continue
            except OSError:
                pass
            sock.close()
            self.closed_by_server += 1
            self.socks[number] = self._open(self.starts[number]) if self.reconnects[number] else None

    def close(self) -> None:
        for sock in self.socks:
            if sock is not None:
                sock.close()


def test_a_hundred_slow_senders_never_keep_a_normal_client_out(app):
    """Slow heads and slow bodies, some reconnecting at once, outnumber the threads six to one;
    each sends more often than the read timeout, so no silence gives them away. Requests that
    arrive whole are still answered: a slow sender holds a thread only so long, and the ones
    still receiving never hold them all."""
    with serving(app, read_timeout=1, max_connections=16) as running:
        assert request(running, "GET", "/index.json")[0] == 200  # the index is built
        senders = SlowSenders(running, 100)
        statuses = []
        try:
            started = time.monotonic()
            while time.monotonic() - started < 6:
                senders.tick()
                statuses.append(request(running, "GET", "/index.json")[0])
                time.sleep(0.25)
        finally:
            senders.close()
        assert len(statuses) > 5 and set(statuses) == {200}, statuses
        assert senders.closed_by_server >= 100  # each was cut off at least once (on average)


def test_a_body_trickled_below_the_floor_rate_gets_408_though_it_never_pauses_long(app, queries):
    with serving(app, read_timeout=1) as running, socket.create_connection(("127.0.0.1", port(running))) as sock:
        sock.sendall(post(running, "Content-Length: 100\r\n", b"query="))
        started, answer = time.monotonic(), b""
        with contextlib.suppress(OSError):
            while time.monotonic() - started < 10 and not answer:
                sock.sendall(b"a")  # a byte every 0.2 s: 5 bytes a second, under the 500 the server asks
                sock.settimeout(0.2)
                with contextlib.suppress(TimeoutError):
                    answer = sock.recv(1 << 16)
        assert answer.startswith(b"HTTP/1.0 408 ") and b"slower than 500 bytes a second" in answer
        assert time.monotonic() - started < 5
    assert queries == []


def test_a_whole_request_has_a_deadline_however_fast_its_bytes_come(app):
    with serving(app, read_timeout=1, request_timeout=2, min_rate=1) as running, \
            socket.create_connection(("127.0.0.1", port(running))) as sock:
        sock.sendall(post(running, "Content-Length: 100000\r\n", b"query="))
        started, answer = time.monotonic(), b""
        with contextlib.suppress(OSError):
            while time.monotonic() - started < 10 and not answer:
                sock.sendall(b"a" * 20)
                sock.settimeout(0.1)
                with contextlib.suppress(TimeoutError):
                    answer = sock.recv(1 << 16)
        assert answer.startswith(b"HTTP/1.0 408 ") and b"took more than 2 s" in answer
        assert 1.5 < time.monotonic() - started < 6


def test_a_body_shorter_than_its_content_length_is_refused(server, queries):
    status, answer = exchange(server, post(server, "Content-Length: 100\r\n", b"query=ASK%7B%7D"))
    assert status == 400 and b"ended after 15 of the 100 bytes" in answer
    assert queries == []


# ------------------------------------------------------------ chunked bodies


def chunked(running, chunks: list[bytes], *, headers: str = "Transfer-Encoding: chunked\r\n",
            content_type: str = "application/sparql-query") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"
    return (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port(running)}\r\nContent-Type: {content_type}\r\n"
            f"Accept: application/sparql-results+json\r\n{headers}\r\n").encode() + body


def test_a_chunked_query_body_is_read_whole(server, queries):
    status, answer = exchange(server, chunked(server, [b"ASK ", b"{ ?s ", b"?p ?o }"]))
    assert status == 200 and json.loads(answer)["boolean"] is True
    form = [part.encode() for part in (FORM[:7], FORM[7:])]
    status, answer = exchange(server, chunked(server, form, content_type="application/x-www-form-urlencoded"))
    assert status == 200 and json.loads(answer)["boolean"] is True
    assert queries == [ASK, ASK]


@pytest.mark.parametrize("data, status, says", [
    (b"zz\r\nASK\r\n0\r\n\r\n", 400, b"Invalid chunk size"),
    (b"3\r\nASK {}\r\n0\r\n\r\n", 400, b"cut off or longer than its size"),
    (b"3\r\nASK", 400, b"cut off"),
    (b"200000\r\n", 413, b"over 1048576 bytes"),  # 2 MiB announced: refused before it comes
])
def test_a_bad_or_oversized_chunked_body_is_refused_with_its_reason(server, queries, data, status, says):
    head = (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port(server)}\r\nContent-Type: application/sparql-query\r\n"
            "Transfer-Encoding: chunked\r\n\r\n").encode()
    answered, answer = exchange(server, head + data)
    assert answered == status and says in answer and answer.count(b"\n") == 1
    assert queries == []


@pytest.mark.parametrize("headers, status", [
    ("Transfer-Encoding: chunked\r\nContent-Length: 10\r\n", 400),  # which one frames the body?
    ("Transfer-Encoding: gzip, chunked\r\n", 501),
])
def test_transfer_encodings_that_cannot_be_read_safely_are_refused(server, queries, headers, status):
    assert exchange(server, chunked(server, [ASK.encode()], headers=headers))[0] == status
    assert queries == []


# ------------------------------------------------------ workers without the network


def test_a_worker_denied_the_network_says_the_endpoint_never_reaches_out(sample):
    """A SERVICE query that got past the lexer: the worker's sandbox refuses it a socket, and the
    answer says why rather than only "Operation not permitted"."""
    from guard_support import disguises, unfiltered_engine

    pool = QueryPool(unfiltered_engine, str(sample), size=1, spare=0, timeout=30)
    try:
        reply = pool.run({"query": disguises(18299)["plain"], "accept": "application/sparql-results+json",
                          "max_results": 10})
    finally:
        pool.close()
    error = json.loads(reply["body"])["error"]
    assert reply["status"] == 400 and "Operation not permitted" in error
    assert "This endpoint never contacts another server" in error
