"""What each of kg's mention rules adds, on kg's annotated abstracts: entity exact F1 (both layers,
kg's types) of the whole extractor beside the extractor without one rule, rule by rule, per corpus.

A rule earns its place when leaving it out lowers F1 on every corpus's tuned part; the held-out
part (``--part held-out``) is read once a choice is made, to confirm it, never to make it.

    python bench/rule_ablation.py ABSTRACTS.csv ... [--part tuned|held-out] [--labels FILE]

Each abstract is parsed once (spaCy and the span model) and its mentions chosen again for each rule
left out, so the figures differ only by the rule.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotated_eval import KG_TYPES, _kg_type, gold  # noqa: E402
from sources import parse  # noqa: E402

from kg.evaluate.annotated import read_annotated  # noqa: E402
from kg.evaluate.scier import score_entities  # noqa: E402
from kg.extract import STEPS, extract_doc  # noqa: E402


def f1(docs, predicted) -> float:
    found = [[(m.start, m.end, _kg_type(m.label)) for m in x.mentions] for x in predicted]
    exact, _ = score_entities([gold(d, "both") for d in docs], found, labels=KG_TYPES)
    return exact.micro().f1


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("abstracts", nargs="+", help="the corpora the labels point into")
    parser.add_argument("--labels", default=str(Path(__file__).parent / "annotated" / "readers.jsonl"))
    parser.add_argument("--part", choices=("held-out", "tuned"), default="tuned")
    args = parser.parse_args(argv)
    annotated = read_annotated(args.labels, args.abstracts, held_out=args.part == "held-out")
    corpora = sorted({a.corpus for a in annotated})
    runs = {}
    for corpus in corpora:
        docs = [a.doc for a in annotated if a.corpus == corpus]
        papers, extractor, matchers = parse(docs)

        def run(without=frozenset(), papers=papers, extractor=extractor, matchers=matchers):
            return [extract_doc(p, d, c, extractor=extractor, matchers=matchers, without=without) for p, d, c in papers]

        whole = run()
        used = Counter(m.rule for x in whole for m in x.mentions)
        runs[corpus] = (docs, run, f1(docs, whole), used)
    # Each rule that found a mention, and the steps ``kg.extract.find`` can leave out by name.
    names = sorted(set().union(*(used for *_, used in runs.values()))) + list(STEPS)
    print(f"{'rule left out':22s}" + "".join(f"{c + ' (' + str(len(runs[c][0])) + ')':>28s}" for c in corpora))
    print(f"{'(none: kg whole)':22s}" + "".join(f"{runs[c][2]:>28.3f}" for c in corpora))
    for name in names:
        cells = []
        for corpus in corpora:
            docs, run, base, used = runs[corpus]
            cells.append(f"{f1(docs, run(frozenset({name}))) - base:+.3f} ({used[name]} kept)")
        print(f"{name:22s}" + "".join(f"{c:>28s}" for c in cells))


if __name__ == "__main__":
    main()
