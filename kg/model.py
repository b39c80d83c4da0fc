"""The data that flows through the pipeline, one dataclass per stage's output.

ingest -> ``Paper``; extract -> ``PaperExtraction`` (with ``Mention``,
``Link`` and ``Result``); resolve -> ``Entity``; relations ->
``Relation``. Every type is plain data that round-trips
through JSON, so a ``PaperExtraction`` can be cached or computed in another
process.
"""
from __future__ import annotations

import base64
import sys
from array import array
from dataclasses import asdict, dataclass, field
from sys import intern


@dataclass(frozen=True)
class Source:
    """Where a record came from: a file and the line (or record number) in it."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Paper:
    """One abstract and what its source says about it.

    ``abstract`` is the original text, markup included: every offset stored
    elsewhere points into it.
    """

    id: str
    abstract: str
    title: str = ""
    venue: str = ""
    year: int | None = None
    authors: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    url: str = ""
    #: The decision on the paper as its source writes it ("Accept (Poster)", "Reject"), or a code
    #: the user mapped with ``--set FILE decisions=...``; kg never guesses what a code means.
    decision: str = ""
    source: Source | None = None


@dataclass(slots=True)
class Mention:
    """A span of a paper's abstract that names a task, method, dataset, metric or model.

    ``start``/``end`` are character offsets into ``Paper.abstract`` (the
    original text), so ``paper.abstract[m.start:m.end]`` is the mention as
    written. ``text`` is the same span with markup removed. ``role`` is what
    the paper does with the thing the mention names (kg:proposes, kg:uses,
    ...), with its own ``role_confidence``; a mention with no role (``""``)
    puts no edge in the graph.
    """

    start: int
    end: int
    text: str
    label: str
    sentence: int
    confidence: float
    extractor: str
    #: The long form when this mention is an acronym defined in the paper, or
    #: the acronym when it is a long form followed by one.
    acronym_of: str = ""
    role: str = ""
    role_confidence: float = 0.0
    #: The rule that found it ("abbreviation-short", "name", "ner", ...; "gold" for given entities).
    rule: str = ""


@dataclass(slots=True)
class Link:
    """A relation between two mentions of one paper (``head`` usedFor ``tail``), read from one sentence.

    ``sentence`` is the sentence that states it; it holds ``tail`` and
    usually ``head``, which may instead be the paper's own proposal named
    earlier ("Experiments ... show gains on RULER" after "we introduce LongFilter").
    """

    head: int  # index into PaperExtraction.mentions
    relation: str  # one of vocab.RELATIONS
    tail: int
    sentence: int
    confidence: float


@dataclass(slots=True)
class Result:
    """A score an abstract reports: "MOBILERL-9B ... success rates ... AndroidWorld (80.2%)".

    ``start``/``end`` point at the value as written; ``metric``, ``dataset``
    and ``subject`` are indices into the paper's mentions (None when the
    sentence does not say). ``previous`` is X in "from X to Y". ``kind`` is
    "score" for a reached value, "gain" for an improvement ("by 12%").
    ``setting`` names what makes the score incomparable with a standard one
    ("zero-shot", "adversarial": :mod:`kg.extract.settings`), "" for none.
    """

    start: int
    end: int
    value: float
    unit: str
    sentence: int
    metric: int | None
    dataset: int | None
    subject: int | None
    previous: float | None
    kind: str
    confidence: float
    setting: str = ""


@dataclass
class PaperExtraction:
    """Everything the extract stage learned from one paper, with no corpus-wide state."""

    paper: Paper
    sentences: list[tuple[int, int]]  # (start, end) of each sentence in the original abstract
    mentions: list[Mention]
    acronyms: dict[str, str]  # short form -> long form, as defined in this paper
    links: list[Link] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    #: Pairs of mentions a sentence states are one thing ("CNNs Synonym-Of convolutional neural
    #: networks", from the span model): (mention, mention, probability). Evidence resolution weighs.
    synonyms: list[tuple[int, int, float]] = field(default_factory=list)
    #: The parse's tokens, so that later stages read the abstract without cleaning or tokenizing it
    #: again: each token's text with its trailing space, joined by "\x1f", and (``token_spans``) each
    #: token's start and end in the original abstract, as little-endian uint32 pairs in base64
    #: (a few kB a paper, where lists of ints would take tens). See :meth:`token_list`.
    tokens: str = ""
    token_spans: str = ""
    #: What the span model's encoder read in each mention and around it, packed as base64
    #: (:func:`kg.similarity.pack_contexts`): the build pools them into the entities' vectors.
    contexts: str = ""

    def token_list(self) -> tuple[list[str], array]:
        """The tokens (each with its trailing space, if any) and their flat ``[start, end, ...]``
        offsets in the original abstract (an ``array`` of unsigned ints, as compact as stored)."""
        words = self.tokens.split("\x1f") if self.tokens else []
        spans = array("I")
        spans.frombytes(base64.b64decode(self.token_spans))
        if sys.byteorder == "big":
            spans.byteswap()
        return words, spans

    @staticmethod
    def pack_tokens(words: list[str], spans: list[int]) -> tuple[str, str]:
        """``tokens`` and ``token_spans`` for ``words`` and their flat offsets (see :meth:`token_list`)."""
        packed = array("I", spans)
        if sys.byteorder == "big":
            packed.byteswap()
        return "\x1f".join(words), base64.b64encode(packed.tobytes()).decode("ascii")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "PaperExtraction":
        if "roles" in data:
            raise ValueError("an extraction in the old form (roles listed apart from the mentions) "
                             "cannot be read: extract the paper again")
        paper = dict(data["paper"])
        if paper.get("source"):
            paper["source"] = Source(**paper["source"])
        # JSON gives every mention its own copy of strings that recur in every paper ("Method",
        # the extractor's name, the role): one shared copy keeps a 100k-paper corpus in memory.
        # ("span": an always-empty field the mentions of extractions cached by earlier versions carry.)
        mentions = [Mention(**{**{k: v for k, v in m.items() if k != "span"}, "label": intern(m["label"]),
                               "extractor": intern(m["extractor"]), "role": intern(m["role"])})
                    for m in data["mentions"]]
        return cls(
            paper=Paper(**paper),
            sentences=[tuple(s) for s in data["sentences"]],
            mentions=mentions,
            acronyms=dict(data["acronyms"]),
            links=[Link(**link) for link in data.get("links", ())],
            results=[Result(**result) for result in data.get("results", ())],
            synonyms=[tuple(pair) for pair in data.get("synonyms", ())],
            tokens=data.get("tokens", ""),
            token_spans=data.get("token_spans", ""),
            contexts=data.get("contexts", ""),
        )


@dataclass
class Entity:
    """One real-world task, method, dataset, metric or model, resolved across papers."""

    key: str  # the resolution key; stable across runs, used to mint the IRI
    type: str
    label: str
    aliases: list[str]
    mentions: list[tuple[str, int]]  # (paper id, index into that paper's mentions)


@dataclass
class Relation:
    """A typed link between two entities (e.g. ``variantOf``) and the mention that shows it.

    One per paper that states it: the graph merges them into one edge whose
    support is the number of papers.
    """

    source: str  # entity key
    relation: str
    target: str  # entity key
    confidence: float
    evidence: tuple[str, int]  # (paper id, index into that paper's mentions)
    sentence: int | None = None  # the sentence that states it, when not the evidence mention's own
    rule: str = ""  # the rule that made a hierarchy link (kg.link.concepts.RULES); its statement's extractor
