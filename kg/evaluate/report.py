"""The tables of ``kg eval scierc``: kg's three extractors scored side by side on SciERC.

The extractors are the ``old`` one (the spaCy CNN NER of the first round and
the logistic-regression relation classifier over its entities), the ``new``
fine-tuned span model (``kg.extract.predict_text``), and ``kg``'s whole
extractor as ``kg build`` runs it, its types and edges mapped to SciERC's
(see ``kg eval scierc --help``). The scoring itself is :mod:`.scierc`'s.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import KGError
from ..extract import predict_entities, predict_relations, predict_text
from ..extract.pipeline import BASELINE_NER
from ..vocab import SCIERC_RELATION
from .scierc import (KG_LABELS, KG_TO_SCIERC, SCIERC_LABELS, SCIERC_RELATIONS, SciercDoc, entity_predictor, evaluate,
                     evaluate_relations, side_by_side)

#: What the span model answers for a text: its entities and its relations, as ``predict_text``.
SpanModel = Callable[[str], tuple[list, list]]


def load_ner(path: str | Path | None = None):
    """The spaCy pipeline at ``path`` (default: the shipped baseline NER), scored as the old extractor.

    Raises
    ------
    KGError
        If ``path`` holds no spaCy pipeline, naming the path.
    """
    import spacy  # only the old extractor needs spaCy's models

    path = Path(path) if path else BASELINE_NER
    try:
        return spacy.load(path)
    except OSError as error:
        raise KGError(f"No NER pipeline at {path} ({error}): --baseline takes a spaCy pipeline folder "
                      "with a SciERC-trained 'ner'.") from None


def span_model() -> SpanModel:
    """The new extractor, ``predict_text``, remembering its answers: both tables ask it for the same texts."""
    return functools.lru_cache(maxsize=None)(predict_text)


def entity_table(docs: Sequence[SciercDoc], old_ner, new_model: SpanModel) -> str:
    """Entity scores on SciERC ``docs``, side by side: ``old_ner``'s entities, ``new_model(text)[0]``'s
    and kg's own, with micro averages over SciERC's six types and over the four kg also extracts."""
    columns = {"old": evaluate(docs, entity_predictor(old_ner)),
               "new": evaluate(docs, lambda text: new_model(text)[0]),
               "kg": evaluate(docs, predict_entities, label_map=KG_TO_SCIERC)}
    return side_by_side(columns, {f"micro ({len(SCIERC_LABELS)} types)": SCIERC_LABELS,
                                  f"micro ({len(KG_LABELS)}: kg's types)": KG_LABELS})


def relation_table(docs: Sequence[SciercDoc], old_ner, new_model: SpanModel) -> str:
    """Relation scores on SciERC ``docs``, side by side, each extractor end to end on its own entities:
    the old one (``old_ner``'s entities and the logistic-regression classifier), ``new_model(text)[1]``
    and kg's own edges, with micro averages over SciERC's seven types and over the five kg maps."""

    def old(doc):
        ents = [(e.start_char, e.end_char, e.label_) for e in old_ner(doc.text).ents]
        return predict_relations(doc.text, ents, use_rules=False)

    mapped = sorted({label for label, _ in SCIERC_RELATION.values()}, key=SCIERC_RELATIONS.index)
    columns = {"old": evaluate_relations(docs, old),
               "new": evaluate_relations(docs, lambda doc: new_model(doc.text)[1]),
               "kg": evaluate_relations(docs, lambda doc: predict_relations(doc.text))}
    return side_by_side(columns, {f"micro ({len(SCIERC_RELATIONS)} types)": SCIERC_RELATIONS,
                                  f"micro ({len(mapped)} kg maps)": mapped})
