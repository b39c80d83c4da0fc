"""The server around the application: a thread per connection, a waiting room for silent ones.

:func:`start` serves a WSGI application (an :class:`~.app.App`) with
:mod:`wsgiref`, in a background thread, until :meth:`Running.stop`. Accepted
connections wait in one selector thread (:class:`_WaitingRoom`) until they send
something; only then does one get a thread of its own, at most
``max_connections`` at once, the next answered 503 at once.

A request still arriving holds a thread, so a client sending slowly must not
hold it long, nor many of them all: its head and body (:class:`_RequestInput`)
must come within ``request_timeout`` seconds, at ``min_rate`` bytes a second
after its first ``read_timeout`` seconds, and with no silence that long; and at
most ``max_receiving`` connections, fewer than ``max_connections``, may be
receiving at once: past that, the one receiving longest is closed to make room.
A normal client, whose request arrives at once, is therefore always answered,
however many slow senders there are. The body is read in full before the
application runs (a chunked one decoded), so the application reads it from
memory and never waits on the client.
"""
from __future__ import annotations

import contextlib
import io
import re
import selectors
import socket
import socketserver
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ..errors import KGError
from .protocol import MAX_BODY

if TYPE_CHECKING:
    from .app import App

#: Seconds a connection may stay silent, and the time every request has before its rate counts.
READ_TIMEOUT = 20.0
#: Bytes a second a request must come at after its first READ_TIMEOUT seconds: each byte buys
#: 1/MIN_RATE s more (Apache's mod_reqtimeout counts the same way: header=20-40,MinRate=500).
MIN_RATE = 500
#: Seconds a whole request, head and body, may take to arrive however fast it comes.
REQUEST_TIMEOUT = 60.0
#: Connections answered at once, each by a thread; one more is told 503 at once.
MAX_CONNECTIONS = 64
#: Connections that have sent nothing yet (one file descriptor each, no thread); past this, the
#: longest waiting is closed, well before the process runs out of file descriptors.
MAX_WAITING = 512
#: A chunked body's size line (with its extensions), and its trailer lines, at most.
MAX_CHUNK_LINE = 4096
MAX_TRAILERS = 32


class _ClosedForRoom(Exception):
    """The server closed this connection, still receiving its request, to make room for another."""


class _Refused(Exception):
    """A request refused before the application sees it: its body cannot be read."""

    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


class _Reception:
    """A request on its way in: when its first byte came, how many bytes have come, and whether
    the server closed it to make room (:meth:`_Server.answer`)."""

    def __init__(self, sock: socket.socket):
        self.sock, self.started, self.received, self.closed_for_room = sock, time.monotonic(), 0, False


class _RequestInput(io.RawIOBase):
    """A connection's input while its request arrives, under three limits from the server: no
    silence longer than ``read_timeout``; the whole request within ``request_timeout``; and after
    its first ``read_timeout`` seconds, ``min_rate`` bytes a second. A per-silence limit alone let
    a client sending a byte every 15 s hold a thread for minutes."""

    def __init__(self, reception: _Reception, server: _Server):
        self.reception, self.server = reception, server

    def readable(self) -> bool:
        return True

    def time_left(self) -> tuple[float, str]:
        """Seconds until the next bytes must have come, and what the request failed if they do not."""
        server, reception, now = self.server, self.reception, time.monotonic()
        earned = server.read_timeout + reception.received / server.min_rate
        return min((reception.started + server.request_timeout - now,
                    f"the request took more than {server.request_timeout:g} s"),
                   (reception.started + earned - now,
                    f"the request came slower than {server.min_rate} bytes a second"),
                   (server.read_timeout, f"the client sent nothing for {server.read_timeout:g} s"))

    def readinto(self, buffer) -> int:
        left, failed = self.time_left()
        if left <= 0:
            raise TimeoutError(failed)
        sock = self.reception.sock
        sock.settimeout(left)
        try:
            count = sock.recv_into(buffer)
        except TimeoutError:
            raise TimeoutError(failed) from None
        except OSError:
            if self.reception.closed_for_room:
                raise _ClosedForRoom() from None
            raise
        if count == 0 and self.reception.closed_for_room:  # shut down by the server, not ended by the client
            raise _ClosedForRoom()
        self.reception.received += count
        return count


