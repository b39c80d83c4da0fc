"""Store: a built graph loaded into pyoxigraph, an embedded SPARQL 1.1 engine, and queried.

``kg build -o graphs/NAME`` fills an on-disk store, ``graphs/NAME.oxigraph/``
(:func:`fill_store`), beside the exported files; ``open_graph`` opens it
read-only, which takes milliseconds whatever the graph's size, or loads the
exported N-Triples into memory when there is no store (a graph built before
stores existed, or a bare ``.nt`` file). ``run_query`` answers SPARQL with
values bound by substitution (never formatted into the query text); the
queries themselves live in :mod:`kg.queries`.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox

from .errors import GraphNotFound, KGError
from .vocab import NAMESPACES

#: ``kg build`` writes the graph's on-disk store to ``graphs/NAME`` + this suffix (a folder).
STORE_SUFFIX = ".oxigraph"
#: ... and its entities' vectors (:class:`kg.similarity.Vectors`) to ``graphs/NAME`` + this suffix.
VECTORS_SUFFIX = ".vectors.npz"
#: ... and its index (co-occurrence counts, task neighbours: :func:`kg.rdf_write.write_rdf`) to this suffix.
INDEX_SUFFIX = ".index.nt"
_FORMATS = {".nt": ox.RdfFormat.N_TRIPLES, ".ttl": ox.RdfFormat.TURTLE, ".jsonld": ox.RdfFormat.JSON_LD}
#: The endings of the files and folder a built graph consists of (its HTML page aside).
GRAPH_SUFFIXES = (*_FORMATS, STORE_SUFFIX)
PREFIXES = {name: str(ns) for name, ns in NAMESPACES.items()}
T = TypeVar("T")


def graph_file(path: str | Path) -> Path:
    """The RDF file of a graph given as ``graphs/NAME`` (the ``-o`` of ``kg build``) or as a file."""
    path = Path(path)
    if path.suffix in _FORMATS and path.is_file():
        return path
    for suffix in _FORMATS:  # N-Triples first: the fastest to load
        candidate = path.with_name(path.name + suffix) if path.suffix not in _FORMATS else path.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    raise GraphNotFound(str(path))


def index_file(rdf_file: str | Path) -> Path | None:
    """The index ``kg build`` wrote beside the RDF file ``rdf_file`` (``NAME.index.nt`` beside
    ``NAME.nt``, ``.ttl`` or ``.jsonld``: :func:`kg.rdf_write.write_rdf`), or None.

    >>> index_file("no/such/graph.nt") is None
    True
    """
    rdf_file = Path(rdf_file)
    index = rdf_file.with_name(rdf_file.name[: -len(rdf_file.suffix)] + INDEX_SUFFIX)
    return index if index.is_file() and index != rdf_file else None


def graph_stem(path: str | Path) -> Path:
    """``graphs/NAME`` (the ``-o`` of ``kg build``) for the graph at ``path``: that path, one of its
    files, or its store.

    >>> graph_stem("graphs/iclr.2026.index.nt"), graph_stem("graphs/iclr.2026.oxigraph"), graph_stem("graphs/iclr")
    (PosixPath('graphs/iclr.2026'), PosixPath('graphs/iclr.2026'), PosixPath('graphs/iclr'))
    """
    path = Path(path)
    for suffix in (INDEX_SUFFIX, *_FORMATS, STORE_SUFFIX):  # .index.nt before .nt
        if path.name.endswith(suffix):
            return path.with_name(path.name[: -len(suffix)])
    return path


def store_dir(path: str | Path) -> Path | None:
    """The on-disk store of the graph at ``path`` (``graphs/NAME``, one of its files, or the
    store folder itself), or None when ``kg build`` wrote none.

    >>> store_dir("no/such/graph") is None
    True
    """
    stem = graph_stem(path)
    folder = stem.with_name(stem.name + STORE_SUFFIX)
    return folder if folder.is_dir() else None


def vectors_file(path: str | Path) -> Path | None:
    """The entity vectors of the graph at ``path`` (``graphs/NAME`` or one of its files), or None
    when the graph has none (built by an older kg).

    >>> vectors_file("no/such/graph") is None
    True
    """
    stem = graph_stem(path)
    file = stem.with_name(stem.name + VECTORS_SUFFIX)
    return file if file.is_file() else None


def open_graph(path: str | Path) -> ox.Store:
    """A store holding the graph at ``path``: its on-disk store opened read-only when
    ``kg build`` wrote one, else an in-memory store loaded from its RDF file.

    Raises ``GraphNotFound`` when there is neither, ``KGError`` when the file is not valid RDF.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     nt = Path(folder) / "g.nt"
    ...     _ = nt.write_text('<https://e.org/a> <https://e.org/p> "x" .\\n', encoding="utf-8")
    ...     _ = fill_store(nt, Path(folder) / "g.oxigraph")
    ...     len(open_graph(Path(folder) / "g"))
    1
    """
    folder = store_dir(path)
    if folder is not None:
        try:
            return ox.Store.read_only(str(folder))
        except OSError:  # e.g. a store written by another pyoxigraph version: the RDF file still works
            pass
    store = ox.Store()
    _load(store, graph_file(path))
    return store


_LOAD_CHUNK = 8_000_000  # bytes of N-Triples per bulk load


def write_store(folder: str | Path, fill: Callable[[ox.Store], T]) -> T:
    """Make a new on-disk store at ``folder``, let ``fill(store)`` add to it, compact it and
    close it; return what ``fill`` returned.

    ``folder`` must not exist yet: the build fills a staging folder and moves
    it into place. Compacted (``optimize``), the store opens read-only without
    replaying a write-ahead log. ``fill`` must not keep the store: pyoxigraph
    closes it when its last reference goes.
    """
    folder = Path(folder)
    if folder.exists():
        raise KGError(f"{folder} already exists; kg writes a new store. Remove it first.")
    store = ox.Store(str(folder))
    result = fill(store)
    store.optimize()
    store.flush()
    del store  # the only reference: CPython frees it here, which closes the database
    # RocksDB's diagnostic log names the folder the store was written in: a machine's absolute path.
    for log in folder.glob("LOG*"):
        log.unlink()
    return result


def fill_store(rdf_file: str | Path, folder: str | Path) -> Path:
    """Load ``rdf_file`` (and the index beside it, :func:`index_file`) into a new on-disk store at
    ``folder`` and close it; return ``folder``.

    For a graph that exists only as files: ``kg build`` fills its store from
    the triples in memory (:func:`kg.rdf_write.write_rdf`).
    """
    write_store(folder, lambda store: _load(store, Path(rdf_file)))
    return Path(folder)


def _load(store: ox.Store, rdf_file: Path) -> None:
    """Load ``rdf_file`` and the index beside it (:func:`index_file`) into ``store``."""
    for part in filter(None, (rdf_file, index_file(rdf_file))):
        try:
            if part.suffix == ".nt":
                # N-Triples is one triple per line, so it loads in chunks of whole lines: the bulk
                # loader's memory grows with what it is given (a 470k-triple file at once: +350 MB;
                # in 8 MB chunks: +60 MB, for a quarter more time).
                with part.open("rb") as lines:
                    while chunk := lines.readlines(_LOAD_CHUNK):
                        store.bulk_load(b"".join(chunk), format=ox.RdfFormat.N_TRIPLES)
            else:
                store.bulk_load(path=str(part), format=_FORMATS[part.suffix])
        except SyntaxError as error:
            raise KGError(f"{part}: not valid RDF ({error}). Rebuild it with 'kg build'.") from None


class QueryRefused(KGError):
    """A query kg will not run: it would make the engine reach another server. ``status`` is the
    HTTP status a server answers it with."""

    status = 403


class QueryRejected(QueryRefused):
    """A query kg does not hand to its engine at all: longer than :data:`MAX_QUERY_CHARS`, nested
    deeper than the engine's stack allows, or written so that kg cannot tell how the engine would
    read it. The client's to fix, so a server answers it with 400."""

    status = 400


