"""kg's mentions against the readers' spans, with and without the learned judge (:mod:`kg.extract.judge`).

Entity exact F1 over both layers (a class of methods is a Method, of tasks a Task; a Metric counts;
kg's Model is a Method), as ``bench/annotated_eval.py`` gives it for kg, by corpus and part: kg's
extractor as it runs, then with the mentions the judge scores below its threshold dropped (those a
result names are kept), as ``kg build`` does. Each corpus's held-out third was never trained or
tuned on. With ``--train`` the judge is first fitted on the tuned parts (logistic regression; its
threshold chosen by 5-fold cross-validation on the tuned parts alone, for the best F1) and written to
``kg/extract/judge.json``. ``--save FILE`` keeps the extractions (pickle), ``--load FILE`` reads them.

    python bench/mention_judge.py NEURIPS.csv ... ICLR17.csv ICLR18.csv CORL.csv [--train]
"""
from __future__ import annotations

import argparse
import copy
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kg.evaluate.annotated import read_annotated  # noqa: E402
from kg.vocab import LAYER2_TYPES  # noqa: E402

LABELS = Path(__file__).parent / "annotated" / "readers.jsonl"
KG_TYPES = ("Method", "Task", "Dataset", "Metric")


def kg_type(label: str) -> str:
    return {"Model": "Method", **LAYER2_TYPES}.get(label, label)


def gold(annotated) -> set[tuple[int, int, str]]:
    return {(s, e, kg_type(label)) for s, e, label in annotated.doc.char_spans() if kg_type(label) in KG_TYPES}


def found(extraction) -> set[tuple[int, int, str]]:
    return {(m.start, m.end, kg_type(m.label)) for m in extraction.mentions if kg_type(m.label) in KG_TYPES}


def counts(annotated, extractions) -> tuple[int, int, int]:
    """(right, found, gold) over the documents."""
    right = guessed = total = 0
    for a, x in zip(annotated, extractions):
        g, f = gold(a), found(x)
        right, guessed, total = right + len(g & f), guessed + len(f), total + len(g)
    return right, guessed, total


def figure(c: tuple[int, int, int]) -> str:
    p, r = c[0] / max(c[1], 1), c[0] / max(c[2], 1)
    return f"P {p:.3f} R {r:.3f} F1 {2 * p * r / (p + r) if p + r else 0.0:.3f}"


def pruned(extractions, weights):
    from kg.extract.judge import prune

    out = copy.deepcopy(extractions)
    for x in out:
        prune(x, weights)
    return out


def fit(annotated, extractions, seed: int = 13) -> dict:
    """The judge's weights, fitted on the tuned documents given, and the threshold of best F1 over 5 folds."""
    from kg.extract.features import feature_names
    from paper_layer import logistic_folds  # this script's folder is on the path when it runs

    labels = [[int((m.start, m.end, kg_type(m.label)) in gold(a)) for m in x.mentions] for a, x in zip(annotated, extractions)]
    train, order, folds = logistic_folds(extractions, labels, seed)
    thresholds = np.arange(0.05, 0.60, 0.05)
    totals = {t: np.zeros(3) for t in thresholds}
    for fold in folds:
        coef = train([i for i in order if i not in set(fold)])
        for t in thresholds:
            chosen = [annotated[i] for i in fold]
            totals[t] += counts(chosen, pruned([extractions[i] for i in fold], {"coef": coef.tolist(), "keep": t}))

    def f1(t):
        right, guessed, total = totals[t]
        p, r = right / guessed, right / total
        return 2 * p * r / (p + r)

    best = max(thresholds, key=lambda t: (round(f1(t), 3), -t))
    print(f"5-fold on the tuned parts: keep at {best:.2f}: {figure(tuple(int(v) for v in totals[best]))}")
    return {"features": list(feature_names()), "coef": train(range(len(annotated))).tolist(),
            "keep": round(float(best), 2), "trained_on": f"{len(annotated)} tuned abstracts of bench/annotated/readers.jsonl"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("abstracts", nargs="+", help="the corpora the labels point into")
    parser.add_argument("--labels", default=str(LABELS))
    parser.add_argument("--train", action="store_true", help="fit the judge on the tuned parts and ship it")
    parser.add_argument("--save", help="keep the extractions in this file")
    parser.add_argument("--load", help="read the extractions --save kept instead of extracting")
    args = parser.parse_args(argv)
    annotated = read_annotated(args.labels, args.abstracts)
    if args.load:
        with open(args.load, "rb") as file:
            extractions = pickle.load(file)  # noqa: S301 - a file this script wrote
    else:
        from kg.extract import extract_papers
        from kg.model import Paper

        titles = {}
        from kg.ingest import read_papers

        for paper in read_papers(args.abstracts, on_skip=lambda error: None):
            titles.setdefault(paper.id, paper.title)
        extractions = list(extract_papers([Paper(a.doc.doc_key, a.doc.text, title=titles.get(a.doc.doc_key, ""))
                                           for a in annotated]))
        if args.save:
            with open(args.save, "wb") as file:
                pickle.dump(extractions, file)
    from kg.extract import judge

    if args.train:
        tuned = [i for i, a in enumerate(annotated) if not a.held_out]
        weights = fit([annotated[i] for i in tuned], [extractions[i] for i in tuned])
        judge.WEIGHTS.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
        judge.model.cache_clear()
    judged = pruned(extractions, judge.model())
    for held in (False, True):
        for corpus in sorted({a.corpus for a in annotated}) + ["all"]:
            rows = [i for i, a in enumerate(annotated) if a.held_out == held and corpus in ("all", a.corpus)]
            docs = [annotated[i] for i in rows]
            print(f"{'held out' if held else 'tuned':8s} {corpus:12s} {len(rows):4d} abstracts  "
                  f"kg {figure(counts(docs, [extractions[i] for i in rows]))}  ·  "
                  f"kg judged {figure(counts(docs, [judged[i] for i in rows]))}")


if __name__ == "__main__":
    main()
