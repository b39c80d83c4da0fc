"""Results: the scores an abstract reports, each with its metric, dataset and subject.

"The resultant MOBILERL-9B model achieves state-of-the-art results in terms
of success rates on both AndroidWorld (80.2%) and Android-Lab (53.6%)" gives
two results: 80.2 % success rate on AndroidWorld and 53.6 % on Android-Lab,
both by MOBILERL-9B. "improving accuracy from 57.5% to 64.0%" gives 64.0 with
57.5 as the value before; "improves by 12%" and "0.3% less accuracy" are
*gains*, not scores.

A number counts when it carries a unit (%, points, ×) or stands next to a
metric ("perplexity of 62.4", "1.37 BPC"); bare numbers (sizes, counts,
years) never do, nor do shares of something that is not a metric ("90% of
its parameters") or operating points ("when the recall is 95%").

The metric, dataset and subject of a value are read from the dependency
parse, never from mere presence in the sentence. Each must hang on the
value's *path*, its chain of heads up to the verb of the first clause with a
subject of its own ("ENAS designs architectures that achieve an error of
2.89%": 2.89% -> of -> error -> achieve -> architectures -> designs):

- metric: the noun phrase the value opens ("2.89% test error"), a metric on
  the path ("error of 2.89%"), or one the path's first verb takes as an
  argument ("accuracy reaches 94%", "reduces the error by 3%", "in terms of
  F1"). A noun of another kind on the way ("results of 0.27%") ends the search.
- dataset: the name the value is in brackets after ("AndroidWorld (80.2%)")
  or that follows its "on / in" ("79.2% on CIFAR-10"), else the object of
  "on / in / for / across" hanging on the path or the metric ("On CIFAR-10,
  ENAS designs ...").
- subject: what the value is "for" or "achieved by", the name it is in
  brackets after ("NAS (2.65%)"), the model a metric is "of", or else the
  subject of the clause ("ENAS"; "we" and "our model" mean the paper's
  proposal; "we train ResNet-50 to 76%" means ResNet-50). A value someone
  is compared with ("outperforming the previous 86.4%") has no subject we
  can name.

A list of values ("1.2%, 3.4% and 5.6%") shares its metric, dataset and
subject however the parser attached them; it pairs with a list of names
element by element only when the sentence says "respectively" and both
lists have the same length. A value facing a list of names any other way
gets none of them.
"""
from __future__ import annotations

from typing import NamedTuple

from spacy.tokens import Doc, Span, Token

from .. import lexicon
from ..vocab import ACTOR_TYPES
from .candidate import Candidate
from .links import main_proposal

_UNITS = {"%": "%", "percent": "%", "points": "points", "point": "points", "pp": "points", "x": "x", "×": "x"}
#: Nouns of a change: "an improvement of 1.3 BLEU", "a gain of up to 0.7".
_CHANGE_NOUNS = {"improvement", "improvements", "gain", "gains", "increase", "increases", "reduction", "reductions",
                 "boost", "boosts", "speedup", "speed-up", "drop", "decrease", "margin", "margins", "loss", "degradation",
                 "cost"}
#: Words that make the noun phrase a value opens a change: "21% relative reduction", "3% improved F1".
_GAIN_WORDS = _CHANGE_NOUNS - {"cost"} | {"reduce", "reduces", "reduced", "improve", "improves", "improved",
                                          "improving", "relative", "absolute"}
#: Words that make a value a difference: "0.3% less accuracy", "5% higher F1".
_COMPARATIVES = {"less", "more", "fewer", "lower", "higher", "better", "worse", "smaller", "larger"}
#: Words allowed between "by" and its value: "by up to 34%", "by more than 5%", "by as much as 8%".
_BY_QUALIFIERS = {"up", "to", "more", "than", "as", "much", "little", "over", "nearly", "about", "around",
                  "approximately", "roughly", "almost", "at", "least", "only", "another", "a", "further", "some", "~"}
#: What may stand between two values of one list ("1.2%, 3.4%, and 5.6%", "26.0% / 8.5%") or two names.
_LIST_SEPARATORS = {",", "and", "or", "/", ";", "|"}
_RELATIVE = {"that", "which", "who", "whom", "whose"}
_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_ARGUMENT_DEPS = {"nsubj", "nsubjpass", "dobj", "attr"}
#: Prepositions that put a value on a dataset: "on CIFAR-10", "in SVHN", "for MNIST", "across GLUE".
_DATASET_PREPS = {"on", "in", "for", "across", "at"}
#: Subordinators of a condition: "when the true positive rate is 95%" sets an operating point, it reports nothing.
_CONDITION_MARKS = {"when", "if", "whenever", "once", "unless", "until"}
#: Dependencies by which a value (or a name) modifies the noun after it: "2.89% test error".
_MODIFIER_DEPS = {"compound", "nummod", "amod", "nmod", "npadvmod", "quantmod"}
#: Dependencies inside a name's noun phrase: "the CIFAR-10 dataset", "The resulting TapAgent-7B model".
_NAME_DEPS = {"compound", "amod", "nmod", "appos", "poss"}
#: Nouns a value can be "of" that name no one: "a character baseline of 14.8%".
_UNNAMED_OWNERS = {"baseline", "model", "method", "approach", "network", "system", "ensemble", "agent",
                   "classifier", "algorithm", "architecture"}
#: Nouns on a value's path that say nothing of what it measures: "the state of the art of 90%", "%".
_TRANSPARENT = {"%", "percent", "points", "terms", "state", "art"}
_SELF = {"we", "our", "ours", "us", "proposed"}
#: Verbs whose object is what reaches the value: "we train ResNet-50 on ImageNet to 76.1%".
_OBJECT_VERBS = {"train", "evaluate", "test", "fine-tune", "finetune", "prune", "quantize", "compress", "apply"}
#: Verbs whose object is someone else's value: "outperforming the previous 86.4%".
_COMPARE_VERBS = {"outperform", "surpass", "beat", "exceed", "compare", "match"}


class Found(NamedTuple):
    """One result in token terms; :func:`kg.extract.extract_doc` maps it to a ``kg.model.Result``."""

    value: Span  # the number (and its unit) as written
    number: float
    unit: str
    metric: int | None
    dataset: int | None
    subject: int | None
    previous: float | None
    kind: str
    confidence: float