def read_chunked(stream, limit: int) -> bytes:
    """A chunked body (RFC 9112, section 7.1) read from ``stream`` and decoded, at most ``limit``
    bytes; chunk extensions and trailer fields are read and dropped.

    Raises :class:`_Refused`: 400 for a malformed or cut-off body, 413 past ``limit``.

    >>> read_chunked(io.BytesIO(b"3;x=y\\r\\nASK\\r\\n3\\r\\n {}\\r\\n0\\r\\nTrailer: 1\\r\\n\\r\\n"), 100)
    b'ASK {}'
    """
    body = bytearray()
    while True:
        line = _chunk_line(stream)
        size = line.split(b";", 1)[0].strip(b" \t\r\n")
        if not re.fullmatch(rb"[0-9A-Fa-f]{1,8}", size):
            raise _Refused(400, f"Invalid chunk size {size[:40].decode('latin-1')!r} in a chunked request body.")
        if int(size, 16) == 0:
            break
        if len(body) + int(size, 16) > limit:
            raise _Refused(413, f"The chunked request body is over {limit} bytes, the most that is read.")
        chunk = stream.read(int(size, 16))
        if len(chunk) < int(size, 16) or _chunk_line(stream) not in (b"\r\n", b"\n"):
            raise _Refused(400, "A chunk of the request body is cut off or longer than its size says.")
        body += chunk
    for _ in range(MAX_TRAILERS):
        if _chunk_line(stream) in (b"\r\n", b"\n"):
            return bytes(body)
    raise _Refused(400, f"The chunked request body has more than {MAX_TRAILERS} trailer lines.")


def _chunk_line(stream) -> bytes:
    line = stream.readline(MAX_CHUNK_LINE + 1)
    if not line.endswith(b"\n"):  # the client stopped, or the line never ends
        raise _Refused(400, "The chunked request body is cut off, or one of its lines is too long.")
    return line


def _plain_reply(status: int, message: str, headers: str = "") -> bytes:
    """A whole HTTP answer with a one-line text body, for what is answered before the application."""
    text = (message + "\n").encode("utf-8")
    return (f"HTTP/1.0 {status} {HTTPStatus(status).phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"X-Content-Type-Options: nosniff\r\n{headers}Connection: close\r\n"
            f"Content-Length: {len(text)}\r\n\r\n").encode("latin-1") + text


def _drain(sock: socket.socket) -> None:
    """Read what the client has sent and nobody will read (a body not taken), without waiting:
    closing a socket with unread input resets the connection, and the client may then lose the
    answer before it reads it."""
    sock.setblocking(False)
    with contextlib.suppress(OSError):
        for _ in range(64):
            if not sock.recv(1 << 16):
                break