#: The longest query kg reads, in characters (kg serve reads request bodies of at most 1 MiB anyway).
MAX_QUERY_CHARS = 1 << 20
#: Brackets ({, ( and [) open at once. The engine parses and evaluates recursively on its native
#: stack: 3,000 nested { overflow it and kill the process with SIGSEGV; 1,000 do not.
MAX_NESTING = 256
#: How deep the engine's tree of a query may grow: each open bracket counts 4, and each operator or
#: pattern chained beside others at one level (||, &&, +, UNION, OPTIONAL, FILTER, a path's / ...)
#: counts 1, since the engine nests chains as deeply as brackets. 10,000 chained || or UNION
#: overflow its stack; 3,000 do not.
MAX_DEPTH = 2048
_BRACKET_DEPTH = 4

# The SPARQL 1.1 grammar's terminals (https://www.w3.org/TR/sparql11-query/#sparqlGrammar) in one
# regular expression matched at each position, white space and comments after a token included.
# Every repetition is possessive and no alternative gives back what it read, so none backtracks.
_BASE = ("A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F"
         "\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF")  # PN_CHARS_BASE
_U = _BASE + "_"  # PN_CHARS_U
_CHARS = _U + r"\-0-9\u00B7\u0300-\u036F\u203F\u2040"  # PN_CHARS
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"  # PERCENT | PN_LOCAL_ESC
_TERMINALS = [
    # Runs that need no look one token at a time: ',', ';', '=' and '.' (not of a number), a '<'
    # another follows, closing brackets, and characters no token starts with.
    ("nil", r"\([ \t\r\n]*+\)|\[[ \t\r\n]*+\]"),  # NIL and ANON
    ("inert", r"(?:[,;=]|\.(?![0-9])|<(?=<))++"),
    ("close", r"[)\]}]++"),
    ("other", "[^ \t\r\n'\"<?$@.:\\\\#{}()\\[\\],;=!+\\-*/|^&" + _CHARS + "]++"),
    ("long", r"""'''|\"\"\""""),  # read on by _LONG_STRING: one never closed could be read again and again
    ("string", r"""'(?:[^'\\\r\n]++|\\[^\r\n])*+'|"(?:[^"\\\r\n]++|\\[^\r\n])*+\""""),
    ("error", r"""['"][^\r\n]*+|\\.?"""),  # a string not closed on its line; a stray backslash
    ("iri", r'<(?:[^<>"{}|^`\\\x00-\x20]++|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*+>'),  # IRIREF, \u kept
    ("var", rf"[?$][{_U}0-9][{_U}0-9\u00B7\u0300-\u036F\u203F\u2040]*+"),
    # PNAME_LN and PNAME_NS: a name cannot end in '.', which then ends the triple (?s ?p ex:o.)
    ("pname", rf"(?:[{_BASE}](?:[{_CHARS}]|\.++(?=[{_CHARS}]))*+)?:"
              rf"(?:(?:[{_U}:0-9]|{_PLX})(?:[{_CHARS}:]|{_PLX}|\.++(?=[{_CHARS}:]|{_PLX}))*+)?"),
    ("blank", rf"_:[{_U}0-9](?:[{_CHARS}]|\.++(?=[{_CHARS}]))*+"),
    ("word", rf"[{_BASE}][{_CHARS}]*+"),  # a keyword: SELECT, a, true...
    ("number", r"(?:[0-9]++\.[0-9]*+|\.[0-9]++|[0-9]++)[eE][+-]?[0-9]++|[0-9]*+\.[0-9]++|[0-9]++"),
    ("langtag", r"@[a-zA-Z]++(?:-[a-zA-Z0-9]++)*+"),
    ("punct", r"\|\||&&|\^\^|!=|<=|>=|."),
]
_TOKEN = re.compile("(?:" + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _TERMINALS) + ")"
                    + r"(?:[ \t\r\n]++|#[^\r\n]*+)*+", re.S)  # WS, and comments: they end at CR or LF
