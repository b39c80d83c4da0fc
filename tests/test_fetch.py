"""kg fetch openreview against a local server answering in the OpenReview API v2 format."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.errors import KGError
from kg.ingest.fetch import Limits, _existing_ids, fetch_openreview
from kg.ingest import read_papers

VENUE = "ICLR.cc/2026/Conference"


def _note(number):
    return {"id": f"note{number:03d}", "number": number, "cdate": 1758067200000, "forum": f"note{number:03d}",
            "invitations": [f"{VENUE}/-/Submission"], "domain": VENUE,
            "content": {"title": {"value": f"Paper {number}"},
                        "abstract": {"value": f"We propose Method{number}, evaluated on MMLU."},
                        "venue": {"value": "ICLR 2026 Conference Submission"},
                        "venueid": {"value": f"{VENUE}/Submission"}}}


class LocalServer:
    """A server on 127.0.0.1 answering every GET with ``answer(handler, query)``; ``requests``
    holds each request's query."""

    def __init__(self, answer):
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                query = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
                server.requests.append(query)
                try:
                    answer(self, query)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # Polled often, so that shutdown() returns at once rather than after the default half second.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeOpenReview(LocalServer):
    """Serves /notes with offset/limit paging; ``failures`` lists HTTP statuses to answer first."""

    def __init__(self, total=7, failures=(), die_after=None):
        self.notes = [_note(n) for n in range(1, total + 1)]
        self.failures = list(failures)
        self.die_after = die_after  # stop answering (HTTP 404) after this many successful pages
        super().__init__(self._answer)

    def _answer(self, handler, query):
        if self.failures:
            handler.send_error(self.failures.pop(0))
        elif urlparse(handler.path).path != "/notes" or query.get("invitation") != f"{VENUE}/-/Submission":
            handler.send_error(404)
        elif self.die_after is not None and len([r for r in self.requests if "ok" in r]) >= self.die_after:
            handler.send_error(404)
        else:
            query["ok"] = True
            offset, limit = int(query["offset"]), int(query["limit"])
            _send(handler, _page(self.notes[offset : offset + limit], count=len(self.notes)))


@pytest.fixture
def server_factory():
    servers = []

    def make(**kwargs):
        servers.append(FakeOpenReview(**kwargs))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_pages_through_every_note_and_builds(server_factory, tmp_path):
    server = server_factory(total=7)
    out = tmp_path / "iclr.jsonl"
    result = CliRunner().invoke(main, ["fetch", "openreview", "--venue", VENUE, "-o", str(out),
                                       "--api", server.url, "--page-size", "3"])
    assert result.exit_code == 0, result.output
    assert "7 notes in" in result.output
    assert [r["offset"] for r in server.requests] == ["0", "3", "6"]
    papers = list(read_papers([out]))
    assert [p.id for p in papers] == [f"note{n:03d}" for n in range(1, 8)]
    assert papers[0].title == "Paper 1" and papers[0].venue == "ICLR 2026 Conference Submission"


def test_transient_errors_are_retried_with_backoff(server_factory, tmp_path):
    server = server_factory(total=2, failures=[503, 429])
    waits = []
    total = fetch_openreview(VENUE, tmp_path / "o.jsonl", api=server.url, page_size=10, backoff=0.5, sleep=waits.append)
    assert total == 2 and waits == [0.5, 1.0]


def test_a_client_error_is_not_retried(server_factory, tmp_path):
    server = server_factory(total=2, failures=[403])
    with pytest.raises(KGError, match="HTTP 403"):
        fetch_openreview(VENUE, tmp_path / "o.jsonl", api=server.url, sleep=lambda s: None)
    assert len(server.requests) == 1


def test_interrupted_download_resumes_without_duplicates(server_factory, tmp_path):
    out = tmp_path / "o.jsonl"
    first = server_factory(total=7, die_after=1)
    with pytest.raises(KGError):
        fetch_openreview(VENUE, out, api=first.url, page_size=3, sleep=lambda s: None, retries=0)
    with out.open("a") as f:
        f.write('{"id": "note004", "content": {"tit')  # a line cut short when the process was killed
    second = server_factory(total=7)
    assert fetch_openreview(VENUE, out, api=second.url, page_size=3, sleep=lambda s: None) == 7
    assert second.requests[0]["offset"] == "3"
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids == [f"note{n:03d}" for n in range(1, 8)]


# --- A server that misbehaves: every case ends in one line naming the URL, within bounds, resumable. ---

def _head(handler, status=200, **headers):
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()


def _send(handler, body: bytes, *, kind="application/json", length=None):
    _head(handler, Content_Type=kind, Content_Length=str(len(body) if length is None else length))
    handler.wfile.write(body)
    handler.wfile.flush()


def _page(notes, count=None):
    return json.dumps({"notes": notes, **({"count": count} if count is not None else {})}).encode()


def _slow_drip(handler, query):
    _head(handler, Content_Type="application/json", Content_Length="1000")
    for _ in range(1000):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.3)


def _streams_without_length(handler, query):
    _head(handler, Content_Type="application/json", Connection="close")
    for _ in range(64):
        handler.wfile.write(b" " * 65536)


def _redirect(to):
    return lambda handler, query: _head(handler, 302, Location=to(handler), Content_Length="0")


SMALL = Limits(answer_bytes=1_000_000, request_seconds=2.0, total_seconds=30.0, pages=20)

