"""``kg train-pairs``: train the pair reader (:mod:`kg.extract.pairs`) on a saved span model.

The span model's encoder (int8, as ``kg build`` runs it) reads every
training chunk once; its states are kept (float16) and the reader learns,
on them, the class of every unordered pair of gold entities in a sentence:
none, or a relation one way or the other. Its two layers start from
MiniLM's last two; its markers' kind embeddings and its output head start
afresh. After each epoch the span model with the reader is scored end to
end on dev (strict relations between its own entities: SciER dev's, and
the readers' dev tenth's where kg's annotated abstracts are trained on);
the best epoch's reader is written to the model's ``pairs.npz``.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..evaluate.scier import score_relations
from ..extract.pairs import PAIRS_FILE, PairReader
from ..extract.spans import SpanModel
from .dev import predictions
from .examples import Example, targets

#: The reader's recipe; ``kg train-pairs`` reads the shipped reader's (config.json's ``pair_reader``) over it.
DEFAULTS = {"seed": 13, "epochs": 6, "batch_size": 8, "lr": 1e-4, "head_lr": 1e-3, "warmup": 0.1,
            "weight_decay": 0.01, "layers": 2, "heads": 12, "hidden": 150, "dropout": 0.1,
            "pairs_per_sentence": 4, "blend": 1.0, "readers_weight": 2.0}


@dataclass
class PairChunk:
    """One training chunk as the reader sees it: the encoder's states, each pair's marker pieces and
    entity labels, its class, and the weight of its corpus."""

    hidden: np.ndarray
    pieces: np.ndarray
    labels: np.ndarray
    classes: np.ndarray
    weight: float


def pair_chunks(model: SpanModel, examples: Sequence[Example], settings: dict, schema: str) -> list[PairChunk]:
    """Every chunk of ``examples`` with a gold entity pair, read by ``model``'s encoder: each unordered pair
    (first span first) with its class, 0 for none, ``r`` for relation ``r`` from the first span to
    the second, ``R + r`` for it from the second to the first (``R`` relations; a symmetric relation
    always counts the first way)."""
    relations = len(model.labels.relation)
    found = []
    for example in examples:
        for target in targets(example, model.tokenizer, 256, model.labels, schema):
            gold = dict(zip(target.pairs, target.pair_labels))
            kinds = dict(zip(target.pairs, target.pair_entity_labels))
            c = target.chunk
            rows = [([c.first[a[0]], c.last[a[1] - 1], c.first[b[0]], c.last[b[1] - 1]], kinds[a, b],
                     gold[a, b] or (relations + gold[b, a] if gold.get((b, a)) else 0))
                    for a, b in target.pairs if a < b]
            if rows:
                found.append((target, rows))
    out = []
    for (target, rows), hidden in zip(found, model.encode([t.chunk for t, _ in found])):
        pieces, labels, classes = zip(*rows)
        weight = settings["readers_weight"] if target.corpus == "readers" else 1.0
        out.append(PairChunk(hidden.astype(np.float16), np.array(pieces), np.array(labels), np.array(classes), weight))
    return out


def build_reader(settings: dict, entity_labels: int, relations: int, encoder_dir: str | None = None):
    """The reader in PyTorch, laid out as :class:`kg.extract.pairs.PairReader` reads it; its layers start from
    the last ``layers`` of the MiniLM in ``encoder_dir`` (none: random, for tests)."""
    import torch
    from torch import nn

    from .network import head

    class Layer(nn.Module):
        def __init__(self, size: int, inner: int):
            super().__init__()
            self.query, self.key, self.value, self.output = (nn.Linear(size, size) for _ in range(4))
            self.norm1, self.norm2 = nn.LayerNorm(size, eps=1e-12), nn.LayerNorm(size, eps=1e-12)
            self.up, self.down = nn.Linear(size, inner), nn.Linear(inner, size)

    class Reader(nn.Module):
        def __init__(self, size: int = 384, inner: int = 1536):
            super().__init__()
            self.heads = settings["heads"]
            self.kind = nn.Embedding(4 * entity_labels, size)
            nn.init.normal_(self.kind.weight, std=0.02)
            self.layers = nn.ModuleList(Layer(size, inner) for _ in range(settings["layers"]))
            self.out = head(4 * size, 1 + 2 * relations, settings)
            self.drop = nn.Dropout(settings["dropout"])

        def forward(self, text, text_mask, pieces, labels):
            """``text`` (batch x pieces x size), ``text_mask`` (batch x pieces, bool), ``pieces`` (batch x pairs x 4),
            ``labels`` (batch x pairs x 2): logits (batch x pairs x classes)."""
            batch, length, size = text.shape
            pairs = pieces.shape[1]
            heads, width = self.heads, size // self.heads
            rows = torch.arange(batch)[:, None, None]
            kinds = torch.arange(4) * entity_labels + labels[:, :, [0, 0, 1, 1]]
            x = text[rows, pieces] + self.kind(kinds)
            hidden_mask = ~text_mask[:, None, None, None, :]
            for layer in self.layers:
                text_keys = layer.key(text).view(batch, length, heads, width)
                text_values = layer.value(text).view(batch, length, heads, width)
                queries = layer.query(x).view(batch, pairs, 4, heads, width)
                keys = layer.key(x).view(batch, pairs, 4, heads, width)
                values = layer.value(x).view(batch, pairs, 4, heads, width)
                on_text = torch.einsum("bpihd,blhd->bphil", queries, text_keys) / width ** 0.5
                on_pair = torch.einsum("bpihd,bpjhd->bphij", queries, keys) / width ** 0.5
                scores = torch.cat([on_text.masked_fill(hidden_mask, -1e4), on_pair], dim=-1).softmax(dim=-1)
                scores = self.drop(scores)
                context = (torch.einsum("bphil,blhd->bpihd", scores[..., :length], text_values)
                           + torch.einsum("bphij,bpjhd->bpihd", scores[..., length:], values)).reshape(batch, pairs, 4, size)
                x = layer.norm1(x + self.drop(layer.output(context)))
                inner = nn.functional.gelu(layer.up(x), approximate="tanh")
                x = layer.norm2(x + self.drop(layer.down(inner)))
            return self.out(x.reshape(batch, pairs, 4 * size))

    reader = Reader()
    if encoder_dir is not None:
        from transformers import AutoModel

        encoder = AutoModel.from_pretrained(encoder_dir)
        names = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
                 "output": "attention.output.dense", "norm1": "attention.output.LayerNorm",
                 "up": "intermediate.dense", "down": "output.dense", "norm2": "output.LayerNorm"}
        source = encoder.encoder.layer[-settings["layers"]:]
        with torch.no_grad():
            for mine, theirs in zip(reader.layers, source):
                for name, path in names.items():
                    module = theirs.get_submodule(path)
                    getattr(mine, name).weight.copy_(module.weight)
                    getattr(mine, name).bias.copy_(module.bias)
    return reader


def collate(chunks: Sequence[PairChunk]):
    import torch

    length = max(len(c.hidden) for c in chunks)
    pairs = max(len(c.classes) for c in chunks)
    size = chunks[0].hidden.shape[1]
    text = torch.zeros((len(chunks), length, size))
    text_mask = torch.zeros((len(chunks), length), dtype=torch.bool)
    pieces = torch.zeros((len(chunks), pairs, 4), dtype=torch.long)
    labels = torch.zeros((len(chunks), pairs, 2), dtype=torch.long)
    classes = torch.full((len(chunks), pairs), -100, dtype=torch.long)
    weight = torch.zeros((len(chunks), pairs))
    for row, c in enumerate(chunks):
        text[row, : len(c.hidden)] = torch.from_numpy(c.hidden.astype(np.float32))
        text_mask[row, : len(c.hidden)] = True
        n = len(c.classes)
        pieces[row, :n] = torch.from_numpy(c.pieces)
        labels[row, :n] = torch.from_numpy(c.labels)
        classes[row, :n] = torch.from_numpy(c.classes)
        weight[row, :n] = c.weight
    return text, text_mask, pieces, labels, classes, weight


def to_numpy(reader, settings: dict) -> PairReader:
    return PairReader({name: value.detach().cpu().numpy() for name, value in reader.state_dict().items()},
                      {"heads": settings["heads"], "layers": settings["layers"],
                       "pairs_per_sentence": settings["pairs_per_sentence"], "blend": settings["blend"]})


@dataclass
class PairScores:
    """Strict end-to-end relation P/R/F1 on SciER dev and on the readers' dev tenth (None without it);
    the epoch with the best mean of the two wins."""

    scier: tuple[int, int, int]
    readers: tuple[int, int, int] | None

    @staticmethod
    def f1(counts) -> float:
        tp, fp, fn = counts
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    @property
    def selection(self) -> float:
        figures = [self.f1(self.scier)] + ([self.f1(self.readers)] if self.readers else [])
        return sum(figures) / len(figures)

    def line(self) -> str:
        out = f"SciER dev strict relations F1 {self.f1(self.scier):.3f} ({self.scier[0]} right, {self.scier[1]} wrong, {self.scier[2]} missed)"
        if self.readers:
            out += f" · readers' dev relations F1 {self.f1(self.readers):.3f}"
        return out + f" · selection {self.selection:.4f}"


def relation_scores(model: SpanModel, examples: Sequence[Example]) -> PairScores:
    found = predictions(model, examples)
    parts = {}
    for corpus in ("scier", "readers"):
        docs = [(e.doc, f[1]) for e, f in zip(examples, found) if e.corpus == corpus]
        if docs:
            prf = score_relations([d for d, _ in docs], [f for _, f in docs], labels=model.labels.relation).micro()
            parts[corpus] = (prf.tp, prf.fp, prf.fn)
    return PairScores(parts.get("scier", (0, 0, 0)), parts.get("readers"))


def remembering(encoder: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    """``encoder`` with its answers kept: dev is read once, however many epochs score it."""
    kept: dict[bytes, np.ndarray] = {}

    def encode(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        key = ids.tobytes() + mask.tobytes()
        if key not in kept:
            kept[key] = encoder(ids, mask)
        return kept[key]
    return encode


def train_pairs(model_dir: str | Path, train: Sequence[Example], dev: Sequence[Example], settings: dict, *,
                schema: str, checkpoints: str | Path | None = None, stop_after: int | None = None,
                threads: int | None = None, encoder_dir: str | None = None,
                log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> PairScores | None:
    """Train the reader for the span model in ``model_dir`` and write the best epoch's to its ``pairs.npz``
    (and the recipe with the dev figures to its ``config.json``). With ``checkpoints``, the state after
    every epoch is kept there and a rerun resumes after the last; ``stop_after`` ends the run after that
    epoch. Returns the best dev scores, or None where the run stopped early."""
    import torch

    from .adapt import encoder_path

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(settings["seed"])
    rng = np.random.default_rng(settings["seed"])
    model_dir = Path(model_dir)
    model = SpanModel.from_files(model_dir, threads=threads)
    model.pairs = None
    model.encoder = remembering(model.encoder)
    chunks = pair_chunks(model, train, settings, schema)
    counts = np.bincount(np.concatenate([c.classes for c in chunks]), minlength=1 + 2 * len(model.labels.relation))
    log(f"{sum(counts)} entity pairs in {len(chunks)} training chunks, {sum(counts[1:])} related")
    baseline = relation_scores(model, dev)
    log(f"relation head alone: dev {baseline.line()}")

    reader = build_reader(settings, len(model.labels.entity), len(model.labels.relation),
                          encoder_path() if encoder_dir is None else encoder_dir)
    head_names = {n for n, _ in reader.named_parameters() if n.startswith(("out.", "kind."))}
    optimizer = torch.optim.AdamW(
        [{"params": [p for n, p in reader.named_parameters() if n not in head_names], "lr": settings["lr"]},
         {"params": [p for n, p in reader.named_parameters() if n in head_names], "lr": settings["head_lr"]}],
        weight_decay=settings["weight_decay"])
    steps = settings["epochs"] * -(-len(chunks) // settings["batch_size"])
    warmup = max(1, int(settings["warmup"] * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup))))
    state_file = Path(checkpoints) / "pairs.pt" if checkpoints else None
    start, best, best_state = 1, None, None
    if state_file and state_file.exists():
        saved = torch.load(state_file, weights_only=False)
        reader.load_state_dict(saved["reader"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        rng = saved["rng"]
        torch.set_rng_state(saved["torch_rng"])
        start, best_state = saved["epoch"] + 1, saved["best_state"]
        best = PairScores(*saved["best"]) if saved["best"] else None
        log(f"resumed after epoch {saved['epoch']}")
    for epoch in range(start, settings["epochs"] + 1):
        reader.train()
        order = rng.permutation(len(chunks))
        total = 0.0
        for at in range(0, len(order), settings["batch_size"]):
            text, text_mask, pieces, labels, classes, weight = collate([chunks[i] for i in order[at: at + settings["batch_size"]]])
            logits = reader(text, text_mask, pieces, labels)
            losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), classes.reshape(-1),
                                                       ignore_index=-100, reduction="none")
            loss = (losses * weight.reshape(-1)).sum() / max(1.0, float((classes >= 0).sum()))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(reader.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            total += loss.item()
        reader.eval()
        model.pairs = to_numpy(reader, settings)
        scores = relation_scores(model, dev)
        log(f"epoch {epoch}: loss {total:.1f} · dev {scores.line()}")
        if best is None or scores.selection > best.selection:
            best, best_state = scores, {k: v.clone() for k, v in reader.state_dict().items()}
        if state_file:
            state_file.parent.mkdir(parents=True, exist_ok=True)
            staging = state_file.with_name(state_file.name + ".new")
            torch.save({"reader": reader.state_dict(), "optimizer": optimizer.state_dict(),
                        "schedule": schedule.state_dict(), "rng": rng, "torch_rng": torch.get_rng_state(),
                        "epoch": epoch, "best": (best.scier, best.readers), "best_state": best_state}, staging)
            staging.replace(state_file)
        if stop_after and epoch >= stop_after and epoch < settings["epochs"]:
            log(f"stopped after epoch {epoch}; rerun with the same --checkpoints to go on")
            return None
    reader.load_state_dict(best_state)
    chosen = to_numpy(reader, settings)
    chosen.save(model_dir / PAIRS_FILE)
    config_file = model_dir / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    config["pair_reader"] = {"training": settings, "dev": {"relation_head_alone": baseline.line(), "with_reader": best.line()}}
    config_file.write_text(json.dumps(config, indent=2) + "\n")
    log(f"Saved {model_dir / PAIRS_FILE}; dev {best.line()}")
    return best
