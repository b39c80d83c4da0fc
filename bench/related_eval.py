"""Related methods: precision@5 and recall@10 on hand-written expectations, for the full score and each part.

Builds the graph of a corpus, then for every query in tests/related_expectations.json
ranks Method and Model entities by the full score of kg.query.related and by each of its
parts alone, and prints the mean precision@5 and recall@10 over the queries.

    python bench/related_eval.py ../shared/corpus/*.txt
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from kg.build import build
from kg.query.related import related
from kg.keys import resolution_key
from kg.query.graph_index import read_tables
from kg.vocab import ACTOR_TYPES

EXPECTATIONS = Path(__file__).resolve().parents[1] / "tests" / "related_expectations.json"
PARTS = ("variant", "tasks", "datasets", "co-mentioned", "compared")


def main(inputs: list[str]) -> None:
    expectations = {k: v for k, v in json.loads(EXPECTATIONS.read_text(encoding="utf-8")).items() if not k.startswith("_")}
    with tempfile.TemporaryDirectory() as out:
        build(inputs, Path(out) / "g", cache=None)
        tables = read_tables(Path(out) / "g")
        rankings = {}
        for query in expectations:
            results = []
            for entity_type in sorted(ACTOR_TYPES):
                results += related(tables, query, k=10_000, type=entity_type)[1]
            rankings[query] = results
    print(f"{len(expectations)} queries; mean precision@5 and recall@10")
    print(f"{'ranking by':<14}{'P@5':>7}{'R@10':>7}")
    for part in ("full score", *PARTS):
        p5 = r10 = 0.0
        for query, expected in expectations.items():
            key = (lambda r: r.score) if part == "full score" else (lambda r, part=part: r.parts.get(part, 0.0))
            ranked = [r for r in sorted(rankings[query], key=lambda r: (-key(r), r.label)) if key(r) > 0]
            want = {resolution_key(e) for e in expected}
            got = [resolution_key(r.label) for r in ranked]
            p5 += len(want & set(got[:5])) / 5
            r10 += len(want & set(got[:10])) / len(want)
        print(f"{part:<14}{p5 / len(expectations):>7.2f}{r10 / len(expectations):>7.2f}")
    misses = {q: [e for e in exp if resolution_key(e) not in {resolution_key(r.label) for r in
                  sorted(rankings[q], key=lambda r: -r.score)[:10]}] for q, exp in expectations.items()}
    print("not in the top 10 (full score): " + "; ".join(f"{q}: {', '.join(m)}" for q, m in misses.items() if m))


if __name__ == "__main__":
    main(sys.argv[1:] or ["../shared/corpus"])