class _Value(NamedTuple):
    """A number read as a value, before its dataset and subject are looked for."""

    span: Span
    number: float
    unit: str
    anchor: Token  # the value's head in the parse: the unit ("%") or the number itself
    previous: float | None
    kind: str
    metric: int | None  # the metric the value stands beside or opens
    named: bool  # the value's own phrase says what it measures ("2.89% test error", "0.3% parameter increase")


class _Reading(NamedTuple):
    """What the parse ties to one value (mention indices), whether the dataset and subject came from a
    clause (and may head a list of names), and how sure the subject is."""

    metric: int | None
    dataset: int | None
    dataset_listed: bool
    subject: int | None
    subject_listed: bool
    sure: float
    named: bool


class _Mentions:
    """The mentions of one sentence, found by token: which name does this token belong to?"""

    def __init__(self, members: list[int], mentions: list[Candidate]):
        self.mentions = mentions
        self.by_token: dict[int, list[int]] = {}
        for j in sorted(members, key=lambda j: -len(mentions[j].span)):  # the longest name first
            for i in range(mentions[j].span.start, mentions[j].span.end):
                self.by_token.setdefault(i, []).append(j)

    def at(self, token: Token, labels) -> int | None:
        """The mention of one of ``labels`` that contains ``token``."""
        return next((j for j in self.by_token.get(token.i, ()) if self.mentions[j].label in labels), None)

    def headed_by(self, token: Token, labels) -> int | None:
        """The mention of ``labels`` that ``token`` is, or that names it ("the CIFAR-10 dataset" -> CIFAR-10)."""
        found = self.at(token, labels)
        if found is not None:
            return found
        for child in token.children:
            if child.dep_ in _NAME_DEPS:
                found = self.headed_by(child, labels)
                if found is not None:
                    return found
        return None


# ---------------------------------------------------------------- values


def _number(token: Token) -> float | None:
    text = token.text.replace(",", "").removesuffix("%")  # "77.03%|76.38%": the tokenizer keeps the first whole
    try:
        return float(text)
    except ValueError:
        return None


def _unit(doc: Doc, i: int) -> tuple[str, int] | None:
    """The unit after the number at ``i`` and where the value ends; None when there is none."""
    following = doc[i + 1].lower_ if i + 1 < len(doc) else ""
    if following in _UNITS:
        return _UNITS[following], i + 2
    return None


def _inside(i: int, spans: list[Candidate]) -> bool:
    return any(m.span.start <= i < m.span.end for m in spans)


def _anchor(value: Span) -> Token:
    """The value's head in the parse: "%" in "2.89 %", unless the parse hangs the unit on the number."""
    outer = [t for t in value if not value.start <= t.head.i < value.end or t.head.i == t.i]
    return outer[-1] if outer else value[-1]


def _phrase_head(value: Span) -> Token:
    """The noun a value modifies ("error" in "5.6% test error"), else the value's anchor."""
    head = _anchor(value)
    while head.dep_ in _MODIFIER_DEPS and value.end <= head.head.i <= value.end + 4 and not any(
            t.is_punct or t.pos_ in ("VERB", "AUX") for t in value.doc[value.end : head.head.i + 1]):
        head = head.head
    return head


def _phrase(value: Span, names: _Mentions) -> tuple[int | None, bool, bool]:
    """What the noun phrase a value opens says: (its metric, whether it names what it measures, is it a gain).

    "2.89% test error" -> (test error, True, False); "21% relative reduction in perplexity" ->
    (perplexity, True, True); "0.0003% parameter increase" -> (None, True, True); "2.89%," -> (None, False, False).
    """
    doc = value.doc
    head = _phrase_head(value)
    words = list(doc[value.end : head.i + 1]) if head.i >= value.end else []
    following = names.at(doc[value.end], {"Metric"}) if value.end < len(doc) else None
    if following is not None:  # "12.9% WER": a metric right after the value, however the parse attaches it
        end = names.mentions[following].span.end
        if end < len(doc) and doc[end].lower_ in _CHANGE_NOUNS:  # "1.5 pp accuracy gains": the noun after it too
            end += 1
        words = list(doc[value.end : max(end, head.i + 1)])
    elif value.end + 1 < len(doc) and doc[value.end].lower_ == "of":
        # "by 0.3% of top-1 accuracy"
        following = next((names.at(t, {"Metric"}) for t in doc[value.end + 1 : value.end + 4]
                          if names.at(t, {"Metric"}) is not None), None)
        if following is not None:
            return following, True, False
    if not words and value.end < len(doc) and doc[value.end].lower_ in _CHANGE_NOUNS:
        words = [doc[value.end]]  # "2.4 pp gains on ...", however the parse hangs the noun
    gain = any(w.lower_ in _GAIN_WORDS or w.lower_ in _COMPARATIVES for w in words)
    metric = next((names.at(w, {"Metric"}) for w in words if names.at(w, {"Metric"}) is not None), None)
    if metric is None and words:
        # "21% relative reduction in LM perplexity": the metric a gain is in.
        for child in words[-1].children:
            if child.dep_ == "prep" and child.lower_ in ("in", "of"):
                metric = next((names.headed_by(g, {"Metric"}) for g in child.children if g.dep_ == "pobj"), None)
    nouns = [w for w in words if w.pos_ in ("NOUN", "PROPN") and w.lower_ not in _GAIN_WORDS]
    return metric, metric is not None or bool(nouns), gain


def _is_share(value: Span, names: _Mentions, gain: bool) -> bool:
    """Whether the value is a share of something: "90% of its parameters", "keeps 90% of its accuracy";
    only a gain can be "of" a metric ("by 0.3% of top-1 accuracy")."""
    doc = value.doc
    if value.end >= len(doc) or doc[value.end].lower_ != "of":
        return False
    return not gain or not any(names.at(t, {"Metric"}) is not None for t in doc[value.end + 1 : value.end + 4])


