"""What the build learns of each paper after extraction. The proposals: a name scored at or above the
threshold is proposed at its best-scored mention (its other mentions keep their roles), a name the
rules proposed but scored below the lower threshold is used. The mention judge: a mention scored below
its threshold is dropped unless a result names it or the rules propose it, and what points at mentions
is renumbered. The shipped weights of both are for the features this kg computes."""
from __future__ import annotations

import numpy as np

from kg.extract.features import feature_names, features
from kg.extract.proposals import model, settle
from kg.model import Mention, Paper, PaperExtraction

TEXT = "We call our method FooNet. FooNet is evaluated on BarSet. We also propose GNN layers."


def _extraction() -> PaperExtraction:
    def mention(name: str, at: int, label: str, role: str, sentence: int) -> Mention:
        start = TEXT.index(name, at)
        return Mention(start, start + len(name), name, label, sentence, 0.9, "test", role=role, role_confidence=0.9)

    sentences = [(0, 26), (27, 57), (58, len(TEXT))]
    mentions = [mention("FooNet", 0, "Method", "uses", 0), mention("FooNet", 26, "Method", "uses", 1),
                mention("BarSet", 0, "Dataset", "evaluatesOn", 1), mention("GNN layers", 0, "Method", "proposes", 2)]
    return PaperExtraction(Paper("p1", TEXT), sentences, mentions, {})


def _weights(by_feature: dict[str, float]) -> dict:
    """Weights that score a mention by the features named (all else 0), thresholds 0.5 and 0.3."""
    names = feature_names()
    coef = np.zeros(len(names))
    for name, value in by_feature.items():
        coef[names.index(name)] = value
    return {"features": list(names), "coef": coef.tolist(), "propose": 0.5, "keep": 0.3}


def test_a_name_scored_as_the_papers_own_is_proposed_at_its_best_mention_and_its_others_keep_their_roles():
    extraction = _extraction()
    settle(extraction, _weights({"bias": -4.0, "before:call": 8.0}))  # "call" stands before the first FooNet only
    roles = [(m.text, m.role) for m in extraction.mentions]
    assert roles[:3] == [("FooNet", "proposes"), ("FooNet", "uses"), ("BarSet", "evaluatesOn")]


def test_a_name_the_rules_proposed_but_scored_low_is_used():
    extraction = _extraction()
    settle(extraction, _weights({"bias": -4.0}))  # every name scores 0.018: below the lower threshold
    assert [m.role for m in extraction.mentions] == ["uses", "uses", "evaluatesOn", "uses"]
    assert extraction.mentions[3].role_confidence > 0.9


def test_a_name_between_the_thresholds_keeps_the_rules_role():
    extraction = _extraction()
    settle(extraction, _weights({"bias": -0.2}))  # every name scores 0.45: between 0.3 and 0.5
    assert [m.role for m in extraction.mentions] == ["uses", "uses", "evaluatesOn", "proposes"]


def test_the_shipped_weights_score_the_features_this_kg_computes():
    shipped = model()
    assert shipped is not None and len(shipped["coef"]) == len(feature_names())
    assert 0 < shipped["keep"] <= shipped["propose"] < 1
    assert features(_extraction()).shape == (4, len(feature_names()))


# ---------------------------------------------------------------- the mention judge


def _judged(by_feature: dict[str, float]) -> PaperExtraction:
    from kg.extract.judge import prune
    from kg.model import Link, Result

    extraction = _extraction()
    extraction.links = [Link(0, "usedFor", 2, 1, 0.9), Link(2, "usedFor", 1, 1, 0.9)]
    extraction.synonyms = [(0, 1, 0.9), (1, 2, 0.8)]
    extraction.results = [Result(0, 1, 1.0, "%", 1, None, 2, None, None, "score", 0.9)]
    weights = _weights(by_feature)
    prune(extraction, {**weights, "keep": 0.5})
    return extraction


def test_the_judge_drops_low_scored_mentions_and_renumbers_what_points_at_the_rest():
    extraction = _judged({"bias": -4.0})  # every mention scores low
    # BarSet stays (a result names it), and GNN layers (the rules propose it: the proposals scorer judges it).
    assert [m.text for m in extraction.mentions] == ["BarSet", "GNN layers"]
    assert extraction.results[0].dataset == 0 and extraction.links == [] and extraction.synonyms == []


def test_the_judge_keeps_what_it_scores_high():
    extraction = _judged({"bias": -4.0, "first naming": 8.0})  # the first FooNet and BarSet score high
    assert [m.text for m in extraction.mentions] == ["FooNet", "BarSet", "GNN layers"]
    assert [(link.head, link.tail) for link in extraction.links] == [(0, 1)]
    assert extraction.results[0].dataset == 1 and extraction.synonyms == []


def test_the_shipped_judge_scores_the_features_this_kg_computes():
    from kg.extract.judge import model as judge_model

    shipped = judge_model()
    assert shipped is not None and len(shipped["coef"]) == len(feature_names()) and 0 < shipped["keep"] < 1
