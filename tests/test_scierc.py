"""SciERC evaluation: the reader, the detokenizer's offsets, the exact-match scorer worked out by hand,
the learned NER kg ships, its training, and the `kg eval scierc` / `kg train-ner` commands.

The fixture tests/fixtures/scierc_tiny.json is two invented abstracts in SciERC's format.
"""
from pathlib import Path

import pytest
import spacy
from click.testing import CliRunner

from kg import extract
from kg.cli import main
from kg.errors import InputError
from kg.evaluate import (
    KG_LABELS, KG_TO_SCIERC, PRF, SCIERC_LABELS, detokenize, entity_predictor, evaluate,
    evaluate_relations, read_scierc, score,
)
from kg.extract.relation_model import RelationModel
from kg.train import MODEL_DIR, outermost, to_doc, train_ner, train_relations

TINY = Path(__file__).parent / "fixtures" / "scierc_tiny.json"
TEXT_1 = ('We present a graph-based parser (GBP) for semantic role labeling. '
          'The "tree kernel" of the parser improves F1 on the Penn Treebank.')
TEXT_2 = "Speech recognition systems need acoustic models. Our model's error rate drops by 5% [1]."


@pytest.fixture(scope="module")
def tiny():
    return read_scierc(TINY)


# --- reader and detokenizer ---------------------------------------------------------------

def test_reader_keeps_keys_sentences_and_end_exclusive_spans(tiny):
    first, second = tiny
    assert [d.doc_key for d in tiny] == ["tiny_1", "tiny_2"]
    assert first.sentences == ((0, 13), (13, 28))
    # [3, 4, "Method"] inclusive in the file -> (3, 5) exclusive.
    assert first.spans[0] == (3, 5, "Method")
    assert [first.words[i] for i in range(*first.spans[0][:2])] == ["graph-based", "parser"]
    # Nested gold spans are both kept: "speech recognition systems" holds "speech recognition".
    assert second.spans[:2] == ((0, 3, "Method"), (0, 2, "Task"))


def test_text_is_rebuilt_from_ptb_tokens(tiny):
    assert [d.text for d in tiny] == [TEXT_1, TEXT_2]


def test_every_token_offset_points_at_its_word(tiny):
    ptb = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "``": '"', "''": '"'}
    for doc in tiny:
        assert len(doc.offsets) == len(doc.words)
        for word, (start, end) in zip(doc.words, doc.offsets):
            assert doc.text[start:end] == ptb.get(word, word)
    assert tiny[0].offsets[6] == (33, 36)  # "GBP" inside "(GBP)", worked out by hand


def test_gold_char_spans(tiny):
    first, second = tiny
    assert [(first.text[s:e], label) for s, e, label in first.char_spans()] == [
        ("graph-based parser", "Method"), ("GBP", "Method"), ("semantic role labeling", "Task"),
        ("tree kernel", "Method"), ("parser", "Generic"), ("F1", "Metric"), ("Penn Treebank", "Material")]
    assert [second.text[s:e] for s, e, _ in second.char_spans()] == [
        "Speech recognition systems", "Speech recognition", "acoustic models", "model", "error rate"]


@pytest.mark.parametrize("words, text", [
    (["a", "-LRB-", "b", "-RRB-", "c"], "a (b) c"),
    (["see", "-LSB-", "1", "-RSB-", "."], "see [1]."),
    (["the", "``", "x", "''", "y"], 'the "x" y'),
    (["it", "does", "n't", "work", ";", "5", "%", "less"], "it doesn't work; 5% less"),
    (["A", "-", "B", "--", "C"], "A - B -- C"),  # a free-standing dash keeps its spaces
    ([], ""),
])
def test_detokenize(words, text):
    assert detokenize(words)[0] == text


@pytest.mark.parametrize("line, message", [
    ("{not json", "tiny.json:2: not JSON"),
    ('{"doc_key": "x"}', "tiny.json:2: missing field 'sentences'"),
    ('{"doc_key": "x", "sentences": [["a"]], "ner": [[[0, 1, "Task"]]]}', "outside the document's 1 tokens"),
    ('{"doc_key": "x", "sentences": [["a"]], "ner": []}', None),  # no ner at all is allowed
])
def test_reader_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "tiny.json"
    path.write_text('{"doc_key": "ok", "sentences": [["a"]], "ner": [[]]}\n' + line + "\n")
    if message is None:
        assert len(read_scierc(path)) == 2
        return
    with pytest.raises(InputError, match=message.replace("[", r"\[")):
        read_scierc(path)


# --- scorer, worked out by hand --------------------------------------------------------------

def test_score_perfect():
    gold = [[(0, 2, "Task"), (3, 4, "Method")], [(1, 2, "Metric")]]
    s = score(gold, gold)
    assert s.micro() == PRF(tp=3, fp=0, fn=0)
    assert (s.micro().precision, s.micro().recall, s.micro().f1) == (1.0, 1.0, 1.0)


