"""The SERVICE guard (issue 24, items 5, 7 and 9): kg's SPARQL lexer refuses every disguise of
SERVICE before the engine sees it, through kg.store, ``kg query`` and a real ``kg serve``; and
whatever the lexer missed, a query worker cannot open a network connection at all. A listener on
loopback counts the connections that got out: there must be none."""
from __future__ import annotations

import json
import errno
import multiprocessing
import random
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from guard_support import (HARMLESS, connect_from_a_filtered_process, crashing_engine, disguises, listener,
                           sparql_request, unfiltered_engine)
from kg.cli import main
from kg.serve import pool as query_pool
from kg.serve.pool import HTTPError, QueryPool, endpoint_engine, oxigraph_engine
from kg.sparql import (MAX_NESTING, MAX_QUERY_CHARS, QueryRefused, QueryRejected, query_form, refuse_federation,
                       sparql_tokens)

NAMES = list(disguises(9))
REFUSED = "SERVICE (federated query) is refused"
# issue 24, item 9: each overflows the engine's stack and kills its worker with SIGSEGV
DEEP = {"10k {": "SELECT * " + "{" * 10_000 + "}" * 10_000,
        "50k (": "SELECT * { FILTER(" + "(" * 50_000 + "true" + ")" * 50_000 + ") }",
        "60k ||": "SELECT * { FILTER(" + " || ".join(["true"] * 60_001) + ") }"}
LINUX = sys.platform.startswith("linux")


# ---------------------------------------------------------------- the lexer


@pytest.mark.parametrize("name", NAMES)
def test_every_disguise_of_service_is_refused(name):
    with pytest.raises(QueryRefused):
        refuse_federation(disguises(9)[name])


@pytest.mark.parametrize("name", ["5a dot glued to SERVICE", "5b \\# in a prefixed name", "5c \\' in a prefixed name"])
def test_the_three_bypasses_of_issue_24_and_their_escaped_forms_are_refused_as_service(name):
    for query in (disguises(9)[name], disguises(9)[name.split(" ", 1)[0] + " escaped"]):
        with pytest.raises(QueryRefused, match=re.escape(REFUSED)) as refused:
            refuse_federation(query)
        assert refused.value.status == 403 and not isinstance(refused.value, QueryRejected)


@pytest.mark.parametrize("name", list(HARMLESS))
def test_service_as_text_a_name_or_a_variable_is_no_keyword(name):
    refuse_federation(HARMLESS[name])


def test_the_lexer_follows_the_grammar_of_names_strings_and_iris():
    query = r"""PREFIX e: <http://e.org/a#b> SELECT ?v $w { e:a\#b\'c e:x.y 'it\'s' "q\"" '''a''b''' ""
                 <http://e.org/SERVICE> _:b.c 1.5e3 'x'@en-GB ?v . } # SERVICE"""
    kinds = [(kind, query[start:end]) for kind, start, end in sparql_tokens(query)]
    assert ("pname", r"e:a\#b\'c") in kinds and ("pname", "e:x.y") in kinds
    assert [text for kind, text in kinds if kind == "string"] == [r"'it\'s'", r'"q\""', "'''a''b'''", '""', "'x'"]
    assert ("iri", "<http://e.org/SERVICE>") in kinds and ("blank", "_:b.c") in kinds
    assert ("number", "1.5e3") in kinds and ("langtag", "@en-GB") in kinds and ("var", "$w") in kinds
    assert kinds[-2:] == [("inert", "."), ("close", "}")]  # the comment is no token


