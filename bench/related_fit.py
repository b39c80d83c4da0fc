"""Fit the weights of ``kg related``'s score on judged queries, and say what they give where they were
not fitted.

    python bench/related_fit.py iclr=GRAPH:bench/concepts_dev.json \
        neurips=GRAPH:bench/judged/neurips2023_related_synonyms.json \
        --measure corl=GRAPH --blind bench/judged/related_blind.json

Each argument is NAME=GRAPH:JUDGED (a graph built by ``kg build``; judged files with a ``related`` list
of queries and the names judged related to each, joined by ``+``); ``--measure`` names a corpus measured
but never fitted on. ``--blind`` adds the judgments made blind of each query's candidates
(``related_judged``, by corpus NAME and query): where a candidate was judged so, that judgment decides
("related" is right; "same", the query by another name, is not); elsewhere the list does. A query is
held out when ``int(sha1(query), 16) % 3 == 0``, as in ``bench/eras.py``.

For each query, the candidates are those ``kg related`` scores with the current weights (the best
:data:`POOL`); each carries its features (:data:`kg.query.related.FEATURES`). A logistic regression
(balanced classes) is fitted on the tuned queries of the fitted corpora together. Printed: the fitted
weights, scaled so that the largest is 4 (the score's order is all that counts), and per corpus and part
the top 5's right answers over those judged (and how many were not judged: a blind judgment covers the
candidates it was shown), with the current weights and with the fitted ones (the tuned part also by
leaving each query out).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))
from kg.errors import KGError  # noqa: E402
from kg.keys import resolution_key  # noqa: E402
from kg.query.related import FEATURES, WEIGHTS, RelatedIndex  # noqa: E402
from kg.query.graph_index import read_tables  # noqa: E402
from kg.similarity import graph_vectors  # noqa: E402

POOL = 60  # candidates scored per query


def part_of(query: str) -> str:
    return "held out" if int(hashlib.sha1(query.encode()).hexdigest(), 16) % 3 == 0 else "tuned"


def candidates(corpus: str, graph: str, lists: dict[str, set[str]], blind: dict[str, dict[str, str]]) -> list[dict]:
    """Every judged query's candidates: corpus, query, part, label, features, and whether the judgments
    call it related (None where neither judged it)."""
    index = RelatedIndex(read_tables(graph))
    vectors = graph_vectors(graph)
    rows = []
    for query in dict.fromkeys([*lists, *blind]):
        try:
            _, found = index.related(query, k=POOL, vectors=vectors)
        except KGError:
            continue
        for r in found:
            if r.label in blind.get(query, {}):
                right = blind[query][r.label] == "related"
            else:
                right = resolution_key(r.label) in lists[query] if query in lists else None
            rows.append({"corpus": corpus, "query": query, "part": part_of(query), "label": r.label,
                         "features": [r.features[f] for f in FEATURES], "right": right})
    return rows


def fit(rows: list[dict]) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    rows = [r for r in rows if r["right"] is not None]
    model = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced")
    model.fit(np.array([r["features"] for r in rows]), np.array([r["right"] for r in rows]))
    return model.coef_[0]


def top5(rows: list[dict], weights: np.ndarray) -> tuple[int, int, int]:
    """Of each query's 5 best candidates by ``weights``: how many are judged right, judged at all, and not judged."""
    by_query: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        by_query.setdefault((r["corpus"], r["query"]), []).append(r)
    right = judged = unjudged = 0
    for found in by_query.values():
        best = sorted(found, key=lambda r: -float(np.dot(weights, r["features"])))[:5]
        right += sum(r["right"] is True for r in best)
        judged += sum(r["right"] is not None for r in best)
        unjudged += sum(r["right"] is None for r in best)
    return right, judged, unjudged


def _cell(figures: tuple[int, int, int]) -> str:
    right, judged, unjudged = figures
    return f"{right}/{judged} = {right / max(judged, 1):.2f}" + (f" ({unjudged} not judged)" if unjudged else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", help="NAME=GRAPH:JUDGED[+JUDGED...], fitted on (tuned part)")
    parser.add_argument("--measure", action="append", default=[], help="NAME=GRAPH[:JUDGED], measured only")
    parser.add_argument("--blind", help="judgments made blind (related_judged: corpus NAME -> query -> candidate -> label)")
    args = parser.parse_args()
    blind = json.loads(Path(args.blind).read_text())["related_judged"] if args.blind else {}
    rows, fitted_on = [], set()
    for spec, fitted in [(spec, True) for spec in args.corpora] + [(spec, False) for spec in args.measure]:
        name, rest = spec.split("=", 1)
        graph, _, judged = rest.partition(":")
        lists = {item["query"]: {resolution_key(n) for n in item["relevant"]}
                 for path in filter(None, judged.split("+")) for item in json.loads(Path(path).read_text()).get("related", [])}
        rows += candidates(name, graph, lists, blind.get(name, {}))
        if fitted:
            fitted_on.add(name)
    tuned = [r for r in rows if r["part"] == "tuned" and r["corpus"] in fitted_on]
    weights = fit(tuned)
    weights = weights * 4 / np.abs(weights).max()
    print("fitted weights:", ", ".join(f'"{f}": {w:.2f}' for f, w in zip(FEATURES, weights)))
    current = np.array([WEIGHTS[f] for f in FEATURES])
    print(f"\n{'corpus':12} {'part':9} {'current':>26} {'fitted':>26} {'fitted, query left out':>26}")
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        for part in ("tuned", "held out"):
            mine = [r for r in rows if r["corpus"] == corpus and r["part"] == part]
            if not mine:
                continue
            cells = [_cell(top5(mine, current)), _cell(top5(mine, weights))]
            if part == "tuned" and corpus in fitted_on:  # each query ranked by weights fitted without it
                totals = np.zeros(3, dtype=int)
                for query in dict.fromkeys(r["query"] for r in mine):
                    others = [r for r in tuned if (r["corpus"], r["query"]) != (corpus, query)]
                    totals += top5([r for r in mine if r["query"] == query], fit(others))
                cells.append(_cell(tuple(totals)))
            label = part if corpus in fitted_on else f"{part}*"
            print(f"{corpus:12} {label:9} " + " ".join(f"{cell:>26}" for cell in cells))
    print("\n* measured only: no query of this corpus was fitted on")


if __name__ == "__main__":
    main()