def test_score_partial_boundary_is_a_miss_and_a_false_alarm():
    s = score([[(0, 3, "Task")]], [[(0, 2, "Task")]])
    assert s.per_label["Task"] == PRF(tp=0, fp=1, fn=1)
    assert s.micro().f1 == 0.0


def test_score_wrong_label_counts_against_both_labels():
    s = score([[(0, 2, "Task"), (4, 5, "Metric")]], [[(0, 2, "Method"), (4, 5, "Metric")]])
    assert s.per_label["Task"] == PRF(tp=0, fp=0, fn=1)
    assert s.per_label["Method"] == PRF(tp=0, fp=1, fn=0)
    assert s.per_label["Metric"] == PRF(tp=1, fp=0, fn=0)
    # micro: tp 1, fp 1, fn 1 -> P = R = F1 = 1/2
    assert s.micro().f1 == pytest.approx(0.5)


def test_score_nested_gold_inner_span_is_missed_by_an_outer_prediction():
    gold = [[(0, 3, "Method"), (0, 2, "Task")]]
    s = score(gold, [[(0, 3, "Method")]])
    assert s.micro() == PRF(tp=1, fp=0, fn=1)
    # P = 1, R = 1/2, F1 = 2 * 1 * 0.5 / 1.5 = 2/3
    assert s.micro().f1 == pytest.approx(2 / 3)


def test_micro_over_the_four_kg_labels_ignores_generic_and_other_terms():
    gold = [[(0, 1, "Task"), (2, 3, "Generic"), (4, 5, "OtherScientificTerm")]]
    s = score(gold, [[(0, 1, "Task"), (2, 3, "Generic")]])
    assert s.micro() == PRF(tp=2, fp=0, fn=1)
    assert s.micro(KG_LABELS) == PRF(tp=1, fp=0, fn=0)
    table = s.table()
    assert "micro (6 labels)" in table and "micro (4: Task Method Metric Material)" in table


def test_score_ignores_labels_outside_the_scored_ones_and_duplicates():
    s = score([[(0, 1, "Task")]], [[(0, 1, "Task"), (0, 1, "Task"), (2, 3, "Dataset")]])
    assert s.micro() == PRF(tp=1, fp=0, fn=0)


def test_score_needs_one_list_per_document():
    with pytest.raises(ValueError, match="gold has 2 documents but predicted has 1"):
        score([[], []], [[]])


def test_evaluate_aligns_character_spans_trims_spaces_and_maps_kg_types(tiny):
    def predict(text):  # a kg-style extractor: one span with a trailing space, one kg Dataset, one wrong
        f1 = text.index("F1")
        penn = text.index("Penn")
        return [(f1, f1 + len("F1 "), "Metric"), (penn, penn + len("Penn Treebank"), "Dataset"), (0, 2, "Task")]

    s = evaluate(tiny[:1], predict, label_map=KG_TO_SCIERC)
    # "F1 " trimmed -> hit; Dataset -> Material hit; "We" as Task a false alarm; 5 other gold spans missed.
    assert s.per_label["Metric"] == PRF(tp=1, fp=0, fn=0)
    assert s.per_label["Material"] == PRF(tp=1, fp=0, fn=0)
    assert s.per_label["Task"] == PRF(tp=0, fp=1, fn=1)
    assert s.per_label["Method"] == PRF(tp=0, fp=0, fn=3)
    assert s.micro() == PRF(tp=2, fp=1, fn=5)


def test_outermost_keeps_the_longest_of_nested_spans(tiny):
    assert outermost(tiny[1].spans) == [(0, 3, "Method"), (4, 6, "OtherScientificTerm"),
                                        (8, 9, "Generic"), (10, 12, "Metric")]
    doc = to_doc(spacy.blank("en"), tiny[1])
    assert doc.text == TEXT_2
    assert [(e.text, e.label_) for e in doc.ents][:1] == [("Speech recognition systems", "Method")]


# --- the learned NER ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ner():
    return spacy.load(MODEL_DIR)


def test_shipped_ner_finds_scierc_entities(ner):
    assert ner.pipe_names == ["ner"]
    assert set(ner.get_pipe("ner").labels) == set(SCIERC_LABELS)
    spans = entity_predictor(ner)("We propose a neural network model for machine translation.")
    assert spans and {label for _, _, label in spans} <= set(SCIERC_LABELS)


def test_shipped_ner_is_self_contained_so_another_pipeline_can_source_it(ner):
    text = "We use conditional random fields for named entity recognition."
    host = spacy.blank("en")
    host.add_pipe("ner", name="scierc_ner", source=ner)
    assert [(e.text, e.label_) for e in host(text).ents] == [(e.text, e.label_) for e in ner(text).ents]


