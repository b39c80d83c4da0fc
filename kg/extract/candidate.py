"""A mention as the extract stage finds it: a span of the parsed abstract, before it is placed in
the original text.

The rules (:mod:`.rules`, :mod:`.roles`) make candidates, choose among them, give each its role,
and read links and results between them, all in token terms. Placing them in the abstract
(:func:`kg.extract.place`) makes each a :class:`kg.model.Mention`, whole: offsets into the original
text, its sentence, the extractor, and no parse.
"""
from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Span


@dataclass(eq=False)  # one candidate is one span found: compared by identity
class Candidate:
    """A span of a parsed abstract that names a task, method, dataset, metric or model.

    >>> class Span: text = "CIFAR-10"
    >>> Candidate(Span(), "Dataset", 0.7, "name").text
    'CIFAR-10'
    """

    span: Span
    label: str
    confidence: float
    #: The rule that found it ("abbreviation-short", "name", "ner", ...; "gold" for given entities).
    rule: str
    #: The long form when this is an acronym the paper defines, or the acronym when it is a long form followed by one.
    acronym_of: str = ""
    #: What the paper does with what it names (kg:proposes, kg:uses, ...), and how sure that is.
    role: str = ""
    role_confidence: float = 0.0

    @property
    def text(self) -> str:
        return self.span.text