def _is_count(token: Token, names: _Mentions) -> bool:
    """Whether a bare number counts things: "2-layer networks", "an ensemble of 15 models"."""
    doc = token.doc
    if token.i + 1 < len(doc) and doc[token.i + 1].text == "-":
        return True
    head = token.head  # "15.56 and 10.21 BLEU points" count points, which are a unit
    return token.dep_ == "nummod" and head.i > token.i and head.lower_ not in _UNITS \
        and names.at(head, {"Metric"}) is None and names.at(doc[token.i + 1], {"Metric"}) is None


def _leads_list(token: Token, names: _Mentions) -> bool:
    """Whether a bare number opens a list whose last number stands before a metric: "15.56 and 10.21 BLEU"."""
    doc, i, end = token.doc, token.i + 1, token.sent.end
    while i < end and doc[i].lower_ in _LIST_SEPARATORS:
        while i < end and doc[i].lower_ in _LIST_SEPARATORS:
            i += 1
        if i == end or _number(doc[i]) is None:
            return False
        if i + 1 < end and names.at(doc[i + 1], {"Metric"}) is not None:
            return True
        i += 1
    return False


def _after_by(words: list[str]) -> bool:
    """Whether the words before a value make it an amount "by" which something changed ("by up to 34%"),
    or the size of a change ("a gain of up to 0.7 BLEU", "at a cost of as little as 2.0 BLEU")."""
    cues = [at for at, w in enumerate(words) if w == "by" or w in _CHANGE_NOUNS]
    return bool(cues) and all(w in _BY_QUALIFIERS or w == "of" for w in words[cues[-1] + 1 :])


def _of_gain(value: Span, words: list[str]) -> bool:
    """Whether the value is the amount of a gain: "an improvement of 1.3 BLEU", "improvements over ELU of 4.45%"."""
    head = _anchor(value).head
    if head.lower_ == "of" and head.head.lower_ in _CHANGE_NOUNS:
        return True
    return words[-1:] == ["of"] and any(w in _CHANGE_NOUNS for w in words)


def _bare(token: Token, mentions: list[Candidate], members: list[int], names: _Mentions,
          values: list[_Value]) -> tuple[bool, Candidate | None]:
    """Whether a number without a unit is a value, and the metric it stands beside."""
    doc = token.doc
    if _is_count(token, names):
        return False, None
    # "perplexity of 62.4", "error rate: 3.65", "1.37 BPC": a bare number beside a metric.
    before = [m for m in mentions if m.label == "Metric" and 0 < token.i - m.span.end + 1 <= 3
              and m.span.end <= token.i and all(t.lower_ in ("of", "=", ":", "is", "at", "a", "(", "from")
                                               for t in doc[m.span.end : token.i])]
    after = [m for m in mentions if m.label == "Metric" and m.span.start == token.i + 1]
    if after or before:
        return True, (after or before)[0]
    # "improve the perplexities on PTB and WikiText-2 to 47.69 and 40.68": the value a metric the
    # verb acts on is brought to.
    head = token.head.head if token.dep_ == "pobj" and token.head.lower_ == "to" else None
    if head is not None and _is_verb(head):
        for child in head.children:
            found = names.headed_by(child, {"Metric"}) if child.dep_ in _ARGUMENT_DEPS else None
            if found is not None:
                return True, names.mentions[found]
    # "an FID of 2.9, compared with 5.1 for flow matching": a value owned by a named method,
    # in a sentence that names its metric.
    owned = token.i + 2 < len(doc) and doc[token.i + 1].lower_ == "for" and any(
        m.span.start == token.i + 2 and m.label in ACTOR_TYPES for m in mentions) and any(
        mentions[j].label == "Metric" for j in members)
    # "57.3 on Penn Treebank and 65.8 on WikiText-2": a number on a dataset, in a sentence naming its metric.
    start = token.i + 2 + (token.i + 2 < len(doc) and doc[token.i + 2].lower_ == "the")
    on_dataset = token.i + 1 < len(doc) and doc[token.i + 1].lower_ in ("on", "in") and any(
        m.span.start == start and m.label == "Dataset" for m in mentions) and any(
        mentions[j].label == "Metric" for j in members)
    # "15.56 and 10.21 BLEU", "ratios of 51.25, 22.17 and 40.65": a bare number in a list of values.
    listed = bool(values) and values[-1].unit == "" and _listed(values[-1].span, doc[token.i : token.i + 1])
    return owned or on_dataset or listed or _leads_list(token, names), None


def _signed(token: Token) -> bool:
    """Whether a number is written with a plus sign, as a difference is: "by +4.2 PQ, +2.4 AP"."""
    doc = token.doc
    return token.text.startswith("+") or token.i > 0 and doc[token.i - 1].text == "+" and not doc[token.i - 1].whitespace_


