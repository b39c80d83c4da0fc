"""The judge of useful nodes (:mod:`kg.resolve.useful`): fit it on the readers' tuned abstracts and
measure it on what it never saw.

Each corpus is read as ``kg build`` reads it (its extractions from the build's cache, where given),
resolved, and its entities scored. An entity's label comes from the readers' abstracts of that
corpus: every place one of its names stands there as whole words is a vote, "useful" where a reader
labelled exactly that span (either layer), "none" where no reader's span touches it (inside a longer
labelled name: no vote). An entity is useful where most of its votes are.

Two splits keep the figures honest: the votes of the held-out abstracts (``int(sha1(id), 16) % 3 ==
0``) are never fitted on, and neither are the entities whose label is held out by the same rule, so a
held-out figure is of names and abstracts the judge never saw. The threshold is chosen by 5-fold
cross-validation on the tuned part: the one that drops the most junk entities net of twice the useful
ones it loses (``--cost``: a useful node lost is worse than a poor one kept).

    python bench/entity_judge.py neurips=A.csv,B.csv,C.csv iclr=ICLR17.csv,ICLR18.csv corl=CORL.csv \\
        [--cache DIR/.kg-cache/extractions.sqlite] [--train]

Prints per corpus and part: entities voted on, junk among them, the area under the ROC curve, and at
the shipped threshold the junk dropped and the useful lost (entities, and votes).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from annotated_eval import extracted  # noqa: E402
from mention_judge import LABELS, kg_type  # noqa: E402

from kg import pwc  # noqa: E402
from kg.build import resolved, unique_papers  # noqa: E402
from kg.evaluate.annotated import read_annotated  # noqa: E402
from kg.extract.spans import encoder_digest  # noqa: E402
from kg.ingest import read_papers  # noqa: E402
from kg.resolve import useful  # noqa: E402

CORPUS_OF = {"neurips": "neurips2023", "iclr": "iclr2017_18", "corl": "corl2024"}  # names in readers.jsonl
LONGEST_NAME = 8  # words


def held_out(text: str) -> bool:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16) % 3 == 0


def corpus_entities(sources: list[str], cache: str | None):
    papers, _ = unique_papers(read_papers(sources, on_skip=lambda error: None))
    extractions, entities, _ = resolved(extracted(papers, cache), pwc.load(), judged=False)
    return extractions, entities


def votes(entities, annotated) -> list[dict[str, Counter]]:
    """Per entity, per part ("tuned", "held"), its votes in the readers' abstracts."""
    name_of: dict[str, int] = {}  # a name written with capitals past its first letter ("MATH") as written
    for i, entity in enumerate(entities):
        for name in [entity.label, *entity.aliases]:
            name_of.setdefault(_written(name), i)
    found = [{"tuned": Counter(), "held": Counter()} for _ in entities]
    for a in annotated:
        text, part = a.doc.text, "held" if a.held_out else "tuned"
        labelled = {(s, e): kg_type(label) for s, e, label in a.doc.char_spans()}
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        taken: list[tuple[int, int]] = []
        for i in range(len(words)):
            for n in range(min(LONGEST_NAME, len(words) - i), 0, -1):  # the longest name first
                start, end = words[i][0], words[i + n - 1][1]
                written = text[start:end].rstrip(".,;:)")
                lead = len(written) - len(written.lstrip("("))
                start, end = start + lead, start + len(written)
                entity = name_of.get(_written(text[start:end]))
                if entity is None:
                    continue
                if any(start < e and s < end for s, e in taken):  # inside a name already counted
                    break
                taken.append((start, end))
                if (start, end) in labelled:
                    found[entity][part]["useful"] += 1
                elif all(end <= s or start >= e for s, e in labelled):
                    found[entity][part]["none"] += 1
                break
    return found


def _written(name: str) -> str:
    """How a name is looked up: as written where it has a capital or digit past its first letter
    ("MATH" is not "math"), else in lower case ("Diffusion models" is "diffusion models")."""
    return name if any(c.isupper() or c.isdigit() for c in name[1:]) else name.lower()


def labelled(counts: Counter) -> tuple[bool, int, int] | None:
    """(useful, useful votes, none votes), or None without a vote."""
    u, n = counts["useful"], counts["none"]
    return (u >= n, u, n) if u + n else None


def fit(rows: np.ndarray, y: np.ndarray, weight: np.ndarray, c: float) -> dict:
    from sklearn.linear_model import LogisticRegression

    mean, scale = rows.mean(axis=0), rows.std(axis=0) + 1e-6
    model = LogisticRegression(C=c, max_iter=5000).fit((rows - mean) / scale, y, sample_weight=weight)
    return {"features": list(useful.FEATURES), "mean": mean.tolist(), "scale": scale.tolist(),
            "coef": model.coef_[0].tolist(), "intercept": float(model.intercept_[0]), "C": c}


