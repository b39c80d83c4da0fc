"""SPARQL read as its grammar reads it: the tokens of a query, its form, and the queries kg will not run.

:func:`sparql_tokens` lexes a query in one linear pass (IRIs, the four string
forms with their escapes, comments, prefixed names with ``PN_LOCAL_ESC``,
variables, keywords), as written and with ``\\u`` escapes decoded.
:func:`refuse_federation` refuses ``SERVICE`` however it is disguised, and any
query too long or nested too deeply for the engine's stack; :func:`query_form`
tells SELECT from CONSTRUCT. The query workers (:mod:`kg.serve.pool`) run these
checks in their own processes, under a filter that denies them the network.
"""
from __future__ import annotations

import functools
import re

from .errors import KGError


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


@functools.cache
def _token() -> re.Pattern:
    """The pattern of one token and the white space and comments after it (they end at CR or LF),
    compiled when first asked: its Unicode classes take 45 ms, which a command that runs no query
    need not pay."""
    return re.compile("(?:" + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _TERMINALS) + ")"
                      + r"(?:[ \t\r\n]++|#[^\r\n]*+)*+", re.S)


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
    token = _token().match
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
    r"""``query`` with its codepoint escapes (``\u`` and four hex digits, ``\U`` and eight) decoded, as
    SPARQL 1.1 has it done before a query is parsed (the engine kg uses now decodes them in strings and IRIs only)."""
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
    kg.sparql.QueryRefused: SERVICE (federated query) is refused: kg answers from this graph only and never contacts other servers.

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
    kg.sparql.QueryRejected: The query nests brackets more than 256 levels deep (line 1, column 266); the engine would overflow its stack. Flatten it.
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