def _read_values(sentence: Span, mentions: list[Candidate], names: _Mentions, members: list[int]) -> list[_Value]:
    """The numbers of ``sentence`` that are values, with their unit, kind, the value before and their own metric."""
    doc = sentence.doc
    values: list[_Value] = []
    pending: tuple[float, int | None] | None = None  # "from 57.5% accuracy to ...": the value before, its metric
    for token in sentence:
        number = _number(token)
        if number is None or _inside(token.i, mentions):
            continue
        unit = ("%", token.i + 1) if token.text.endswith("%") else _unit(doc, token.i)
        beside = None
        if unit is None:
            # "the FID from 2.04 to 1.88": the value a value before was brought to counts as that one did.
            brought = pending is not None and doc[token.i - 1].lower_ == "to"
            counts, beside = (True, None) if brought else _bare(token, mentions, members, names, values)
            if not counts:
                continue
            unit = ("", token.i + 1)
        name, end = unit
        span = doc[token.i : end]
        words = [t.lower_ for t in doc[max(sentence.start, token.i - 6) : token.i]]
        metric, named, gain_phrase = _phrase(span, names)
        if beside is not None:
            metric, named = mentions.index(beside), True
        # "from 57.5% to 64.0%", and after one such, "and 50.0% to 79.2%": kept as the value before.
        then = [t.lower_ for t in doc[end : end + 2]]
        if words[-1:] == ["from"] or (then[:1] == ["to"] and len(then) > 1 and _number(doc[end + 1]) is not None
                                      and "from" in (t.lower_ for t in doc[sentence.start : token.i])):
            pending = (number, metric)
            continue
        previous, before_metric = pending if pending and words[-1:] == ["to"] else (None, None)
        pending = pending if previous is None else None
        if metric is None and before_metric is not None and not named:
            metric, named = before_metric, True  # "from 71.0% F1 to 75.9%"
        gain = name == "x" or gain_phrase or _after_by(words) or _of_gain(span, words) or _signed(token)
        if _is_share(span, names, gain):
            continue
        joined = token.i - 1  # the word joining the value to the one before, past "over", "up to", "nearly"
        while joined > sentence.start and doc[joined].lower_ in _BY_QUALIFIERS and doc[joined].lower_ != "to":
            joined -= 1
        if values and values[-1].kind == "gain" and (_listed(values[-1].span, span) or (
                doc[joined].lower_ in ("and", "or") and not named and not words[-1:] == ["to"])):
            gain = True  # "by 2.0% and 1.1%", "by 0.9% for NASNet-A and 0.6% for Inception", "by over 20% ..., and over 10%"
        values.append(_Value(span, number, name, _anchor(span), previous, "gain" if gain else "score", metric, named))
    # "1.2% and 0.96% higher than Swin-T": a list whose last value is a comparison is a list of gains.
    comparing = False
    for n in range(len(values) - 1, 0, -1):
        later, earlier = values[n], values[n - 1]
        comparing = later.kind == "gain" and (comparing or (
            later.span.end < len(doc) and doc[later.span.end].lower_ in _COMPARATIVES))
        if comparing and earlier.kind == "score" and earlier.metric is None and not earlier.named \
                and _listed(earlier.span, later.span):
            values[n - 1] = earlier._replace(kind="gain")
        else:
            comparing = False
    return values


def _listed(first: Span, second: Span) -> bool:
    """Whether only list separators stand between two spans: "3.4%, and 5.6%"."""
    return first.end <= second.start and all(t.lower_ in _LIST_SEPARATORS for t in first.doc[first.end : second.start])


def _listed_with_metrics(first: Span, second: Span, names: _Mentions) -> bool:
    """Whether only a metric and list separators stand between two values: "26.8 PQ, 16.8 AP, and
    34.1 mIoU on ADE20K" is one list, each value with its own metric, sharing the dataset."""
    between = first.doc[first.end : second.start]
    separated = any(t.lower_ in _LIST_SEPARATORS for t in between)
    return separated and all(t.lower_ in _LIST_SEPARATORS or names.at(t, {"Metric"}) is not None for t in between)


def _lists(values: list[_Value], names: _Mentions) -> list[list[int]]:
    """The values grouped into the lists the sentence writes, each in order: "1.2%, 3.4% and 5.6% error"
    is one list of three, "AndroidWorld (80.2%) and Android-Lab (53.6%)" two lists of one.

    Read from the words, not the parse: the parser often hangs a list's later values on the wrong head.
    """
    lists: list[list[int]] = []
    for n, value in enumerate(values):
        if lists and (_listed(values[n - 1].span, value.span)
                      or _listed_with_metrics(values[n - 1].span, value.span, names)):
            lists[-1].append(n)
        else:
            lists.append([n])
    return lists


# ---------------------------------------------------------------- the path and what hangs on it


def _is_verb(token: Token) -> bool:
    return token.pos_ in ("VERB", "AUX")


def _own_subject(verb: Token) -> bool:
    """Whether a verb has a subject of its own (a relative pronoun stands for its antecedent)."""
    return any(c.dep_ in _SUBJECT_DEPS and c.lower_ not in _RELATIVE or c.dep_ == "agent" for c in verb.children)


def _path(anchor: Token) -> list[Token]:
    """The anchor's heads, nearest first, up to the verb of the first clause with a subject of its own."""
    path = []
    token = anchor
    while token.head.i != token.i:
        token = token.head
        path.append(token)
        if _is_verb(token) and _own_subject(token):
            break
    return path


def _is_condition(path: list[Token]) -> bool:
    """Whether the value sits in a condition ("when the true positive rate is 95%")."""
    # The parser takes "when" for a marker or an adverb of the clause, depending on the sentence.
    return any(t.dep_ == "advcl" and any(c.dep_ in ("mark", "advmod") and c.lower_ in _CONDITION_MARKS
                                         for c in t.children) for t in path)


def _metric_on_path(path: list[Token], names: _Mentions, skip: set[int]) -> int | None:
    """A metric on the path ("error of 2.89%", "relative error improvements of 4%") or an argument of its
    first verb ("accuracy is 94%", "reduces the error by 3%", "by 3% in terms of accuracy"); None where
    a noun of another kind comes first ("test results of 0.27%")."""
    below = path[0] if path else None
    for token in path:
        if token.i in skip:
            below = token
            continue
        found = names.at(token, {"Metric"})
        for child in token.children:
            if found is not None:
                break
            if _is_verb(token) and child.dep_ in _ARGUMENT_DEPS:
                found = names.headed_by(child, {"Metric"})
            elif token.pos_ in ("NOUN", "PROPN") and child.dep_ in ("compound", "nmod"):
                found = names.at(child, {"Metric"})
            elif child.dep_ == "prep" and child.lower_ == "in":
                found = _in_terms_of(child, names)
        if found is not None:
            return found
        # Only the nearest verb's arguments (bar "compared with 5.1"): a verb further up states something else.
        if _is_verb(token) and not (token.lemma_.lower() == "compare" and token.dep_ in ("prep", "advcl")):
            return None
        if below.lower_ == "of" and token.pos_ in ("NOUN", "PROPN") and token.lower_ not in _TRANSPARENT \
                and token.lower_ not in _GAIN_WORDS and names.at(token, ACTOR_TYPES | {"Dataset"}) is None:
            return None  # "test results of 0.27%": the value measures results, not a metric we know
        below = token
    return None


def _in_terms_of(prep: Token, names: _Mentions) -> int | None:
    """The metric of "in accuracy" or "in terms of accuracy"."""
    for pobj in (c for c in prep.children if c.dep_ == "pobj"):
        if pobj.lower_ == "terms":
            return next((_in_terms_of(c, names) for c in pobj.children if c.dep_ == "prep" and c.lower_ == "of"), None)
        found = names.headed_by(pobj, {"Metric"})
        if found is not None:
            return found
    return None


