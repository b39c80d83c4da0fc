"""Results: the scores an abstract reports, each with its metric, dataset and subject.

"The resultant MOBILERL-9B model achieves state-of-the-art results in terms
of success rates on both AndroidWorld (80.2%) and Android-Lab (53.6%)" gives
two results: 80.2 % success rate on AndroidWorld and 53.6 % on Android-Lab,
both by MOBILERL-9B. "improving accuracy from 57.5% to 64.0%" gives 64.0 with
57.5 as the value before; "improves by 12%" is a *gain*, not a score.

A number counts when it carries a unit (%, points, ×) or stands next to a
metric ("perplexity of 62.4", "1.37 BPC"); bare numbers (sizes, counts,
years) never do.
"""
from __future__ import annotations

from typing import NamedTuple

from spacy.tokens import Doc, Span, Token

from .. import lexicon
from .links import MentionSpan, main_proposal, sentence_actor

_UNITS = {"%": "%", "percent": "%", "points": "points", "point": "points", "pp": "points", "x": "x", "×": "x"}
_GAIN_WORDS = {"improvement", "improvements", "gain", "gains", "increase", "increases", "reduction", "reductions",
               "boost", "boosts", "speedup", "speed-up", "drop", "decrease", "margin", "reduce", "reduces",
               "reduced", "improve", "improves", "improved", "improving", "relative", "absolute"}


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


def _number(token: Token) -> float | None:
    text = token.text.replace(",", "")
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


def _inside(i: int, spans: list[MentionSpan]) -> bool:
    return any(m.span.start <= i < m.span.end for m in spans)


def _nearest(members: list[int], mentions: list[MentionSpan], label: str, at: int) -> int | None:
    found = [j for j in members if mentions[j].label == label]
    if not found:
        return None
    # Prefer what comes before ("AndroidWorld (80.2%)", "accuracy of 64%"), then what follows.
    return min(found, key=lambda j: (mentions[j].span.end > at, abs(mentions[j].span.start - at)))


def find_results(doc: Doc, mentions: list[MentionSpan]) -> list[Found]:
    """The results stated in ``doc``, linked to ``mentions``.

    Example
    -------
    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("Our model reaches a success rate of 80.2% on AndroidWorld and 3.65 error.")
    >>> spans = [MentionSpan(doc[4:6], "Metric", "measures"), MentionSpan(doc[10:11], "Dataset", "evaluatesOn"),
    ...          MentionSpan(doc[13:14], "Metric", "measures")]
    >>> [(r.value.text, r.unit, r.metric, r.dataset, r.kind) for r in find_results(doc, spans)]
    [('80.2%', '%', 0, 1, 'score'), ('3.65', '', 2, 1, 'score')]
    """
    main = main_proposal(mentions)
    found: list[Found] = []
    for sentence in doc.sents:
        members = [j for j, m in enumerate(mentions) if sentence.start <= m.span.start < sentence.end]
        actor, sure = sentence_actor(sentence, members, mentions, main)
        values: list[tuple[int, int, float, str, float | None, str, int | None]] = []
        pending: float | None = None
        for token in sentence:
            number = _number(token)
            if number is None or _inside(token.i, mentions):
                continue
            unit = _unit(doc, token.i)
            beside = None
            if unit is None:
                # "perplexity of 62.4", "error rate: 3.65", "1.37 BPC": a bare number beside a metric.
                before = [m for m in mentions if m.label == "Metric" and 0 < token.i - m.span.end + 1 <= 3
                          and m.span.end <= token.i and all(t.lower_ in ("of", "=", ":", "is", "at", "a", "(")
                                                           for t in doc[m.span.end : token.i])]
                after = [m for m in mentions if m.label == "Metric" and m.span.start == token.i + 1]
                # "an FID of 2.9, compared with 5.1 for flow matching": a value owned by a named method,
                # in a sentence that names its metric.
                owned = token.i + 2 < len(doc) and doc[token.i + 1].lower_ == "for" and any(
                    m.span.start == token.i + 2 and m.label in ("Method", "Model") for m in mentions) and any(
                    mentions[j].label == "Metric" for j in members)
                if not (before or after or owned):
                    continue
                unit = ("", token.i + 1)
                beside = (after or before or [None])[0]
            name, end = unit
            words = [t.lower_ for t in doc[max(sentence.start, token.i - 4) : token.i]]
            if words[-1:] == ["from"]:
                pending = number  # "from 57.5% to 64.0%": kept as the value before
                continue
            previous, pending = (pending, None) if words[-1:] == ["to"] else (None, pending)
            gain = name == "x" or (words and words[-1] in ("by", "of") and (words[-1] == "by" or any(
                w in _GAIN_WORDS for w in words))) or (words[-2:] == ["up", "to"] and "by" in words)
            metric = mentions.index(beside) if beside is not None else None
            values.append((token.i, end, number, name, previous, "gain" if gain else "score", metric))

        datasets = [j for j in members if mentions[j].label == "Dataset"]
        scores = [v for v in values if v[5] == "score"]
        # "... on A and B, with 61.0% and 70.2% respectively": the values pair with the datasets in order.
        respective = len(datasets) > 1 and len(scores) == len(datasets) and any(
            t.lower_ == "respectively" for t in sentence)
        for start, end, number, unit, previous, kind, beside_metric in values:
            if respective and kind == "score":
                dataset = datasets[scores.index(next(v for v in scores if v[0] == start))]
            else:
                dataset = _nearest(members, mentions, "Dataset", start)
            metric = beside_metric if beside_metric is not None else _nearest(members, mentions, "Metric", start)
            if dataset is None and metric is None:
                continue  # "reduces cost by 40%": a number with nothing to compare it on
            subject = actor
            if metric is not None:
                # "accuracy of CodeLlama-7b-Instruct from 57.5% to 64.0%": the model the metric is of.
                between = [j for j in members if mentions[j].label in ("Model", "Method")
                           and mentions[metric].span.end <= mentions[j].span.start and mentions[j].span.end <= start
                           and doc[mentions[j].span.start - 1].lower_ == "of"]
                subject = between[0] if between else actor
            # "compared with 5.1 for flow matching": the value belongs to what follows it.
            owner = [j for j in members if mentions[j].label in ("Model", "Method") and end < len(doc)
                     and doc[end].lower_ in ("for", "by", "with") and mentions[j].span.start == end + 1]
            if owner:
                subject = owner[0]
            # Surest with both a metric and a dataset, and a subject the sentence names.
            confidence = (0.8 if dataset is not None and metric is not None else 0.6) * (1.0 if sure >= 0.7 else 0.85)
            found.append(Found(doc[start:end], number, unit, metric, dataset, subject, previous, kind, round(confidence, 3)))
    return found


def lower_is_better(metric: str) -> bool | None:
    """Whether a lower value of ``metric`` is better (error, perplexity, FID); None when unknown.

    >>> lower_is_better("test error rate"), lower_is_better("success rates"), lower_is_better("novelty")
    (True, False, None)
    """
    words = set(metric.lower().replace("-", " ").split())
    if words & lexicon.LOWER_IS_BETTER:
        return True
    if words & lexicon.HIGHER_IS_BETTER:
        return False
    return None
