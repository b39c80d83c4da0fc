"""kg's annotated abstracts (two layers), the recipe that learns from them, and the encoder's
masked-LM stage: hand-worked cases."""
import hashlib
import json

import numpy as np
import pytest

from kg.errors import InputError, KGError
from kg.evaluate.annotated import read_annotated
from kg.extract.pipeline import load_pipeline
from kg.extract.rules import find_ner_mentions
from kg.extract.spans import TOKENIZER_FILE
from kg.train.adapt import mask, windows
from kg.train.recipe import check_files, corpus_of, settings_from
from kg.train.examples import allowed_classes
from kg.train.recipe import SCHEMAS

ABSTRACT = "We fine-tune diffusion models  on ImageNet.\nFID drops by half."


def _corpus(tmp_path, abstract=ABSTRACT):
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps({"id": "p1", "title": "T", "abstract": abstract}) + "\n")
    return path


def _labels(tmp_path, held_out=False, text=ABSTRACT):
    normal = " ".join(text.split())
    record = {"corpus": "test", "id": "p1", "reader": 0, "held_out": held_out,
              "sha1": hashlib.sha1(normal.encode()).hexdigest(),
              # "diffusion models" (a class: layer 2), "ImageNet" (layer 1), "FID" (a Metric: layer 2)
              "entities": [[13, 29, "Method", 2], [33, 41, "Dataset", 1], [43, 46, "Metric", 2]],
              "relations": []}
    path = tmp_path / "readers.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def test_annotated_abstracts_are_read_from_offsets_into_the_corpus_text(tmp_path):
    [item] = read_annotated(_labels(tmp_path), [_corpus(tmp_path)])
    doc = item.doc
    assert doc.text == "We fine-tune diffusion models on ImageNet. FID drops by half."
    assert [(doc.text[s:e], label) for s, e, label in doc.char_spans()] == [
        ("diffusion models", "MethodClass"), ("ImageNet", "Dataset"), ("FID", "Metric")]
    assert len(doc.sentences) == 2 and not item.held_out


def test_the_held_out_part_is_left_out_when_the_tuned_part_is_asked_for(tmp_path):
    assert read_annotated(_labels(tmp_path, held_out=True), [_corpus(tmp_path)], held_out=False) == []
    assert len(read_annotated(_labels(tmp_path, held_out=True), [_corpus(tmp_path)], held_out=True)) == 1


def test_labels_on_a_text_that_changed_are_refused_naming_the_line(tmp_path):
    labels = _labels(tmp_path)
    with pytest.raises(InputError, match="readers.jsonl:1.*differs"):
        read_annotated(labels, [_corpus(tmp_path, ABSTRACT.replace("half", "a third"))])


def test_the_recipe_tells_annotated_abstracts_apart_and_keeps_them_out_of_dev(tmp_path):
    labels = _labels(tmp_path)
    assert corpus_of(labels) == "readers"
    check_files([labels], [], "layers")
    with pytest.raises(KGError, match="not --dev"):
        check_files([], [labels], "layers")
    assert settings_from({}, ["adapt_epochs=0"])["adapt_epochs"] == 0
    assert settings_from({}, ["schema=layers", "readers_weight=0.5"])["readers_weight"] == 0.5


def test_the_classes_layer_is_allowed_where_a_corpus_leaves_it_unlabelled():
    layers, kg = SCHEMAS["layers"], SCHEMAS["kg"]
    none, method, task, dataset, metric, method_class, task_class = range(7)
    # SciER leaves classes unannotated: an unlabelled SciER span may be one.
    assert allowed_classes("scier", "", layers, "layers") == {none, metric, method_class, task_class}
    assert allowed_classes("scier", "", kg, "kg") == {none, metric}  # the kg schema has no class
    # A SciERC Method may be a class of methods; its Task a class of tasks.
    assert allowed_classes("scierc", "Method", layers, "layers") == {method, method_class}
    assert allowed_classes("scierc", "Task", layers, "layers") == {task, task_class}
    # kg's readers labelled both layers: what they left unlabelled is nothing.
    assert allowed_classes("readers", "", layers, "layers") == {none}
    assert allowed_classes("readers", "MethodClass", layers, "layers") == {method_class}


def test_the_models_classes_layer_becomes_kg_types_under_its_own_rule():
    nlp = load_pipeline(ner=False)
    doc = nlp("We fine-tune diffusion models on ImageNet.")
    doc.ents = [doc.char_span(13, 29, label="MethodClass"), doc.char_span(33, 41, label="Dataset")]
    found = {(c.span.text, c.label, c.rule) for c in find_ner_mentions(doc)}
    assert found == {("diffusion models", "Method", "class-model"), ("ImageNet", "Dataset", "ner")}


def test_masked_lm_windows_fit_and_masking_never_touches_special_pieces():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
    tokenizer.no_truncation()
    text = " ".join(["contrastive learning of visual representations"] * 40)
    cut = windows([text, "too short"], tokenizer, 64)
    assert len(cut) > 1 and all(len(w) <= 64 for w in cut)  # the short text makes no window
    assert all(w[0] == tokenizer.token_to_id("[CLS]") and w[-1] == tokenizer.token_to_id("[SEP]") for w in cut)
    special = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]")}
    ids, attention, labels = mask(cut, np.random.default_rng(0), rate=0.5, mask_id=103, vocab=30522, special=special)
    targets = labels != -100
    assert targets.any() and not np.isin(np.array(cut[0])[targets[0][: len(cut[0])]], list(special)).any()
    assert (attention[targets] == 1).all()  # padding is never a target
    assert (labels[targets] == np.concatenate([np.pad(np.array(w), (0, ids.shape[1] - len(w)))[None]
                                               for w in cut])[targets]).all()
