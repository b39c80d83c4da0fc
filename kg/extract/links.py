"""Links: relations between the mentions of one abstract, read sentence by sentence.

A sentence names what a method is evaluated on ("yields improvements on
HELMET, LongBench, and RULER"), what it is for ("X for visual grounding"),
what it is compared with ("outperforms DPO"), what it is made of ("Its core
component is ADAGRPO") and what kind of thing something is ("LLMs such as
LLaMA-3"). The *actor* of a sentence, the method or model it is about, is the
proposed one when the sentence names it, else the grammatical subject. Both
ends of a link are named in its sentence, its evidence: that the paper's
proposal is evaluated on a dataset another sentence names is what the paper's
roles say (``proposes``, ``evaluatesOn``), and linking the two across
sentences cost precision on SciER dev (0.465 against 0.407).

The mentions are the rules' ``Candidate`` objects, their roles set;
any typed span will do, so the same rules score SciERC's gold entities.
"""
from __future__ import annotations

from collections import defaultdict

from spacy.tokens import Doc, Span

from ..model import Link
from ..vocab import ACTOR_TYPES, RELATION_TYPES
from .candidate import Candidate

_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_OUTPERFORM = {"outperform", "surpass", "beat", "exceed", "outperforms", "surpasses", "beats", "exceeds"}
_PART_CUES = {"component", "components", "module", "modules", "consist", "consists", "comprise", "comprises",
              "compose", "composed", "include", "includes", "incorporate", "incorporates", "integrate",
              "integrates", "contain", "contains"}
_EXAMPLE_CUES = (("such", "as"), ("including",), ("like",), ("e.g.",), ("e.g",), ("(", "e.g."), ("(", "e.g"),
                 ("(", "such", "as"), ("especially",), ("particularly",), ("namely",))
_EVALUATE_VERBS = {"evaluate", "test", "benchmark", "assess", "compare", "apply", "run", "train", "fine-tune"}
_PURPOSE = {"for", "to", "in", "towards", "toward"}


def main_proposal(mentions: list[Candidate]) -> int | None:
    """The paper's first proposed method or model: what "our method" and "experiments" are about."""
    return next((i for i, m in enumerate(mentions) if m.role == "proposes" and m.label in ACTOR_TYPES), None)


def sentence_actor(members: list[int], mentions: list[Candidate]) -> tuple[int | None, float]:
    """The method or model a sentence is about, and how sure that is.

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("The resultant MOBILERL-9B model achieves 80.2% on AndroidWorld.")
    >>> spans = [Candidate(doc[2:3], "Model", 0.7, "name", role="uses"),
    ...          Candidate(doc[9:10], "Dataset", 0.7, "name", role="evaluatesOn")]
    >>> sentence_actor([0, 1], spans)
    (0, 0.7)
    """
    actors = [i for i in members if mentions[i].label in ACTOR_TYPES and mentions[i].role != "comparesWith"]
    proposed = [i for i in actors if mentions[i].role == "proposes"]
    if proposed:
        return proposed[0], 0.75
    for i in actors:
        root = mentions[i].span.root
        while root.dep_ in ("compound", "amod", "appos", "conj") and root.head is not root:
            root = root.head
        if root.dep_ in _SUBJECT_DEPS:
            return i, 0.7
        # "We evaluate twelve LLMs ... on NeedleQA": what is evaluated is what the sentence is about.
        if root.dep_ == "dobj" and root.head.lemma_.lower() in _EVALUATE_VERBS:
            return i, 0.65
    return None, 0.0


def _is_outperform(span: Span) -> bool:
    return any(t.lower_ in _OUTPERFORM or t.lemma_.lower() in _OUTPERFORM
               for t in span.doc[span.sent.start : span.start])


def _comparison_subject(span: Span, mentions: list[Candidate], members: list[int]) -> int | None:
    """What a baseline is compared against: the subject of "outperforms", "surpasses", "beats" above it."""
    token = span.root
    for _ in range(4):
        if token.head is token:
            return None
        token = token.head
        if token.pos_ in ("VERB", "AUX"):
            break
    for child in token.children:
        if child.dep_ in _SUBJECT_DEPS:
            for i in members:
                if mentions[i].label in ACTOR_TYPES and mentions[i].span.start <= child.i < mentions[i].span.end:
                    return i
    return None


def _purpose_head(span: Span, mentions: list[Candidate], members: list[int]) -> int | None:
    """The method a task is for: "X for visual grounding", "we apply X to code generation"."""
    doc = span.doc
    root = span.root
    while root.dep_ in ("conj", "appos") and root.head is not root and root.head.i < root.i:
        root = root.head
    prep = root.head if root.dep_ == "pobj" else (doc[span.start - 1] if span.start > 0 else None)
    if prep is None or prep.lower_ not in _PURPOSE:
        return None
    governor = prep.head
    owners = [i for i in members if mentions[i].label in RELATION_TYPES["usedFor"][0]
              and mentions[i].span.start <= governor.i < mentions[i].span.end]
    if owners:
        return owners[0]
    if governor.pos_ in ("VERB", "AUX"):  # "we apply MOBILERL to ...", "X is used for ..."
        objects = [c for c in governor.children if c.dep_ in ("dobj", "nsubjpass", "nsubj")]
        for obj in objects:
            for i in members:
                if mentions[i].label in ACTOR_TYPES and mentions[i].span.start <= obj.i < mentions[i].span.end:
                    return i
    return None