def test_800_kb_of_escaped_quotes_are_read_right_in_one_pass():
    """Item 7: the old filter rescanned an unclosed string from each of its quotes (800 kB did not
    finish in 40 minutes). The lexer reads each string once; what follows it is still read."""
    quotes = '\\"' * 400_000
    half = quotes[: len(quotes) // 2]
    refuse_federation(f'SELECT * {{ ?s ?p "{half} SERVICE <http://127.0.0.1:9/> {{}} {half}" }}')
    for query in [f'SELECT * {{ ?s ?p "{quotes}" .SERVICE <http://127.0.0.1:9/> {{ }} }}',
                  f'SELECT * {{ ?s ?p "{quotes}\nSERVICE <http://127.0.0.1:9/> {{ }} }}',  # never closed
                  f'SELECT * {{ ?s ?p """{quotes}""" .SERVICE <http://127.0.0.1:9/> {{ }} }}',
                  f"SELECT * {{ ?s ?p '{quotes}' .SERVICE <http://127.0.0.1:9/> {{ }} }}"]:
        with pytest.raises(QueryRefused, match=re.escape(REFUSED)):
            refuse_federation(query)
    tokens = list(sparql_tokens('"' + quotes))  # unclosed: one token to the line's end
    assert tokens == [("error", 0, 1 + len(quotes))]
    assert query_form(f"PREFIX e: <http://e.org/> # {half}\nASK {{ ?s ?p \"{half}\" }}") == "ASK"


def test_a_query_longer_than_the_cap_is_rejected():
    with pytest.raises(QueryRejected, match="characters long") as rejected:
        refuse_federation("SELECT * { ?s ?p ?o } #" + "x" * MAX_QUERY_CHARS)
    assert rejected.value.status == 400


@pytest.mark.parametrize("name", list(DEEP))
def test_a_query_nested_deeper_than_the_engine_can_parse_is_rejected(name):
    with pytest.raises(QueryRejected, match="too deeply|levels deep") as rejected:
        refuse_federation(DEEP[name])
    assert rejected.value.status == 400
    refuse_federation("SELECT * " + "{" * MAX_NESTING + "}" * MAX_NESTING)  # as deep as may be


def test_values_rows_and_long_in_lists_are_not_taken_for_nesting():
    refuse_federation("SELECT * { VALUES (?a ?b) { " + "(1 2) " * 20_000 + "} }")
    refuse_federation("SELECT * { ?s ?p ?o FILTER(?o IN (" + ", ".join(["1"] * 20_000) + ")) }")


def test_no_disguise_generated_at_random_reaches_the_engine():
    """A differential check against the engine itself: queries built at random around SERVICE
    from the fragments that fooled the old filter; those the lexer lets through run in
    pyoxigraph, in this process, with nothing to stop them but the lexer."""
    rng = random.Random(24)
    glue = ["", " ", "\t", "\n", "\r", "#c\n", " #'\n", "\r\n"]
    fragments = ["FILTER(true||?s<'>')", "FILTER(true||?s<?o)", "'", '"', "'''", '"""', "#'", "\\", "e:a\\#",
                 "e:a\\'", "OPTIONAL { ?s e:a\\# ?o }", "OPTIONAL { ?s e:a\\' ?o }", "<x#>", ".", ";", "e:o.x.",
                 "true", "1", "?s ?p ?o .", "(?s <x>)", "'\\''", "'''a''''", "VALUES ?x { '''x' }", ")", "(", "{", "}",
                 "\\u0027", "\\u0022", "'\\u0027'", "FILTER(?s<?o#>", "?s ?p (?o<'>') .", "<<?s?p?o>>", "@en", "[]"]
    store = ox.Store()
    store.add(ox.Quad(ox.NamedNode("http://e.org/s"), ox.NamedNode("http://e.org/p"), ox.Literal("o")))
    ran = 0
    with listener() as (port, connections):
        url = f"http://127.0.0.1:{port}/"
        for _ in range(3000):
            service = (rng.choice(["SERVICE", "service", "SeRvIcE", "\\u0053ERVICE"]) + rng.choice(["", " SILENT"])
                       + rng.choice(glue + [" "]) + rng.choice([f"<{url}>", ":x", "svc:x"]) + rng.choice(glue))
            parts = [rng.choice(fragments) + rng.choice(glue) for _ in range(rng.randint(0, 3))]
            parts += [service + "{ ?a ?b ?c }"] + [rng.choice(glue) + rng.choice(fragments) for _ in range(rng.randint(0, 3))]
            query = (f"PREFIX : <{url}> PREFIX svc: <{url}> PREFIX e: <http://e.org/> SELECT * {{ ?s ?p ?o "
                     + rng.choice(glue) + "".join(parts) + " }")
            try:
                refuse_federation(query)
            except QueryRefused:
                continue
            ran += 1
            try:
                result = store.query(query)
                if not isinstance(result, ox.QueryBoolean):
                    list(result)
            except (SyntaxError, OSError, RuntimeError, ValueError):
                pass
            assert connections == [], query
    assert ran > 50  # the check did run queries: the harmless ones among those generated


# ---------------------------------------------------------------- kg query


@pytest.mark.parametrize("name", NAMES)
def test_kg_query_refuses_every_disguise_and_nothing_is_contacted(sample, name):
    with listener() as (port, connections):
        result = CliRunner().invoke(main, ["query", "-g", str(sample), disguises(port)[name]])
    assert result.exit_code == 1 and ("is refused" in result.output or "cannot tell" in result.output
                                      or "may end" in result.output), result.output
    assert connections == []


def test_kg_query_still_runs_queries_naming_service_harmlessly(sample):
    for name, query in HARMLESS.items():
        result = CliRunner().invoke(main, ["query", "-g", str(sample), query])
        assert result.exit_code == 0, (name, result.output)


@pytest.mark.parametrize("name", ["10k {", "60k ||"])
def test_kg_query_says_a_deeply_nested_query_is_nested_too_deeply(sample, name):
    result = CliRunner().invoke(main, ["query", "-g", str(sample), DEEP[name]])
    assert result.exit_code == 1 and "deep" in result.output and "memory" not in result.output


# ---------------------------------------------------------------- kg serve, a real one


@pytest.fixture(scope="module")
def kg_serve(sample):
    """``kg serve`` on the sample graph, in a process of its own: (its process, its URL)."""
    process = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-g", str(sample), "--port", "0",
                                "--timeout", "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+)/ ", line)
        assert match, line + process.stderr.read()
        yield process, match.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def _ask(url: str, method: str, query: str):
    """(status, parsed JSON body) of one SPARQL request: GET, a form POST or a query POST."""
    request = sparql_request(url, method, query)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("method", ["GET", "form", "body"])
