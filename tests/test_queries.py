"""Every SPARQL text kg runs lives in kg/query/rq as an .rq file, and each one parses."""
import ast
import re
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.query import examples, kg_terms, view, with_values
from kg.store import PREFIXES

ROOT = Path(__file__).parent.parent
VIEWS = sorted(path.stem for path in (ROOT / "kg" / "query" / "rq" / "views").glob("*.rq"))
# A query form followed by a group: "SELECT ?x WHERE {", "ASK {", "CONSTRUCT {".
SPARQL = re.compile(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b[^{}]*\{", re.S)


def _strings_outside_docstrings(tree: ast.AST):
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node
        elif isinstance(node, ast.JoinedStr):
            yield node


@pytest.mark.parametrize("path", sorted((ROOT / "kg").rglob("*.py")) + sorted((ROOT / "viz").glob("*.py")),
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_no_sparql_text_outside_kg_queries(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _strings_outside_docstrings(tree):
        text = node.value if isinstance(node, ast.Constant) else ast.unparse(node)
        assert not SPARQL.search(text), f"{path.name}:{node.lineno}: SPARQL belongs in kg/query/rq: {text[:80]!r}"


@pytest.mark.parametrize("name", VIEWS)
def test_every_view_query_parses(name):
    # Unbound parameters are fine; a VALUES block of the right shape is what callers add.
    query = with_values(view(name), "unused", *kg_terms(["Method"]))
    ox.Store().query(query, prefixes=PREFIXES)


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_query_parses_and_says_what_it_answers(name):
    example = examples()[name]
    assert example.description
    ox.Store().query(example.text, prefixes=PREFIXES)


def test_the_build_ranks_each_types_names_once_for_all_examples_and_keeps_what_each_alone_gives(sample, monkeypatch):
    import kg.query
    from kg.query.tables import store_answers
    from kg.store import open_graph

    store = open_graph(sample)
    alone = {name: example.choices(store) for name, example in examples().items()}
    ranked, rank = [], kg.query._names_to_try
    monkeypatch.setattr(kg.query, "_names_to_try", lambda store, *key: ranked.append(key) or rank(store, *key))
    kept = store_answers(store)
    assert kept["examples"] == alone
    assert len(ranked) == len(set(ranked)) < sum(len(example.params) for example in examples().values())
