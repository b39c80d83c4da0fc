"""Hostile clients against a real `kg serve` on 127.0.0.1: slow senders (G1) and foreign Host
names (G2, DNS rebinding).

    python bench/hostile_server.py [GRAPH] [--seconds 30]

G1: 100 connections send their request a byte every 2 s, with the server's default limits: 50
send their head that slowly, 50 a whole head and then a 100,000-byte body; half of each kind opens a
new connection whenever the server closes its own. Meanwhile a normal client asks for /index.json
twice a second: every answer must be 200 (it was 503 for as long as the senders kept on).

G2: requests for Host names the server does not serve must be refused, with a one-line body and no
query run: a port read as a name's start, user-info syntax, a wrong port, foreign names, no Host on
HTTP/1.1, and a POST whose Origin and Host are both a foreign name. The loopback names, and a name
given with --allow-host, are answered; so is a chunked query body.

GRAPH is a graph built by `kg build` (default graphs/sample; when missing, the sample corpus is
built into a scratch folder). Everything runs on 127.0.0.1, every loop is bounded, and the servers
started here are stopped at the end. Prints one line per check and `N failures`; exits 1 if any.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from hostile_service import ensure_graph, start_server, stop_server  # noqa: E402

ASK = "ASK { ?s ?p ?o }"
QUERY_PATH = "/sparql?" + urllib.parse.urlencode({"query": ASK})
SENDERS = 100
BYTE_EVERY = 2.0  # seconds between a slow sender's bytes: far inside the server's 20 s read timeout
PROBE_EVERY = 0.5


class Checks:
    """Counts and prints the outcome of each check."""

    def __init__(self):
        self.failures = 0

    def __call__(self, ok: bool, what: str) -> None:
        self.failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'}  {what}", flush=True)


def exchange(port: int, data: bytes, timeout: float = 30) -> tuple[int, bytes]:
    """Send ``data`` as it is to 127.0.0.1:``port``; the answer's status (0: none) and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := sock.recv(1 << 16):
                answer += chunk
        except ConnectionResetError:
            pass
    head, _, body = answer.partition(b"\r\n\r\n")
    words = head.split(maxsplit=2)
    return (int(words[1]) if len(words) > 1 and words[1].isdigit() else 0), body


def get(port: int, host: str | None, path: str = QUERY_PATH) -> tuple[int, bytes]:
    return exchange(port, (f"GET {path} HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host is not None else "")
                           + "Accept: application/sparql-results+json\r\n\r\n").encode("latin-1"))


# ------------------------------------------------------------------ G1


class SlowSender:
    """One connection sending its request a byte at a time; ``reconnects``: opens a new one
    whenever the server closes it."""

    def __init__(self, port: int, start: bytes, reconnects: bool):
        self.port, self.start, self.reconnects = port, start, reconnects
        self.sock: socket.socket | None = None
        self.opened = 0.0
        self.closed_by_server, self.longest = 0, 0.0
        self._open()

    def _open(self) -> None:
        try:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            self.sock.sendall(self.start)
            self.sock.setblocking(False)
            self.opened = time.monotonic()
        except OSError:
            self.sock = None

    def tick(self) -> None:
        """Send one more byte, or notice that the server closed the connection (and reconnect)."""
        if self.sock is None:
            return
        try:
            if self.sock.recv(1 << 16) == b"":
                raise ConnectionResetError
        except BlockingIOError:
            try:
                self.sock.send(b"a")
                return
            except OSError:
                pass
        except OSError:
            pass
        self.longest = max(self.longest, time.monotonic() - self.opened)
        self.closed_by_server += 1
        self.sock.close()
        self.sock = None
        if self.reconnects:
            self._open()

    def close(self) -> None:
        if self.sock is not None:
            self.longest = max(self.longest, time.monotonic() - self.opened)
            self.sock.close()


def slow_senders(port: int) -> list[SlowSender]:
    host = f"Host: 127.0.0.1:{port}\r\n"
    head = f"GET /index.json HTTP/1.1\r\n{host}X-Slow: ".encode()
    body = (f"POST /sparql HTTP/1.1\r\n{host}Content-Type: application/x-www-form-urlencoded\r\n"
            "Content-Length: 100000\r\n\r\nquery=").encode()
    return [SlowSender(port, head if number % 2 else body, reconnects=number % 4 < 2) for number in range(SENDERS)]