def _dataset_after(value: Span, names: _Mentions) -> tuple[int | None, bool]:
    """The dataset named right after the value's "on / in / for" ("79.16% on CIFAR-10", "29.8 BLEU on
    WMT 2016 English-Romanian"), whatever the parser made of it, and whether the words there say
    where the value was measured: a method or model there ("83.9% in AlexNet") means on no dataset
    we know; "5.1 for flow matching" says whose the value is, not where."""
    doc, sentence = value.doc, value.sent
    # After the value's own noun phrase: "5.6% test error on SVHN", "0.1% less on ImageNet".
    at = max(value.end, _phrase_head(value).i + 1)
    following = names.at(doc[value.end], {"Metric"}) if value.end < sentence.end else None
    if following is not None:
        at = max(at, names.mentions[following].span.end)
    if at < sentence.end and doc[at].lower_ in _COMPARATIVES:
        at += 1
    # "50.4% (+ 8.2%) on COCO": past a short aside in brackets.
    if at < sentence.end and doc[at].text == "(":
        close = next((t.i for t in doc[at + 1 : min(at + 8, sentence.end)] if t.text == ")"), None)
        if close is not None:
            at = close + 1
    # "20.3% when transferred to ImageNet", "75.2% when applied to SVHN": where the value was measured.
    moved = at + 2 < sentence.end and doc[at].lower_ in ("when", "after", "once") and doc[at + 1].tag_ == "VBN" \
        and doc[at + 2].lower_ in _DATASET_PREPS | {"to"}
    if moved:
        at += 2
    # "54.2% mAP over MS COCO": "over" names where the value was measured only when a dataset follows it.
    over = at + 1 < sentence.end and doc[at].lower_ == "over" and names.at(doc[at + 1], {"Dataset"}) is not None
    if at + 1 >= sentence.end or not over and doc[at].lower_ not in _DATASET_PREPS | ({"to"} if moved else set()):
        return None, False
    prep, at = doc[at].lower_, at + 1
    for token in doc[at : min(at + 4, sentence.end)]:
        if token.is_punct or _is_verb(token):
            break
        found = names.at(token, {"Dataset"})
        if found is not None:
            return found, True
    named = doc[min(at + (doc[at].lower_ == "the"), sentence.end - 1)]
    return None, names.at(named, ACTOR_TYPES) is not None and prep != "for"


def _closing_dataset(last: Span, names: _Mentions) -> int | None:
    """The one dataset named right after the last value of a list, which the whole list is on:
    "26.8 PQ, 16.8 AP, and 34.1 mIoU on ADE20K". None where a list of datasets follows ("80.1% and
    70.2% on CIFAR-10 and CIFAR-100"), which the values pair with only "respectively"."""
    found, said = _dataset_after(last, names)
    if found is None or not said:
        return None
    doc, end = last.doc, names.mentions[found].span.end
    for token in doc[end : min(end + 3, last.sent.end)]:
        if names.at(token, {"Dataset"}) is not None:
            return None
        if token.lower_ not in _LIST_SEPARATORS and token.lower_ != "the":
            break
    return found


def _dataset_on_path(value: Span, path: list[Token], metric: int | None, names: _Mentions,
                     others: set[int]) -> tuple[int | None, bool]:
    """The dataset the value is on, and whether it came from a clause (so may head a list of names).

    A dataset the value is in brackets after ("AndroidWorld (80.2%)") is the value's own, and so is
    one right after it ("79.16% on CIFAR-10"). One in "on / in / for X" hanging on the value, the
    path, the metric or the subject of a copula ("the accuracies for MNIST are 99%") is the clause's;
    so is the dataset a relative clause on the path is about ("the CIFAR-10 dataset, where we reach
    3.1%"). A dataset-like noun that names no dataset ("on the former two datasets"), or two datasets
    on one word, end the search. What hangs on another value (its tokens are ``others``) is that
    value's: "3.6% on CIFAR-10 and 20.3% when transferred".
    """
    anchor = _anchor(value)
    if anchor.dep_ == "appos":
        found = names.at(anchor.head, {"Dataset"})
        if found is not None:
            return found, False
    found, said = _dataset_after(value, names)
    if said:
        return found, True
    holders = [anchor] + path
    if metric is not None:
        holders.append(names.mentions[metric].span.root)
    for token in list(holders):
        if _is_verb(token):
            holders += [c for c in token.children if c.dep_ in _SUBJECT_DEPS]
    for token in holders:
        if token.i in others:
            continue
        preps = [g for c in token.children if c.dep_ == "prep" and c.lower_ in _DATASET_PREPS
                 for g in c.children if g.dep_ == "pobj"]
        datasets = {names.headed_by(pobj, {"Dataset"}) for pobj in preps} - {None}
        if len(datasets) > 1:
            return None, False  # "accuracy on CIFAR-10 and [...] on ImageNet" hang on one word: which is ours?
        if datasets:
            return datasets.pop(), True
        if any(pobj.lemma_.lower() in lexicon.DATASET_HEADS for pobj in preps):
            return None, False
        for child in token.children:
            if child.dep_ in ("compound", "nmod") and token.i != anchor.i and not _is_verb(token):
                found = names.at(child, {"Dataset"})  # "ImageNet top-1 accuracy of 76%"
                if found is not None:
                    return found, True
        if token.dep_ == "relcl" and _is_verb(token):
            found = names.headed_by(token.head, {"Dataset"})
            if found is not None:
                return found, True
    return None, False


def _is_self(token: Token) -> bool:
    """Whether a subject is the paper's own: "we", "our model", "the proposed method"."""
    return token.lower_ in _SELF or any(c.lower_ in _SELF for c in token.children if c.dep_ in ("poss", "amod"))