class _Handler(WSGIRequestHandler):
    """wsgiref's handler, also passing the path as sent (PATH_INFO is decoded, so ``%2F`` would
    read as ``/``), and logging one line per request. It reads the whole request, head and body,
    within the server's limits (:class:`_RequestInput`) before the application runs."""

    quiet = False

    def setup(self):
        super().setup()
        self.reception = self.server.reception(self.connection)
        self.rfile.close()  # the buffered socket file made by setup: replaced by one with limits
        self.rfile = io.BufferedReader(_RequestInput(self.reception, self.server))

    def parse_request(self):
        if not super().parse_request():  # the request line was read; this reads the headers
            return False
        try:
            body = self._read_body()
        except _Refused as refusal:
            self._refuse(refusal.status, str(refusal))
            return False
        except TimeoutError as error:
            self._refuse(408, f"The request body did not arrive in time: {error}.")
            return False
        self.rfile = io.BytesIO(body)  # the application reads it from memory, never waiting on the client
        self.connection.settimeout(self.server.read_timeout)  # for sending the answer
        return self.server.received(self.reception)  # False: closed for room the moment it came whole

    def _read_body(self) -> bytes:
        """The request's body: as long as its Content-Length says, or its chunks decoded.

        A Content-Length that is not one number, or is over :data:`MAX_BODY`, reads nothing: the
        application answers those (400, 413) with the reasons it gives for a query's body.
        """
        codings = self.headers.get_all("Transfer-Encoding", [])
        lengths = self.headers.get_all("Content-Length", [])
        if codings:
            return self._read_chunked(codings, lengths)
        if len(lengths) != 1 or not re.fullmatch(r"[0-9]{1,16}", lengths[0].strip(" \t")):
            return b""
        length = int(lengths[0])
        if length > MAX_BODY:
            return b""
        body = self.rfile.read(length)
        if len(body) < length:
            raise _Refused(400, f"The request body ended after {len(body)} of the {length} bytes its "
                                "Content-Length gives.")
        return body

    def _read_chunked(self, codings: list[str], lengths: list[str]) -> bytes:
        # Both headers on one request is how requests are smuggled past a proxy that reads the other one.
        if lengths:
            raise _Refused(400, "The request has both Transfer-Encoding and Content-Length; send one of them.")
        if [coding.strip(" \t").lower() for coding in codings] != ["chunked"]:
            raise _Refused(501, f"Transfer-Encoding {', '.join(codings)!r} is not read here; send the body "
                                "with a Content-Length, or chunked.")
        if self.request_version != "HTTP/1.1":
            raise _Refused(400, f"Transfer-Encoding in an {self.request_version} request: chunked bodies are HTTP/1.1's.")
        body = read_chunked(self.rfile, MAX_BODY)
        del self.headers["Transfer-Encoding"]  # the application sees a body of known length
        self.headers["Content-Length"] = str(len(body))
        return body

    def _refuse(self, status: int, message: str) -> None:
        self.log_request(status)
        self.connection.settimeout(self.server.read_timeout)
        with contextlib.suppress(OSError):
            self.connection.sendall(_plain_reply(status, message))
            _drain(self.connection)

    def handle(self):
        try:
            super().handle()
        except TimeoutError as error:  # the head did not come in time; socketserver would print a traceback
            self.close_connection = True
            self.log_message("closed a connection whose request did not arrive in time: %s", error)
        except _ClosedForRoom:
            self.close_connection = True
            self.log_message("closed a connection still sending its request after %.1f s, to make room for another",
                             time.monotonic() - self.reception.started)

    def get_environ(self):
        environ = super().get_environ()
        environ["RAW_URI"] = self.path
        lengths = self.headers.get_all("Content-Length", [])
        if len(lengths) > 1:  # wsgiref keeps the first: which body is meant? Let the app refuse it
            environ["CONTENT_LENGTH"] = ",".join(lengths)
        return environ

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        if not self.quiet:
            super().log_message(format, *args)


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    """A thread per connection once it has sent something (see :class:`_WaitingRoom`), at most
    ``max_connections`` threads; a connection finding them all taken is answered 503 at once.

    Of those threads, at most ``max_receiving`` (None: three quarters, 48 of 64) serve connections whose
    request is still arriving: when one more arrives, the one receiving longest is closed to make
    room, so that slow senders, however many and however often they reconnect, never hold the
    threads a request that arrives whole needs. The limits are attributes, so tests may shorten them.
    """

    daemon_threads = True  # a slow client does not keep the process alive at exit
    # Connections the kernel holds while every thread is taking one: socketserver's 5 made a
    # burst of 16 clients wait for TCP's retransmission, a second (bench/serve_latency.py --clients).
    request_queue_size = 128
    read_timeout = READ_TIMEOUT
    request_timeout = REQUEST_TIMEOUT
    min_rate = MIN_RATE
    max_connections = MAX_CONNECTIONS
    max_receiving: int | None = None
    max_waiting = MAX_WAITING

    def __init__(self, *args, **kwargs):
        self._lock = threading.Lock()
        self._receiving: dict[socket.socket, _Reception] = {}  # oldest first
        self._answering: set[socket.socket] = set()  # requests that came whole, being answered
        self._waiting = _WaitingRoom(self)  # first: a failed bind calls server_close, which closes it
        super().__init__(*args, **kwargs)

    @property
    def receiving_cap(self) -> int:
        """Connections that may be receiving their request at once: always fewer than
        ``max_connections`` (but at least one), so that some threads stay for answering."""
        cap = self.max_connections * 3 // 4 if self.max_receiving is None else self.max_receiving
        return max(1, min(cap, self.max_connections - 1))

    def process_request(self, request, client_address):
        self._waiting.add(request, client_address)

    def answer(self, request, client_address) -> None:
        """Called by the waiting room once the connection has something to read: give it a
        thread, closing the connection receiving longest if too many are receiving, or answer 503
        when every thread is taken."""
        with self._lock:
            full = len(self._receiving) >= self.receiving_cap
            admitted = len(self._receiving) - full + len(self._answering) < self.max_connections
            if admitted:
                if full:
                    self._close_for_room(next(iter(self._receiving.values())))
                self._receiving[request] = _Reception(request)
        if not admitted:
            self._busy(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            raise

    def _close_for_room(self, reception: _Reception) -> None:
        """Close a connection still receiving its request: its thread, reading, sees the end and
        stops (:class:`_ClosedForRoom`). Called with the lock held."""
        del self._receiving[reception.sock]
        reception.closed_for_room = True
        with contextlib.suppress(OSError):
            reception.sock.shutdown(socket.SHUT_RDWR)

    def _busy(self, request) -> None:
        request.setblocking(False)  # the waiting room's thread must not wait on this client
        with contextlib.suppress(OSError):  # what came is drained, so that closing does not reset
            request.recv(1 << 16)           # the connection before the client reads the answer
        with contextlib.suppress(OSError):
            request.send(_BUSY)
        self.shutdown_request(request)

    def reception(self, request) -> _Reception:
        """The record of ``request``'s arrival, made when it was given a thread."""
        with self._lock:
            return self._receiving.get(request) or _Reception(request)  # closed for room already: no matter

    def received(self, reception: _Reception) -> bool:
        """Called once a request has come whole: it counts among those answered from now on.
        False when the connection was closed to make room meanwhile."""
        with self._lock:
            if self._receiving.pop(reception.sock, None) is None:
                return False
            self._answering.add(reception.sock)
            return True

    def _forget(self, request) -> None:
        with self._lock:
            self._receiving.pop(request, None)
            self._answering.discard(request)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def server_close(self):
        self._waiting.close()
        super().server_close()


_BUSY = _plain_reply(503, "Too many connections at once; try again in a moment.", "Retry-After: 1\r\n")


class _WaitingRoom:
    """Accepted connections that have sent nothing yet, watched by one thread: a silent connection
    costs a file descriptor here, not a thread (3,000 idle connections made 3,008 threads). One
    silent for the server's ``read_timeout`` is closed, and so is the longest waiting when more
    than ``max_waiting`` wait."""

    def __init__(self, server: _Server):
        self.server = server
        self.selector = selectors.DefaultSelector()
        self.waiting: dict[socket.socket, tuple] = {}  # -> (address, deadline), oldest first
        # The accepting thread hands connections over through a list and a wake-up byte, so that
        # only this thread touches the selector.
        self.arrived: list[tuple] = []
        self.lock = threading.Lock()
        self.wake, self.waker = socket.socketpair()
        self.waker.setblocking(False)
        self.selector.register(self.wake, selectors.EVENT_READ)
        self.closed = False
        self.thread = threading.Thread(target=self.run, name="kg-serve-waiting", daemon=True)
        self.thread.start()

    def add(self, sock: socket.socket, address) -> None:
        with self.lock:
            self.arrived.append((sock, address))
        self._wake_up()

    def _wake_up(self) -> None:
        try:
            self.waker.send(b"\0")
        except BlockingIOError:  # bytes already wait to be read: the thread will look anyway
            pass

    def run(self) -> None:
        while not self.closed:
            first = next(iter(self.waiting.values()), None)
            ready = self.selector.select(max(0.0, first[1] - time.monotonic()) if first else None)
            for key, _ in ready:
                if key.fileobj is self.wake:
                    self.wake.recv(1 << 16)
                    continue
                self.selector.unregister(key.fileobj)
                address, _ = self.waiting.pop(key.fileobj)
                try:
                    self.server.answer(key.fileobj, address)
                except Exception:  # noqa: BLE001 - e.g. no thread could start: this connection only
                    traceback.print_exc(file=sys.stderr)
                    self.server.shutdown_request(key.fileobj)
            with self.lock:
                arrived, self.arrived = self.arrived, []
            for sock, address in arrived:
                self.waiting[sock] = (address, time.monotonic() + self.server.read_timeout)
                self.selector.register(sock, selectors.EVENT_READ)
            # The same timeout for all: the oldest connection is the first to run out of time.
            while self.waiting and (len(self.waiting) > self.server.max_waiting
                                    or next(iter(self.waiting.values()))[1] <= time.monotonic()):
                self._drop(next(iter(self.waiting)))
        for sock in list(self.waiting):
            self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        self.selector.unregister(sock)
        del self.waiting[sock]
        self.server.shutdown_request(sock)

    def close(self) -> None:
        self.closed = True
        self._wake_up()
        self.thread.join(timeout=10)
        with self.lock:
            for sock, _ in self.arrived:
                self.server.shutdown_request(sock)
            self.arrived.clear()
        self.selector.close()
        self.wake.close()
        self.waker.close()


class _Server6(_Server):
    address_family = socket.AF_INET6


@dataclass
class Running:
    """A server answering in a background thread (see :func:`start`)."""

    app: App
    server: WSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
        self.app.close()


def start(app: App, *, host: str = "127.0.0.1", port: int = 0, quiet: bool = True,
          read_timeout: float = READ_TIMEOUT, request_timeout: float = REQUEST_TIMEOUT, min_rate: int = MIN_RATE,
          max_connections: int = MAX_CONNECTIONS, max_receiving: int | None = None) -> Running:
    """Serve ``app`` on ``host``:``port`` (0: a free port) in a background thread.

    A connection is closed when it stays silent for ``read_timeout`` seconds; its request, head
    and body, must arrive within ``request_timeout`` seconds, and after its first ``read_timeout``
    seconds at ``min_rate`` bytes a second. At most ``max_connections`` are answered at once, of
    which at most ``max_receiving`` (None: three quarters) may still be receiving their request.

    The query workers start and the graph index is built in another thread
    meanwhile, so that neither the first query nor the explorer's first
    request waits for them.
    """
    handler = type("Handler", (_Handler,), {"quiet": quiet, "timeout": read_timeout})
    server_class = type("Server", (_Server6 if ":" in host else _Server,),
                        {"read_timeout": read_timeout, "request_timeout": request_timeout, "min_rate": min_rate,
                         "max_connections": max_connections, "max_receiving": max_receiving})
    try:
        server = make_server(host, port, app, server_class=server_class, handler_class=handler)
    except OSError as error:
        raise KGError(f"Cannot listen on {host}:{port} ({error.strerror}). Choose another --port, "
                      "or stop the program using it.") from None
    thread = threading.Thread(target=server.serve_forever, name="kg-serve", daemon=True)
    thread.start()
    threading.Thread(target=app.warm_up, name="kg-warm-up", daemon=True).start()
    return Running(app, server, thread)