def g1(port: int, seconds: float, check: Checks) -> None:
    check(get(port, f"127.0.0.1:{port}", "/index.json")[0] == 200, "G1 /index.json answers before the senders start")
    senders = slow_senders(port)
    statuses, slowest = [], 0.0
    started = last_byte = time.monotonic()
    try:
        while time.monotonic() - started < seconds:
            if time.monotonic() - last_byte >= BYTE_EVERY:
                for sender in senders:
                    sender.tick()
                last_byte = time.monotonic()
            asked = time.monotonic()
            statuses.append(get(port, f"127.0.0.1:{port}", "/index.json")[0])
            slowest = max(slowest, time.monotonic() - asked)
            time.sleep(PROBE_EVERY)
    finally:
        for sender in senders:
            sender.close()
    answered = statuses.count(200)
    check(answered == len(statuses) > 0,
          f"G1 {SENDERS} slow senders (a byte every {BYTE_EVERY:g} s; heads and 100,000-byte bodies, half "
          f"reconnecting) for {seconds:g} s: {answered} of {len(statuses)} probes answered 200 "
          f"(others: {sorted(set(statuses) - {200})}), slowest {slowest:.2f} s")
    closed = sum(sender.closed_by_server for sender in senders)
    check(closed >= SENDERS // 2, f"G1 the server closed {closed} slow-sender connections; the longest lived "
                                  f"{max(sender.longest for sender in senders):.0f} s")


# ------------------------------------------------------------------ G2


def refused(status: int, body: bytes) -> bool:
    return status in (400, 421) and body.strip().count(b"\n") == 0 and b"boolean" not in body


def g2(port: int, check: Checks) -> None:
    foreign = [f"127.0.0.1:{port}.evil.example", f"127.0.0.1:{port}@evil.example", f"127.0.0.1:{port + 1}",
               "127.0.0.1", f"evil.example:{port}", "evil.example", f"localhost.evil.example:{port}",
               f"127.0.0.1.nip.io:{port}", f"2130706433:{port}", f"127.1:{port}", f"0x7f000001:{port}",
               f"[::ffff:127.0.0.1]:{port}", f"127.0.0.1:{port} evil.example", ""]
    for host in foreign:
        status, body = get(port, host)
        check(refused(status, body), f"G2 Host {host!r} refused: {status} {body.strip()[:70].decode('utf-8', 'replace')}")
    status, body = get(port, None)
    check(refused(status, body), f"G2 no Host on HTTP/1.1 refused: {status}")
    form = urllib.parse.urlencode({"query": ASK})
    for origin_host in (f"evil.example:{port}", "evil.example"):
        status, body = exchange(port, (f"POST /sparql HTTP/1.1\r\nHost: {origin_host}\r\nOrigin: http://{origin_host}\r\n"
                                       "Sec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                       f"Content-Length: {len(form)}\r\n\r\n{form}").encode())
        check(refused(status, body), f"G2 POST with Origin and Host both {origin_host!r} refused: {status}")
    status, body = exchange(port, (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://evil.example:{port}\r\n"
                                   "Sec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                   f"Content-Length: {len(form)}\r\n\r\n{form}").encode())
    check(status == 403, f"G2 POST for this server with a foreign Origin refused: {status}")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        status, body = get(port, host)
        check(status == 200 and b"true" in body, f"G2 Host {host!r} answered: {status}")
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (b"ASK ", b"{ ?s ?p ?o }")) + b"0\r\n\r\n"
    status, body = exchange(port, (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                   "Content-Type: application/sparql-query\r\nAccept: application/sparql-results+json\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n").encode() + chunks)
    check(status == 200 and json.loads(body or b"{}").get("boolean") is True, f"chunked query body read: {status}")


def g2_allow_host(graph: Path, check: Checks) -> None:
    """A server started with --allow-host answers that name, on its own port, and still no other."""
    try:
        process, url = start_server(graph, 10, "--allow-host", "kg.lab.example")
    except SystemExit as error:
        check(False, f"G2 kg serve --allow-host did not start: {error}")
        return
    try:
        port = urllib.parse.urlsplit(url).port
        status, _ = get(port, f"kg.lab.example:{port}")
        check(status == 200, f"G2 --allow-host kg.lab.example: Host 'kg.lab.example:{port}' answered: {status}")
        for host in (f"kg.lab.example:{port + 1}", f"kg.lab.example:{port}.evil.example", f"evil.example:{port}"):
            check(refused(*get(port, host)), f"G2 --allow-host kg.lab.example: Host {host!r} refused")
    finally:
        stop_server(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", nargs="?", default=str(Path(__file__).resolve().parent.parent / "graphs" / "sample"))
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the slow senders keep on (G1)")
    args = parser.parse_args()
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="kg-hostile-server-") as folder:
        graph = ensure_graph(Path(args.graph), Path(folder))
        process, url = start_server(graph, 10)
        try:
            port = urllib.parse.urlsplit(url).port
            print(f"kg serve {url} on {graph}", flush=True)
            g1(port, args.seconds, check)
            g2(port, check)
        finally:
            stop_server(process)
        g2_allow_host(graph, check)
    print(f"{check.failures} failures")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
