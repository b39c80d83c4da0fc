"""The span model alone and kg's whole extractor on a SciER file (dev: ``scier/PLM/dev.jsonl``), side by side.

    python bench/scier_dev.py ../shared/data/scier/PLM/dev.jsonl [--model DIR] [--threads 1]

Prints P/R/F1 per SciER type (Method, Task, Dataset) for

- ``model``: the span model alone (the shipped one, or ``--model DIR``) on
  kg's sentences and tokens, its labels read as SciER's: a model with
  SciERC's labels through kg.vocab's table (Material is Dataset; Metric,
  OtherScientificTerm and Generic have no SciER type), a model with kg's
  labels as they are;
- ``kg``: kg's whole extractor as ``kg build`` runs it (``extract_papers``),
  on the same model, its Model counted as a Method;

entities exact (span and type) and by span alone, and relations strict (both
spans, both types, the relation type; Compare-With and Synonym-Of either way),
as ``kg.evaluate.scier`` scores them. Relations are read as SciER's where a
type maps: from SciERC's USED-FOR, PART-OF, COMPARE, HYPONYM-OF (SubTask-Of
between tasks) and EVALUATE-FOR (a dataset evaluating a method is the method's
Evaluated-With; one evaluating a task a Benchmark-For); from kg's usedFor,
partOf, comparedWith and outperforms, hyponymOf, evaluatedOn, benchmarkFor and
trainedOn. CONJUNCTION, FEATURE-OF, evaluates and variantOf have no SciER type.

It reads only what every kg since the first span model has (``extract_papers``,
``SpanModel``), so the same script measures an older checkout: put its folder
first on ``PYTHONPATH`` (with this ``kg/evaluate/scier.py`` copied into it).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kg.evaluate.scier import SCIER_RELATIONS, SCIER_TYPES, evaluate_scier, read_scier  # noqa: E402
from kg.evaluate.scierc import side_by_side  # noqa: E402

#: SciERC's entity labels and kg's types as SciER's.
ENTITY = {"Method": "Method", "Model": "Method", "Task": "Task", "Material": "Dataset", "Dataset": "Dataset"}
#: kg's relations as SciER's (hyponymOf between tasks is SubTask-Of).
KG_RELATION = {"usedFor": "Used-For", "partOf": "Part-Of", "comparedWith": "Compare-With",
               "outperforms": "Compare-With", "hyponymOf": "SubClass-Of", "evaluatedOn": "Evaluated-With",
               "benchmarkFor": "Benchmark-For", "trainedOn": "Trained-With"}
#: SciERC's relations as SciER's, where the arguments keep their order.
SCIERC_RELATION = {"USED-FOR": "Used-For", "PART-OF": "Part-Of", "COMPARE": "Compare-With",
                   "HYPONYM-OF": "SubClass-Of"}


def scier_relation(label: str, head: tuple, tail: tuple) -> tuple | None:
    """``(head, tail, SciER type)`` for a relation ``label`` between ``(start, end, SciER type)`` arguments."""
    if label in SCIER_RELATIONS:
        return head, tail, label
    if label in SCIERC_RELATION or label in KG_RELATION:
        scier = SCIERC_RELATION.get(label) or KG_RELATION[label]
        if scier == "SubClass-Of" and head[2] == "Task":
            scier = "SubTask-Of"
        return head, tail, scier
    if label == "EVALUATE-FOR":  # SciERC's goes from what evaluates to what is evaluated
        if tail[2] == "Task":
            return head, tail, "Benchmark-For"
        return tail, head, "Evaluated-With"
    return None


def typed(entities, relations):
    """Entities ``(start, end, label)`` and relations ``(head index, tail index, label)`` in SciER's types."""
    spans = [(s, e, ENTITY.get(label)) for s, e, label in entities]
    found = []
    for head, tail, label in relations:
        mapped = scier_relation(label, spans[head], spans[tail])
        if mapped and mapped[0][2] and mapped[1][2]:
            (hs, he, ht), (ts, te, tt), scier = mapped
            found.append((hs, he, ht, ts, te, tt, scier))
    return [s for s in spans if s[2]], found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="a SciER file, LLM or PLM layout")
    parser.add_argument("--model", help="a span model folder (default: the shipped one)")
    parser.add_argument("--threads", type=int, default=1, help="encoder threads (default 1)")
    parser.add_argument("--only", choices=("model", "kg"), help="one column only")
    args = parser.parse_args()

    from kg.extract import extract_papers, spans
    from kg.extract.pipeline import load_pipeline
    from kg.model import Paper

    model = spans.SpanModel.from_files(Path(args.model) if args.model else spans.MODEL_DIR, threads=args.threads)
    spans.load_span_model = lambda threads=None: model  # what kg build's pipeline runs, on this many threads
    docs = read_scier(args.file)
    plain = load_pipeline(ner=False)

    def model_alone(doc):
        parsed = plain(doc.text)
        kept = [[t for t in sent if not t.is_space] for sent in parsed.sents]
        kept = [sent for sent in kept if sent]
        tokens = [t for sent in kept for t in sent]
        [(entities, relations)] = model.predict([[[t.text for t in sent] for sent in kept]])
        chars = [(tokens[e.start].idx, tokens[e.end - 1].idx + len(tokens[e.end - 1])) for e in entities]
        return typed([(*chars[i], e.label) for i, e in enumerate(entities)],
                     [(r.head, r.tail, r.label) for r in relations])

    def whole(doc):
        [extraction] = extract_papers([Paper("scier-" + doc.doc_key, doc.text)])
        mentions = extraction.mentions
        relations = [(link.head, link.tail, link.relation) for link in extraction.links]
        relations += [(a, b, "Synonym-Of") for a, b, *_ in getattr(extraction, "synonyms", ())]
        return typed([(m.start, m.end, m.label) for m in mentions], relations)

    columns = {}
    for name, predict in (("model", model_alone), ("kg", whole)):
        if args.only and name != args.only:
            continue
        started = time.monotonic()
        columns[name] = evaluate_scier(docs, predict)
        words = sum(len(d.words) for d in docs)
        print(f"{name}: {time.monotonic() - started:.0f} s for {words} words", file=sys.stderr)
    print(f"{args.file}: {len(docs)} documents, {sum(len(d.words) for d in docs)} SciER tokens; "
          f"model {args.model or spans.MODEL_DIR} ({', '.join(model.labels.entity) if hasattr(model, 'labels') else 'SciERC labels'})\n")
    types = {f"micro ({len(SCIER_TYPES)} types)": SCIER_TYPES}
    print("Entities, exact span and type:")
    print(side_by_side({n: c["exact"] for n, c in columns.items()}, types))
    print("\nEntities, span only (any type):")
    print(side_by_side({n: c["span"] for n, c in columns.items()}, types))
    print("\nRelations, strict (both spans, both types, the relation type):")
    print(side_by_side({n: c["relation"] for n, c in columns.items()},
                       {f"micro ({len(SCIER_RELATIONS)} types)": SCIER_RELATIONS}))


if __name__ == "__main__":
    main()
