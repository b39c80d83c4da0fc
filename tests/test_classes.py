"""The class layer (kg.extract.classes): kinds of methods papers share, named by phrases the span
model was not taught, kept apart from what SciER scores."""
import pytest

from kg.extract import extract_papers, predict_entities
from kg.extract.classes import RULES, find_class_mentions
from kg.extract.pipeline import load_pipeline
from kg.model import Paper


@pytest.fixture(scope="module")
def found():
    """The class layer's own finds in a text (the parse alone, before any other source is chosen)."""
    nlp = load_pipeline(ner=False)
    return lambda text: {c.text: c.rule for c in find_class_mentions(nlp(text))}


def kept(text: str) -> dict[str, str]:
    """The class-layer mentions the whole extractor keeps in ``text``: text -> role."""
    [ex] = extract_papers([Paper("p", text)])
    return {m.text: m.role for m in ex.mentions if m.rule in RULES}


def test_a_phrase_whose_head_is_a_kind_of_method_is_a_class(found):
    assert found("We improve instruction tuning with contrastive learning.") == {
        "instruction tuning": "class", "contrastive learning": "class"}


def test_a_hyphenated_paradigm_is_a_class_and_a_generic_word_after_it_is_not_part_of_it(found):
    assert found("We benchmark LLM-as-a-judge performance in web development.") == {"LLM-as-a-judge": "class"}
    assert found("This makes powerful LLM-as-a-Judge models a core solution.") == {"LLM-as-a-Judge": "class"}


def test_idioms_written_with_hyphens_are_no_paradigm(found):
    assert found("Our end-to-end system reaches state-of-the-art accuracy, trained end-to-end.") == {}


def test_two_kinds_sharing_a_head_are_read_whole_for_the_concept_stage_to_split(found):
    assert found("Diffusion and flow-based models benefit from simple regression losses.") == {
        "Diffusion and flow-based models": "class-coordination"}


def test_two_phrases_with_their_own_heads_are_two_classes(found):
    assert found("We combine instruction tuning and contrastive learning.") == {
        "instruction tuning": "class", "contrastive learning": "class"}


def test_a_role_or_an_evaluation_before_the_head_names_no_kind(found):
    assert found("We distil the teacher model into an efficient model and the base model.") == {}


def test_a_verb_the_parser_reads_as_a_modifier_is_left_out(found):
    assert found("We fine-tune vision-language models on images.") == {"vision-language models": "class"}


def test_a_class_is_never_the_papers_proposal():
    # A class of methods is no one's contribution, even after "we propose".
    assert kept("We propose an LLM-as-a-judge pipeline for code review.") == {"LLM-as-a-judge": "uses"}


def test_the_class_layer_is_left_out_where_scier_scores_kg():
    # SciER's guideline does not annotate classes of methods: its figure must stay comparable.
    text = "The paradigm of LLM-as-a-judge is emerging as an alternative to human evaluation."
    assert "LLM-as-a-judge" in kept(text)
    assert "LLM-as-a-judge" not in {text[start:end] for start, end, _ in predict_entities(text)}


def test_a_class_two_papers_reach_is_a_concept_over_both():
    # One paper names "diffusion and flow-based models", another its own "controllable diffusion
    # model": "diffusion model" joins them, though neither names it alone.
    from kg.link.concepts import build_hierarchy, papers_reached
    from kg.resolve import resolve

    extractions = list(extract_papers([
        Paper("a", "Diffusion and flow-based models benefit from simple regression losses."),
        Paper("b", "In the second stage, we propose an AU-driven controllable diffusion model that "
                   "synthesizes realistic talking-head videos.")]))
    entities = resolve(extractions)
    hierarchy = build_hierarchy(entities, extractions)
    assert "diffusion model" in {c.key for c in hierarchy.concepts}
    assert papers_reached(entities + hierarchy.concepts, hierarchy.links)["diffusion model"] == {"a", "b"}
