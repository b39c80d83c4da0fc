"""SERVICE disguises and query-pool engines for tests/test_sparql_guard.py and bench/hostile_service.py:
what kg's SPARQL filter must refuse, what it must let through, and workers without the filter."""
from __future__ import annotations

import contextlib
import socket
import threading
import urllib.parse
import urllib.request


def sparql_request(url: str, method: str, query: str) -> urllib.request.Request:
    """A SPARQL Protocol request for ``query`` to the server at ``url``, asking for JSON results:
    by GET, as a POSTed form (``"form"``) or as a POSTed query body (``"body"``)."""
    headers = {"Accept": "application/sparql-results+json"}
    if method == "GET":
        request = urllib.request.Request(f"{url}/sparql?{urllib.parse.urlencode({'query': query})}", headers=headers)
    elif method == "form":
        request = urllib.request.Request(f"{url}/sparql", data=urllib.parse.urlencode({"query": query}).encode(),
                                         headers={**headers, "Content-Type": "application/x-www-form-urlencoded"})
    else:
        request = urllib.request.Request(f"{url}/sparql", data=query.encode(),
                                         headers={**headers, "Content-Type": "application/sparql-query"})
    return request


@contextlib.contextmanager
def listener():
    """A TCP server on loopback that records every connection made to it (what it was sent):
    ``(port, connections)``."""
    connections, sock = [], socket.create_server(("127.0.0.1", 0))
    sock.settimeout(0.2)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                connection, _ = sock.accept()
            except OSError:
                continue
            connection.settimeout(2)
            try:
                connections.append(connection.recv(4096))
            except OSError:
                connections.append(b"")
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1], connections
    finally:
        stop.set()
        thread.join()
        sock.close()


def disguises(port: int) -> dict[str, str]:
    """Queries that each send the engine to ``http://127.0.0.1:port/`` through SERVICE, written to
    slip past a SERVICE filter, by name. Unless stopped, pyoxigraph parses every one as SERVICE,
    and calls the listener for all but those whose \\u escapes it leaves undecoded, and those
    whose patterns before SERVICE match nothing in the graph."""
    url = f"http://127.0.0.1:{port}/"
    body = "{ ?a ?b ?c }"
    prologue = f"PREFIX svc: <{url}> PREFIX : <{url}> PREFIX e: <http://example.org/> "
    long = "'" * 3
    return {
        # issue 24, item 5, and the same with the keyword's letters written as \u escapes
        "5a dot glued to SERVICE": f"SELECT * {{ ?s ?p ?o .SERVICE <{url}> {body} }}",
        "5b \\# in a prefixed name": prologue + f"SELECT * {{ OPTIONAL {{ ?s e:a\\# ?o }} SERVICE <{url}> {body} }}",
        "5c \\' in a prefixed name": prologue + f"SELECT * {{ OPTIONAL {{ ?s e:a\\' ?o }} SERVICE <{url}> {body} }} # '",
        "5a escaped": f"SELECT * {{ ?s ?p ?o .\\u0053ERVICE <{url}> {body} }}",
        "5b escaped": prologue + f"SELECT * {{ OPTIONAL {{ ?s e:a\\# ?o }} \\u0053ERVIC\\u0045 <{url}> {body} }}",
        "5c escaped": prologue + f"SELECT * {{ OPTIONAL {{ ?s e:a\\' ?o }} \\U00000053ERVICE <{url}> {body} }} # '",
        # the plain keyword, its cases and what may stand around it
        "plain": f"SELECT * {{ SERVICE <{url}> {body} }}",
        "lower case": f"select * {{ service <{url}> {body} }}",
        "mixed case and SILENT": f"SELECT * {{ ?s ?p ?o SeRvIcE sIlEnT <{url}> {body} }}",
        "tabs and newlines": f"SELECT * {{\n\t?s ?p ?o .\n\tSERVICE\t\n<{url}>\n{body}\n}}",
        "comments between": f"SELECT * {{ ?s ?p ?o # SERVICE? no\nSERVICE # yes\n SILENT #\n<{url}> # and\n{body} }}",
        "carriage return ends a comment": f"SELECT * {{ ?s ?p ?o # a comment\rSERVICE <{url}> {body} }}",
        "after a closing brace": f"SELECT * {{ {{ ?s ?p ?o }}SERVICE<{url}>{body} }}",
        "after a semicolon": f"SELECT * {{ ?s ?p ?o ;SERVICE <{url}> {body} }}",
        "after a string": f'SELECT * {{ ?s ?p "o"SERVICE <{url}> {body} }}',
        "after a number": f"SELECT * {{ ?s ?p 1SERVICE <{url}> {body} }}",
        "glued to true": f"SELECT * {{ ?s ?p trueSERVICE <{url}> {body} }}",
        "glued to SILENT": f"SELECT * {{ ?s ?p ?o . SERVICESILENT<{url}>{body} }}",
        "prefixed name glued to the keyword": prologue + f"SELECT * {{ ?s ?p ?o . SERVICEsvc:x {body} }}",
        "default prefix glued to the keyword": prologue + f"SELECT * {{ ?s ?p ?o . SERVICE:x {body} }}",
        "after a local name with two dots": f"SELECT * {{ ?s ?p kg:o.x.SERVICE <{url}> {body} }}",
        "relative IRI and BASE": f"BASE <{url}> SELECT * {{ ?s ?p ?o SERVICE <> {body} }}",
        "in UNION, OPTIONAL, MINUS": f"SELECT * {{ {{ ?s ?p ?o }} UNION {{ OPTIONAL {{ MINUS {{ }} SERVICE <{url}> {body} }} }} }}",
        "in FILTER EXISTS": f"SELECT * {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {body} }} }}",
        "in a subquery": f"SELECT * {{ {{ SELECT * {{ SERVICE <{url}> {body} }} }} }}",
        "CONSTRUCT": f"CONSTRUCT {{ ?a ?b ?c }} WHERE {{ SERVICE <{url}> {body} }}",
        # '<' after an operand inside parentheses compares: it starts no IRI
        "less-than taken for an IRI": f"SELECT * {{ ?s ?p ?o FILTER(true||?s<'>') SERVICE <{url}> {body} #'\n}}",
        "less-than, a # and a long string":
            f"SELECT * {{ ?s ?p ?o FILTER(?s<?o#>) {long}\n|| true) SERVICE <{url}> {body} #{long}\n}}",
        # strings
        "after a string with an escaped quote": f"SELECT * {{ OPTIONAL {{ ?s ?p 'it\\'s' }} SERVICE <{url}> {body} }} # '",
        "after a long string": f"SELECT * {{ OPTIONAL {{ ?s ?p {long}a''b{long} }} SERVICE <{url}> {body} }}",
        "an unclosed long string, then a short one": f"SELECT * {{ VALUES ?x {{ {long}x' }} SERVICE <{url}> {body} }}",
        "an escaped quote inside a string": f"SELECT * {{ OPTIONAL {{ ?s ?p 'x\\u0027 ' }} SERVICE <{url}> {body} }} #'",
    }


