"""SciERC evaluation: the reader, the detokenizer's offsets, the exact-match scorer worked out by hand,
the first-round spaCy NER kept as the baseline, and the `kg eval scierc` / `kg train-*` commands.

The fixture tests/fixtures/scierc_tiny.json is two invented abstracts in SciERC's format.
"""
import importlib.util
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
from kg.extract.pipeline import BASELINE_NER as MODEL_DIR

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


# --- the commands -------------------------------------------------------------------------------

def test_cli_eval_scierc_prints_old_new_and_kg_side_by_side():
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY), "--no-relations"])
    assert result.exit_code == 0, result.output
    assert "2 documents, 48 words" in result.output
    header = result.output.splitlines()[1].split()
    assert header == ["old", "new", "kg"]
    for row in (*SCIERC_LABELS, "micro (6 types)", "micro (4: kg's types)"):
        assert any(line.startswith(row) and len(line.split()) >= 11 for line in result.output.splitlines()), row


def test_cli_eval_scierc_reports_a_missing_baseline(tmp_path):
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY), "--baseline", str(tmp_path / "nothing")])
    assert result.exit_code == 1
    assert "No NER pipeline at" in result.output


def test_cli_train_commands_explain_themselves_and_need_the_train_extra():
    for command in ("train-ner", "train-relations"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and f"kg {command} --train" in result.output
    result = CliRunner().invoke(main, ["train-ner", "--train", str(TINY), "--dev", str(TINY), "--set", "nonsense=1"])
    assert result.exit_code == 1 and "no setting 'nonsense'" in result.output  # before torch is needed
    if importlib.util.find_spec("torch") is None:
        result = CliRunner().invoke(main, ["train-ner", "--train", str(TINY), "--dev", str(TINY)])
        assert result.exit_code == 1 and "train extra" in result.output


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


def _at(doc, needle):
    start = doc.text.index(needle)
    return start, start + len(needle)


def test_cli_eval_scierc_prints_relations_side_by_side():
    result = CliRunner().invoke(main, ["eval", "scierc", str(TINY)])
    assert result.exit_code == 0, result.output
    relations = result.output.split("Relations, each extractor end to end on its own entities:")[1]
    assert "EVALUATE-FOR" in relations and "micro (7 types)" in relations and "micro (5 kg maps)" in relations


def test_the_shipped_relation_model_relates_a_method_to_its_task():
    text = "We use conditional random fields for named entity recognition."
    spans = [(text.index("conditional"), text.index(" for"), "Method"),
             (text.index("named"), len(text) - 1, "Task")]
    assert extract.predict_relations(text, spans, use_rules=False) == [(*spans[0][:2], *spans[1][:2], "USED-FOR")]
