"""Rules that find mentions in a parsed abstract and type them; :mod:`.roles` tells the paper's role for each.

Each ``find_*`` function reads a ``Doc`` and returns ``Candidate``
objects (``Candidate.found``), each holding its span; ``select`` keeps one
mention per span. Everything here works on one paper with no corpus-wide state.
"""
from __future__ import annotations

import functools
import re
from collections import defaultdict

from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span, Token

from .. import lexicon
from ..vocab import ENTITY_TYPES, LAYER2_TYPES, SCIERC_TO_KG
from .candidate import Candidate
from .abbreviations import find_abbreviations

_SIZE = re.compile(r"(?:^|[-_])\d+(?:\.\d+)?[BMK](?:$|[-_])|-(?:Instruct|Chat|Base|it)$")
_FAMILY = re.compile(r"^(?:%s)(?:$|[-_.\d])" % "|".join(re.escape(f) for f in lexicon.MODEL_FAMILIES))
_ROMAN = re.compile(r"^(?:I|II|III|IV|V|VI|VII|VIII|IX|X)$")


def _dataset_key(name: str) -> str:
    """A dataset's name as known datasets are matched: "CIFAR-10", "cifar 10" and "CIFAR_10" alike."""
    return re.sub(r"[\s\-_]", "", name).lower()


_KNOWN_DATASETS = {_dataset_key(d) for d in lexicon.KNOWN_DATASETS}
_METRICS = {m.lower() for m in lexicon.METRICS}
# Size and amount tokens ("8B", "70B", "64K") are quantities, not names.
_QUANTITY = re.compile(r"^\d+(?:\.\d+)?[A-Za-z]{0,2}$")


def looks_like_name(token: Token) -> bool:
    """Whether a token is written like a name: inner capitals, digits in words, acronyms.

    >>> from kg.extract.pipeline import load_pipeline
    >>> [looks_like_name(t) for t in load_pipeline()("E-GRPO uses LLaMA-3 with CurlFlow on ten Tasks 8B")]
    [True, False, True, False, True, False, False, False, False]
    """
    return _name_shape(token.text) and not (token.like_url or token.like_email)


@functools.lru_cache(maxsize=65536)
def _name_shape(text: str) -> bool:
    if len(text) < 2 or (text.isalpha() and text[1:].islower()) or not text[0].isalnum():
        return False
    if _QUANTITY.match(text) or _ROMAN.match(text):
        return False
    # "Text-Attributed" is two capitalised words; "E-GRPO" and "SFT-auto" hold a name.
    return any(_part_is_name(part) for part in re.split(r"[-–—]", text))


def _part_is_name(part: str) -> bool:
    letters = sum(c.isalpha() for c in part)
    if letters == 0:
        return False
    if part.isupper() and letters >= 2:
        return True
    return any(c.isupper() for c in part[1:]) or (any(c.isdigit() for c in part) and part[0].isalpha())


def _capitalised_compound(token: Token) -> bool:
    parts = re.split(r"[-–]", token.text)
    return len(parts) > 1 and all(p[:1].isupper() for p in parts) and token.i != token.sent.start


def type_of_name(text: str) -> str | None:
    """The type a name's spelling alone tells: a metric, a sized or family-named Model, a known Dataset."""
    if text.lower() in _METRICS:
        return "Metric"
    if _is_known_dataset(text):
        return "Dataset"
    if _SIZE.search(text) or _FAMILY.match(text):
        return "Model"
    return None


#: A count after a dataset's name, of classes or clips: "ImageNet-22K", "Kinetics-400". Not a model's
#: size in parameters ("7B", "125M"), so "Math-7B" stays a model.
_DATASET_COUNT = re.compile(r"[-_ ]?\d+[Kk]?$")


def _is_known_dataset(text: str) -> bool:
    """Whether a name is a known dataset's, or one with a count of classes or clips after it.

    >>> _is_known_dataset("ImageNet-22K"), _is_known_dataset("Kinetics-400"), _is_known_dataset("Math-7B")
    (True, True, False)
    """
    return any(_dataset_key(form) in _KNOWN_DATASETS for form in (text, _DATASET_COUNT.sub("", text)))