def test_kg_serve_refuses_every_disguise_by_every_method_and_nothing_is_contacted(kg_serve, method):
    _, url = kg_serve
    answers = {}
    with listener() as (port, connections):
        for name, query in disguises(port).items():
            answers[name] = _ask(url, method, query)
    assert connections == []
    assert all(status in (400, 403) and "error" in body for status, body in answers.values()), answers
    assert all(REFUSED in answers[name][1]["error"] for name in NAMES if name.startswith("5"))


def test_kg_serve_answers_harmless_queries_naming_service(kg_serve):
    _, url = kg_serve
    for name, query in HARMLESS.items():
        status, body = _ask(url, "body", query)
        assert status == 200 and "results" in body, (name, body)


def _workers(server: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_text()
        except OSError:
            continue
        if int(fields[1]) == server and "spawn_main" in cmdline:
            found.append(int(stat.parent.name))
    return found


def _seccomp(pid: int) -> str:
    """The process's seccomp mode ("0" none, "2" a filter), or "gone" once it has exited."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "gone"
    return re.search(r"^Seccomp:\s*(\d)", status, re.M).group(1)


@pytest.mark.skipif(not LINUX or not Path("/proc/self/status").exists(), reason="reads /proc")
def test_kg_serves_query_workers_run_under_a_seccomp_filter_and_the_server_does_not(kg_serve):
    process, url = kg_serve
    assert _ask(url, "GET", "ASK { ?s ?p ?o }")[0] == 200  # its workers are up
    # A worker installs its filter as it starts, before it takes a query: one the pool has just
    # spawned (a spare, a replacement) may be a moment from it, so wait for each, a bounded time.
    deadline = time.monotonic() + 20
    while True:
        workers = _workers(process.pid)
        states = [state for state in map(_seccomp, workers) if state != "gone"]
        if (states and all(state == "2" for state in states)) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert states and all(state == "2" for state in states), states  # 2: a filter is installed
    assert _seccomp(process.pid) == "0"


# ---------------------------------------------------------------- workers without the network


@pytest.mark.skipif(not LINUX, reason="seccomp is Linux's")
def test_a_filtered_process_cannot_open_an_internet_socket_but_keeps_its_pipes():
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    with listener() as (port, connections):
        child = context.Process(target=connect_from_a_filtered_process, args=(port, queue))
        child.start()
        result = queue.get(timeout=60)
        child.join(timeout=60)
    assert result == {"denied": True, "AF_INET": errno.EPERM, "AF_INET6": errno.EPERM, "AF_UNIX": "ok"}
    assert child.exitcode == 0 and connections == []


@pytest.mark.skipif(not LINUX, reason="seccomp is Linux's")
def test_a_worker_whose_filter_is_switched_off_still_cannot_reach_anything(sample):
    """Defence in depth: the worker's engine gets SERVICE queries unfiltered, and still the
    listener sees nothing; the same worker let onto the network (as kg serve --sparql's are)
    does reach it, so the listener would have seen a connection."""
    with listener() as (port, connections):
        request = {"query": disguises(port)["plain"], "accept": "application/sparql-results+json", "max_results": 10}
        offline = QueryPool(unfiltered_engine, str(sample), size=1, spare=0, timeout=30)
        try:
            assert offline.offline
            replies = [offline.run({**request, "query": query}) for query in disguises(port).values()]
        finally:
            offline.close()
        assert connections == []
        plain = replies[list(disguises(port)).index("plain")]
        assert plain["status"] == 400 and "Operation not permitted" in json.loads(plain["body"])["error"]
        online = QueryPool(unfiltered_engine, str(sample), size=1, spare=0, timeout=30, offline=False)
        try:
            online.run(request)
        finally:
            online.close()
        assert len(connections) == 1 and connections[0].split(b" ", 1)[0] in (b"GET", b"POST")


def test_only_the_workers_of_a_sparql_server_keep_the_network():
    pools = []
    try:
        pools = [QueryPool(oxigraph_engine, "graphs/none", size=1, spare=0),
                 QueryPool(endpoint_engine, "{}", size=1, spare=0)]
        assert [p.offline for p in pools] == [True, False]
    finally:
        for p in pools:
            p.close()


# ---------------------------------------------------------------- a crash is no memory cap


def test_a_worker_killed_by_a_signal_is_said_to_have_crashed_not_to_be_out_of_memory():
    pool = QueryPool(crashing_engine, size=1, spare=0, timeout=30)
    try:
        with pytest.raises(HTTPError) as crashed:
            pool.run({"query": ""})
    finally:
        pool.close()
    assert crashed.value.status == 503
    assert "crashed its worker (signal SIGSEGV)" in str(crashed.value) and "memory" not in str(crashed.value)


def test_a_query_nested_too_deeply_for_the_parser_is_reported_as_a_crash(sample):
    """What kg's own filter stops (10k nested braces), sent past it: the engine's parser overflows
    its stack, and the reply says so rather than blaming the memory cap."""
    pool = QueryPool(unfiltered_engine, str(sample), size=1, spare=0, timeout=60)
    try:
        with pytest.raises(HTTPError, match=r"crashed its worker \(signal SIGSEGV\); nested too deeply"):
            pool.run({"query": DEEP["10k {"], "accept": "application/sparql-results+json", "max_results": 10})
        assert pool.run({"query": "ASK { ?s ?p ?o }", "accept": "application/sparql-results+json",
                         "max_results": 10})["status"] == 200  # replaced
    finally:
        pool.close()


def test_the_worker_answers_a_rejected_query_with_400():
    reply = query_pool._answering(ox.Store())({"query": DEEP["60k ||"], "max_results": 1})
    assert reply["status"] == 400 and "too deeply" in json.loads(reply["body"])["error"]
