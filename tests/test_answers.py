"""Each command that answers a question prints its answer's ``as_text`` and, with ``--format json``,
its ``as_json``: one producer per form, read the same way from Python and from the command line."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.query.explain import explanation
from kg.query.leaderboard import leaderboard
from kg.query.panels import compare
from kg.query.related import RelatedIndex
from kg.query.graph_index import read_tables
from kg.similarity import graph_vectors


def answers(graph):
    tables = read_tables(graph)
    return {
        ("related", "GRPO"): RelatedIndex(tables).answer("GRPO", vectors=graph_vectors(graph)),
        ("explain", "C-GRPO", "GRPO"): explanation(tables, "C-GRPO", "GRPO"),
        ("leaderboard", "AndroidWorld"): leaderboard(tables, "AndroidWorld"),
        ("compare", "mathematical reasoning"): compare(graph, "mathematical reasoning"),
    }


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_the_command_prints_the_answer_python_gets(sample, fmt):
    for argv, answer in answers(sample).items():
        result = CliRunner().invoke(main, [*argv, "-g", str(sample), "--format", fmt])
        assert result.exit_code == 0, result.output
        if fmt == "json":
            assert json.loads(result.output) == json.loads(json.dumps(answer.as_json())), argv
        else:
            assert result.output == answer.as_text() + "\n", argv
            assert answer.as_text().strip(), argv


def test_explain_marks_each_mention_in_its_text(sample):
    text = explanation(read_tables(sample), "GRPO").as_text(mark=lambda mention: f"[[{mention}]]")
    assert "[[GRPO]]" in text or "[[Group Relative Policy Optimization]]" in text
