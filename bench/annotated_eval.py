"""Entity exact F1 on kg's annotated abstracts (``bench/annotated/readers.jsonl``), by part.

Two figures per part, for the span model alone and for kg's whole extractor (as ``kg build``
runs it, and without its hand-written class rules):

- **both layers**: every labelled span in kg's types (a class of methods is a Method, of tasks a
  Task; a Metric counts; kg's Model is a Method);
- **SciER layer**: SciER's Method, Task and Dataset against layer 1 alone (the second layer's
  spans left out of both sides).

The held-out third (``held_out``) was never trained or tuned on; the rest trains the model
when the recipe reads the file, so its figure is not a figure of generalisation.

With ``--corpus-stages`` a third figure, **kg as built**: every annotated abstract (both parts, all
corpora) read as one corpus through the build's corpus stages too (resolution, then propagation of
the names found into every abstract, :mod:`kg.resolve.propagate`), each abstract's mentions then
scored as above (both layers), a mention counting where it resolves to an entity of the graph; beside
it the same without the judge of useful nodes (:mod:`kg.resolve.useful`).

    python bench/annotated_eval.py ABSTRACTS.csv ... [--labels bench/annotated/readers.jsonl] [--model DIR]
        [--corpus-stages | --only-corpus-stages] [--cache FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kg.evaluate.annotated import LAYER2_LABELS, read_annotated  # noqa: E402
from kg.evaluate.scier import score_entities  # noqa: E402
from kg.vocab import LAYER2_TYPES  # noqa: E402

KG_TYPES = ("Method", "Task", "Dataset", "Metric")
SCIER_TYPES = ("Method", "Task", "Dataset")
LAYER2 = set(LAYER2_LABELS.values())


def _kg_type(label: str) -> str:
    return {"Model": "Method", **LAYER2_TYPES}.get(label, label)


def gold(doc, layer: str):
    """``doc`` with its spans as one figure reads them: ``both`` in kg's types, ``scier`` layer 1 alone."""
    if layer == "both":
        spans = {(s, e, _kg_type(label)) for s, e, label in doc.spans}
    else:
        spans = {(s, e, label) for s, e, label in doc.spans if label not in LAYER2}
    return dataclasses.replace(doc, spans=tuple(sorted(spans)))


def model_predictions(docs, model_dir):
    from kg.extract.spans import SpanModel, load_span_model

    model = SpanModel.from_files(Path(model_dir)) if model_dir else load_span_model()
    out = []
    for doc in docs:
        words = [list(doc.words[s:e]) for s, e in doc.sentences]
        [(entities, _)] = model.predict([words])
        flat = [w for s, e in doc.sentences for w in range(s, e)]
        out.append([(doc.offsets[flat[x.start]][0], doc.offsets[flat[x.end - 1]][1], x.label) for x in entities])
    return out


def kg_predictions(docs, without=frozenset()):
    from kg.extract import extract_papers
    from kg.model import Paper

    from kg.extract.judge import prune

    extractions = list(extract_papers([Paper(doc.doc_key, doc.text) for doc in docs], without=without))
    for extraction in extractions:  # the mentions the build drops (kg.extract.judge)
        prune(extraction)
    return [[(m.start, m.end, m.label, m.rule) for m in x.mentions] for x in extractions]


def extracted(papers, cache: str | None = None) -> list:
    """The extractions of ``papers`` on two processes, read from and added to the extraction cache file
    ``cache`` where one is given (as ``kg build`` keeps it)."""
    from kg.cache import ExtractionCache
    from kg.extract import extract_all, extractor_name, in_processes
    from kg.extract.pipeline import load_pipeline

    store = ExtractionCache(Path(cache), extractor=extractor_name(load_pipeline())) if cache else None
    try:
        return extract_all(papers, executor=in_processes(2), cache=store)
    finally:
        if store is not None:
            store.close()


def built_predictions(docs, cache: str | None = None, judged: bool = True):
    """The mentions of ``docs`` as a build over them all keeps them: extracted, judged, proposals settled,
    resolved across them, the names found propagated and, with ``judged``, the poor nodes left out
    (:func:`kg.build.resolved`); a mention counts where it resolves to an entity, as in the graph.
    ``cache``: an extraction cache file to read and fill."""
    from kg import pwc
    from kg.build import resolved
    from kg.model import Paper

    extractions = extracted([Paper(doc.doc_key, doc.text) for doc in docs], cache)
    extractions, entities, _ = resolved(extractions, pwc.load(), judged=judged)
    kept = {ref for entity in entities for ref in entity.mentions}
    return [[(m.start, m.end, m.label, m.rule) for i, m in enumerate(x.mentions) if (x.paper.id, i) in kept]
            for x in extractions]