def _climb(token: Token, steps: int = 4):
    """The token's governors, through lists, compounds, appositions and prepositions."""
    current = token
    for _ in range(steps):
        if current.head is current:
            return
        current = current.head
        yield current


def described_as_dataset(span: Span) -> bool:
    """Whether the words in apposition to a name call it a benchmark or dataset ("X, a benchmark of ...")."""
    root = span.root
    described = [c for c in root.children if c.dep_ == "appos"]
    if root.dep_ == "appos":
        described.append(root.head)
    if span.end < len(span.doc) and span.doc[span.end].text in (",", ":"):
        following = span.doc[span.end + 1 : span.end + 6]
        described += list(following[: next((i for i, t in enumerate(following) if t.text in ",;("), len(following))])
    return any(t.lemma_.lower() in lexicon.DATASET_HEADS for t in described)


def type_from_context(token: Token) -> tuple[str, float] | None:
    """The type the parse around a name tells: "benchmarks such as X", "X, a benchmark", "on X, achieving ..."."""
    if described_as_dataset(token.doc[token.i : token.i + 1]):
        return "Dataset", 0.8
    for governor in _climb(token):
        lemma = governor.lemma_.lower()
        if lemma in lexicon.DATASET_HEADS:
            return "Dataset", 0.8
        if lemma in lexicon.TASK_CUES and governor.i > token.i:
            return "Task", 0.6
        if governor.pos_ == "VERB":
            break
    head = token
    while head.dep_ in ("conj", "appos") and head.head is not head:
        head = head.head
    if head.dep_ == "pobj" and head.head.lower_ in ("on", "across", "over") and head.head.head is not None:
        verb = head.head.head
        if verb.lemma_.lower() in lexicon.EVALUATION_CONTEXT or any(
            t.lemma_.lower() in lexicon.EVALUATION_CONTEXT for t in verb.subtree if t.i < head.i
        ):
            return "Dataset", 0.7
    if token.dep_ == "compound" and token.head.lemma_.lower() in {m.lower() for m in lexicon.METRICS}:
        return "Dataset", 0.7  # "MMLU accuracy"
    return None


def _head_words(token: Token) -> set[str]:
    # Both: the lemmatiser reads "answering" in "question answering" as the verb "answer".
    return {token.lemma_.lower(), token.lower_}


def _label_of_phrase(span: Span) -> str:
    root = _head_words(span.root)
    if root & lexicon.DATASET_HEADS:
        return "Dataset"
    if root & (lexicon.TASK_HEADS | lexicon.TASK_CUES):
        return "Task"
    return "Method"


def _trim_model_span(span: Span) -> Span | None:
    """A span the model found, cut at a bracket and without leading determiners, pronouns ("our")
    and words that place the thing in the paper ("novel", "proposed"). The model learned SciER's
    boundaries, so its numbers and modifiers stay: "fully connected layers", "Faster R-CNN",
    "3 × 3 convolution", "I3D" (cutting them, as for the SciERC-trained model, cost 0.03 of F1 on
    SciER dev)."""
    doc = span.doc
    start, end = span.start, span.end
    for token in span:
        if token.text in "([":
            end = token.i
            break
    while start < end and (doc[start].pos_ in ("DET", "PUNCT", "CCONJ") or doc[start].lower_ in lexicon.PAPER_RELATIVE
                           or (doc[start].pos_ == "PRON" and doc[start].text != "I")):
        start += 1
    while end > start and doc[end - 1].pos_ in ("PUNCT", "PART"):
        end -= 1
    return doc[start:end] if end > start else None


def is_generic(span: Span) -> bool:
    """Whether every word of a phrase is generic ("the proposed method", "performance")."""
    words = [t for t in span if not t.is_punct]
    return all(t.lemma_.lower() in lexicon.GENERIC_HEADS or t.lower_ in lexicon.EVALUATIVE or t.is_stop
               for t in words)


def find_abbreviation_mentions(doc: Doc) -> list[Candidate]:
    found = []
    for short, long in find_abbreviations(doc):
        # "our novel GNN" loses "our novel", but the E of ENAS stands for "Efficient": a word
        # the acronym spells is part of the name.
        while len(long) > 1 and long[0].lower_ in lexicon.EVALUATIVE and long[0].text[:1].lower() != short.text[:1].lower():
            long = long[1:]
        label = type_of_name(short.text) or _label_of_phrase(long)
        found.append(Candidate(long, label, 0.85, "abbreviation-long", acronym_of=short.text))
        found.append(Candidate(short, label, 0.9, "abbreviation-short", acronym_of=long.text))
    return found