def _examples(i: int, members: list[int], mentions: list[Candidate]) -> list[int]:
    """The mentions listed as examples of mention ``i``: "LLMs such as LLaMA-3 and Qwen2.5"."""
    doc = mentions[i].span.doc
    at = mentions[i].span.end
    if at < len(doc) and doc[at].text == ",":  # "twelve LLMs, including GPT-4o"
        at += 1
    for cue in _EXAMPLE_CUES:
        if [t.lower_ for t in doc[at : at + len(cue)]] == list(cue):
            at += len(cue)
            break
    else:
        return []
    starts = {mentions[j].span.start: j for j in members if mentions[j].span.start >= at}
    found = []
    while at in starts:
        j = starts[at]
        found.append(j)
        at = mentions[j].span.end
        while at < len(doc) and doc[at].lower_ in (",", "and", "or", ",", ";"):
            at += 1
    return found


def _whole(sentence: Span, members: list[int], mentions: list[Candidate]) -> tuple[int | None, float]:
    """What a sentence with a part cue is about: "In ADAGRPO, we design ...", "X consists of ..."."""
    tokens = list(sentence)
    if not any(t.lower_ in _PART_CUES for t in tokens) and not (tokens and tokens[0].lower_ in ("in", "within")):
        return None, 0.0
    if tokens[0].lower_ in ("in", "within"):
        first = [i for i in members if mentions[i].span.start == sentence.start + 1
                 and mentions[i].label in ACTOR_TYPES]
        if first and mentions[first[0]].span.end < sentence.end and sentence.doc[mentions[first[0]].span.end].text == ",":
            return first[0], 0.65
        return None, 0.0
    for i in members:
        root = mentions[i].span.root
        if mentions[i].label in ACTOR_TYPES and root.dep_ in _SUBJECT_DEPS and root.head.lower_ in _PART_CUES:
            return i, 0.65
    return None, 0.0


def find_links(doc: Doc, mentions: list[Candidate]) -> list[Link]:
    """The relations between ``mentions`` that the sentences of ``doc`` state, one ``Link`` each.

    Example
    -------
    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("We introduce LongFilter, which shows gains on RULER and HELMET.")
    >>> spans = [Candidate(doc[2:3], "Method", 0.75, "proposed-name", role="proposes"),
    ...          Candidate(doc[8:9], "Dataset", 0.7, "name", role="evaluatesOn"),
    ...          Candidate(doc[10:11], "Dataset", 0.7, "name", role="evaluatesOn")]
    >>> [(spans[l.head].span.text, l.relation, spans[l.tail].span.text) for l in find_links(doc, spans)]
    [('LongFilter', 'evaluatedOn', 'RULER'), ('LongFilter', 'evaluatedOn', 'HELMET')]
    """
    sentences = list(doc.sents)
    sentence_of = {t.i: n for n, sent in enumerate(sentences) for t in sent}
    members_of: dict[int, list[int]] = defaultdict(list)
    for i, m in enumerate(mentions):
        members_of[sentence_of[m.span.start]].append(i)
    links: dict[tuple[int, str, int], Link] = {}
    # "GRPO" inside "Difficulty-Adaptive GRPO" is part of that name, not a separate party to a relation.
    nested = {i for i, m in enumerate(mentions) for o in mentions
              if o is not m and o.span.start <= m.span.start and m.span.end <= o.span.end}

    def add(head: int | None, relation: str, tail: int, n: int, confidence: float) -> None:
        if head is None or head == tail or head in nested or tail in nested \
                or mentions[head].span.text == mentions[tail].span.text:
            return
        heads, tails = RELATION_TYPES[relation]
        if mentions[head].label not in heads or mentions[tail].label not in tails:
            return
        key = (head, relation, tail)
        if key not in links or links[key].confidence < confidence:
            links[key] = Link(head, relation, tail, n, round(confidence, 3))

    for n, sentence in enumerate(sentences):
        members = members_of.get(n, [])
        if not members:
            continue
        actor, sure = sentence_actor(members, mentions)
        whole, whole_sure = _whole(sentence, members, mentions)
        for i in members:
            m = mentions[i]
            if m.label == "Dataset" and m.role == "evaluatesOn":
                add(actor, "evaluatedOn", i, n, sure)
            elif m.label in ACTOR_TYPES and m.role == "comparesWith":
                relation = "outperforms" if _is_outperform(m.span) else "comparedWith"
                # Only with its rival named as the subject of "outperforms": a baseline linked to the
                # sentence's actor was right once in 12 on SciER dev.
                add(_comparison_subject(m.span, mentions, members), relation, i, n, 0.7)
            elif m.label == "Metric" and actor is not None:
                add(i, "evaluates", actor, n, sure * 0.9)
            elif m.label == "Task":
                owner = _purpose_head(m.span, mentions, members)
                if owner is not None:
                    add(owner, "usedFor", i, n, 0.65)
                elif actor is not None and mentions[actor].span.sent == sentence and m.role == "addresses":
                    add(actor, "usedFor", i, n, 0.45)
            if m.label in ACTOR_TYPES and whole is not None and i != whole and m.role not in ("comparesWith",) \
                    and m.span.start > mentions[whole].span.start:
                add(i, "partOf", whole, n, whole_sure)
            for example in _examples(i, members, mentions):
                add(example, "hyponymOf", i, n, 0.7)
    return sorted(links.values(), key=lambda l: (l.sentence, mentions[l.tail].span.start, l.head, l.relation))