FAILING = {
    "not JSON": (lambda h, q: _send(h, b"{not json"), "not JSON"),
    "an HTML page": (lambda h, q: _send(h, b"<html><body>Maintenance</body></html>", kind="text/html"),
                     r"not JSON \(text/html"),
    "invalid UTF-8": (lambda h, q: _send(h, b'{"notes": ["\xff\xfe"]}'), "not JSON"),
    "a JSON list": (lambda h, q: _send(h, b"[1, 2, 3]"), "not an object with a 'notes' list"),
    "notes not a list": (lambda h, q: _send(h, b'{"notes": {"id": "x"}}'), "'notes' list"),
    "a count that is no number": (lambda h, q: _send(h, _page([_note(1)], count="many")), "'count'"),
    "nesting deeper than the parser goes": (lambda h, q: _send(h, b"[" * 100_000 + b"]" * 100_000), "not JSON"),
    "a declared answer over the size limit": (lambda h, q: _send(h, b"{}", length=400_000_000), "over the limit"),
    "an answer streamed past the size limit": (_streams_without_length, "over the limit"),
    "a byte at a time": (_slow_drip, r"took over 2s"),
    "an answer cut short": (lambda h, q: _send(h, _page([_note(1)])[:20], length=5000), "run the same command again"),
    "HTTP 500 on every try": (lambda h, q: h.send_error(500), "HTTP 500"),
    "HTTP 404": (lambda h, q: h.send_error(404), "HTTP 404"),
    "a redirect to another port": (_redirect(lambda h: "http://127.0.0.1:1/notes"), "outside http://127.0.0.1:"),
    "a redirect to ftp": (_redirect(lambda h: "ftp://127.0.0.1/notes"), "redirected to ftp://"),
    "a page of new notes without end": (
        lambda h, q: _send(h, _page([_note(int(q["offset"]) + n) for n in range(1, 3)])), "over 20 pages"),
}


@pytest.fixture
def misbehaving():
    servers = []

    def make(answer):
        servers.append(LocalServer(answer))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


@pytest.mark.parametrize("case", FAILING)
def test_a_misbehaving_server_gets_one_line_naming_the_url_and_what_was_wrong(case, misbehaving, tmp_path):
    answer, message = FAILING[case]
    server = misbehaving(answer)
    out = tmp_path / "o.jsonl"
    started = time.monotonic()
    with pytest.raises(KGError, match=message) as raised:
        fetch_openreview(VENUE, out, api=server.url, page_size=2, retries=1, limits=SMALL, sleep=lambda s: None)
    assert time.monotonic() - started < 20
    text = str(raised.value)
    assert "\n" not in text and server.url in text and len(text) < 400
    assert all(isinstance(i, str) for i in _existing_ids(out))  # whatever it wrote, a rerun reads back


def test_the_command_reports_a_misbehaving_server_in_one_line_without_a_traceback(misbehaving, tmp_path):
    server = misbehaving(lambda h, q: _send(h, b"<html>oops</html>", kind="text/html"))
    result = CliRunner().invoke(main, ["fetch", "openreview", "--venue", VENUE, "-o", str(tmp_path / "o.jsonl"),
                                       "--api", server.url, "--retries", "0"])
    assert result.exit_code != 0
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "not JSON" in lines[0] and server.url in lines[0]


def test_a_page_that_brings_no_new_note_ends_the_fetch(misbehaving, tmp_path):
    server = misbehaving(lambda h, q: _send(h, _page([_note(1), _note(2)])))  # the same page for every offset
    assert fetch_openreview(VENUE, tmp_path / "o.jsonl", api=server.url, page_size=2, limits=SMALL) == 2
    assert len(server.requests) == 2


def test_a_redirect_within_the_same_origin_is_followed(misbehaving, tmp_path):
    def answer(handler, query):
        if "moved" in handler.path:
            _send(handler, _page([_note(1)], count=1))
        else:
            _redirect(lambda h: h.path.replace("/notes", "/moved/notes"))(handler, query)
    server = misbehaving(answer)
    assert fetch_openreview(VENUE, tmp_path / "o.jsonl", api=server.url, limits=SMALL) == 1


def test_notes_without_an_id_are_skipped_and_named(misbehaving, tmp_path):
    server = misbehaving(lambda h, q: _send(h, _page([_note(1), {"content": {}}, "a string", {"id": 7}], count=4)))
    said = []
    assert fetch_openreview(VENUE, tmp_path / "o.jsonl", api=server.url, limits=SMALL, log=said.append) == 1
    assert sum("has no id; skipped" in line for line in said) == 3


def test_characters_that_end_a_line_elsewhere_leave_the_file_resumable(misbehaving, tmp_path):
    note = _note(1)
    note["content"]["abstract"]["value"] = ("We propose a line\u2028separator that keeps the next\x85line whole "
                                          "across a paragraph\u2029 break, a bell\x07 and an escape\x1b[31m.")
    server = misbehaving(lambda h, q: _send(h, _page([note, _note(2)], count=2)))
    out = tmp_path / "o.jsonl"
    assert fetch_openreview(VENUE, out, api=server.url, limits=SMALL) == 2
    assert out.read_bytes().count(b"\n") == 2 and out.read_bytes().isascii()
    assert _existing_ids(out) == ["note001", "note002"]
    assert fetch_openreview(VENUE, out, api=server.url, limits=SMALL) == 2  # resumed, not refused
    [paper, _] = read_papers([out])
    assert "separator" in paper.abstract


def test_an_api_that_is_not_http_is_refused(tmp_path):
    with pytest.raises(KGError, match="not an http or https URL"):
        fetch_openreview(VENUE, tmp_path / "o.jsonl", api="file:///etc/passwd")
