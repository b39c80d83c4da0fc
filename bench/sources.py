"""What each source of kg's mentions brings, per type: the span model and each rule family, on
SciER dev and SciERC dev.

For every source: how many of the mentions kg keeps come from it, their precision (exact span and
type), and what the whole extractor's recall, precision and F1 lose when the source is left out
(``kg.extract.extract_doc(..., without=...)``: its mentions are dropped before the others are
chosen, so another source may take the span). A source whose removal raises F1 costs more
precision than it brings recall.

SciER is scored on its Method / Task / Dataset (kg's Model counts as a Method; its Metrics have no
SciER counterpart and are left out), SciERC on kg's four types as SciERC's labels (a Dataset is a
Material, a Model a Method), as ``kg eval scierc`` counts them. Each document is parsed once.

    python bench/sources.py --scier ../shared/data/scier/PLM/dev.jsonl --scierc ../shared/data/scierc/dev.json
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence

from kg.evaluate.scier import read_scier, score_entities
from kg.evaluate.scierc import KG_LABELS, KG_TO_SCIERC, SciercDoc, read_scierc
from kg.extract import extract_doc, extractor_name, find_mentions, rules
from kg.extract.pipeline import load_pipeline
from kg.model import Paper
from kg.text import clean

#: The sources, each with the rules that make its mentions.
SOURCES = {
    "span model": {"ner"},
    "abbreviations": {"abbreviation-short", "abbreviation-long"},
    "names, typed": {"name", "family"},
    "names by shape": {"name-shape"},
    "lexicon": {"method-lexicon", "metric-lexicon", "dataset-lexicon", "task-lexicon"},
    "proposed names": {"proposed-name"},
    # Steps, not sources (kg.extract.STEPS): each name's mentions agree on a type; "the GRPO baseline" is a method.
    "one type per name": {"one-type-per-name"},
    "method nouns": {"method-noun"},
}


def parse(docs: Sequence[SciercDoc]):
    nlp = load_pipeline()
    cleaned = [clean(doc.text) for doc in docs]
    parsed = list(nlp.pipe(c.text for c in cleaned))
    matchers = {"lexicon": rules.lexicon_matchers(nlp)}
    return [(Paper(doc.doc_key, doc.text), parsed_doc, offsets)
            for doc, parsed_doc, offsets in zip(docs, parsed, cleaned)], extractor_name(nlp), matchers


def mentions(parsed, extractor, matchers, without=frozenset()):
    """Each document's mentions as (start, end, kg type, rule)."""
    return [[(m.start, m.end, m.label, m.rule) for m in
             extract_doc(paper, doc, offsets, extractor=extractor, matchers=matchers, without=without).mentions]
            for paper, doc, offsets in parsed]


def disagreements(parsed, matchers, docs, label_of) -> None:
    """Where a rule finds the very span the span model finds but types it otherwise: who is right."""
    tally: dict[str, list[int]] = {}
    for (paper, doc, offsets), gold_doc in zip(parsed, docs):
        gold = {(s, e): label for s, e, label in gold_doc.char_spans()}
        found = find_mentions(doc, matchers)
        model = {(m.span.start, m.span.end): m for m in found if m.rule == "ner"}
        for m in found:
            other = model.get((m.span.start, m.span.end))
            if other is None or label_of.get(m.label) == label_of.get(other.label):
                continue
            truth = gold.get(offsets.original_span(m.span.start_char, m.span.end_char))
            counts = tally.setdefault(m.rule, [0, 0, 0])
            counts[0 if truth == label_of.get(other.label) else 1 if truth == label_of.get(m.label) else 2] += 1
    print("  same span, other type (model right / rule right / neither):",
          ", ".join(f"{rule} {a}/{b}/{c}" for rule, (a, b, c) in sorted(tally.items())) or "none")


def table(name: str, docs: Sequence[SciercDoc], label_of: dict[str, str], labels: Sequence[str]) -> None:
    parsed, extractor, matchers = parse(docs)

    def score(found):
        spans = [[(s, e, label_of[t]) for s, e, t, _ in doc if t in label_of] for doc in found]
        return score_entities(docs, spans, labels=labels)[0]

    full = mentions(parsed, extractor, matchers)
    whole = score(full)
    micro = whole.micro()
    print(f"\n{name}: kg's whole extractor, exact span and type over {', '.join(labels)}: "
          f"P {micro.precision:.3f} R {micro.recall:.3f} F1 {micro.f1:.3f}")
    print("  per type: " + ", ".join(f"{t} {whole.per_label[t].f1:.3f}" for t in labels))
    gold = [{(s, e, label) for s, e, label in doc.char_spans() if label in labels} for doc in docs]
    header = (f"  {'source':<16}{'kept':>6}{'its P':>8}{'R without':>11}{'P without':>11}{'F1 without':>12}"
              f"{'dF1 if dropped':>16}")
    print(header)
    for source, rule_names in SOURCES.items():
        kept = [(i, s, e, t) for i, doc in enumerate(full) for s, e, t, rule in doc if rule in rule_names
                and t in label_of]
        right = sum((s, e, label_of[t]) in gold[i] for i, s, e, t in kept)
        dropped = score(mentions(parsed, extractor, matchers, frozenset(rule_names))).micro()
        precision = f"{right / len(kept):.3f}" if kept else "-"
        print(f"  {source:<16}{len(kept):>6}{precision:>8}{dropped.recall:>11.3f}{dropped.precision:>11.3f}"
              f"{dropped.f1:>12.3f}{dropped.f1 - micro.f1:>+16.3f}")
    disagreements(parsed, matchers, docs, label_of)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scier", help="SciER dev (PLM or LLM layout)")
    parser.add_argument("--scierc", help="SciERC dev (JSON lines)")
    args = parser.parse_args()
    if args.scier:
        table("SciER dev", read_scier(args.scier),
              {"Method": "Method", "Model": "Method", "Task": "Task", "Dataset": "Dataset"},
              ("Method", "Task", "Dataset"))
    if args.scierc:
        table("SciERC dev", read_scierc(args.scierc), KG_TO_SCIERC, KG_LABELS)


if __name__ == "__main__":
    main()