_MULTIWORD_FAMILIES = [f.split() for f in lexicon.MODEL_FAMILIES if " " in f]


def find_family_mentions(doc: Doc) -> list[Candidate]:
    """Model families of several words, with what is attached to the last one: "Stable Diffusion-XL"."""
    found = []
    for token in doc:
        for words in _MULTIWORD_FAMILIES:
            end = token.i + len(words)
            if end > len(doc):
                continue
            tokens = doc[token.i : end]
            if all(t.text == w for t, w in zip(tokens[:-1], words[:-1])) and tokens[-1].text.startswith(words[-1]):
                found.append(Candidate(tokens, "Model", 0.85, "family"))
    return found


def find_name_mentions(doc: Doc) -> list[Candidate]:
    found = find_family_mentions(doc)
    for token in doc:
        if not looks_like_name(token):
            # "Android-Lab" is spelt like "Text-Attributed": a name only where the context calls it a dataset.
            if _capitalised_compound(token) and (type_from_context(token) or ("", 0))[0] == "Dataset":
                found.append(Candidate(doc[token.i : token.i + 1], "Dataset", 0.7, "name"))
            continue
        span = doc[token.i : token.i + 1]
        label = type_of_name(token.text)
        confidence = 0.85
        rule = "name"
        if label is None:
            context = type_from_context(token)
            if context is None and len(token.text) <= 4 and not any(c.isdigit() for c in token.text):
                continue  # an undefined "GPU", "FPS", "RoI" or "AP": short capitals are rarely a method
            label, confidence = context if context else ("Method", 0.6)
            rule = "name" if context else "name-shape"  # a Method by its spelling alone
        found.append(Candidate(span, label, confidence, rule))
    return found


def find_ner_mentions(doc: Doc) -> list[Candidate]:
    """Spans of the learned scientific NER (when the pipeline has it), in our types, with its probability.

    A model trained on kg's types gives ours; SciERC's labels are read as ours
    (``kg.vocab.SCIERC_TO_KG``; OtherScientificTerm and Generic, "this method", are left out
    of the graph: see README, what becomes a node).
    A Method whose spelling says Model ("LLaMA-3-8B") is a Model; a SciERC Material is
    kept only as a Dataset that is named (a name, a known dataset, or called a
    benchmark by its context), since "images" or "long texts" are no datasets.
    """
    found = []
    probabilities = doc._.entity_probabilities  # empty where doc.ents come from elsewhere
    for index, ent in enumerate(doc.ents):
        layer2 = ent.label_ in LAYER2_TYPES  # a class of methods or tasks: the classes layer, not SciER's
        label = ent.label_ if ent.label_ in ENTITY_TYPES else LAYER2_TYPES.get(ent.label_, SCIERC_TO_KG.get(ent.label_))
        span = _trim_model_span(ent)
        # "flow matching and mirror maps" names two things, and neither whole.
        if label is None or span is None or is_generic(span) or any(t.pos_ == "CCONJ" for t in span):
            continue
        if span.start > 0 and (span.doc[span.start - 1].lower_, span.text.lower()) in lexicon.IDIOMS:
            continue  # "on average" is no metric
        if label == "Metric" and is_numeric_precision(span):
            continue
        # The model's type stands: on SciER dev and SciERC dev, retyping its mentions by their head
        # noun ("visual grounding" a task) cost as much as it brought (bench/sources.py).
        if type_of_name(span.text) == "Model":
            label = "Model"  # a sized or family-named model ("Llama-3.1-70B"), whatever the model read
        elif label == "Dataset" and ent.label_ != "Dataset":  # a model trained on datasets is trusted
            named = any(looks_like_name(t) for t in span) or type_of_name(span.text) == "Dataset"
            if not named and not (type_from_context(span.root) or ("", 0))[0] == "Dataset":
                continue
        confidence = probabilities[index] if index < len(probabilities) else 0.7
        found.append(Candidate(span, label, confidence, "class-model" if layer2 else "ner"))
    return found


