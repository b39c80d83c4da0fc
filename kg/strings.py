"""Strings as the explorer's script treats them, so that kg serve's Python and the page's
JavaScript (``viz/explorer/``) give one answer: JavaScript's white space, a name folded for search,
a label cut to a length, and text in JavaScript's order. ``tests/test_twin_parity.py`` holds the
two sides equal. Then what the terminal is shown: counts of things (:func:`counted`) and text
with its control characters escaped (:func:`printable`).

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


def counted(count: int, noun: str, plural: str = "") -> str:
    """``count`` with thousands separators and ``noun``, in the plural (``plural``, or ``noun`` and
    an s) unless ``count`` is 1: how every message a person reads counts things.

    >>> counted(1, "record"), counted(2795, "paper"), counted(0, "entity", "entities")
    ('1 record', '2,795 papers', '0 entities')
    """
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def _control_escapes() -> dict[int, str]:
    """The table :func:`printable` translates with: every C0 control but tab and newline, DEL, and
    every C1 control, each to its ``\\x..`` spelling."""
    controls = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
    return {code: f"\\x{code:02x}" for code in controls if chr(code) not in "\t\n"}


_CONTROL_ESCAPES = _control_escapes()


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: the C0 controls but tab and newline, DEL and the C1
    controls are shown as ``\\x..``, so data (a title, a label, a sentence) cannot move the cursor,
    change colours, ring the bell or hide a link (ESC ] 8) on the screen of whoever reads it.

    A carriage return that ends a line (``\\r\\n``) is a line end, not a control, and stays: alone,
    it would let a text overwrite the line it is printed on. One pass over the text, no regex.

    >>> printable("Title\\x1b]8;;http://evil/\\x07click\\x1b]8;;\\x07\\x1b[31m")
    'Title\\\\x1b]8;;http://evil/\\\\x07click\\\\x1b]8;;\\\\x07\\\\x1b[31m'
    >>> printable("a\\tb\\r\\nc\\rd\\x9be"), printable("café → ok")
    ('a\\tb\\r\\nc\\\\x0dd\\\\x9be', 'café → ok')
    """
    return "\r\n".join(part.translate(_CONTROL_ESCAPES) for part in text.split("\r\n"))


#: DEL and the C1 controls as JSON escapes: ``json.dumps(..., ensure_ascii=False)`` escapes only
#: U+0000 to U+001F and leaves these raw, and some terminals act on U+009B (CSI) as on ESC [.
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def printable_json(text: str) -> str:
    """JSON text (as ``json.dumps`` writes it) with DEL and the C1 controls escaped too, which leaves
    the same JSON value: those characters occur only inside its strings, where ``\\u0085`` means them.

    >>> import json
    >>> printable_json(json.dumps({"t": "a\\x1bb\\x9bc"}, ensure_ascii=False))
    '{"t": "a\\\\u001bb\\\\u009bc"}'
    >>> json.loads(printable_json(json.dumps(["\\x7f\\x85"], ensure_ascii=False))) == ["\\x7f\\x85"]
    True
    """
    return text.translate(_JSON_ESCAPES)