def test_train_ner_saves_a_self_contained_pipeline(tmp_path):
    overrides = {"training.max_steps": 4, "training.eval_frequency": 2}
    result = train_ner(TINY, TINY, tmp_path / "model", overrides=overrides, max_minutes=2, log=lambda line: None)
    nlp = spacy.load(tmp_path / "model")
    assert nlp.pipe_names == ["ner"]
    assert set(nlp.get_pipe("ner").labels) == set(SCIERC_LABELS)
    assert "scierc_dev_micro_f1_6" in nlp.meta["performance"]
    assert result.steps <= 4 and 0.0 <= result.scores.micro().f1 <= 1.0
    assert nlp("We parse.").text == "We parse."


# --- the commands -------------------------------------------------------------------------------

def test_cli_eval_scierc_prints_the_table():
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY), "--extractor", "ner"])
    assert result.exit_code == 0, result.output
    assert "2 documents, 48 words" in result.output
    for row in (*SCIERC_LABELS, "micro (6 labels)", "micro (4: Task Method Metric Material)"):
        assert row in result.output


def test_cli_eval_scierc_full_needs_predict_entities():
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY), "--extractor", "full"])
    if hasattr(extract, "predict_entities"):
        assert result.exit_code == 0, result.output
        assert "micro (6 labels)" in result.output
    else:
        assert result.exit_code == 1
        assert "predict_entities" in result.output and "--extractor ner" in result.output


def test_cli_eval_scierc_reports_a_missing_model(tmp_path):
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY), "--model", str(tmp_path / "nothing")])
    assert result.exit_code == 1
    assert "No NER pipeline at" in result.output and "kg train-ner" in result.output


def test_cli_train_ner_help_shows_examples_and_defaults():
    result = CliRunner().invoke(main, ["train-ner", "--help"])
    assert result.exit_code == 0
    assert "kg train-ner --train" in result.output and "default: 10.0" in result.output


def test_cli_train_ner_runs_and_saves_a_loadable_pipeline(tmp_path):
    # --minutes 0: one step, enough to check the command end to end.
    result = CliRunner().invoke(main, ["train-ner", "--train", str(TINY), "--dev", str(TINY),
                                       "-o", str(tmp_path / "ner"), "--minutes", "0"])
    assert result.exit_code == 0, result.output
    assert "Dev micro-F1" in result.output
    assert spacy.load(tmp_path / "ner").pipe_names == ["ner"]


# ------------------------------------------------------------------ relations


def test_gold_relations_are_read_as_character_spans(tiny):
    doc = tiny[0]
    relations = {(doc.text[hs:he], doc.text[ts:te], label) for hs, he, ts, te, label in doc.char_relations()}
    assert relations == {("graph-based parser", "semantic role labeling", "USED-FOR"),
                         ("F1", "tree kernel", "EVALUATE-FOR"), ("Penn Treebank", "tree kernel", "EVALUATE-FOR")}


def test_relation_scoring_needs_both_spans_and_the_type(tiny):
    doc = tiny[0]
    at = lambda s: (doc.text.index(s), doc.text.index(s) + len(s))  # noqa: E731
    predictions = [(*at("graph-based parser"), *at("semantic role labeling"), "USED-FOR"),  # right
                   (*at("parser"), *at("semantic role labeling"), "USED-FOR"),  # wrong head boundary
                   (*at("Penn Treebank"), *at("tree kernel"), "USED-FOR")]  # wrong type
    scores = evaluate_relations([doc], lambda d: predictions)
    assert scores.per_label["USED-FOR"] == PRF(tp=1, fp=2, fn=0)
    assert scores.per_label["EVALUATE-FOR"] == PRF(tp=0, fp=0, fn=2)


def test_train_relations_saves_a_model_that_predicts_without_scikit_learn(tmp_path):
    path, scores = train_relations(TINY, TINY, tmp_path / "relations.npz", strengths=(30.0,), min_count=1,
                                   log=lambda line: None)
    model = RelationModel.load(path)
    assert "USED-FOR>" in model.classes and "NONE" in model.classes
    # Trained and scored on the same two abstracts, it must find most of their four relations.
    assert scores.micro().tp >= 3
    doc = read_scierc(TINY)[0]
    found = extract.predict_relations(doc.text, doc.char_spans(), model=model, use_rules=False)
    assert (*_at(doc, "graph-based parser"), *_at(doc, "semantic role labeling"), "USED-FOR") in found


def _at(doc, needle):
    start = doc.text.index(needle)
    return start, start + len(needle)


def test_cli_eval_scierc_prints_relation_tables():
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY)])
    assert result.exit_code == 0, result.output
    for title in ("relations, end to end, on kg's own entities", "relations, on the gold entities",
                  "relations, end to end, on the learned NER's entities"):
        assert title in result.output
    gold = result.output.split("relations, on the gold entities:")[1]
    assert "EVALUATE-FOR" in gold and "micro (7 types)" in gold


def test_the_shipped_relation_model_relates_a_method_to_its_task():
    text = "We use conditional random fields for named entity recognition."
    spans = [(text.index("conditional"), text.index(" for"), "Method"),
             (text.index("named"), len(text) - 1, "Task")]
    assert extract.predict_relations(text, spans, use_rules=False) == [(*spans[0][:2], *spans[1][:2], "USED-FOR")]
