"""The hand-written related-method expectations used by bench/related_eval.py are well formed."""
import json
from pathlib import Path


def test_expectations_name_queries_and_distinct_expected_methods():
    data = json.loads((Path(__file__).parent / "related_expectations.json").read_text(encoding="utf-8"))
    queries = {k: v for k, v in data.items() if not k.startswith("_")}
    assert len(queries) >= 8
    for query, expected in queries.items():
        assert expected and len(set(expected)) == len(expected), query
        assert query not in expected, query
