"""kg's proposals against the readers' paper layer (``bench/annotated/papers.jsonl``), by corpus and part.

A paper's own contributions, as the readers named them (``own``: "FooNet", never the class it is
built on), against the mentions kg's extractor gives the role ``proposes`` or ``introduces``, on
the same text (each abstract's whitespace runs made one space, where the labels' offsets count):

- **precision**: the names kg proposes (as the graph links them: a name with one proposing mention)
  of which a mention overlaps an own contribution;
- **recall**: own contributions overlapped by a mention of a name kg proposes.

Each corpus's held-out third (``held_out``) was never trained or tuned on. Both rows take the
mentions as the build does, those the learned judge drops gone (:mod:`kg.extract.judge`); then kg's
rules alone, and kg as it builds, the rules' roles settled by the learned scorer
(:mod:`kg.extract.proposals`). With ``--train`` the scorer is first fitted on the tuned parts
(logistic regression; its two thresholds chosen by 5-fold cross-validation on the tuned parts alone,
for the best F1 among those proposing at least as precisely as the rules) and written to ``kg/extract/proposals.json``. With
``--save FILE`` the extractions are kept (pickle) and read back on the next run with ``--load FILE``.

    python bench/paper_layer.py NEURIPS.csv ... ICLR17.csv ICLR18.csv CORL.csv [--part both] [--train]
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kg.evaluate.annotated import normalised, text_sha1  # noqa: E402

PAPERS = Path(__file__).parent / "annotated" / "papers.jsonl"
PROPOSING = ("proposes", "introduces")


def labelled(path: Path, sources: list[str]) -> list[dict]:
    """Each record of the paper layer whose text is in ``sources``, with its normalised ``text``."""
    from kg.ingest import read_papers

    papers = {}
    for paper in read_papers(sources, on_skip=lambda error: None):
        papers.setdefault(paper.id, paper)
    records = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            paper = papers.get(record["id"])
            if paper is None or text_sha1(paper.abstract) != record["sha1"]:
                continue
            records.append({**record, "text": normalised(paper.abstract), "title": paper.title})
    return records


def extract(records: list[dict]):
    from kg.extract import extract_papers
    from kg.model import Paper

    return list(extract_papers([Paper(r["id"], r["text"], title=r["title"]) for r in records]))


def extractions_of(records: list[dict], load: str | None = None, save: str | None = None):
    """The extractions of ``records``: read back from ``load`` (a file ``save`` wrote), or made and kept in ``save``."""
    if load:
        with open(load, "rb") as file:
            extractions = pickle.load(file)  # noqa: S301 - a file a bench script wrote
        for record, extraction in zip(records, extractions):
            extraction.paper.title = record["title"]  # kept by extractions saved before titles
        return extractions
    extractions = extract(records)
    if save:
        with open(save, "wb") as file:
            pickle.dump(extractions, file)
    return extractions


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def proposal_counts(records: list[dict], proposed: list[dict[str, list[tuple[int, int]]]]) -> tuple[int, int, int, int]:
    """(right proposed, proposed, own found, own) over ``records``; ``proposed`` gives, for each paper, the
    names it proposes (as the graph links an entity: all the mentions of one name) with their mentions'
    spans. A name is right if one of its mentions overlaps an own contribution; an own contribution is
    found if a proposed name's mention overlaps it."""
    right = count = found = total = 0
    for record, names in zip(records, proposed):
        own = [(s, e) for s, e, *_ in record["own"]]
        right += sum(any(overlaps(span, o) for span in spans for o in own) for spans in names.values())
        found += sum(any(overlaps(o, span) for spans in names.values() for span in spans) for o in own)
        count += len(names)
        total += len(own)
    return right, count, found, total


def figure(counts: tuple[int, int, int, int]) -> str:
    right, proposed, found, own = counts
    p, r = right / max(proposed, 1), found / max(own, 1)
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return f"P {p:.3f} ({right}/{proposed})  R {r:.3f} ({found}/{own})  F1 {f1:.3f}"


def kg_proposals(extractions) -> list[dict[str, list[tuple[int, int]]]]:
    """For each extraction, the names it proposes (one of their mentions has a proposing role), each with
    every span of that name."""
    out = []
    for x in extractions:
        spans = defaultdict(list)
        for m in x.mentions:
            spans[m.text.lower()].append((m.start, m.end))
        out.append({name: spans[name] for name in {m.text.lower() for m in x.mentions if m.role in PROPOSING}})
    return out


def judged(extractions):
    """The extractions as the build takes them on: the mentions the judge drops gone (:mod:`kg.extract.judge`)."""
    import copy

    from kg.extract.judge import prune

    out = copy.deepcopy(extractions)
    for x in out:
        prune(x)
    return out


def settled(extractions, weights):
    """The extractions with their roles settled by the learned scorer, the originals untouched."""
    import copy

    from kg.extract.proposals import settle

    out = copy.deepcopy(extractions)
    for x in out:
        settle(x, weights)
    return out