_SPACE = re.compile(r"(?:[ \t\r\n]++|#[^\r\n]*+)*+")
_LONG_STRING = {q: re.compile(rf"{q * 3}(?:[^{q}\\]++|\\.|{q}(?!{q * 2}))*+{q * 3}", re.S) for q in "'\""}
_EOL = re.compile(r"[\r\n]")
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def sparql_tokens(query: str):
    r"""The tokens of ``query`` in one pass, as ``(kind, start, end)``: kind is ``iri``, ``string``,
    ``var``, ``pname``, ``blank``, ``number``, ``langtag``, ``nil`` (``()`` or ``[]``), ``word`` (a
    keyword), ``punct``, ``inert`` (a run of ``,`` ``;`` ``=`` ``.``, or of ``<`` before another),
    ``close`` (a run of closing brackets), ``other`` (a run of characters that start no token) or
    ``error`` (a string not closed on its line, a stray backslash). White space and comments are
    skipped. Linear in the query's length: a string that is never closed is read once.

    Escapes are as the grammar has them: ``\"`` inside a string, ``\#`` and ``\'`` inside a
    prefixed name (PN_LOCAL_ESC), so neither starts a comment or a string:

    >>> q = r"SELECT * { ?s ex:a\#b 'it\'s' } # end"
    >>> [(kind, q[start:end]) for kind, start, end in sparql_tokens(q)]  # doctest: +NORMALIZE_WHITESPACE
    [('word', 'SELECT'), ('punct', '*'), ('punct', '{'), ('var', '?s'), ('pname', 'ex:a\\#b'),
     ('string', "'it\\'s'"), ('close', '}')]
    >>> q = "?o .SERVICE <http://x/> {}"
    >>> [q[start:end] for _, start, end in sparql_tokens(q)]
    ['?o', '.', 'SERVICE', '<http://x/>', '{', '}']
    """
    n, rescanned = len(query), 0
    pos = _SPACE.match(query).end()
    token = _TOKEN.match
    while pos < n:
        match = token(query, pos)
        kind = match.lastgroup
        if kind == "long":
            long = _LONG_STRING[query[pos]].match(query, pos)
            if long is None:
                # Never closed: the engine reads '' and then a short string, as the grammar has it.
                # Trying again at each such quote could take quadratic time: a budget bounds it.
                rescanned += n - pos
                if rescanned > 8 * n + 65536:
                    raise QueryRejected(f"The query opens long strings it never closes ({_where(query, pos)}).")
                yield "string", pos, pos + 2
                pos += 2
                continue
            yield "string", pos, long.end()
            pos = _SPACE.match(query, long.end()).end()
            continue
        yield kind, pos, match.end(kind)
        pos = match.end()


