"""kg's reported results against the readers' tuples (``bench/annotated/papers.jsonl``), by corpus and part.

Every number of a labelled abstract that reports an outcome was written down by a reader with its
kind (the paper's own score, a baseline's, a gain, others', not a result) and the spans of its
metric, dataset, method and setting. kg's results are matched to them by the value's offsets. Figures:

- **kinds right**: of kg's results, those whose kind is the readers' (own = ``score``, gain = ``gain``;
  a baseline's, others', not a result and unlabelled numbers are no score of the paper's);
- **ranked precision**: of kg's scores with a dataset (what a leaderboard ranks), those the readers
  call the paper's own score;
- **own scores found**: of the readers' own scores with a dataset, those kg ranks (a score with a
  dataset at the same value);
- **dataset right**: of the ranked ones that are right, those whose dataset overlaps the readers';
- **set apart**: of the ranked ones that are right, those kg gives a setting (:mod:`kg.extract.settings`),
  beside how many of those the readers wrote a setting for; and of the right ones without a setting,
  how many the readers wrote one for (most readers' settings, "holdout test set", "best", qualify
  a score without making it incomparable, so this is read by hand, not as a recall).

The extractions are taken as the build takes them (mentions judged, proposals settled, settings read).
Each corpus's held-out third was never trained or tuned on. ``--save FILE`` keeps the extractions
(pickle) for ``--load FILE``; ``--show`` prints each ranked result of the tuned parts that is wrong.

    python bench/results_eval.py NEURIPS.csv ... ICLR17.csv ICLR18.csv CORL.csv [--save FILE | --load FILE]
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paper_layer import PAPERS, extractions_of, judged, labelled, overlaps, settled  # noqa: E402

KIND = {"own": "score", "gain": "gain"}
SET_READ, UNSET_READ = "set apart, a reader's setting", "not set apart, a reader's setting"


def tuple_of(record: dict, result) -> dict | None:
    return next((t for t in record["results"] if overlaps((result.start, result.end), tuple(t["value"]))), None)


def counts(records: list[dict], extractions, show: bool = False) -> dict[str, int]:
    c = defaultdict(int)
    for record, x in zip(records, extractions):
        for r in x.results:
            t = tuple_of(record, r)
            c["results"] += 1
            c["kinds right"] += KIND.get(t["kind"] if t else "", "none") == r.kind
            if r.kind != "score" or r.dataset is None:
                continue
            c["ranked"] += 1
            if not (t and t["kind"] == "own"):
                if show:
                    s, e = x.sentences[r.sentence]
                    print(f"  {t['kind'] if t else 'unlabelled':10s} {x.paper.abstract[r.start:r.end]!r}: {x.paper.abstract[s:e]}")
                continue
            c["ranked right"] += 1
            m = x.mentions[r.dataset]
            c["dataset right"] += bool(t["dataset"]) and overlaps((m.start, m.end), tuple(t["dataset"]))
            c["set apart"] += bool(r.setting)
            c[SET_READ] += bool(r.setting) and bool(t["setting"])
            c[UNSET_READ] += not r.setting and bool(t["setting"])
        for t in record["results"]:
            if t["kind"] == "own" and t["dataset"]:
                c["own"] += 1
                c["own found"] += any(r.kind == "score" and r.dataset is not None
                                      and overlaps((r.start, r.end), tuple(t["value"])) for r in x.results)
    return c


def line(c: dict[str, int]) -> str:
    def share(a, b):
        return f"{c[a] / max(c[b], 1):.3f} ({c[a]}/{c[b]})"

    return (f"kinds right {share('kinds right', 'results')}  ranked precision {share('ranked right', 'ranked')}  "
            f"own scores found {share('own found', 'own')}  dataset right {share('dataset right', 'ranked right')}  "
            f"set apart {c['set apart']} (the readers wrote a setting for {c[SET_READ]}), "
            f"not set apart, the readers wrote one {c[UNSET_READ]}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("abstracts", nargs="+", help="the corpora the labels point into")
    parser.add_argument("--labels", default=str(PAPERS))
    parser.add_argument("--save", help="keep the extractions in this file")
    parser.add_argument("--load", help="read the extractions --save kept instead of extracting")
    parser.add_argument("--show", action="store_true", help="print the wrong ranked results of the tuned parts")
    args = parser.parse_args(argv)
    records = labelled(Path(args.labels), args.abstracts)
    extractions = extractions_of(records, args.load, args.save)
    from kg.extract import proposals
    from kg.extract.settings import settle_settings

    extractions = settled(judged(extractions), proposals.model())  # as the build takes them
    for x in extractions:
        for r in x.results:
            r.setting = getattr(r, "setting", "")  # extractions kept before settings were read
        settle_settings(x)
    rows = defaultdict(list)
    for i, record in enumerate(records):
        rows[(record["held_out"], record["corpus"])].append(i)
        rows[(record["held_out"], "all")].append(i)
    for held in (True, False):
        for corpus in sorted({r["corpus"] for r in records}) + ["all"]:
            chosen = rows[(held, corpus)]
            show = args.show and not held and corpus == "all"
            c = counts([records[i] for i in chosen], [extractions[i] for i in chosen], show)
            print(f"{'held out' if held else 'tuned':8s} {corpus:12s} {len(chosen):4d} abstracts  {line(c)}")


if __name__ == "__main__":
    main()