_NUMERIC_BEFORE = frozenset("low full half single double mixed reduced arbitrary limited fixed "
                            "floating numerical numeric machine bit fp16 fp32 int8".split())
_NUMERIC_AFTER = frozenset("arithmetic training weights weight networks network floating format formats "
                           "inference computation representation quantization".split())


def is_numeric_precision(span: Span) -> bool:
    """Whether "precision" means the number format ("low precision", "8-bit precision", "mixed
    precision training"), not the share of right answers.

    >>> from kg.extract.pipeline import load_pipeline
    >>> [is_numeric_precision(d[1:2]) for d in map(load_pipeline(), ("Low precision weights", "Higher precision and recall",
    ...                                                              "The precision of weights"))]
    [True, False, True]
    """
    if span.text.lower() != "precision":
        return False
    doc = span.doc
    before = doc[span.start - 1].lower_ if span.start > 0 else ""
    after = doc[span.end].lower_ if span.end < len(doc) else ""
    # "reduce the precision of weights to ternary values"
    of_numbers = after == "of" and span.end + 1 < len(doc) and doc[span.end + 1].lower_ in _NUMERIC_AFTER | {
        "activations", "gradients", "parameters"}
    return before in _NUMERIC_BEFORE or before.endswith("-bit") or after in _NUMERIC_AFTER or of_numbers


def find_lexicon_mentions(doc: Doc, matchers: dict[str, "_Both"]) -> list[Candidate]:
    """Known names (``lexicon.METRICS``, ``lexicon.METHOD_NAMES``) wherever they occur as a noun phrase."""
    found = []
    for label, matcher in matchers.items():
        for _, start, end in matcher(doc):
            span = doc[start:end]
            if span.root.pos_ not in ("NOUN", "PROPN", "ADJ", "NUM", "X"):
                continue
            # "error" in "error correction", "accuracy" in "accuracy drop" name no measure.
            if len(span) == 1 and (span.root.dep_ == "compound" and span.root.head.i > span.root.i
                                   or end < len(doc) and doc[end].text == "-"):
                continue
            if label == "Metric" and is_numeric_precision(span):
                continue
            found.append(Candidate(span, label, 0.8, f"{label.lower()}-lexicon"))
    # "5.6% error": a measure named by a word too generic for the lexicon, right after its value.
    for token in doc[1:]:
        if token.lower_ in lexicon.METRICS_AFTER_VALUE and doc[token.i - 1].text == "%":
            found.append(Candidate(doc[token.i : token.i + 1], "Metric", 0.7, "metric-lexicon"))
        elif token.text in lexicon.METRICS_AFTER_NUMBER and (doc[token.i - 1].like_num or doc[token.i - 1].text == "%"
                                                             and token.i > 1 and doc[token.i - 2].like_num):  # "78.2% AP"
            found.append(Candidate(doc[token.i : token.i + 1], "Metric", 0.75, "metric-lexicon"))
    return found


@functools.lru_cache(maxsize=4)
def lexicon_matchers(nlp) -> dict[str, "_Both"]:
    """A matcher per type of known name: lower-case names in any case ("Accuracy", "Dropout"),
    others as written ("mAP", not "map"; "Adam", not "adam"). Built once per pipeline: every chunk
    of a build asks for them, and the datasets alone are thousands of names."""
    matchers = {}
    datasets = known_dataset_names()
    for label, names in (("Metric", lexicon.METRICS), ("Method", lexicon.METHOD_NAMES)):
        matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
        matcher.add(label, list(nlp.tokenizer.pipe(m for m in names if m == m.lower())))
        exact = PhraseMatcher(nlp.vocab, attr="ORTH")
        exact.add(label, list(nlp.tokenizer.pipe(m for m in names if m != m.lower())))
        matchers[label] = _Both(matcher, exact)
    exact = PhraseMatcher(nlp.vocab, attr="ORTH")
    exact.add("Dataset", list(nlp.tokenizer.pipe(datasets)))
    matchers["Dataset"] = _Both(exact)
    return matchers


