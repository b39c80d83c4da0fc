"""kg fetch openreview against a local server answering in the OpenReview API v2 format."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.errors import KGError
from kg.ingest.fetch import fetch_openreview
from kg.ingest import read_papers

VENUE = "ICLR.cc/2026/Conference"


def _note(number):
    return {"id": f"note{number:03d}", "number": number, "cdate": 1758067200000, "forum": f"note{number:03d}",
            "invitations": [f"{VENUE}/-/Submission"], "domain": VENUE,
            "content": {"title": {"value": f"Paper {number}"},
                        "abstract": {"value": f"We propose Method{number}, evaluated on MMLU."},
                        "venue": {"value": "ICLR 2026 Conference Submission"},
                        "venueid": {"value": f"{VENUE}/Submission"}}}


class FakeOpenReview:
    """Serves /notes with offset/limit paging; ``failures`` lists HTTP statuses to answer first."""

    def __init__(self, total=7, failures=(), die_after=None):
        self.notes = [_note(n) for n in range(1, total + 1)]
        self.failures = list(failures)
        self.die_after = die_after  # stop answering (HTTP 404) after this many successful pages
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                server.requests.append(query)
                if server.failures:
                    self.send_error(server.failures.pop(0))
                    return
                if url.path != "/notes" or query.get("invitation") != f"{VENUE}/-/Submission":
                    self.send_error(404)
                    return
                if server.die_after is not None and len([r for r in server.requests if "ok" in r]) >= server.die_after:
                    self.send_error(404)
                    return
                query["ok"] = True
                offset, limit = int(query["offset"]), int(query["limit"])
                body = json.dumps({"notes": server.notes[offset : offset + limit], "count": len(server.notes)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


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
