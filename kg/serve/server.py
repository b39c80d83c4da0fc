"""The server around the application: a thread per connection, a waiting room for silent ones.

:func:`start` serves a WSGI application (an :class:`~.app.App`) with
:mod:`wsgiref`, in a background thread, until :meth:`Running.stop`. Accepted
connections wait in one selector thread (:class:`_WaitingRoom`) until they send
something; only then does one get a thread of its own, at most
``max_connections`` at once, the next answered 503 at once. A connection must
send its request line and headers within the read timeout, and its body may
pause that long at most, so slow or silent clients cannot hold the threads.
"""
from __future__ import annotations

import contextlib
import io
import selectors
import socket
import socketserver
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ..errors import KGError

if TYPE_CHECKING:
    from .app import App

#: Seconds a connection may stay silent, and may take to send its request line and headers.
READ_TIMEOUT = 20.0
#: Connections answered at once, each by a thread; one more is told 503 at once.
MAX_CONNECTIONS = 64
#: Connections that have sent nothing yet (one file descriptor each, no thread); past this, the
#: longest waiting is closed, well before the process runs out of file descriptors.
MAX_WAITING = 512


class _Deadline(io.RawIOBase):
    """A connection's input that gives up at ``deadline`` (a ``time.monotonic()``; None: never),
    not only after a silence: a client sending its headers a byte at a time (slowloris) cannot
    hold a thread longer than that."""

    def __init__(self, sock: socket.socket, timeout: float):
        self.sock, self.timeout, self.deadline = sock, timeout, None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        timeout = self.timeout
        if self.deadline is not None:
            timeout = self.deadline - time.monotonic()
            if timeout <= 0:
                raise TimeoutError("the request's head took too long")
        self.sock.settimeout(timeout)
        return self.sock.recv_into(buffer)


class _Handler(WSGIRequestHandler):
    """wsgiref's handler, also passing the path as sent (PATH_INFO is decoded, so ``%2F`` would
    read as ``/``), and logging one line per request. The request line and headers must arrive
    within ``timeout`` seconds, and the body may pause that long at most."""

    quiet = False
    timeout = READ_TIMEOUT

    def setup(self):
        super().setup()
        self.rfile.close()  # the buffered socket file made by setup: replaced by one with a deadline
        self.rfile = io.BufferedReader(_Deadline(self.connection, self.timeout))
        self.rfile.raw.deadline = time.monotonic() + self.timeout

    def parse_request(self):
        parsed = super().parse_request()  # the request line was read; this reads the headers
        self.rfile.raw.deadline = None  # the head has arrived; the body only has to keep coming
        self.connection.settimeout(self.timeout)  # not what was left of the head's time: answers are sent with it
        return parsed

    def handle(self):
        try:
            super().handle()
        except TimeoutError:  # socketserver would print a traceback for each
            self.close_connection = True
            self.log_message("closed a connection whose request did not arrive within %s s", self.timeout)

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
    ``max_connections`` threads; a connection finding them all taken is answered 503 at once."""

    daemon_threads = True  # a slow client does not keep the process alive at exit
    # Connections the kernel holds while every thread is taking one: socketserver's 5 made a
    # burst of 16 clients wait for TCP's retransmission, a second (bench/serve_latency.py --clients).
    request_queue_size = 128
    read_timeout = READ_TIMEOUT
    max_connections = MAX_CONNECTIONS
    max_waiting = MAX_WAITING

    def __init__(self, *args, **kwargs):
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._waiting = _WaitingRoom(self)  # first: a failed bind calls server_close, which closes it
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        self._waiting.add(request, client_address)

    def answer(self, request, client_address) -> None:
        """Called by the waiting room once the connection has something to read."""
        if self._slots.acquire(blocking=False):
            try:
                super().process_request(request, client_address)
            except BaseException:
                self._slots.release()
                raise
            return
        request.setblocking(False)  # the waiting room's thread must not wait on this client
        with contextlib.suppress(OSError):  # what came is drained, so that closing does not reset
            request.recv(1 << 16)           # the connection before the client reads the answer
        with contextlib.suppress(OSError):
            request.send(_BUSY)
        self.shutdown_request(request)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def server_close(self):
        self._waiting.close()
        super().server_close()


_BUSY_TEXT = b"Too many connections at once; try again in a moment.\n"
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"X-Content-Type-Options: nosniff\r\nRetry-After: 1\r\nConnection: close\r\n"
         b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT))


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
          read_timeout: float = READ_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> Running:
    """Serve ``app`` on ``host``:``port`` (0: a free port) in a background thread.

    A connection is closed when it stays silent for ``read_timeout`` seconds, or takes longer
    to send its request line and headers; at most ``max_connections`` are answered at once.

    The query workers start and the graph index is built in another thread
    meanwhile, so that neither the first query nor the explorer's first
    request waits for them.
    """
    handler = type("Handler", (_Handler,), {"quiet": quiet, "timeout": read_timeout})
    server_class = type("Server", (_Server6 if ":" in host else _Server,),
                        {"read_timeout": read_timeout, "max_connections": max_connections})
    try:
        server = make_server(host, port, app, server_class=server_class, handler_class=handler)
    except OSError as error:
        raise KGError(f"Cannot listen on {host}:{port} ({error.strerror}). Choose another --port, "
                      "or stop the program using it.") from None
    thread = threading.Thread(target=server.serve_forever, name="kg-serve", daemon=True)
    thread.start()
    threading.Thread(target=app.warm_up, name="kg-warm-up", daemon=True).start()
    return Running(app, server, thread)