def figure(docs, predicted, layer: str) -> str:
    if layer == "both":
        found = [[(s, e, _kg_type(label)) for s, e, label, *_ in p] for p in predicted]
        labels = KG_TYPES
    else:  # SciER's layer: the model's and kg's classes layer left out, as kg eval scier does
        found = [[(s, e, {"Model": "Method"}.get(label, label)) for s, e, label, *rule in p
                  if label not in LAYER2 and not (rule and rule[0].startswith("class"))] for p in predicted]
        labels = SCIER_TYPES
    exact, _ = score_entities([gold(d, layer) for d in docs], found, labels=labels)
    m = exact.micro()
    return f"P {m.precision:.3f} R {m.recall:.3f} F1 {m.f1:.3f} ({m.tp} of {m.tp + m.fn} gold, {m.tp + m.fp} found)"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("abstracts", nargs="+", help="the corpora the labels point into")
    parser.add_argument("--labels", default=str(Path(__file__).parent / "annotated" / "readers.jsonl"))
    parser.add_argument("--model", default=None, help="a span model folder (default: the shipped one)")
    parser.add_argument("--part", choices=("held-out", "tuned", "both"), default="held-out")
    parser.add_argument("--class-rules", action="store_true",
                        help="also kg without its hand-written class rules (a third more time)")
    parser.add_argument("--corpus-stages", action="store_true",
                        help="also kg as built: all the annotated abstracts resolved as one corpus")
    parser.add_argument("--only-corpus-stages", action="store_true", help="kg as built alone")
    parser.add_argument("--cache", help="an extraction cache file for kg as built (made if missing)")
    args = parser.parse_args(argv)
    parts = {"held-out": [True], "tuned": [False], "both": [True, False]}[args.part]
    if args.corpus_stages or args.only_corpus_stages:
        everything = [a for held in (True, False) for a in read_annotated(args.labels, args.abstracts, held_out=held)]
        docs = [a.doc for a in everything]
        built, unjudged = (built_predictions(docs, args.cache, judged) for judged in (True, False))
        for held in parts:
            for corpus in sorted({a.corpus for a in everything}) + ["all"]:
                rows = [i for i, a in enumerate(everything) if a.held_out == held and corpus in ("all", a.corpus)]
                print(f"{'held out' if held else 'tuned':8s} {corpus:12s} {len(rows):3d} abstracts  both   kg as built "
                      f"{figure([docs[i] for i in rows], [built[i] for i in rows], 'both')}  ·  without the entity judge "
                      f"{figure([docs[i] for i in rows], [unjudged[i] for i in rows], 'both')}", flush=True)
        if args.only_corpus_stages:
            return
    for held in parts:
        annotated = read_annotated(args.labels, args.abstracts, held_out=held)
        name = "held out" if held else "tuned"
        every = [a.doc for a in annotated]
        # Each document read once; each corpus's figure takes its own rows.
        all_model, all_whole = model_predictions(every, args.model), kg_predictions(every)
        # kg without its hand-written class rules (kg.extract.classes): what the model's own layer brings
        all_learned = (kg_predictions(every, without=frozenset({"class", "class-coordination"})) if args.class_rules
                       else all_whole)
        for corpus in sorted({a.corpus for a in annotated}) + ["all"]:
            rows = [i for i, a in enumerate(annotated) if corpus in ("all", a.corpus)]
            docs = [every[i] for i in rows]
            model, whole, learned = ([found[i] for i in rows] for found in (all_model, all_whole, all_learned))
            for layer in ("both", "scier"):
                print(f"{name:8s} {corpus:12s} {len(docs):3d} abstracts  {layer:5s}  model {figure(docs, model, layer)}"
                      f"  ·  kg {figure(docs, whole, layer)}"
                      + (f"  ·  kg without hand class rules {figure(docs, learned, layer)}"
                         if layer == "both" and args.class_rules else ""))


if __name__ == "__main__":
    main()