def _where(query: str, pos: int) -> str:
    line = query.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - query.rfind(chr(10), 0, pos)}"


def _decode_codepoints(query: str) -> str:
    r"""``query`` with its ``\uXXXX`` and ``\UXXXXXXXX`` escapes decoded, as SPARQL 1.1 has it
    done before a query is parsed (the engine kg uses now decodes them in strings and IRIs only)."""
    def char(match):
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF else match.group(0)

    return _CODEPOINT.sub(char, query)


_SERVICE_REFUSED = ("SERVICE (federated query) is refused: kg answers from this graph only "
                    "and never contacts other servers.")
# Tokens after which a '<' cannot be "less than": it starts an IRI.
_NOT_OPERANDS = frozenset("( [ { , ; . = != < <= >= && || ! + - * / ^ ^^ |".split())
# Operators and patterns the engine nests one inside the other when they are chained.
_CHAINED = frozenset("|| && + - * / | ^ ! ?".split())
_CHAINED_WORDS = frozenset("union optional minus bind filter values graph exists lateral".split())
_OPENERS, _CLOSERS = {"{": "}", "(": ")", "[": "]"}, {"}": "{", ")": "(", "]": "["}
# Inside an IRI read as "less than" ... : SERVICE then a variable, a prefixed name or SILENT.
_SERVICE_THEN = re.compile(r"service(?:silent)?[?$:]", re.I)
_NAME_RUN = re.compile(rf"[{_CHARS}.]++")  # maximal runs, so finding them all is linear