def known_dataset_names() -> list[str]:
    """The Papers with Code datasets written as names, to be found as written: "Penn Treebank",
    "MS COCO", "ImageNet"; not "20000 utterances", "A Game Of Sorts" or "HELP"."""
    from ..pwc import load

    names = []
    for name in load().datasets.values():
        words = name.split()
        if not words[0][:1].isupper() or any(w[:1].islower() and w not in ("of", "and", "the", "for") for w in words):
            continue
        if len(words) == 1:  # "ImageNet", "CIFAR-10", "SQuAD"; not "HAM" or "HELP", whose capitals say little
            if _name_shape(name) and (any(c.isdigit() for c in name) or not name.replace("-", "").isupper()):
                names.append(name)
        elif words[0].lower() not in ("a", "an", "the"):
            names.append(name)
    # "Fashion MNIST" is Fashion-MNIST, not MNIST: a hyphen between two capitalised words is often a space.
    names += [name.replace("-", " ") for name in names
              if re.fullmatch(r"[A-Z][A-Za-z]+-[A-Z][A-Za-z0-9]+", name)]
    return sorted(set(names))


class _Both:
    """Two matchers called as one."""

    def __init__(self, *matchers):
        self.matchers = matchers

    def __call__(self, doc):
        return [match for matcher in self.matchers for match in matcher(doc)]


#: The order in which the sources' mentions are chosen, strongest first (a rule not named here
#: comes last): a mention is kept unless one chosen before it overlaps it without being wrapped by
#: it (:func:`select`), and of two mentions of one span the earlier source's stands.
#: ``bench/sources.py`` measures each source on SciER dev and SciERC dev.
TIERS = (
    ("abbreviation-short", "abbreviation-long"),  # a definition in the text: "Large Language Models (LLMs)"
    ("class-coordination",),  # "diffusion and flow-based models", which the span model reads as its last conjunct
    ("ner",),  # the span model, trained on kg's types
    ("family", "name", "name-shape", "metric-lexicon", "method-lexicon", "dataset-lexicon"),  # names by their spelling, known names
)


#: Words before a dataset's name that make it another benchmark: character-level Penn Treebank is
#: scored in bits per character, Penn Treebank in word perplexity.
_LEVELS = {("character", "level"), ("char", "level"), ("character", "-", "level"), ("char", "-", "level")}


def with_levels(mentions: list[Candidate]) -> list[Candidate]:
    """Dataset mentions grown over a "character-level" before them: "the Character Level Penn
    Treebank (PTB) task" names the character-level benchmark, not Penn Treebank."""
    out = []
    for mention in mentions:
        span = mention.span
        if mention.label == "Dataset":
            for n in (3, 2):
                words = tuple(t.lower_ for t in span.doc[max(0, span.start - n) : span.start])
                if len(words) == n and words in _LEVELS:
                    mention = Candidate(span.doc[span.start - n : span.end], "Dataset", mention.confidence,
                                            mention.rule, role=mention.role)
                    break
        out.append(mention)
    return out


def whole_words(mentions: list[Candidate]) -> list[Candidate]:
    """Mentions grown back to the start of the hyphenated word they open inside: "self-supervised
    learning (SSL)" is not "supervised learning", nor "semi-supervised" "supervised", where the
    parse read the prefix apart. A mention that the grown span would overlap keeps it as found. An
    acronym the grown long form defines stands for the grown form: "SSL" is self-supervised learning."""
    out, grown = [], {}
    for index, mention in enumerate(mentions):
        span = mention.span
        doc, start = span.doc, span.start
        while (start >= 2 and doc[start - 1].text == "-" and not doc[start - 1].whitespace_
               and not doc[start - 2].whitespace_ and doc[start - 2].is_alpha and span.start - start < 6):
            start -= 2
        others = [m.span for j, m in enumerate(mentions) if j != index]
        if start < span.start and not any(o.start < span.start and o.end > start for o in others):
            mention = Candidate(doc[start : span.end], mention.label, mention.confidence, mention.rule,
                                acronym_of=mention.acronym_of, role=mention.role)
            grown[span.text] = mention.text
        out.append(mention)
    for mention in out:
        if mention.rule == "abbreviation-short" and mention.acronym_of in grown:
            mention.acronym_of = grown[mention.acronym_of]
    return out


