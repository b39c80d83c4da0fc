"""The mention rules, one sentence each: what each rule finds, its type, and the paper's role for it."""
import pytest

from kg.extract import extract_papers
from kg.extract.rules import type_of_name
from kg.model import Paper


def mentions(text: str) -> list[tuple[str, str, str, str]]:
    """(text, type, role, rule) of each mention the extractor keeps, in order."""
    [ex] = extract_papers([Paper("p", text)])
    return [(m.text, m.label, m.role, m.extractor) for m in ex.mentions]


def test_an_acronym_definition_gives_both_forms_each_pointing_at_the_other():
    # Schwartz & Hearst: the long form's words start with the acronym's letters, in order.
    text = "Group Relative Policy Optimization (GRPO) normalises rewards within a group."
    [ex] = extract_papers([Paper("p", text)])
    forms = {m.text: m.acronym_of for m in ex.mentions}
    assert forms["Group Relative Policy Optimization"] == "GRPO" and forms["GRPO"] == "Group Relative Policy Optimization"


def test_a_name_after_we_propose_is_proposed():
    # "we" + a proposing verb makes the paper the proposer of the name in its object.
    assert ("E-GRPO", "Method", "proposes") in [m[:3] for m in mentions("We propose E-GRPO, an RL method.")]


def test_a_new_benchmark_is_introduced_not_proposed():
    # A name the sentence calls a benchmark is a Dataset, and a paper introduces datasets.
    found = mentions("We introduce CodeArena, a benchmark of 500 programming tasks.")
    assert ("CodeArena", "Dataset", "introduces") in [m[:3] for m in found]


def test_what_the_proposal_outperforms_is_compared_with():
    found = {m[0]: m[1:3] for m in mentions("We propose FastRL, which outperforms PPO on Atari games.")}
    assert found["FastRL"] == ("Method", "proposes") and found["PPO"] == ("Method", "comparesWith")


def test_a_metric_from_the_lexicon_is_measured():
    found = {m[0]: m[1:3] for m in mentions("Our model improves accuracy on ImageNet.")}
    assert found["accuracy"] == ("Metric", "measures") and found["ImageNet"] == ("Dataset", "evaluatesOn")


def test_a_phrase_whose_head_names_a_task_is_addressed():
    found = {m[0]: m[1:3] for m in mentions("We study visual question answering with small models.")}
    assert found["visual question answering"] == ("Task", "addresses")


@pytest.mark.parametrize("name, kind", [
    ("LLaMA-3-8B", "Model"),       # a size: a trained model, not a method
    ("Qwen2.5-7B-Instruct", "Model"),
    ("GSM8K", "Dataset"),          # a benchmark kg knows
])
def test_the_spelling_of_a_name_tells_its_type(name, kind):
    assert type_of_name(name) == kind


def test_a_mention_never_opens_inside_a_hyphenated_word():
    # "self-supervised learning (SSL)" is not supervised learning: the prefix changes the sense.
    found = [m[0] for m in mentions("Variance-Invariance-Covariance Regularization (VICReg) is a self-supervised "
                                    "learning (SSL) method that has shown promising results on a variety of tasks.")]
    assert "self-supervised learning" in found and "supervised learning" not in found