def net(p: np.ndarray, y: np.ndarray, threshold: float, cost: float) -> float:
    """Junk entities dropped below ``threshold``, less ``cost`` for each useful one lost."""
    drop = p < threshold
    return float((drop & ~y).sum() - cost * (drop & y).sum())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", metavar="NAME=CSV,CSV")
    parser.add_argument("--cache", help="the extraction cache of a build of these corpora")
    parser.add_argument("--labels", default=str(LABELS))
    parser.add_argument("--c", type=float, default=0.003, help="the logistic model's inverse regularisation")
    parser.add_argument("--cost", type=float, default=2.0, help="what losing a useful node costs, in junk nodes kept")
    parser.add_argument("--train", action="store_true", help="fit on the tuned part and ship the weights")
    args = parser.parse_args(argv)
    corpora = dict(item.split("=", 1) for item in args.corpora)
    sources = {name: files.split(",") for name, files in corpora.items()}
    annotated = read_annotated(args.labels, [f for files in sources.values() for f in files])
    data = {}
    for name, files in sources.items():
        extractions, entities = corpus_entities(files, args.cache)
        data[name] = (entities, useful.features(entities, extractions),
                      votes(entities, [a for a in annotated if a.corpus == CORPUS_OF.get(name, name)]))
        print(f"{name}: {len(extractions):,} papers, {len(entities):,} entities", flush=True)

    def part(name: str, which: str, names_held: bool):
        entities, rows, found = data[name]
        picked = [(i, v) for i, e in enumerate(entities)
                  if held_out(e.label) == names_held and (v := labelled(found[i][which])) is not None]
        index = [i for i, _ in picked]
        return (rows[index], np.array([v[0] for _, v in picked]), np.array([v[1] for _, v in picked]),
                np.array([v[2] for _, v in picked]), [entities[i].label for i in index])

    train = [part(name, "tuned", False) for name in data]
    rows = np.vstack([t[0] for t in train])
    y, u, n = (np.concatenate([t[k] for t in train]) for k in (1, 2, 3))
    y = y.astype(bool)
    weight = np.minimum(u + n, 5)
    # The threshold: 5-fold on the tuned part, the most "none" votes removed net of "useful" ones.
    folds = np.arange(len(y)) % 5
    thresholds = np.round(np.arange(0.05, 0.71, 0.05), 2)
    gained = np.zeros(len(thresholds))
    for k in range(5):
        model = fit(rows[folds != k], y[folds != k], weight[folds != k], args.c)
        p = useful.scores(rows[folds == k], model)
        gained += [net(p, y[folds == k], t, args.cost) for t in thresholds]
    print("threshold: " + ", ".join(f"{t:.2f} {g:+.0f}" for t, g in zip(thresholds, gained)))
    # The encoder whose states the vectors are: another encoder's are read on the names alone (useful.scores).
    weights = {"encoder": encoder_digest(), **fit(rows, y, weight, args.c),
               "threshold": float(thresholds[int(np.argmax(gained))])}
    if args.train:
        useful.WEIGHTS.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
        useful.model.cache_clear()
    else:
        weights = useful.model() or weights
    from sklearn.metrics import roc_auc_score

    print(f"threshold {weights['threshold']:.2f}, C {weights['C']}\n")
    print("| corpus | part | entities | junk | AUC | junk dropped | useful lost | none votes removed | useful votes lost |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in data:
        for label, which, names_held in (("tuned", "tuned", False), ("held out", "held", True)):
            rows_, y_, u_, n_, labels = part(name, which, names_held)
            y_ = y_.astype(bool)
            if not len(y_):
                continue
            p = useful.scores(rows_, weights)
            drop = p < weights["threshold"]
            auc = roc_auc_score(y_, p) if 0 < y_.sum() < len(y_) else float("nan")
            print(f"| {name} | {label} | {len(y_)} | {int((~y_).sum())} | {auc:.3f} | {int((drop & ~y_).sum())} "
                  f"| {int((drop & y_).sum())} | {int(n_[drop].sum())} | {int(u_[drop].sum())} |")
            if label == "held out":
                lost = [lab for lab, d, good in zip(labels, drop, y_) if d and good]
                print(f"<!-- {name} held out, useful lost: {'; '.join(lost[:30])} -->")


if __name__ == "__main__":
    main()