def datasets_out_of_metrics(mentions: list[Candidate]) -> list[Candidate]:
    """A metric whose words hold a known dataset's name is two mentions: "ImageNet1k accuracy" is the
    dataset ImageNet1k and the metric accuracy, so "68.2% top-1 ImageNet1k accuracy" is a score on
    ImageNet. The metric is the words after the name (else before it), at a metric's either edge.

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline(ner=False)("We reach 68.2% ImageNet-1k zero-shot accuracy.")
    >>> [(c.text, c.label) for c in datasets_out_of_metrics([Candidate(doc[4:9], "Metric", 0.9, "ner")])]
    [('ImageNet-1k', 'Dataset'), ('zero-shot accuracy', 'Metric')]
    """
    out = []
    for mention in mentions:
        span = mention.span
        run = _dataset_run(span) if mention.label == "Metric" and len(span) > 1 else None
        if run is None:
            out.append(mention)
            continue
        start, end = run
        doc = span.doc
        rest = doc[end : span.end] if end < span.end else doc[span.start : start]
        out.append(Candidate(doc[start:end], "Dataset", mention.confidence, "dataset-lexicon"))
        if any(t.is_alpha for t in rest):
            out.append(Candidate(rest, "Metric", mention.confidence, mention.rule))
    return sorted(out, key=lambda c: (c.span.start, c.span.end))


def _dataset_run(span: Span) -> tuple[int, int] | None:
    """The tokens at the start or the end of ``span``, not all of it, that write a known dataset's
    name, joined by hyphens as written ("ImageNet - 1k"), as (start, end) token indices; None where
    there are none. A name inside ("top-1 ImageNet1k accuracy") is left: the metric's words would
    no longer stand beside its value."""
    doc = span.doc
    for start, end in ((span.start, span.start + 3), (span.start, span.start + 1),
                       (span.end - 3, span.end), (span.end - 1, span.end)):
        if span.start <= start and end <= span.end and end - start < len(span) \
                and _is_known_dataset(doc[start:end].text.replace(" ", "")):
            return start, end
    return None


