"""Evaluate: score an extractor against a gold-annotated corpus.

Evaluation sits beside the pipeline, not in it: it reads a gold corpus, asks
an extractor for ``(start_char, end_char, label)`` spans on each text, and
counts exact matches; relations likewise, by both arguments' spans and the
type. ``scierc`` reads SciERC (Luan et al. 2018) and scores on it; ``report``
lays kg's extractors side by side for ``kg eval scierc``. ``report`` runs
the extractors, so it is imported on its own (``kg.evaluate.report``), not with
the scorer: reading a score never loads a model.
"""
from .scierc import (
    KG_LABELS,
    KG_TO_SCIERC,
    PRF,
    SCIERC_LABELS,
    SCIERC_RELATIONS,
    Scores,
    SciercDoc,
    ScierDoc,
    detokenize,
    entity_predictor,
    evaluate,
    evaluate_relations,
    side_by_side,
    read_scierc,
    score,
)

__all__ = [
    "KG_LABELS", "KG_TO_SCIERC", "PRF", "SCIERC_LABELS", "SCIERC_RELATIONS", "Scores", "SciercDoc", "ScierDoc",
    "detokenize", "entity_predictor", "evaluate", "evaluate_relations", "read_scierc", "score", "side_by_side",
]
