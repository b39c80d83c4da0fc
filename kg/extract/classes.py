"""Classes of methods: the kinds papers share, named by phrases the span model was not taught.

SciER's guideline leaves classes of methods unannotated ("diffusion models", "contrastive
learning", "instruction tuning", "LLM-as-a-judge"), so the span model trained on it seldom marks
them, yet they are what joins today's papers. This rule reads them from the parse:

- a noun phrase whose head says it is a kind of method (:data:`CLASS_HEADS`) and whose words
  before the head say which kind: "consistency models", "contrastive learning",
  "vision-language models", "mixture-of-experts models";
- two such phrases sharing the head, kept whole ("diffusion and flow-based models"): the concept
  stage (:mod:`kg.link.concepts`) makes each conjunct a concept;
- a paradigm written as one hyphenated word with a function word inside ("LLM-as-a-judge",
  "chain-of-thought", "mixture-of-experts"), used as a noun or before a generic word
  ("LLM-as-a-judge performance").

Its mentions are a layer of their own (:data:`RULES`): chosen after every other source, never a
paper's proposal (a class is no one's contribution), and left out where kg is scored on SciER,
whose guideline does not annotate them. Each check reads a fixed window of tokens: linear in the text.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from .. import lexicon
from .candidate import Candidate

#: The rules of this layer: a phrase, a coordination of two, and the span model's own second layer
#: (its MethodClass and TaskClass, learned from kg's annotated abstracts: ``kg.extract.rules``).
RULES = frozenset({"class", "class-coordination", "class-model"})

#: Heads of a phrase that names a kind of method by what comes before them.
CLASS_HEADS = frozenset("""
model network learning tuning fine-tuning finetuning prompting distillation transformer autoencoder
gan diffusion sampling decoding augmentation training agent
""".split())
#: Words before a head that name a role or a place in the pipeline, not a kind: "the base model",
#: "a teacher network", "downstream models".
_ROLE_WORDS = frozenset("""
base teacher student target source reference backbone downstream upstream baseline proxy surrogate
victim donor host final initial full original trained learned resulting pretrained-only black-box
white-box open-source closed-source state-of-the-art sota vanilla naive toy optimal primary related
representative canonical fitted potential
""".split())
#: Function words that may sit inside a hyphenated paradigm: "LLM-as-a-judge", "chain-of-thought".
_INNER = frozenset("as a an of to in for by with the".split())
#: A class mention's confidence: below the span model's, so that where both type one name (the
#: model reads "machine learning" as a task), the model's type stands.
CONFIDENCE = 0.5
#: Longest phrase read, in words before the head.
_MAX_MODIFIERS = 3


def _joined(a: Token, b: Token) -> bool:
    """Whether two neighbouring tokens are written as one word ("flow", "-", "based")."""
    return a.i + 1 == b.i and not a.whitespace_


def _hyphen_word(doc: Doc, i: int) -> tuple[int, int]:
    """The hyphenated word token ``i`` is part of, as ``(start, end)`` token indices:
    "LLM - as - a - judge" is one word where no space parts them."""
    start = end = i
    while start >= 2 and doc[start - 1].text == "-" and _joined(doc[start - 2], doc[start - 1]) \
            and _joined(doc[start - 1], doc[start]) and end - start < 12:
        start -= 2
    while end + 2 < len(doc) and doc[end + 1].text == "-" and _joined(doc[end], doc[end + 1]) \
            and _joined(doc[end + 1], doc[end + 2]) and end - start < 12:
        end += 2
    return start, end + 1


def _is_paradigm(tokens: Span) -> bool:
    """A hyphenated word of three or more parts that opens with a noun and has a function word
    inside, neither evaluative nor a repeat: "LLM-as-a-judge", "chain-of-thought",
    "mixture-of-experts"; not "state-of-the-art", "end-to-end", "out-of-distribution",
    "plug-and-play" (a pair, not a paradigm) or "off-the-shelf"."""
    words = tokens.text.split("-")  # "LLM-as-a-Judge" is tokenized "LLM", "-", "as", "-", "a-Judge"
    return (len(words) >= 3 and tokens[0].pos_ in ("NOUN", "PROPN")
            and any(w.lower() in _INNER for w in words[1:-1])
            and words[-1].lower() not in _INNER and words[0].lower() != words[-1].lower()
            and tokens.text.lower().rstrip("s") not in lexicon.EVALUATIVE and words[0].isalnum() and words[-1].isalpha())


#: Endings of adjectives that say which kind ("contrastive", "variational", "probabilistic",
#: "recurrent"), where "fast", "larger" or "entire" say how good or how much.
_KIND_ENDINGS = ("al", "ic", "ive", "ous", "ary", "ar", "ent", "ant", "ian")


def _adds_nothing(token: Token) -> bool:
    """A word after a paradigm that adds nothing to it: "performance", "models", "paradigm"."""
    return token.lemma_.lower() in lexicon.GENERIC_HEADS or token.lower_ in ("models", "paradigm", "paradigms")


def _modifier_ok(token: Token) -> bool:
    """Whether a word before a class head can say which kind it is: a noun ("consistency"), a
    participle ("pretrained"), an adjective of kind ("contrastive"); not a verb the parser misread,
    a comparative, nor a word that evaluates ("efficient", "inefficient") or places ("existing")."""
    text = token.lower_
    if token.text == "-":
        return True
    if not any(c.isalpha() for c in token.text) or token.is_stop and not token.text.isupper():
        return False
    if (text in lexicon.EVALUATIVE or text in lexicon.PAPER_RELATIVE or text in _ROLE_WORDS
            or text in lexicon.IDIOM_STARTS or token.lemma_.lower() in lexicon.GENERIC_HEADS
            or text[2:] in lexicon.EVALUATIVE and text[:2] in ("in", "un")):
        return False
    if token.tag_ in ("JJR", "JJS", "RBR", "RBS"):
        return False
    if token.pos_ == "VERB":
        return token.tag_ == "VBN"  # "pretrained", "supervised"; not "train", "enables", "performing"
    if token.pos_ == "ADJ":
        return text.endswith(_KIND_ENDINGS) or token.tag_ == "VBN"
    return token.pos_ in ("NOUN", "PROPN")


def _class_span(doc: Doc, start: int, end: int) -> Span | None:
    """The phrase ending at the class head ``doc[start:end]`` (one word, hyphenated or not): the words
    before it that say which kind, at most :data:`_MAX_MODIFIERS` (a hyphenated word counts once),
    or None where none does."""
    words = 0
    while start > 0 and words < _MAX_MODIFIERS:
        first, last = _hyphen_word(doc, start - 1)
        parts = doc[first:last].text.split("-")
        if last - first > 1:  # "flow-based", "vision-language", "text-to-image"; not "end-to-end"
            inner = any(p.lower() in _INNER for p in parts[1:-1])
            if (inner and not _is_paradigm(doc[first:last]) or parts[0].lower() in _INNER
                    or not all(_modifier_ok(t) or t.lower_ in _INNER for t in doc[first:last] if t.text != "-")):
                break
        elif not _modifier_ok(doc[first]) or doc[first].head.i < first:
            break  # a modifier attaches to what follows it
        start = first
        words += 1
    if words and start > 0 and doc[start - 1].lower_ in ("we", "they", "i"):
        start = _hyphen_word(doc, start)[1]  # "We fine-tune vision-language models": a verb, misread
        words -= 1
    if not words:
        return None
    span = doc[start:end]
    return None if span.text.lower() in lexicon.EVALUATIVE or span.text.lower().rstrip("s") in lexicon.EVALUATIVE else span


def _coordination(doc: Doc, span: Span) -> Span | None:
    """"Diffusion and flow-based models": a word or two, "and"/"or", before a class phrase whose
    head they share, as one span."""
    at = span.start - 1
    if at < 1 or doc[at].lower_ not in ("and", "or"):
        return None
    first = at
    while first > 0 and at - first < 2 and _modifier_ok(doc[first - 1]) and doc[first - 1].text != "-":
        first -= 1
    if first < at and doc[first].text == "-" or first > 0 and doc[first - 1].text == "-":
        return None  # "point-based and sequence-based models": a hyphenated conjunct, which this does not read
    if first == at or first > 0 and doc[first - 1].lower_ in (",", "and", "or"):
        return None  # nothing before "and", or a list of three: "A, B and C models"
    if any(t.text[:1].isupper() and not t.is_sent_start or t.text[1:] != t.text[1:].lower() for t in doc[first : span.end]):
        return None  # "Stable Diffusion-XL and Stable Diffusion", "LLMs and ...": names, which the name rules read
    if at - first > 1 and doc[at - 1].lemma_.lower() in CLASS_HEADS:
        return None  # "instruction tuning and contrastive learning": two heads, two phrases
    return doc[first : span.end]


def find_class_mentions(doc: Doc) -> list[Candidate]:
    """The classes of methods ``doc`` names, as candidates of :data:`RULES`.

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline(ner=False)("Diffusion and flow-based models are strong. "
    ...                                "We study the paradigm of LLM-as-a-judge with contrastive learning.")
    >>> [(c.text, c.rule) for c in find_class_mentions(doc)]
    [('Diffusion and flow-based models', 'class-coordination'), ('LLM-as-a-judge', 'class'), ('contrastive learning', 'class')]
    """
    found = []
    i = 0
    while i < len(doc):
        start, end = _hyphen_word(doc, i)
        i = end
        after = doc[end] if end < len(doc) else None
        if end - start > 2 and _is_paradigm(doc[start:end]):
            # Used as a noun, or before a word that adds nothing ("LLM-as-a-judge performance",
            # "LLM-as-a-Judge models"), it is the paradigm; before another noun, it says which kind.
            if after is None or after.pos_ not in ("NOUN", "PROPN") or _adds_nothing(after):
                found.append(Candidate(doc[start:end], "Method", CONFIDENCE, "class"))
                i = end + 1 if after is not None and _adds_nothing(after) else end
                continue
        head = doc[end - 1]
        if head.pos_ not in ("NOUN", "PROPN") or not {head.lemma_.lower(), head.lower_, doc[start:end].text.lower()} & CLASS_HEADS:
            continue
        if after is not None and after.pos_ in ("NOUN", "PROPN"):
            continue  # "diffusion model training": the phrase goes on past this head
        span = _class_span(doc, start, end)
        if span is not None:
            both = _coordination(doc, span)
            found.append(Candidate(both, "Method", CONFIDENCE, "class-coordination") if both is not None
                         else Candidate(span, "Method", CONFIDENCE, "class"))
    return found
