"""Speed of kg's two learned extractors on the same texts: the old spaCy CNN NER and the new encoder.

    python bench/scierc.py ../shared/corpus/*.txt [--processes 2]

Prints words per second (whitespace words of the cleaned abstracts) for
  1. old: the SciERC-trained spaCy NER (its own tok2vec + ner), ``nlp.pipe``;
  2. new: the fine-tuned encoder, int8 ONNX, entities and relations
     (``SpanModel.predict`` on sentences split beforehand, as ``kg build`` hands them over);
each on one core (one process, one thread) and on every core (one process
per core, one thread each, as ``kg build -j`` runs), measured in one run.
Scores are ``kg eval scierc``'s.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import spacy  # noqa: E402

from kg.build import unique_papers  # noqa: E402
from kg.extract.pipeline import BASELINE_NER, load_pipeline  # noqa: E402
from kg.extract.spans import SpanModel  # noqa: E402
from kg.ingest import read_papers  # noqa: E402
from kg.text import clean  # noqa: E402


def _old(texts: list[str]) -> int:
    nlp = spacy.load(BASELINE_NER)
    return sum(len(doc.ents) for doc in nlp.pipe(texts, batch_size=64))


def _new(documents) -> int:
    model = SpanModel.from_files(threads=1)
    return sum(len(entities) for entities, _ in model.predict(documents))


def timed(work, shares: list, processes: int) -> float:
    started = time.perf_counter()
    if processes == 1:
        for share in shares:
            work(share)
    else:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            pool.map(work, shares)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--limit", type=int, default=400, help="abstracts to time")
    args = parser.parse_args()

    papers, _ = unique_papers(read_papers(args.inputs, on_skip=lambda e: None))
    texts = [clean(p.abstract).text for p in papers[: args.limit]]
    words = sum(len(t.split()) for t in texts)
    nlp = load_pipeline(ner=False)
    documents = [[[t.text for t in sent if not t.is_space] for sent in doc.sents] for doc in nlp.pipe(texts)]
    _old(texts[:8]), _new(documents[:8])  # warm up: load models, fill caches

    def shares(items: list, n: int) -> list[list]:
        return [items[i::n] for i in range(n)]

    print(f"{len(texts)} abstracts, {words} words; {args.processes} cores")
    print(f"{'extractor':<44}{'1 core':>12}{f'{args.processes} cores':>12}   (words/s)")
    for name, work, items in [("old: spaCy CNN NER (tok2vec + ner)", _old, texts),
                              ("new: MiniLM encoder, int8 ONNX, + heads", _new, documents)]:
        one = timed(work, [items], 1)
        every = timed(work, shares(items, args.processes), args.processes)
        print(f"{name:<44}{words / one:>12,.0f}{words / every:>12,.0f}")


if __name__ == "__main__":
    main()