def _screen(query: str) -> None:
    """Raise ``QueryRefused`` if ``query``, read as the engine reads it, uses SERVICE;
    ``QueryRejected`` if it nests too deeply or cannot be read safely. One pass over its tokens.

    Beyond the grammar, what the engine kg uses (pyoxigraph's recursive-descent parser) accepts:

    - keywords need no space after them: ``SERVICEsilent:x {...}`` is SERVICE SILENT :x, and
      ``?s ?p trueSERVICE <...>`` is the literal true, then SERVICE. So any word containing
      SERVICE, a prefixed name starting with it that a ``{`` follows, and a prefixed name whose
      local part has ``.SERVICE`` (the engine ends a local name at its second dot) are refused.
    - ``<`` after an operand inside parentheses is "less than", not the start of an IRI, so
      ``FILTER(?a<'>') SERVICE ... #'`` would hide SERVICE from a lexer that takes ``<'>`` for an
      IRI. There an IRI is also read as the engine could read it: one holding a quote or a
      bracket is refused; one holding ``#`` starts a comment in that reading, to the end of its
      line, and kg reads on from that line's end with the brackets the engine has open. Only a
      query with SERVICE somewhere in it (in any case) has anything to hide that way: others are
      not checked so.
    """
    hideable = "service" in query.lower()
    frames = [["", 0, 0]]  # open brackets: [bracket, depth at its start, operators chained in it]
    prev = ""  # the previous token: its text if punctuation, else its kind
    declaring = 0  # 1 after PREFIX, 2 after PREFIX name: or BASE, where an IRI must follow
    service_name = False  # the previous token was a prefixed name starting with SERVICE
    comment_to, comment_frames = -1, None  # the end of a line the engine may read as a comment
    for kind, start, end in sparql_tokens(query):
        if comment_to >= 0:
            if start >= comment_to:  # in step again: the engine's brackets, and '<' may compare
                frames, prev, declaring, comment_to = comment_frames, "error", 0, -1
            elif end > comment_to:
                raise QueryRejected(f"A multi-line string follows an IRI that '#' may end ({_where(query, start)}): "
                                    "start the string on a line of its own.")
        if service_name and kind == "punct" and query[start] == "{":
            raise QueryRefused(_SERVICE_REFUSED)
        service_name = False
        if kind == "punct":
            text = query[start:end]
            if text in _OPENERS:
                if len(frames) > MAX_NESTING:
                    raise QueryRejected(f"The query nests brackets more than {MAX_NESTING} levels deep "
                                        f"({_where(query, start)}); the engine would overflow its stack. Flatten it.")
                top = frames[-1]
                if text == "{" and top[0] in ("", "{"):  # groups side by side: the engine joins them
                    _chain(frames, query, start)
                depth = top[1] + top[2] + _BRACKET_DEPTH
                if depth > MAX_DEPTH:
                    _chain(frames, query, start, _BRACKET_DEPTH)  # raises
                frames.append([text, depth, 0])
            elif text in _CHAINED:
                _chain(frames, query, start)
            prev, declaring = text, 0
        elif kind == "word":
            word = query[start:end].lower()
            if "service" in word:
                raise QueryRefused(_SERVICE_REFUSED)
            if word in _CHAINED_WORDS:
                _chain(frames, query, start)
            prev, declaring = kind, 1 if word == "prefix" else 2 if word == "base" else 0
        elif kind == "pname":
            prefix, _, local = query[start:end].lower().partition(":")
            if ".service" in local:
                raise QueryRefused(_SERVICE_REFUSED)
            service_name = prefix.startswith("service")
            prev, declaring = kind, 2 if declaring == 1 and not local else 0
        elif kind == "iri":
            if hideable and declaring != 2 and (prev == "<" or frames[-1][0] == "(" and prev not in _NOT_OPERANDS):
                _screen_iri(query[start + 1:end - 1], query, start)
                if comment_to < 0 and "#" in query[start:end]:
                    eol = _EOL.search(query, end)
                    comment_to, comment_frames = eol.start() if eol else len(query), [f[:] for f in frames]
            prev, declaring = kind, 0
        elif kind == "close":
            for char in query[start:end]:
                if len(frames) > 1 and frames[-1][0] == _CLOSERS[char]:
                    frames.pop()
            prev, declaring = ")", 0
        elif kind == "inert":
            prev, declaring = query[end - 1], 0
        else:
            prev, declaring = kind, 0


def _chain(frames: list, query: str, pos: int, by: int = 1) -> None:
    top = frames[-1]
    top[2] += by
    if top[1] + top[2] > MAX_DEPTH:
        raise QueryRejected(f"The query nests or chains operators and patterns too deeply ({_where(query, pos)}): "
                            f"the engine would overflow its stack. Split it, or use VALUES or IN lists.")


