"""Exact-match scores and speed of kg's extractors on a SciERC file (e.g. SciERC dev).

    python bench/scierc.py path/to/scierc/dev.json [--model kg/extract/ner/model]

Prints, for the learned NER alone and for kg's whole extractor (when
``kg.extract.predict_entities`` exists), the table of ``kg eval scierc`` and the
speed in SciERC words per second on one process, best of two passes over the
file's texts; then relation P/R/F1 by SciERC type on kg's entities, on the
learned NER's, and on the gold ones. The NER is timed with ``nlp.pipe``; the whole extractor through
``predict_entities``, one text at a time.
"""
from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, as the figures in MEASURED.md

import spacy  # noqa: E402

from kg import extract  # noqa: E402
from kg.cli import relation_table  # noqa: E402
from kg.evaluate import KG_TO_SCIERC, entity_predictor, evaluate, read_scierc  # noqa: E402
from kg.train import MODEL_DIR  # noqa: E402


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The shortest wall time of ``runs`` calls of ``work``."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="a SciERC JSON Lines file, e.g. SciERC dev.json")
    parser.add_argument("--model", default=str(MODEL_DIR), help="the NER pipeline (default: %(default)s)")
    args = parser.parse_args()

    docs = read_scierc(args.file)
    texts = [d.text for d in docs]
    words = sum(len(d.words) for d in docs)
    print(f"{args.file}: {len(docs)} documents, {words} words\n")

    nlp = spacy.load(args.model)
    seconds = best_of(2, lambda: list(nlp.pipe(texts, batch_size=64, n_process=1)))
    print(f"== ner ({args.model}): {words / seconds:,.0f} words/s, 1 process")
    print(evaluate(docs, entity_predictor(nlp)).table())

    predict_entities = getattr(extract, "predict_entities", None)
    if predict_entities is None:
        print("\n== full: kg.extract.predict_entities does not exist yet; skipped.")
        return
    seconds = best_of(2, lambda: [predict_entities(text) for text in texts])
    print(f"\n== full (kg.extract.predict_entities): {words / seconds:,.0f} words/s, 1 process")
    print(evaluate(docs, predict_entities, label_map=KG_TO_SCIERC).table())

    # Relation F1 beside the entity F1: exact boundaries of both arguments and the type.
    for entities, title in (("kg", "kg's own entities"), ("ner", "the learned NER's entities"),
                            ("gold", "the gold entities")):
        print(f"\n== relations on {title} (published end-to-end references on SciERC test: SciIE 39.3, "
              "DyGIE++ 48.4, PURE 50.1, PL-Marker 53.2)" if entities == "ner" else f"\n== relations on {title}")
        print(relation_table(docs, entities=entities))


if __name__ == "__main__":
    main()