#: Queries that name SERVICE without using it: they must run.
HARMLESS = {
    "in a string": 'SELECT ?s WHERE { ?s ?p "SERVICE <http://127.0.0.1:9/> { ?a ?b ?c }" } LIMIT 1',
    "in a long string": "SELECT ?s WHERE { ?s ?p '''x\nSERVICE <http://127.0.0.1:9/> {}''' } LIMIT 1",
    "in an IRI": "SELECT ?s WHERE { ?s <http://example.org/SERVICE> ?o } LIMIT 1",
    "in a comment": "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1 # SERVICE <http://127.0.0.1:9/> { }",
    "as a local name": "SELECT ?s WHERE { ?s kg:SERVICE ?o . ?s kg:service ?o } LIMIT 1",
    "as a variable": "SELECT ?service WHERE { ?service ?p ?o } LIMIT 1",
    "as a prefix": "PREFIX service: <http://example.org/> SELECT ?s WHERE { ?s service:p ?o } LIMIT 1",
    "after an escaped # in a name": "PREFIX e: <http://example.org/> SELECT ?s WHERE { ?s e:a\\#SERVICE ?o } LIMIT 1",
    "the service-description vocabulary":
        "SELECT ?s WHERE { ?s <http://www.w3.org/ns/sparql-service-description#endpoint> ?o } LIMIT 1",
    "in a regex": "SELECT ?s WHERE { ?s ?p ?o FILTER(REGEX(STR(?o), 'service', 'i')) } LIMIT 1",
    "less-than between variables": "SELECT ?s WHERE { ?s ?p ?o FILTER(?o<?o || ?o < 3) } LIMIT 1",
    "IRIs with # in a collection and VALUES": "SELECT ?s WHERE { VALUES (?s ?o) { (<http://x/a#1> <http://x/b#2>) } }",
}


def unfiltered_engine(path: str):
    """kg's own worker engine (:func:`kg.serve.pool.oxigraph_engine`) with its SERVICE filter
    switched off, in the worker only: whatever reaches it, reaches the engine."""
    from kg.serve import pool

    pool.refuse_federation = lambda query: None
    return pool.oxigraph_engine(path)


def crashing_engine():
    """An engine whose worker dies of SIGSEGV on any request, as the parser does on a query
    nested too deeply."""
    import os
    import signal

    def answer(request: dict) -> dict:
        os.kill(os.getpid(), signal.SIGSEGV)

    return answer


def connect_from_a_filtered_process(port: int, queue) -> None:
    """In a process of its own: close the network (kg.sandbox.deny_network), try to connect to
    ``port`` over IPv4 and IPv6 and to talk over a socket pair; put what happened on ``queue``."""
    from kg.sandbox import deny_network

    result = {"denied": deny_network()}
    for family, address in ((socket.AF_INET, ("127.0.0.1", port)), (socket.AF_INET6, ("::1", port))):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.connect(address)
            result[family.name] = "connected"
        except OSError as error:
            result[family.name] = error.errno
    left, right = socket.socketpair()  # AF_UNIX: the worker's pipes stay open
    left.sendall(b"ok")
    result["AF_UNIX"] = right.recv(2).decode()
    queue.put(result)
