"""Strings as the explorer's script treats them, so that kg serve's Python and the page's
JavaScript (``viz/explorer/``) give one answer: JavaScript's white space, a name folded for search,
a label cut to a length, and text in JavaScript's order. ``tests/test_twin_parity.py`` holds the
two sides equal.

Python's ``str.split()`` and ``str.casefold()`` are not JavaScript's ``/\\s+/`` and
``toLowerCase()``: ``"a\\x1cb".split()`` cuts at U+001C, which JavaScript keeps, and ``"ß"``
casefolds to ``"ss"``, which JavaScript leaves. Here is JavaScript's rule, written once.
"""
from __future__ import annotations

import re

#: The characters JavaScript's ``\\s`` matches (ECMAScript's WhiteSpace and LineTerminator).
JS_SPACE = "\t\n\v\f\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACES = re.compile(f"[{re.escape(JS_SPACE)}]+")


def fold(name: str) -> str:
    """``name`` as search compares it: runs of white space as one space, trimmed, lower-cased
    (``fold`` in ``viz/explorer/search.js``).

    >>> fold("  Group  Relative\\tPolicy ") , fold("STRASSE"), fold("straße")
    ('group relative policy', 'strasse', 'straße')
    """
    return " ".join(part for part in _SPACES.split(name) if part).lower()


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` code points with an ellipsis, the space before it trimmed
    (``truncate`` in ``viz/explorer/dom.js``).

    >>> truncate("large language models", 10), truncate("large language models", 7), truncate("short", 10)
    ('large lan…', 'large…', 'short')
    """
    return text if len(text) <= limit else text[: limit - 1].rstrip(JS_SPACE) + "…"


def js_order(text: str) -> bytes:
    """A sort key that orders text as JavaScript's ``<`` does: by UTF-16 code unit, not by code point.

    >>> sorted(["Ａ", "😀"]), sorted(["Ａ", "😀"], key=js_order)
    (['Ａ', '😀'], ['😀', 'Ａ'])
    """
    return text.encode("utf-16-be", "surrogatepass")