def _own_claim(anchor: Token, names: _Mentions, skip: set[int]) -> tuple[int | None, bool, bool]:
    """What the value itself says it is of: "5.1 for flow matching", "the 2.65% achieved by NAS",
    "NAS (2.65%)". (mention, whether it said anything, whether it may head a list of names)."""
    for child in anchor.children:
        objects = []
        if child.dep_ in ("prep", "agent") and child.lower_ in ("for", "by"):
            objects = [g for g in child.children if g.dep_ == "pobj"]
        elif child.dep_ == "acl":
            objects = [g for a in child.children if a.dep_ == "agent" for g in a.children if g.dep_ == "pobj"]
        for noun in objects:
            found = names.headed_by(noun, ACTOR_TYPES)
            if found is not None:
                return found, True, True  # "by 0.33% and 0.18% for ResNet-101 and ResNet-152, respectively"
    if anchor.dep_ == "appos" and anchor.head.i not in skip:
        found = names.at(anchor.head, ACTOR_TYPES)
        if found is not None:
            return found, True, False
    return None, False, False


def _metric_owner(metric: int, value: Span, names: _Mentions) -> tuple[int | None, bool]:
    """The model a metric is "of" ("the accuracy of CodeLlama from 41.5% to 52.0%"), when no other
    name stands between it and the value. (mention, whether the metric is of anything)."""
    root = names.mentions[metric].span.root
    for prep in (c for c in root.children if c.dep_ == "prep" and c.lower_ == "of"):
        for noun in (g for g in prep.children if g.dep_ == "pobj"):
            found = names.headed_by(noun, ACTOR_TYPES)
            if found is None:
                continue
            between = range(names.mentions[found].span.end, value.start)
            if any(names.at(value.doc[i], ACTOR_TYPES) not in (None, found) for i in between):
                return None, True  # "the accuracy of GoogLeNet by 1.1%, VGG-16 by 4.3%": no longer GoogLeNet's
            return found, True
    return None, False


def _subject_of(value: Span, path: list[Token], metric: int | None, names: _Mentions,
                main: int | None) -> tuple[int | None, bool, float]:
    """The method or model that reached the value, whether it is a clause's subject (and may head a
    list of names), and how sure that is."""
    anchor = _anchor(value)
    skip = {t.i for t in value.doc[value.start : _phrase_head(value).i + 1]}
    found, said, listed = _own_claim(anchor, names, skip)
    if said:
        return found, listed, 0.8
    if metric is not None:
        found, said = _metric_owner(metric, value, names)
        if said:
            return found, False, 0.8 if found is not None else 0.0
    below = anchor
    for token in path:
        if _is_rival(token, below):
            return None, False, 0.0  # "outperforming the previous 86.4%": a rival's value
        if _is_verb(token):
            return _clause_subject(token, names, main)
        if token.i not in skip and below.dep_ in ("pobj", "prep") and token.lemma_.lower() in _UNNAMED_OWNERS:
            return None, False, 0.0  # "a character baseline of 14.8%"
        below = token
    return None, False, 0.0


def _is_rival(token: Token, below: Token) -> bool:
    """Whether the path's step from ``below`` to ``token`` enters what something is compared with:
    the object of "outperforms", "compared to / with", "than"."""
    lemma = token.lemma_.lower()
    return (lemma in _COMPARE_VERBS and below.dep_ == "dobj" or lemma == "compare" and below.lower_ in ("to", "with")
            or token.lower_ == "than")


def _clause_subject(verb: Token, names: _Mentions, main: int | None) -> tuple[int | None, bool, float]:
    """The actor a clause names as its subject (or agent); "we" and "our model" are the paper's ``main``
    proposal, but what "we train" or "we evaluate" is the object."""
    agents = [g for a in verb.children if a.dep_ == "agent" for g in a.children if g.dep_ == "pobj"]
    subjects = [c for c in verb.children if c.dep_ in _SUBJECT_DEPS and c.lower_ not in _RELATIVE]
    for noun in agents + subjects:
        found = names.headed_by(noun, ACTOR_TYPES)
        if found is not None:
            return found, True, 0.8
        if _is_self(noun) and names.headed_by(noun, {"Dataset", "Metric"}) is None:
            if verb.lemma_.lower() in _OBJECT_VERBS:
                objects = [c for c in verb.children if c.dep_ == "dobj"]
                found = next((names.headed_by(o, ACTOR_TYPES) for o in objects
                              if names.headed_by(o, ACTOR_TYPES) is not None), None)
                if found is not None:
                    return found, True, 0.7
            return main, False, 0.55
    if not subjects and not agents:
        # The parser found no subject, though a name stands right before the verb: "..., FC-CLIP
        # achieve 26.8 PQ" (read as an adverb of the clause before). Less sure than a parsed subject.
        before = verb.i - 1
        while before >= verb.sent.start and verb.doc[before].dep_ in ("aux", "neg", "advmod") \
                and names.at(verb.doc[before], ACTOR_TYPES) is None:
            before -= 1
        found = names.at(verb.doc[before], ACTOR_TYPES) if before >= verb.sent.start else None
        if found is not None and names.mentions[found].span.end == before + 1:
            return found, True, 0.6
    return None, False, 0.0  # "a simple baseline reaches 70%": a subject we cannot name


# ---------------------------------------------------------------- lists


def _coordinated(token: Token, other: Token) -> bool:
    """Whether the parse coordinates two names: one a conjunct (or apposition) of the other, down a
    chain, or both objects of the same word ("For CIFAR-10, CIFAR-100 and ImageNet", as the parser may
    read it)."""
    def chain(t: Token) -> set[int]:
        found = {t.i}
        while t.dep_ in ("conj", "appos") and t.head.i != t.i:
            t = t.head
            found.add(t.i)
        return found

    return bool(chain(token) & chain(other)) or (token.head.i == other.head.i and token.dep_ == other.dep_)


