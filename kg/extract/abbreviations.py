"""Acronym definitions: "Group Relative Policy Optimization (GRPO)".

The algorithm is Schwartz & Hearst (2003), "A simple algorithm for
identifying abbreviation definitions in biomedical text", PSB 2003: match the
short form's characters right to left inside the words before it, the first
character at a word start. ``best_long_form`` is that algorithm on plain
strings; ``find_abbreviations`` applies it to a parsed ``Doc`` in both
directions ("long (SHORT)" and "SHORT (long)") and snaps results to tokens.
"""
from __future__ import annotations

import re

from spacy.tokens import Doc, Span

_INTRODUCERS = {"abbreviated", "abbr", "short", "termed", "called", "dubbed", "named", "i.e.", "or"}


def best_long_form(short: str, candidate: str) -> str | None:
    """The shortest suffix of ``candidate`` whose letters spell ``short``, or None.

    >>> best_long_form("GRPO", "methods like Group Relative Policy Optimization")
    'Group Relative Policy Optimization'
    >>> best_long_form("E-GRPO", "we introduce Entity-aware Group Relative Policy Optimization")
    'Entity-aware Group Relative Policy Optimization'
    >>> best_long_form("LLMs", "Large Language Models") is not None
    True
    >>> best_long_form("XYZ", "large language models") is None
    True
    >>> best_long_form("MS-COCO", "MPII Human Pose (MHP), and Common Objects in Context") is None
    True
    """
    s = len(short) - 1
    i = len(candidate) - 1
    while s >= 0:
        char = short[s].lower()
        if not char.isalnum():
            s -= 1
            continue
        # The first character of the short form must start a word in the long form.
        while i >= 0 and (candidate[i].lower() != char or (s == 0 and i > 0 and candidate[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = i + 1
    while start > 0 and candidate[start - 1].isalnum():
        start -= 1
    long_form = candidate[start:].strip()
    if len(long_form) <= len(short) or short.lower() in long_form.lower().split():
        return None
    if any(mark in long_form for mark in "()[];") or re.search(r", (?:and|or) ", long_form):
        return None  # "MPII Human Pose (MHP), and Common Objects in Context": a list, not a name
    return long_form


def is_short_form(text: str) -> bool:
    """Whether ``text`` looks like an acronym: 2-10 characters, starts alphanumeric, has a capital.

    >>> [is_short_form(t) for t in ("GRPO", "LLMs", "E-GRPO", "the", "A")]
    [True, True, True, False, False]
    """
    return (
        2 <= len(text) <= 10
        and text[0].isalnum()
        and any(c.isupper() for c in text)
        and sum(c.isalpha() for c in text) >= 2
        and " " not in text
    )


def _snap(doc: Doc, start_char: int, end_char: int) -> Span | None:
    return doc.char_span(start_char, end_char, alignment_mode="expand")


def find_abbreviations(doc: Doc) -> list[tuple[Span, Span]]:
    """(short form, long form) pairs defined in ``doc``, as token spans.

    Both "long form (SHORT)" and "SHORT (long form)" are found; a short form
    introduced by "abbreviated as" or "termed" inside the brackets counts too, and so does one
    followed by "in short" or "for short".
    """
    pairs: list[tuple[Span, Span]] = []
    for open_token in doc:
        if open_token.text != "(":
            continue
        close = next((t for t in doc[open_token.i + 1 : open_token.i + 12] if t.text == ")"), None)
        if close is None or close.i == open_token.i + 1:
            continue
        inner = doc[open_token.i + 1 : close.i]
        sentence = open_token.sent
        words = [t for t in inner if not t.is_punct]
        if len(words) >= 2 and words[0].lower_ in _INTRODUCERS:
            words = words[-1:]
        elif len(words) == 3 and [w.lower_ for w in words[1:]] in (["in", "short"], ["for", "short"]):
            words = words[:1]  # "focal modulation networks (FocalNets in short)"
        if len(words) == 1 and is_short_form(words[0].text):
            short = words[0]
            max_words = min(len(short.text) + 5, 2 * len(short.text))
            window_start = max(sentence.start, open_token.i - max_words)
            before = doc[window_start : open_token.i]
            long_text = best_long_form(short.text, before.text)
            if long_text:
                end_char = before.end_char
                long_span = _snap(doc, end_char - len(long_text), end_char)
                if long_span is not None:
                    pairs.append((doc[short.i : short.i + 1], long_span))
        elif len(words) >= 2 and open_token.i > sentence.start:
            short = doc[open_token.i - 1]
            if is_short_form(short.text) and best_long_form(short.text, inner.text) == inner.text.strip():
                pairs.append((doc[short.i : short.i + 1], inner))
    return pairs
