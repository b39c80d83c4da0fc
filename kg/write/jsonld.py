"""The export's compacted JSON-LD, written by hand, one node object per line.

:class:`JsonLd` turns the mapping's blocks (:data:`kg.write.triples.Block`: a subject and its sorted
pairs) into node objects, chunk by chunk, with the prefixes of :data:`kg.vocab.NAMESPACES` as
the context, ``rdf:type`` as ``@type`` and typed literals as ``{"@value", "@type"}``; its
caller is :func:`kg.write.serialize.write_rdf`.
"""
from __future__ import annotations

import json
import re
from json.encoder import encode_basestring as _json_string

from rdflib.namespace import RDF

from .triples import Block

__all__ = ["JsonLd"]

_TYPE = str(RDF.type)


class JsonLd:
    """Compacted JSON-LD: our prefixes as the context, one node object per block.

    An IRI under a prefix is written ``prefix:local``; any other in full. One
    written in full whose scheme is a prefix (a paper URL ``schema:x``) would
    be read back as a compact IRI, so a node holding one is written with
    ``"@context": null`` and every IRI in full.

    Example
    -------
    >>> jsonld = JsonLd({"ex": "https://example.org/"})
    >>> count = ("1", "http://www.w3.org/2001/XMLSchema#integer", None)
    >>> print(jsonld.node(("https://example.org/a", [(_TYPE, "https://example.org/C"), ("https://example.org/n", count)])))
    {"@id": "ex:a", "@type": "ex:C", "ex:n": {"@value": "1", "@type": "http://www.w3.org/2001/XMLSchema#integer"}}
    >>> print(jsonld.node(("https://example.org/a", [("https://example.org/url", "ex:b")])))
    {"@context": null, "@id": "https://example.org/a", "https://example.org/url": {"@id": "ex:b"}}
    """

    def __init__(self, prefixes: dict[str, str]):
        self.prefixes = dict(sorted(prefixes.items()))
        self.prefix_of = {ns: prefix for prefix, ns in self.prefixes.items()}
        # Longest namespace first: the first alternative that matches wins.
        namespaces = sorted(self.prefix_of, key=len, reverse=True)
        self.compactable = re.compile("|".join(map(re.escape, namespaces)))
        self.misread = re.compile("(?:" + "|".join(map(re.escape, self.prefixes)) + "):(?!//)")
        self.vocabulary: dict[str, str] = {}  # JSON of compacted predicates, classes and datatypes
        self.recent: dict[str, str] = {}  # JSON of other compacted IRIs: a paper's recur in its statements
        self.limit = 50_000

    def head(self) -> bytes:
        context = json.dumps(self.prefixes, ensure_ascii=False, indent=2).replace("\n", "\n  ")
        return f'{{\n  "@context": {context},\n  "@graph": [\n'.encode()

    @staticmethod
    def tail() -> bytes:
        return b"\n  ]\n}\n"

    def node(self, block: Block) -> str:
        try:
            return self._node(block, compact=True)
        except _Misread:
            return self._node(block, compact=False)

    def compact(self, iri: str) -> str:
        match = self.compactable.match(iri)
        if match and not iri.startswith("//", match.end()):
            return f"{self.prefix_of[match.group()]}:{iri[match.end():]}"
        if self.misread.match(iri):
            raise _Misread(iri)
        return iri

    def _iri(self, iri: str) -> str:
        text = self.recent.get(iri)
        if text is None:
            if len(self.recent) >= self.limit:
                self.recent.clear()
            text = self.recent[iri] = _json_string(self.compact(iri))
        return text

    def _word(self, iri: str) -> str:
        text = self.vocabulary.get(iri)
        if text is None:
            text = self.vocabulary[iri] = _json_string(self.compact(iri))
        return text

    def _node(self, block: Block, *, compact: bool) -> str:
        # The hottest loop of the JSON-LD: lookups inlined. Written in full,
        # nothing is cached (there is no cache to read either).
        subject, pairs = block
        if compact:
            iri, word, recent, vocabulary = self._iri, self._word, self.recent, self.vocabulary
            parts = []
        else:
            iri, word, recent, vocabulary = _json_string, _json_string, {}, {}
            parts = ['"@context": null']
        parts.append('"@id": ' + iri(subject))
        types: list[str] = []
        properties: dict[str, list[str]] = {}
        for p, o in pairs:
            if isinstance(o, str):
                if p == _TYPE and not o.startswith("_:"):
                    types.append(vocabulary.get(o) or word(o))
                    continue
                value = f'{{"@id": {recent.get(o) or iri(o)}}}'
            elif o[2] is not None:
                value = f'{{"@value": {_json_string(o[0])}, "@language": {_json_string(o[2])}}}'
            elif o[1] is None:
                value = _json_string(o[0])
            else:
                value = f'{{"@value": {_json_string(o[0])}, "@type": {vocabulary.get(o[1]) or word(o[1])}}}'
            key = vocabulary.get(p) or word(p)
            values = properties.get(key)
            if values is None:
                properties[key] = [value]
            else:
                values.append(value)
        if types:
            parts.append('"@type": ' + _json_list(types))
        for key, values in properties.items():
            parts.append(f"{key}: {_json_list(values)}")
        return "{" + ", ".join(parts) + "}"


def _json_list(values: list[str]) -> str:
    return values[0] if len(values) == 1 else "[" + ", ".join(values) + "]"


class _Misread(Exception):
    """An IRI that compacted JSON-LD would misread (see :class:`JsonLd`)."""
