"""The tables of ``kg eval scierc`` and ``kg eval scier``: kg's extractors scored side by side.

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
from ..extract import classes, extract_papers, predict_entities, predict_relations, predict_text
from ..extract.judge import prune
from ..extract.pipeline import BASELINE_NER
from ..extract.relation_model import to_kg_relation
from ..model import Paper
from ..vocab import (ENTITY_TYPES, RELATION_TABLE, SCIER_RELATIONS, SCIER_SYNONYM, SCIER_TO_KG, SCIERC_RELATION,
                     SCIERC_TO_KG)
from .scier import SCIER_TYPES, evaluate_scier
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
    """The new extractor, ``predict_text`` in SciERC's labels, remembering its answers: both tables ask it
    for the same texts. A model trained on kg's types and SciER's relations is read through ours (a
    Dataset is a Material, Evaluated-With is EVALUATE-FOR from the dataset); a SciER relation
    SciERC has no type for is left out."""

    def in_scierc(text: str) -> tuple[list, list]:
        entities, relations = predict_text(text)
        found = []
        for hs, he, ts, te, label in relations:
            if label in SCIER_TO_KG and SCIER_TO_KG[label] in SCIERC_RELATION:
                label, swap = SCIERC_RELATION[SCIER_TO_KG[label]]
                found.append((ts, te, hs, he, label) if swap else (hs, he, ts, te, label))
            elif label not in SCIER_RELATIONS:
                found.append((hs, he, ts, te, label))
        return [(s, e, KG_TO_SCIERC.get(label, label)) for s, e, label in entities], found

    return functools.lru_cache(maxsize=None)(in_scierc)


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


# ----------------------------------------------------------------------------- SciER

def _scier_type(label: str) -> str | None:
    """SciER's entity type for one of the span model's labels or kg's types: a Model is a Method,
    a SciERC Material a Dataset; a Metric, OtherScientificTerm or Generic has none."""
    kg_type = label if label in ENTITY_TYPES else SCIERC_TO_KG.get(label)
    return {"Model": "Method"}.get(kg_type, kg_type) if kg_type in SCIER_TYPES or kg_type == "Model" else None


def _scier_relation(relation: str, head_type: str) -> str | None:
    """SciER's relation type for one of kg's relations from a head of kg type ``head_type``:
    the first SciER type its row of ``kg.vocab.RELATION_TABLE`` is read from (hyponymOf between
    tasks is SubTask-Of)."""
    scier = next((row.scier for row in RELATION_TABLE if row.name == relation), ())
    if relation == "hyponymOf" and head_type == "Task":
        return "SubTask-Of"
    return scier[0] if scier else None


def model_alone_scier(text: str) -> tuple[list, list]:
    """The span model alone on ``text`` in SciER's types: entities ``(start, end, type)`` and
    relations ``(hs, he, head type, ts, te, tail type, type)``. A model with SciERC's labels is read
    through kg's types (a Material is a Dataset; EVALUATE-FOR is Evaluated-With)."""
    entities, relations = predict_text(text)
    types = {(s, e): _scier_type(label) for s, e, label in entities}
    kg_types = {(s, e): label if label in ENTITY_TYPES else SCIERC_TO_KG.get(label) for s, e, label in entities}
    found = []
    for hs, he, ts, te, label in relations:
        if label in SCIER_RELATIONS:
            if types[hs, he] and types[ts, te]:  # SciER relates its own types alone: no Metric, no class
                found.append((hs, he, types[hs, he], ts, te, types[ts, te], label))
            continue
        mapped = to_kg_relation(label, kg_types[hs, he] or "")
        if mapped:
            relation, swap = mapped
            (hs, he), (ts, te) = ((ts, te), (hs, he)) if swap else ((hs, he), (ts, te))
            scier = _scier_relation(relation, kg_types[hs, he] or "")
            if scier:
                found.append((hs, he, types[hs, he], ts, te, types[ts, te], scier))
    return [(s, e, types[s, e]) for s, e, _ in entities if types[s, e]], found


def kg_scier(text: str) -> tuple[list, list]:
    """kg's whole extractor, as ``kg build`` runs it, on ``text`` in SciER's types: its mentions and
    its links (SciER's Synonym-Of from ``PaperExtraction.synonyms``). SciER does not annotate classes
    of methods ("diffusion models"): that layer (:data:`kg.extract.classes.RULES`) is left out."""
    [extraction] = extract_papers([Paper("scier", text)], without=classes.RULES)
    prune(extraction)  # the mentions the build drops (kg.extract.judge)
    mentions = extraction.mentions
    types = [_scier_type(m.label) for m in mentions]
    found = []
    for link in extraction.links:
        scier = _scier_relation(link.relation, mentions[link.head].label)
        if scier:
            head, tail = mentions[link.head], mentions[link.tail]
            found.append((head.start, head.end, types[link.head], tail.start, tail.end, types[link.tail], scier))
    for a, b, _ in extraction.synonyms:
        found.append((mentions[a].start, mentions[a].end, types[a], mentions[b].start, mentions[b].end, types[b],
                      SCIER_SYNONYM))
    return [(m.start, m.end, t) for m, t in zip(mentions, types) if t], found


def scier_tables(docs: Sequence[SciercDoc]) -> str:
    """``kg eval scier``'s tables on SciER ``docs``: the span model alone and kg's whole extractor side
    by side, entities (exact span and type; span only) and relations (strict)."""
    columns = {name: evaluate_scier(docs, lambda doc, predict=predict: predict(doc.text))
               for name, predict in (("model", functools.lru_cache(maxsize=None)(model_alone_scier)),
                                     ("kg", kg_scier))}
    types = {f"micro ({len(SCIER_TYPES)} types)": SCIER_TYPES}
    return "\n\n".join([
        "Entities, exact span and type:\n" + side_by_side({n: c["exact"] for n, c in columns.items()}, types),
        "Entities, span only (any type):\n" + side_by_side({n: c["span"] for n, c in columns.items()}, types),
        "Relations, strict (both spans, both types, the relation type):\n"
        + side_by_side({n: c["relation"] for n, c in columns.items()},
                       {f"micro ({len(SCIER_RELATIONS)} types)": SCIER_RELATIONS}),
    ])