def mention_labels(record: dict, extraction) -> list[int]:
    own = [(s, e) for s, e, *_ in record["own"]]
    return [int(any(overlaps((m.start, m.end), o) for o in own)) for m in extraction.mentions]


def logistic_folds(extractions, labels: list[list[int]], seed: int = 13):
    """What a learned layer over :mod:`kg.extract.features` is fitted with: ``train(rows)``, the coefficients
    of a logistic regression on those documents' mentions (``labels``: 0 or 1 per mention), and the
    documents in a seeded order with its 5 folds, to choose thresholds on."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from kg.extract.features import features

    X = [features(x) for x in extractions]
    y = [np.array(row, dtype=int) for row in labels]

    def train(rows):
        model = LogisticRegression(C=1.0, max_iter=3000, fit_intercept=False)
        model.fit(np.vstack([X[i] for i in rows]), np.concatenate([y[i] for i in rows]))
        return model.coef_[0]

    order = np.random.default_rng(seed).permutation(len(extractions))
    return train, order, [order[k::5] for k in range(5)]


def fit(records: list[dict], extractions, seed: int = 13) -> dict:
    """The scorer's weights, fitted on ``records`` (the tuned parts), and its thresholds: ``propose``
    the one of best F1 of proposals over 5 folds, ``keep`` the lowest that costs no precision there."""
    import numpy as np

    from kg.extract.features import feature_names

    train, order, folds = logistic_folds(extractions, [mention_labels(r, x) for r, x in zip(records, extractions)], seed)
    candidates = [(t, k) for t in np.arange(0.10, 0.80, 0.05) for k in np.arange(0.05, t + 0.01, 0.05)]
    totals = {c: np.zeros(4) for c in candidates}
    for fold in folds:
        rest = [i for i in order if i not in set(fold)]
        coef = train(rest)
        for t, k in candidates:
            weights = {"coef": coef.tolist(), "propose": t, "keep": k}
            chosen = [records[i] for i in fold]
            totals[(t, k)] += proposal_counts(chosen, kg_proposals(settled([extractions[i] for i in fold], weights)))

    def precision(counts):
        return counts[0] / max(counts[1], 1)

    def f1(c):
        right, proposed, found, own = totals[c]
        p, r = right / max(proposed, 1), found / max(own, 1)
        return 2 * p * r / (p + r) if p + r else 0.0

    # A name proposed wrongly misleads more than one missed: no threshold that proposes less precisely than the rules.
    floor = precision(proposal_counts(records, kg_proposals(extractions)))
    allowed = [c for c in candidates if precision(totals[c]) >= floor] or candidates
    best = max(allowed, key=lambda c: (round(f1(c), 3), -c[1]))
    print(f"5-fold on the tuned parts: propose at {best[0]:.2f}, keep at {best[1]:.2f}: {figure(tuple(totals[best]))}")
    return {"features": list(feature_names()), "coef": train(range(len(records))).tolist(),
            "propose": round(float(best[0]), 2), "keep": round(float(best[1]), 2),
            "trained_on": f"{len(records)} tuned abstracts of bench/annotated/papers.jsonl"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("abstracts", nargs="+", help="the corpora the labels point into")
    parser.add_argument("--labels", default=str(PAPERS))
    parser.add_argument("--part", choices=("held-out", "tuned", "both"), default="both")
    parser.add_argument("--save", help="keep the extractions in this file")
    parser.add_argument("--load", help="read the extractions --save kept instead of extracting")
    parser.add_argument("--train", action="store_true", help="fit the scorer on the tuned parts and ship it")
    args = parser.parse_args(argv)
    records = labelled(Path(args.labels), args.abstracts)
    extractions = extractions_of(records, args.load, args.save)
    from kg.extract import proposals

    extractions = judged(extractions)  # as the build does, before it settles proposals
    if args.train:
        tuned = [i for i, r in enumerate(records) if not r["held_out"]]
        weights = fit([records[i] for i in tuned], [extractions[i] for i in tuned])
        proposals.WEIGHTS.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
        proposals.model.cache_clear()
    weights = proposals.model()
    rules = kg_proposals(extractions)
    learned = kg_proposals(settled(extractions, weights)) if weights else None
    parts = {"held-out": [True], "tuned": [False], "both": [False, True]}[args.part]
    rows = defaultdict(list)
    for i, record in enumerate(records):
        rows[(record["held_out"], record["corpus"])].append(i)
        rows[(record["held_out"], "all")].append(i)
    for held in parts:
        for corpus in sorted({r["corpus"] for r in records}) + ["all"]:
            chosen = rows[(held, corpus)]
            for name, proposed in (("rules", rules), ("learned", learned)):
                if proposed is None:
                    continue
                counts = proposal_counts([records[i] for i in chosen], [proposed[i] for i in chosen])
                print(f"{'held out' if held else 'tuned':8s} {corpus:12s} {len(chosen):4d} abstracts  "
                      f"{name:8s} proposals {figure(counts)}")


if __name__ == "__main__":
    main()
