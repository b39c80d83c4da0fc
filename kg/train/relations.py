"""``kg train-relations``: retrain the span model's relation head alone, on the features its
saved encoder gives, in seconds rather than a fine-tuning run."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..extract.spans import MODEL_DIR, SpanModel, between_pieces
from .dev import DevScores, score
from .examples import as_paths, read_examples, targets
from .network import head
from .recipe import DEFAULTS, SCHEMAS


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
    train_targets = [t for e in read_examples(as_paths(train_path), spacy_tokenizer)
                     for t in targets(e, model.tokenizer, DEFAULTS["max_pieces"], model.labels, schema)]
    dev_examples = read_examples(as_paths(dev_path), spacy_tokenizer)
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