def _names_listed(found: int, labels, names: _Mentions) -> list[int | None] | None:
    """The list of names ``found`` stands in ("on MNIST, CIFAR-10 and SVHN"), in order, as mentions of
    ``labels`` (None for an element that is none); None when the list is not a clean one.

    An element follows a list separator, is coordinated with the first name in the parse, and is a
    mention of any type or a bare proper noun or number ("CIFAR-10 and 100"). A coordinated common
    noun ("ImageNet, and models with ...") means the list is not a list of names.
    """
    span = names.mentions[found].span
    doc, sentence, first = span.doc, span.sent, span.root

    def name_at(i: int, forward: bool) -> tuple[int | None, int, int, Token]:
        """The name starting (``forward``) or ending at token ``i``: (mention of labels, start, end, root)."""
        for m in names.by_token.get(i, ()):
            named = names.mentions[m].span
            if (named.start if forward else named.end - 1) == i:
                return names.at(named.root, labels), named.start, named.end, named.root
        return None, i, i + 1, doc[i]

    elements = [(found, span.start, span.end)]
    for forward in (True, False):
        while True:
            j = elements[-1][2] if forward else elements[0][1] - 1
            while sentence.start <= j < sentence.end and doc[j].lower_ in _LIST_SEPARATORS:
                j += 1 if forward else -1
            if j == (elements[-1][2] if forward else elements[0][1] - 1) or not sentence.start <= j < sentence.end:
                break
            mention, start, end, root = name_at(j, forward)
            # "CIFAR-10 and 100" is a list, however the parser reads it; "PTB and 52.0 on WikiText-2" is not.
            bare_number = root.pos_ == "NUM" and _unit(doc, root.i) is None and not (
                root.i + 1 < sentence.end and doc[root.i + 1].pos_ == "ADP")
            if not _coordinated(root, first) and not (forward and bare_number):
                break
            if mention is None and start + 1 == end and root.pos_ not in ("PROPN", "NUM") \
                    and names.by_token.get(root.i) is None:
                return None  # "ImageNet, and models with ...": not a list of names
            if forward:
                elements.append((mention, start, end))
            else:
                elements.insert(0, (mention, start, end))
    return [e[0] for e in elements]


def _element(found: int | None, labels, position: tuple[int, int] | None, names: _Mentions) -> int | None:
    """``found``, or where it stands in a list of names, the element at the value's ``position``
    (index, length) in its own list: "1.2% and 3.4% on MNIST and SVHN respectively". None when they
    cannot be paired."""
    if found is None:
        return None
    elements = _names_listed(found, labels, names)
    if elements is None:
        return None
    if len(elements) == 1:
        return found
    if position is None or position[1] != len(elements):
        return None  # "reaches 90% on MNIST and SVHN": which of them?
    return elements[position[0]]


# ---------------------------------------------------------------- results


def _read(value: _Value, path: list[Token], names: _Mentions, main: int | None, others: set[int]) -> _Reading:
    """The metric, dataset and subject ``value``'s own path leads to; ``others`` are the tokens of the
    sentence's other values."""
    metric = value.metric
    if metric is None and not value.named:
        skip = {t.i for t in value.span.doc[value.span.start : _phrase_head(value.span).i + 1]}
        metric = _metric_on_path(path, names, skip)
    dataset, dataset_listed = _dataset_on_path(value.span, path, metric, names, others)
    subject, subject_listed, sure = _subject_of(value.span, path, metric, names, main)
    return _Reading(metric, dataset, dataset_listed, subject, subject_listed, sure, value.named)


def _shared(readings: list[_Reading], own: _Reading) -> _Reading:
    """``own`` with what it lacks taken from the other values of its list, when they agree on it.

    A list shares its dependents however the parser attached them: in "3.1% and 1.9% error on
    CIFAR-10 and SVHN" the metric and the datasets hang on the last value only.
    """
    def agreed(part: str):
        found = {getattr(r, part) for r in readings if getattr(r, part) is not None}
        return next(iter(found)) if len(found) == 1 else None

    metric = own.metric if own.metric is not None or own.named else agreed("metric")
    if own.dataset is not None:
        dataset, dataset_listed = own.dataset, own.dataset_listed
    else:
        dataset = agreed("dataset")
        dataset_listed = any(r.dataset_listed for r in readings if r.dataset == dataset)
    if own.subject is not None:
        subject, subject_listed, sure = own.subject, own.subject_listed, own.sure
    else:
        subject = agreed("subject")
        subject_listed = any(r.subject_listed for r in readings if r.subject == subject)
        sure = max((r.sure for r in readings if r.subject == subject), default=0.0)
    return _Reading(metric, dataset, dataset_listed, subject, subject_listed, sure, own.named)


def _evaluated_on(span: Span) -> bool:
    """Whether a dataset is named as what the sentence's work is done on: "On MNIST, ...", "on
    Penn Treebank and WikiText-2"; not "we release a new benchmark, CodeBench"."""
    root = span.root
    while root.dep_ in ("conj", "compound", "det", "nmod") and root.head is not root:  # "PTB and WikiText-2 datasets"
        root = root.head
    return root.dep_ == "pobj" and root.head.lower_ in _DATASET_PREPS


def _slots(values: list[_Value]) -> list[int]:
    """The place of each value of a list, values written with "/" between them sharing one:
    "3.9%, 18.5% and 26.0% / 8.5%" -> [0, 1, 2, 2]."""
    slots: list[int] = []
    for n, value in enumerate(values):
        joined = n > 0 and any(t.text == "/" for t in value.span.doc[values[n - 1].span.end : value.span.start])
        slots.append(slots[-1] if joined else (slots[-1] + 1 if slots else 0))
    return slots


def _names_the_one_before(sentence: Span) -> bool:
    """Whether a sentence points back to a dataset: "on this benchmark", "on the same dataset"."""
    return any(t.lemma_.lower() in ("benchmark", "dataset", "corpus") and any(
        c.lower_ in ("this", "that", "same") for c in t.children) for t in sentence)


def _name_runs(named: list[int], mentions: list[Candidate]) -> list[list[int]]:
    """Names of a sentence (datasets, or methods and models) grouped into the lists it writes: "on PTB
    and WikiText-2 to 51.1 and 44.3, and on the text8 and Hutter Prize datasets to 1.19 and 1.08"
    writes two lists of two."""
    runs: list[list[int]] = []
    for j in sorted(named, key=lambda j: mentions[j].span.start):
        if runs:
            last = mentions[runs[-1][-1]].span
            between = last.doc[last.end : mentions[j].span.start]
            if all(t.lower_ in _LIST_SEPARATORS or t.lower_ == "the" for t in between):
                runs[-1].append(j)
                continue
        runs.append([j])
    return runs


