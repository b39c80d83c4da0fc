r"""Markup cleaning that remembers where every character came from.

Abstracts carry LaTeX (``$K$``, ``\textit{x}``, ``N\"uwa``, ``\ie``) and
Markdown (``**bold**``, ``*em*``). Extraction reads the clean text; evidence
must point into the original. ``clean`` returns both the clean text and, for
each clean character, its offset in the original.

>>> c = clean(r"we propose N\"uwa, a **two-stage** method")
>>> c.text
'we propose Nüwa, a two-stage method'
>>> c.original_span(11, 15)
(11, 17)
"""
from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

_ACCENTS = {'"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "c": "\u0327", "=": "\u0304"}
_WORD_COMMANDS = {
    "ie": "i.e.", "eg": "e.g.", "etal": "et al.", "etc": "etc.", "vs": "vs.",
    "ldots": "...", "dots": "...", "cdots": "...", "times": "x", "approx": "~",
    "le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "pm": "+/-", "to": "->",
    "rightarrow": "->", "alpha": "alpha", "beta": "beta", "gamma": "gamma",
    "lambda": "lambda", "epsilon": "epsilon", "mu": "mu", "sigma": "sigma",
    "theta": "theta", "pi": "pi", "%": "%", "&": "&", "_": "_", "#": "#", "$": "$",
}
# Commands whose braced argument is text to keep, markup removed.
_TEXT_COMMANDS = {"textit", "textbf", "emph", "texttt", "textsc", "text", "mathrm", "mathbf",
                  "mathit", "mathcal", "mathbb", "textrm", "textsf", "underline", "operatorname"}

#: Characters that change how text around them is shown without being seen: bidirectional
#: overrides, embeddings and isolates (an RTL override turns "override" into "edirrevo"), and
#: zero-width spaces and joiners ("Z\u200bero\u200dNet" looks like ZeroNet but is another string).
INVISIBLE = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")

_TOKEN = re.compile(
    r"""\\(?P<accent>["'`^~=]|c(?=\{))\s*(?:\{(?P<acc_braced>[A-Za-z])\}|(?P<acc_bare>[A-Za-z]))"""
    r"""|\\(?P<cmd>[A-Za-z]+|[%&_#$])(?:\s*(?P<open>\{))?"""
    r"""|(?P<md>\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|`)"""
    r"""|(?P<entity>&(?:[A-Za-z][A-Za-z0-9]{1,31}|\#[0-9]{1,7}|\#[xX][0-9A-Fa-f]{1,6});)"""
    r"""|(?P<control>[\x00-\x08\x0b\x0c\x0e-\x1f\x7f""" + INVISIBLE + "])"
    r"""|(?P<hyphenation>(?<=[a-z])-\s+(?=[a-z])(?!(?:and|or|nor|to|vs)\b))"""  # "gen- erative"
    r"""|(?P<dollar>\$)"""
    r"""|(?P<brace>[{}])"""
    r"""|(?P<space>\s{2,}|[^\S ])"""  # single spaces are plain text: no match per word
)


@dataclass
class CleanText:
    """Clean text, and for each clean character ``i`` the original span
    ``[offsets[i], ends[i])`` it came from (one character, or a whole ``&eacute;``)."""

    text: str
    offsets: list[int]
    ends: list[int]
    original: str

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map a clean ``[start, end)`` span to the smallest original span that holds it."""
        if start >= end:
            position = self.offsets[start] if start < len(self.offsets) else len(self.original)
            return position, position
        return self.offsets[start], self.ends[end - 1]


def clean(original: str) -> CleanText:
    """Strip LaTeX and Markdown markup, keeping an offset map into ``original``.

    Math (``$...$``) keeps its content, since names such as ``$K$`` or
    ``$\\pi_0$`` are text. HTML entities (``&amp;``) are decoded, control and
    invisible format characters (:data:`INVISIBLE`) dropped, whitespace runs
    (newlines included) become one space, and a word hyphenated across a line
    break is one word again ("gen- erative"; not "pre- and post-training").

    >>> clean("gen- erative and neural net-\\nworks, pre- and post-training").text
    'generative and neural networks, pre- and post-training'
    """
    pieces: list[str] = []
    offsets: list[int] = []
    ends: list[int] = []

    def emit(text: str, at: int, until: int) -> None:
        pieces.append(text)
        offsets.extend([at] * len(text))
        ends.extend([until] * len(text))

    def copy(start: int, stop: int) -> None:  # plain text, one original character per clean one
        if start < stop:
            pieces.append(original[start:stop])
            offsets.extend(range(start, stop))
            ends.extend(range(start + 1, stop + 1))

    position = 0
    for match in _TOKEN.finditer(original):
        copy(position, match.start())
        position = match.end()
        kind = match.lastgroup
        if match.group("accent"):
            base = match.group("acc_braced") or match.group("acc_bare")
            emit(unicodedata.normalize("NFC", base + _ACCENTS[match.group("accent")]), match.start(), match.end())
        elif match.group("cmd"):
            name = match.group("cmd")
            if name in _WORD_COMMANDS:
                emit(_WORD_COMMANDS[name], match.start(), match.end())
            elif name not in _TEXT_COMMANDS and match.group("open") is None:
                emit(name, match.start() + 1, match.end())  # an unknown bare command: keep its name as a word
        elif match.group("entity"):
            emit(html.unescape(match.group("entity")), match.start(), match.end())
        elif kind == "space":
            if pieces and not pieces[-1].endswith(" "):
                emit(" ", match.start(), match.start() + 1)
        # markdown emphasis, math dollars, braces and control characters vanish
    copy(position, len(original))
    text = "".join(pieces)
    # Trim spaces left at either end by removed markup.
    start, stop = len(text) - len(text.lstrip(" ")), len(text.rstrip(" "))
    return CleanText(text[start:stop], offsets[start:stop], ends[start:stop], original)


def plain_label(text: str) -> str:
    r"""``text`` as a name to show: invisible format characters removed, whitespace runs made one space.

    >>> plain_label("LTR \u202eoverride\u202c and Z\u200bero\u200dNet\n")
    'LTR override and ZeroNet'
    """
    return " ".join(_INVISIBLE.sub("", text).split())


def normalize_for_id(text: str) -> str:
    """The text an id is derived from: case, markup and whitespace differences removed.

    >>> normalize_for_id("  We **propose**  X.") == normalize_for_id("we propose X.")
    True
    """
    return " ".join(unicodedata.normalize("NFKC", clean(text).text).casefold().split())