def _screen_iri(iri: str, query: str, pos: int) -> None:
    """Check an IRI written where the engine may read its '<' as "less than" (see :func:`_screen`)."""
    if any(char in iri for char in "'()[]"):
        raise QueryRejected(f"'<' at {_where(query, pos)} may start an IRI or compare: with a quote or a bracket "
                            "before the next '>', kg cannot tell which. Put a space after '<' when it compares.")
    if "#" not in iri:  # the engine needs a comment to end its line: nothing else skips the '>'
        return
    code = iri.split("#", 1)[0]
    names = (name for name in _NAME_RUN.finditer(code) if code.startswith(":", name.end()))  # prefixes
    if _SERVICE_THEN.search(code) or any("service" in name.group().lower() for name in names):
        raise QueryRefused(_SERVICE_REFUSED)


def _check_length(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise QueryRejected(f"The query is {len(query):,} characters long; kg reads at most {MAX_QUERY_CHARS:,}.")


def refuse_federation(query: str) -> None:
    r"""Raise ``QueryRefused`` when ``query`` uses ``SERVICE`` (SPARQL 1.1 Federated Query), and
    ``QueryRejected`` (a ``QueryRefused``) when it is too long, nested too deeply, or written so
    that kg cannot tell how its engine would read it.

    The engine would otherwise send an HTTP request to any address the query
    names, from the machine serving the graph (server-side request forgery):
    a graph's endpoint answers from its own data only. The query is read by
    a SPARQL lexer (:func:`sparql_tokens`), once as written and once with its
    ``\u`` escapes decoded, as SPARQL 1.1 says an engine may, in time linear
    in its length.

    >>> refuse_federation('SELECT ?s WHERE { ?s rdfs:label "SERVICE" } # SERVICE in a comment')
    >>> refuse_federation("SELECT * WHERE { service silent <http://127.0.0.1:9/> { ?s ?p ?o } }")
    Traceback (most recent call last):
    kg.store.QueryRefused: SERVICE (federated query) is refused: kg answers from this graph only and never contacts other servers.

    A dot glued to the keyword, escapes in prefixed names, and escaped letters are all seen through:

    >>> for query in ["SELECT * { ?s ?p ?o .SERVICE <http://127.0.0.1:9/> { ?a ?b ?c } }",
    ...               r"SELECT * { ?s ex:a\# ?o SERVICE <http://127.0.0.1:9/> { ?a ?b ?c } }",
    ...               r"SELECT * { ?s ex:a\' ?o SERVICE <http://127.0.0.1:9/> { ?a ?b ?c } } # '",
    ...               r"SELECT * { \u0053ERVICE <http://127.0.0.1:9/> { ?a ?b ?c } }"]:
    ...     try:
    ...         refuse_federation(query)
    ...     except QueryRefused as error:
    ...         print(type(error).__name__, error.status)
    QueryRefused 403
    QueryRefused 403
    QueryRefused 403
    QueryRefused 403

    SERVICE as a name, a variable or inside an IRI is no keyword:

    >>> refuse_federation("SELECT ?service WHERE { ?service ex:SERVICE <http://e.org/service> }")

    A query nested deeper than the engine's stack allows is turned away before it reaches it:

    >>> refuse_federation("SELECT * " + "{" * 300 + "}" * 300)
    Traceback (most recent call last):
    kg.store.QueryRejected: The query nests brackets more than 256 levels deep (line 1, column 266); the engine would overflow its stack. Flatten it.
    """
    _check_length(query)
    _screen(query)
    if "\\u" in query or "\\U" in query:
        decoded = _decode_codepoints(query)
        if decoded != query:
            _screen(decoded)


def query_form(query: str) -> str:
    """The form of ``query``, upper case: SELECT, ASK, CONSTRUCT or DESCRIBE ("" if none), read
    past its prologue, comments, strings and IRIs.

    >>> query_form('PREFIX ex: <http://e.org/select#> # ASK\\nCONSTRUCT { ?s ?p "SELECT" } WHERE { ?s ?p ?o }')
    'CONSTRUCT'
    >>> query_form("PREFIX ex: <http://e.org/> ASK{ ?s ex:construct ?o }"), query_form("INSERT DATA {}")
    ('ASK', '')
    """
    _check_length(query)
    for kind, start, end in sparql_tokens(query):
        if kind == "word":
            word = query[start:end].upper()
            form = next((form for form in ("SELECT", "CONSTRUCT", "DESCRIBE", "ASK") if word.startswith(form)), "")
            if form or word not in ("PREFIX", "BASE"):
                return form
    return ""


def syntax_message(error: SyntaxError) -> str:
    """The engine's syntax error for a person: where it is and the words it expected, without
    the character classes of the grammar that follow them.

    >>> syntax_message(SyntaxError("error at 1:9: expected one of '{', ['A' ..= 'Z' | 'a' ..= 'z']"))
    "Invalid SPARQL: error at 1:9: expected one of '{' …"
    """
    text = " ".join(str(error).split())
    cut = text.find(" [")
    return "Invalid SPARQL: " + (text[:cut].rstrip(",") + " …" if cut > 0 else text)


def run_query(store: ox.Store, query: str, bindings: dict[str, str] | None = None):
    """Run ``query``; each binding replaces the variable of that name by a plain literal.

    Returns ``QuerySolutions``, ``QueryBoolean`` or ``QueryTriples`` (see pyoxigraph).
    Raises ``KGError`` with the engine's message when the query is not valid SPARQL,
    ``QueryRefused`` when it names another endpoint (:func:`refuse_federation`).
    """
    refuse_federation(query)
    substitutions = {ox.Variable(name): ox.Literal(value) for name, value in (bindings or {}).items()}
    try:
        return store.query(query, prefixes=PREFIXES, substitutions=substitutions or None)
    except SyntaxError as error:
        raise KGError(syntax_message(error)) from None
    except RuntimeError as error:  # e.g. a bound variable the query does not select
        raise KGError(f"Query failed: {error}") from None


def _cell(term) -> str:
    if term is None:
        return ""
    return term.value if isinstance(term, (ox.NamedNode, ox.Literal, ox.BlankNode)) else str(term)


def format_results(result, fmt: str = "table") -> str:
    """Results as ``table`` (aligned text), ``csv``, ``json`` (SPARQL 1.1 JSON results) or, for
    CONSTRUCT/DESCRIBE, N-Triples."""
    if isinstance(result, ox.QueryBoolean):
        return json.dumps({"head": {}, "boolean": bool(result)}) if fmt == "json" else str(bool(result)).lower()
    if isinstance(result, (ox.QueryTriples, list)):  # a list: of triples or quads read back from N-Triples
        return ox.serialize(result, format=ox.RdfFormat.N_TRIPLES).decode()
    if fmt == "json":
        return result.serialize(format=ox.QueryResultsFormat.JSON).decode()
    columns = [v.value for v in result.variables]
    rows = [[_cell(solution[c]) for c in columns] for solution in result]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue()
    return _table(columns, rows)


def _table(columns: list[str], rows: list[list[str]], width: int = 60) -> str:
    def fit(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= width else text[: width - 1] + "…"

    cells = [[fit(c) for c in row] for row in rows]
    widths = [max([len(col)] + [len(r[i]) for r in cells]) for i, col in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


# ----------------------------------------------------- results for other programs


RESULT_FORMATS = {  # media type -> format of SELECT and ASK results
    "application/sparql-results+json": ox.QueryResultsFormat.JSON, "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML, "application/xml": ox.QueryResultsFormat.XML,
    "text/xml": ox.QueryResultsFormat.XML, "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_FORMATS = {  # media type -> format of CONSTRUCT and DESCRIBE results
    "text/turtle": ox.RdfFormat.TURTLE, "application/turtle": ox.RdfFormat.TURTLE,
    "application/x-turtle": ox.RdfFormat.TURTLE, "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES, "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/json": ox.RdfFormat.JSON_LD, "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/xml": ox.RdfFormat.RDF_XML,
}
def negotiate(accept: str, offers: dict, default):
    """The format of ``offers`` (media type -> format) that the Accept header ``accept`` prefers.

    ``default`` for an empty header or ``*/*``; None when nothing offered is acceptable.

    >>> negotiate("text/csv;q=0.5, application/json", RESULT_FORMATS, None).name
    'SPARQL Results in JSON'
    >>> negotiate("text/html, */*;q=0.8", GRAPH_FORMATS, ox.RdfFormat.TURTLE).name
    'Turtle'
    >>> negotiate("image/png", RESULT_FORMATS, None) is None
    True
    """
    if not accept.strip():
        return default
    ranges = []
    for order, item in enumerate(accept.split(",")):
        media, *params = [part.strip() for part in item.split(";")]
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if weight > 0:
            ranges.append((-weight, order, media.lower()))
    for _, _, media in sorted(ranges):
        if media in offers:
            return offers[media]
        if media == "*/*":
            return default
        if media.endswith("/*"):
            for offered, fmt in offers.items():
                if offered.startswith(media[:-1]):
                    return fmt
    return None


class NotAcceptable(KGError):
    """No format the client accepts can hold the result."""


def _content_type(fmt) -> str:
    media = fmt.media_type
    return media + "; charset=utf-8" if media.startswith("text/") and "charset" not in media else media


def serialize_results(result, accept: str = "", *, max_results: int | None = None) -> tuple[str, bytes, bool]:
    """A query's ``result`` in the format the Accept header ``accept`` prefers, and capped.

    Returns ``(content type, body, truncated)``; ``truncated`` is True when
    more than ``max_results`` solutions or triples were left out. SELECT and
    ASK results are written as SPARQL JSON (the default), XML, CSV or TSV;
    CONSTRUCT and DESCRIBE as Turtle (the default), N-Triples, JSON-LD or
    RDF/XML. Raises ``NotAcceptable`` when ``accept`` allows none of them.

    >>> store = ox.Store()
    >>> store.add(ox.Quad(ox.NamedNode("https://e.org/a"), ox.NamedNode("https://e.org/p"), ox.Literal("x")))
    >>> serialize_results(store.query("SELECT ?o { ?s ?p ?o }"), "text/csv")
    ('text/csv; charset=utf-8', b'o\\r\\nx\\r\\n', False)
    >>> serialize_results(store.query("CONSTRUCT WHERE { ?s ?p ?o }"), "application/n-triples", max_results=0)
    ('application/n-triples', b'', True)
    """
    limit = sys.maxsize if max_results is None else max_results
    if isinstance(result, (ox.QueryTriples, list)):  # a list: the triples a SPARQL server sent (kg.endpoint)
        fmt = negotiate(accept, GRAPH_FORMATS, ox.RdfFormat.TURTLE)
        if fmt is None:
            raise _not_acceptable(accept, GRAPH_FORMATS)
        triples = list(itertools.islice(result, limit + 1 if limit < sys.maxsize else None))
        body = ox.serialize(triples[:limit], format=fmt, prefixes=PREFIXES)
        return _content_type(fmt), body, len(triples) > limit
    fmt = negotiate(accept, RESULT_FORMATS, ox.QueryResultsFormat.JSON)
    if fmt is None:
        raise _not_acceptable(accept, RESULT_FORMATS)
    if isinstance(result, ox.QueryBoolean):
        return _content_type(fmt), result.serialize(format=fmt), False
    body, truncated = _capped_solutions(result, fmt, limit)
    return _content_type(fmt), body, truncated


def _capped_solutions(solutions: ox.QuerySolutions, fmt, max_results: int) -> tuple[bytes, bool]:
    """At most ``max_results`` solutions in ``fmt``.

    pyoxigraph serializes a whole result set or nothing, so the first
    ``max_results`` solutions are written as TSV (whose cells are the terms'
    N-Triples syntax, which ``str`` gives, escapes included), parsed back into
    a result set and serialized from there.
    """
    variables = solutions.variables
    lines = ["\t".join(str(v) for v in variables)]
    truncated = False
    for count, solution in enumerate(solutions):
        if count == max_results:
            truncated = True
            break
        lines.append("\t".join("" if solution[v] is None else str(solution[v]) for v in variables))
    tsv = ("\n".join(lines) + "\n").encode("utf-8")
    if fmt == ox.QueryResultsFormat.TSV:
        return tsv, truncated
    return ox.parse_query_results(tsv, format=ox.QueryResultsFormat.TSV).serialize(format=fmt), truncated


def _not_acceptable(accept: str, offers: dict) -> NotAcceptable:
    return NotAcceptable(f"Cannot answer in any format of Accept: {accept!r}. "
                         f"This result can be sent as: {', '.join(offers)}.")