def select(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per span, chosen in the order of :data:`TIERS`, and no phrase that merely wraps
    a name or a defined long form."""
    tier_of = {rule: n for n, rules in enumerate(TIERS) for rule in rules}
    last = len(TIERS)
    # "Diffusion-XL" inside "Stable Diffusion-XL" is part of one name, and so is "MNIST" inside the
    # known dataset "Fashion MNIST".
    wholes = [c.span for c in candidates if c.rule == "family" or c.rule == "dataset-lexicon" and len(c.span) > 1]
    candidates = [c for c in candidates if not any(
        f.start <= c.span.start and c.span.end <= f.end and len(f) > len(c.span) for f in wholes)]
    # "accuracy" inside the known metric "top-1 accuracy" is part of it.
    metrics = [c.span for c in candidates if c.rule == "metric-lexicon"]
    candidates = [c for c in candidates if c.label != "Metric" or c.rule == "metric-lexicon" or not any(
        m.start <= c.span.start and c.span.end <= m.end and len(m) > len(c.span) for m in metrics)]
    by_span: dict[tuple[int, int], Candidate] = {}
    for c in sorted(candidates, key=lambda c: tier_of.get(c.rule, last)):
        by_span.setdefault((c.span.start, c.span.end), c)
    # Where a rule finds the span model's very span, the model's type stands (on SciER dev it was right
    # 70 times to the name rules' 10), but a Model a name's spelling tells stays a Model, a known
    # metric is a Metric (2 to 0), and a name the sentence calls a benchmark or dataset, or a known
    # dataset, is a Dataset ("benchmarks such as HELMET, LongBench and RULER", where the model reads
    # the list as methods and a task).
    for c in candidates:
        chosen = by_span[c.span.start, c.span.end]
        if c.rule == "ner" and chosen is not c and not (chosen.label == "Model" and c.label == "Method"):
            chosen.label = c.label
    for c in candidates:
        if (c.rule, c.label) in (("name", "Dataset"), ("metric-lexicon", "Metric"), ("dataset-lexicon", "Dataset")):
            by_span[c.span.start, c.span.end].label = c.label  # a known metric is a Metric: FID, BLEU
    def shadowed(c: Candidate, strong: list[Candidate]) -> bool:
        for s in strong:
            a, b = c.span, s.span
            if a.end <= b.start or b.end <= a.start:
                continue
            inside = b.start <= a.start and a.end <= b.end
            wraps = a.start <= b.start and b.end <= a.end
            # A phrase inside a name or long form, crossing its edge, or wrapping it with only generic
            # words ("the resultant MOBILERL-9B model"), is that name.
            rest = [t for t in a if t.i < b.start or t.i >= b.end]
            # "an online agentic RL framework MOBILERL": a description ending in the name it describes.
            described = wraps and b.end == a.end and b.root.dep_ in ("appos", "compound") and b.root.head in a
            if inside or not wraps or described or b.root == a.root or is_generic(a.doc[rest[0].i : rest[0].i + 1]) and all(
                    is_generic(a.doc[t.i : t.i + 1]) for t in rest):
                return True
        return False

    # Tier by tier: a later source's span may not cross or sit inside an earlier one's, nor wrap it
    # with only generic words ("an online ... framework MOBILERL" is MOBILERL).
    # Within a tier the longer span first: "test error" holds the metric "error".
    kept: list[Candidate] = []
    for tier in range(last + 1):
        for c in sorted((c for c in by_span.values() if tier_of.get(c.rule, last) == tier),
                        key=lambda c: (-len(c.span), c.span.start)):
            if not shadowed(c, kept):
                kept.append(c)
    return sorted(kept, key=lambda c: (c.span.start, c.span.end))


def one_type_per_name(mentions: list[Candidate], proposed: set[int]) -> None:
    """Give every mention of one name in an abstract the same type: a name means one thing within
    a text ("one sense per discourse", Gale, Church and Yarowsky 1992). Where the paper proposes the
    name, the proposal's type wins ("We propose SpeechNet. SpeechNet reaches 12.9% WER": not a
    dataset); elsewhere the type its mentions give with the most confidence together ("Group
    Relative Policy Optimization (GRPO)" then "the GRPO baseline": a method, not a task); an acronym
    the abstract defines is one name with its long form. A Model and a Method agree: a Model is a
    kind of method.

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("We propose SpeechNet. SpeechNet reaches 12.9% WER.")
    >>> mentions = [Candidate(doc[2:3], "Method", 0.8, "ner"), Candidate(doc[4:5], "Dataset", 0.9, "ner")]
    >>> one_type_per_name(mentions, proposed={2})
    >>> [m.label for m in mentions]
    ['Method', 'Method']
    """
    # An acronym the abstract defines is its long form's name: "Group Relative Policy Optimization (GRPO)".
    long_form = {m.span.text: m.acronym_of for m in mentions if m.rule == "abbreviation-short"}
    by_name: dict[str, list[Candidate]] = defaultdict(list)
    for mention in mentions:
        by_name[long_form.get(mention.span.text, mention.span.text)].append(mention)
    for same in by_name.values():
        if len({_kind(m.label) for m in same}) < 2:
            continue
        own = [m for m in same if all(t.i in proposed for t in m.span)]
        if own:
            label = max(own, key=lambda m: m.confidence).label
        else:
            weight: dict[str, float] = defaultdict(float)
            for m in same:
                weight[m.label] += m.confidence
            label = max(weight, key=lambda each: (weight[each], each))
        for m in same:
            if _kind(m.label) != _kind(label):
                m.label = label


def _kind(label: str) -> str:
    """A label as one name's mentions must agree on it: a Model is a kind of method."""
    return "Method" if label == "Model" else label


#: Nouns that say the name before them is a method: "the GRPO baseline". Not "methods" or
#: "algorithms": "OLTR methods" are methods for a task.
_METHOD_NOUNS = frozenset({"baseline"})


def methods_by_their_noun(mentions: list[Candidate]) -> None:
    """Make a Method of a name typed as a Task that a method noun follows: "outperforms the GRPO
    baseline" compares two methods, whatever the span model read (it calls GRPO a task there).

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("E-GRPO outperforms the GRPO baseline.")
    >>> mentions = [Candidate(doc[3:4], "Task", 0.9, "ner")]
    >>> methods_by_their_noun(mentions)
    >>> mentions[0].label
    'Method'
    """
    for mention in mentions:
        span = mention.span
        if (mention.label == "Task" and span.end < len(span.doc) and span.doc[span.end].lower_ in _METHOD_NOUNS
                and any(looks_like_name(t) for t in span)):
            mention.label = "Method"