def _paired_run(runs: list[list[int]], length: int, start: int, mentions: list[Candidate]) -> list[int] | None:
    """The list of names (datasets, or methods and models) that a list of ``length`` values starting at
    token ``start`` pairs with "respectively": the last list of that length before the values, else
    the first after them; None when no list has that length, or the values stand alone."""
    fitting = [run for run in runs if len(run) == length > 1]
    before = [run for run in fitting if mentions[run[0]].span.start < start]
    return before[-1] if before else next(iter(fitting), None)


def find_results(doc: Doc, mentions: list[Candidate]) -> list[Found]:
    """The results stated in ``doc``, linked to ``mentions`` through the sentence's parse.

    Example
    -------
    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("On AndroidWorld, our agent reaches a success rate of 80.2% and a perplexity of 3.65.")
    >>> spans = [Candidate(doc[1:2], "Dataset", 0.7, "name", role="evaluatesOn"),
    ...          Candidate(doc[7:9], "Metric", 0.8, "metric-lexicon", role="measures"),
    ...          Candidate(doc[15:16], "Metric", 0.7, "metric-lexicon", role="measures")]
    >>> [(r.value.text, r.unit, r.metric, r.dataset, r.kind) for r in find_results(doc, spans)]
    [('80.2%', '%', 1, 0, 'score'), ('3.65', '', 2, 0, 'score')]
    """
    main = main_proposal(mentions)
    found: list[Found] = []
    earlier_runs: list[list[int]] = []  # the lists of datasets the last sentence naming some wrote
    earlier_only: int | None = None  # the one dataset the last sentence naming any named
    for sentence in doc.sents:
        members = [j for j, m in enumerate(mentions) if sentence.start <= m.span.start < sentence.end]
        names = _Mentions(members, mentions)
        values = _read_values(sentence, mentions, names, members)
        respectively = any(t.lower_ in ("respectively", "resp.") for t in sentence)
        paths = [_path(value.anchor) for value in values]
        anchors = {value.anchor.i for value in values}
        readings = [_read(value, path, names, main, anchors - {value.anchor.i}) for value, path in zip(values, paths)]
        # The datasets the sentence names, once each, in order: where the parse ties a measured value
        # to none, the sentence's only dataset ("On MNIST, ... can cause more than 35% test error"),
        # or, "respectively", the one in the value's place ("on PTB and WikiText-2 to 47.7 and 40.7").
        named: dict[str, int] = {}
        for j in members:
            if mentions[j].label == "Dataset" and mentions[j].role != "introduces" and _evaluated_on(mentions[j].span):
                named.setdefault(mentions[j].span.text, j)
        datasets = list(named.values())
        # "3.6% on CIFAR-10 and 20.3% when transferred to ImageNet": a second dataset, however named,
        # means the sentence has no only dataset.
        distinct = {mentions[j].span.text for j in members if mentions[j].label == "Dataset"}
        own_runs = _name_runs(datasets, mentions)
        actor_runs = _name_runs([j for j in members if mentions[j].label in ACTOR_TYPES], mentions)
        runs = own_runs or earlier_runs
        earlier_runs = [run for run in own_runs if len(run) > 1] or earlier_runs
        # "... on the English PTB dataset. ... the highest-performing parser on this benchmark": the one before.
        if not distinct and earlier_only is not None and _names_the_one_before(sentence):
            datasets = [earlier_only]
            distinct = {mentions[earlier_only].span.text}
        earlier_only = datasets[0] if len(datasets) == 1 else (None if distinct else earlier_only)
        for group in _lists(values, names):
            slots = _slots([values[n] for n in group])
            closing = _closing_dataset(values[group[-1]].span, names) if len(group) > 1 else None
            for index, n in enumerate(group):
                value = values[n]
                if _is_condition(paths[n]):
                    continue
                reading = _shared([readings[m] for m in group], readings[n])
                # A value facing a list of names is paired with one only "respectively".
                position = (index, len(group)) if respectively else None
                dataset = _element(reading.dataset, {"Dataset"}, position, names) \
                    if reading.dataset_listed else reading.dataset
                if dataset is None and reading.metric is None:
                    continue  # "reduces cost by 40%": a number with nothing to compare it on
                told = dataset is not None
                paired = _paired_run(runs, len(group), values[group[0]].span.start, mentions) if respectively else None
                if paired is None and respectively and len(set(slots)) < len(group):
                    # "3.9%, 18.5% and 26.0% / 8.5% (Top-1 / Top-5) respectively" on three datasets: a
                    # pair written with "/" takes one place; its values (of two measures) take none.
                    slotted = _paired_run(runs, len(set(slots)), values[group[0]].span.start, mentions)
                    if slotted is not None and slots.count(slots[index]) == 1:
                        dataset, told = slotted[slots[index]], True
                if paired is not None and (not told or any(dataset in run for run in runs if len(run) == len(paired))):
                    dataset, told = paired[index], True  # "respectively" pairs in the order names are listed
                elif not told and len(datasets) == 1 and len(distinct) == 1:
                    dataset = datasets[0]
                if closing is not None and (n == group[-1] or not _dataset_after(value.span, names)[1]):
                    dataset, told = closing, True  # "26.8 PQ, 16.8 AP, and 34.1 mIoU on ADE20K, 18.2 PQ ... on ..."
                subject = _element(reading.subject, ACTOR_TYPES, position, names) \
                    if reading.subject_listed else reading.subject
                if subject is None and respectively and len(set(slots)) == len(group):
                    # "we obtain ResNet-50, ViT-S, and ConvNeXtV2-T models ..., which achieve 83.1%, 84.3%,
                    # and 85.0% ..., respectively": the list of names as long as the values, in order.
                    named = _paired_run(actor_runs, len(group), values[group[0]].span.start, mentions)
                    subject = named[index] if named is not None else None
                # Surest with both a metric and a dataset, and a subject the sentence names.
                confidence = (0.8 if dataset is not None and reading.metric is not None else 0.6) \
                    * (1.0 if reading.sure >= 0.7 else 0.85) * (1.0 if told or dataset is None else 0.85)
                found.append(Found(value.span, value.number, value.unit, reading.metric, dataset, subject,
                                   value.previous, value.kind, round(confidence, 3)))
    return found
