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

from kg.evaluate.annotated import read_annotated  # noqa: E402
from kg.evaluate.scier import score_entities  # noqa: E402
from kg.extract import extract_doc, extractor_name, rules  # noqa: E402
from kg.extract.pipeline import load_pipeline  # noqa: E402
from kg.model import Paper  # noqa: E402
from kg.text import clean  # noqa: E402


def parsed(docs):
    """Each annotated abstract as a paper with its parse, its offset map and the pipeline's matchers."""
    nlp = load_pipeline()
    matchers = {"lexicon": rules.lexicon_matchers(nlp)}
    papers = [Paper(doc.doc_key, doc.text) for doc in docs]
    cleaned = [clean(p.abstract) for p in papers]
    parses = list(nlp.pipe((c.text for c in cleaned), batch_size=32))
    return [(p, d, c) for p, d, c in zip(papers, parses, cleaned)], extractor_name(nlp), matchers


def f1(docs, predicted) -> tuple[float, int]:
    found = [[(m.start, m.end, _kg_type(m.label)) for m in x.mentions] for x in predicted]
    exact, _ = score_entities([gold(d, "both") for d in docs], found, labels=KG_TYPES)
    micro = exact.micro()
    return micro.f1, micro.tp


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
        papers, extractor, matchers = parsed(docs)

        def run(without=frozenset(), papers=papers, extractor=extractor, matchers=matchers):
            return [extract_doc(p, d, c, extractor=extractor, matchers=matchers, without=without) for p, d, c in papers]

        whole = run()
        used = Counter(m.rule for x in whole for m in x.mentions)
        runs[corpus] = (docs, run, whole, used)
    # Each rule that found a mention, and the steps ``kg.extract.find`` can leave out by name.
    names = sorted(set().union(*(used for *_, used in runs.values()))) + ["method-noun", "one-type-per-name"]
    print(f"{'rule left out':22s}" + "".join(f"{c + ' (' + str(len(runs[c][0])) + ')':>28s}" for c in corpora))
    print(f"{'(none: kg whole)':22s}" + "".join(f"{f1(runs[c][0], runs[c][2])[0]:>28.3f}" for c in corpora))
    for name in names:
        cells = []
        for corpus in corpora:
            docs, run, whole, used = runs[corpus]
            base = f1(docs, whole)[0]
            score = f1(docs, run(frozenset({name})))[0]
            cells.append(f"{score - base:+.3f} ({used[name]} kept)")
        print(f"{name:22s}" + "".join(f"{c:>28s}" for c in cells))


if __name__ == "__main__":
    main()
