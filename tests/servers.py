"""Real SPARQL servers for the tests (and bench/publish.py): an Oxigraph server and Virtuoso, each
started on a free loopback port in a folder of its own, waited for (bounded), and stopped by its
process id; and what it means for two engines to give the same answer."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pyoxigraph as ox

NUMERIC = {"http://www.w3.org/2001/XMLSchema#" + name for name in
           ("integer", "int", "long", "decimal", "double", "float", "nonNegativeInteger")}


def answer_term(term):
    """A term as two engines agree to write it: numbers by value (Virtuoso writes "0.800" as "0.8")."""
    if isinstance(term, ox.Literal):
        if term.datatype.value in NUMERIC:
            return ("number", round(float(term.value), 6))
        return ("literal", term.value, term.language)
    return (type(term).__name__, None if isinstance(term, ox.BlankNode) else term.value)


def concatenated(query: str) -> set[str]:
    """The variables ``query`` binds to a GROUP_CONCAT (or a COALESCE of one)."""
    return set(re.findall(r"GROUP_CONCAT\(.*?\bAS\s+\?(\w+)", query, re.S | re.I))


def answer_rows(result, lists: set[str] = frozenset()) -> list:
    """A query's answer, comparable between engines: its rows of terms, sorted (or its boolean).
    The variables of ``lists`` hold GROUP_CONCAT lists, whose order SPARQL leaves to the engine:
    they compare as sets, and an empty list as empty whether the engine writes "" (Virtuoso) or
    leaves it unbound (Oxigraph)."""
    if isinstance(result, ox.QueryBoolean):
        return [bool(result)]
    variables = [v.value for v in result.variables]

    def cell(row, name):
        term = row[name]
        if name in lists:
            return ("list", tuple(sorted(term.value.split(", "))) if term is not None and term.value else ())
        if term is None:
            return None
        return answer_term(term)

    return sorted((tuple(cell(row, v) for v in variables) for row in result), key=repr)


#: Seconds a server may take to answer its first request.
STARTUP_LIMIT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def oxigraph_command() -> str | None:
    """The ``oxigraph`` CLI (PyPI's oxigraph): beside this Python, or on the PATH."""
    beside = Path(sys.executable).with_name("oxigraph")
    return str(beside) if beside.exists() else shutil.which("oxigraph")


def virtuoso_command() -> str | None:
    return shutil.which("virtuoso-t")


def _wait(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server stopped at start-up ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"no answer from {url} within {STARTUP_LIMIT} s: {log.read_text()[-2000:]}")


def _stop(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def oxigraph_server(folder: Path):
    """An ``oxigraph serve`` on a free loopback port, storing in ``folder``: yields its base URL."""
    port = free_port()
    log = folder / "oxigraph.log"
    with log.open("wb") as out:
        process = subprocess.Popen([oxigraph_command(), "serve", "--location", str(folder / "store"),
                                    "--bind", f"127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait(url + "/query?query=ASK%7B%7D", process, log)
        yield url
    finally:
        _stop(process)


VIRTUOSO_INI = """\
[Database]
DatabaseFile = {folder}/virtuoso.db
ErrorLogFile = {folder}/virtuoso.log
TransactionFile = {folder}/virtuoso.trx
xa_persistent_file = {folder}/virtuoso.pxa
ErrorLogLevel = 7

[TempDatabase]
DatabaseFile = {folder}/virtuoso-temp.db
TransactionFile = {folder}/virtuoso-temp.trx

[Parameters]
ServerPort = 127.0.0.1:{isql_port}
DirsAllowed = ., {folder}, {load_dir}
NumberOfBuffers = 170000
MaxDirtyBuffers = 130000
CheckpointInterval = 0
MaxQueryMem = 1G
VADInstallDir = /usr/share/virtuoso-opensource-7/vad/

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {folder}
MaxClientConnections = 4
ServerThreads = 4

[SPARQL]
ResultSetMaxRows = 1000000
MaxQueryExecutionTime = 60
DefaultQuery = SELECT * WHERE {{ ?s ?p ?o }} LIMIT 1
"""


@contextlib.contextmanager
def virtuoso_server(folder: Path, load_dir: Path):
    """Virtuoso (``virtuoso-t``) on free loopback ports with a database in ``folder``, allowed to
    bulk-load from ``load_dir``: yields (HTTP base URL, isql HOST:PORT)."""
    isql_port, http_port = free_port(), free_port()
    ini = folder / "virtuoso.ini"
    ini.write_text(VIRTUOSO_INI.format(folder=folder, load_dir=load_dir, isql_port=isql_port, http_port=http_port))
    log = folder / "virtuoso.out"
    with log.open("wb") as out:
        process = subprocess.Popen([virtuoso_command(), "+foreground", "+configfile", str(ini)], cwd=folder,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{http_port}"
        _wait(url + "/sparql?query=ASK%7B%7D", process, log)
        yield url, f"127.0.0.1:{isql_port}"
    finally:
        _stop(process)
