"""What a researcher reads beyond a node's links: a dataset's leaderboard and methods, a task's
comparison table, an entity's definition and papers per year, a paper's similar papers; each the
same in the CLI, in kg serve's JSON twin and in the explorer's panel (tests/test_view_parity.py)."""
import json

import networkx as nx
import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.link.definitions import definition_after, informative
from kg.link.similar import similar_papers
from kg.store import open_graph, run_query


def _get(sample, path) -> dict:
    result = CliRunner().invoke(main, ["serve", "-g", str(sample), "--get", path])
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{"):])


def test_a_datasets_page_ranks_its_scores_per_metric_and_lists_the_methods_run_on_it(sample):
    view = _get(sample, "/entity/dataset/androidworld.json")
    [board] = view["leaderboard"]
    assert (board["metric"], board["better"]) == ("success rate", "higher")
    assert [(r["text"], r["subject"]) for r in board["results"]] == [("61.3%", "PhoneRL-9B")]
    assert {m["label"] for m in view["methods"]} == {"PhoneRL", "PhoneRL-9B"}
    assert [t["label"] for t in view["tasks"]] == ["mobile GUI navigation"]
    assert view["years"] == [[2025, 1]]


def test_a_tasks_page_compares_its_papers_in_a_table_and_kg_compare_prints_it(sample):
    view = _get(sample, "/entity/task/mathematical-reasoning.json")
    [row] = view["comparison"]
    assert [e["label"] for e in row["proposes"]] == ["C-GRPO"]
    assert [e["label"] for e in row["datasets"]] == ["GSM8K", "MATH"]
    assert [(r["text"], r["metric"], r["subject"]) for r in row["results"]] == [("76.5%", "accuracy", "C-GRPO")]
    assert [m["label"] for m in view["methods"]] == ["C-GRPO"]
    printed = CliRunner().invoke(main, ["compare", "mathematical reasoning", "-g", str(sample)])
    assert printed.exit_code == 0, printed.output
    assert "proposes: C-GRPO" in printed.output and "76.5% accuracy by C-GRPO" in printed.output
    twin = CliRunner().invoke(main, ["compare", "mathematical reasoning", "-g", str(sample), "--format", "json"])
    assert json.loads(twin.output)["comparison"] == view["comparison"]


def test_kg_compare_names_only_tasks(sample):
    result = CliRunner().invoke(main, ["compare", "AndroidWorld", "-g", str(sample)])
    assert result.exit_code != 0 and "Traceback" not in result.output


@pytest.mark.parametrize("before, after, expected", [
    ("", " (GANs) are a class of generative models that learn by competition.",
     ("copula", "a class of generative models that learn by competition")),
    ("We propose ", ", a novel method for regularizing RNNs.", ("appositive", "a novel method for regularizing RNNs")),
    ("", " is a powerful tool for modeling sequential data, but it is slow.",
     ("copula", "a powerful tool for modeling sequential data")),
    ("The output of ", " is a vector of scores.", None),  # not what the sentence is about
    ("It contains ", ", an attention mechanism, and sparsely-gated layers.", None),  # a list
    ("e.g. ", " (MMD), an explicit matching of higher order moments has not been considered.", None),  # a clause
    ("We use ", ", a b.", None),  # too short to say anything
])
def test_a_definition_is_read_from_a_copula_or_an_appositive_after_the_name(before, after, expected):
    assert definition_after(before, after) == expected


def test_a_definition_naming_a_kind_of_thing_ranks_above_praise():
    assert informative("a family of generative models") == 1
    assert informative("a powerful tool for sequences") == 0
    assert informative("one of the most popular optimizers") == 0


def test_definitions_go_to_rdf_with_their_sentence_and_show_first_in_the_panel(sample):
    rows = {row["label"].value: (row["text"].value, row["sentence"].value) for row in run_query(open_graph(sample), """
        SELECT ?label ?text ?sentence WHERE { ?e skos:prefLabel ?label ; skos:definition ?text ;
                                              kg:definitionSource/rdf:value ?sentence }""")}
    text, sentence = rows["C-GRPO"]
    assert text == "a novel framework for mathematical reasoning that reweights prompts by their estimated difficulty"
    assert text in sentence
    assert rows["GRPO"][0] == "Group Relative Policy Optimization"  # the acronym's long form, where nothing else says
    view = _get(sample, "/entity/method/curriculum-aware-group-relative-policy-optimization.json")
    assert view["definition"]["text"] == text and text in view["definition"]["sentence"]
    explained = CliRunner().invoke(main, ["explain", "C-GRPO", "-g", str(sample)])
    assert explained.output.splitlines()[0] == f"C-GRPO: {text}"


def test_similar_papers_weigh_shared_words_and_rare_entities():
    G = nx.MultiDiGraph()
    texts = {"paper/a": "Training GANs on faces with a new loss", "paper/b": "A new loss for GANs trained on faces",
             "paper/c": "Parsing sentences into trees", "paper/d": "Trees for parsing long sentences"}
    for node, text in texts.items():
        G.add_node(node, kind="Paper", abstract=text, title="")
    G.add_node("method/gan", kind="Method")
    G.add_node("task/parsing", kind="Task")
    for node in ("paper/a", "paper/b"):
        G.add_edge(node, "method/gan", key="uses")
    for node in ("paper/c", "paper/d"):
        G.add_edge(node, "task/parsing", key="addresses")
    found = similar_papers(G, k=2)
    assert [item[0] for item in found["paper/a"]][:1] == ["paper/b"]
    assert [item[0] for item in found["paper/c"]][:1] == ["paper/d"]
    other, score, words, entities, meaning = found["paper/a"][0]
    assert entities == pytest.approx(1.0) and 0 < words < 1 and 0 < score <= 1 and meaning >= 0


def test_similar_papers_are_the_same_whatever_the_blocks_the_scores_are_computed_in(monkeypatch):
    """Papers are compared a block at a time, each block with itself and the papers after it; blocks
    of one, two or three papers at a time give the lists of one block of all (every pair at once)."""
    from kg.link import similar
    G = nx.MultiDiGraph()
    topics = ["GANs on faces", "parsing sentences into trees", "policy gradients for robots", "GANs for robots"]
    for i in range(13):
        G.add_node(f"paper/{i:02}", kind="Paper", title="", abstract=f"A study {i % 3} of {topics[i % 4]} and {topics[i % 3]}.")
        G.add_edge(f"paper/{i:02}", f"method/m{i % 5}", key="uses")
    whole = similar.similar_papers(G, k=3)
    assert len(whole) == 13 and all(len(others) == 3 for others in whole.values())
    for cells in (13, 26, 39):  # 1, 2 and 3 rows of 13 papers at first, more as the blocks narrow
        monkeypatch.setattr(similar, "CELLS", cells)
        assert similar.similar_papers(G, k=3) == whole


def test_kg_similar_lists_a_papers_neighbours_with_their_reasons_as_its_panel_does(sample):
    ids = [row["id"].value for row in run_query(open_graph(sample), """
        SELECT ?id WHERE { ?p dcterms:identifier ?id ; dcterms:abstract ?a FILTER(CONTAINS(?a, "PhoneRL")) }""")]
    result = CliRunner().invoke(main, ["similar", ids[0], "-g", str(sample), "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    first = answer["similar"][0]
    assert first["title"].startswith("Reinforcement learning from verifiable rewards")  # both build on GRPO
    assert {e["label"] for e in first["shared"]} >= {"GRPO"}
    assert answer["similar"] == _get(sample, f"/paper/{ids[0]}.json")["similar"]
    table = CliRunner().invoke(main, ["similar", ids[0], "-g", str(sample)])
    assert "both name" in table.output
    missing = CliRunner().invoke(main, ["similar", "no-such-paper", "-g", str(sample)])
    assert missing.exit_code != 0 and "No paper has the id or the title" in missing.output
