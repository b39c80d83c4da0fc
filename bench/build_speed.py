"""Build speed: `kg build` end to end next to spaCy's own `nlp.pipe` on the same texts.

Prints abstracts/s and words/s for
  1. spaCy alone: `nlp.pipe` over the cleaned abstracts, same pipeline and components as kg,
  2. kg's extraction stage (parse + rules),
  3. the whole build (ingest, extract, resolve, graph, RDF x3, HTML),
the ratios between them (measured in one run: the machine is shared and noisy),
and the peak memory of the process.

    python bench/build_speed.py ../shared/corpus/*.txt [--repeat 3]
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from kg.build import build, unique_papers
from kg.extract import extract_papers
from kg.extract.pipeline import load_pipeline
from kg.ingest import read_papers
from kg.text import clean


def best_of(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest counts")
    args = parser.parse_args()

    papers, _ = unique_papers(read_papers(args.inputs, on_skip=lambda e: None))
    texts = [clean(p.abstract).text for p in papers]
    nlp = load_pipeline()
    words = sum(len(t.split()) for t in texts)
    list(nlp.pipe(texts[:20]))  # warm up

    spacy_s = best_of(args.repeat, lambda: list(nlp.pipe(texts, batch_size=64)))
    extract_s = best_of(args.repeat, lambda: list(extract_papers(papers, nlp=nlp)))
    with tempfile.TemporaryDirectory() as out:
        build_s = best_of(args.repeat, lambda: build(args.inputs, Path(out) / "bench", processes=1, cache=None))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"corpus: {len(papers)} abstracts, {words} words ({words / len(papers):.0f} per abstract)")
    print(f"pipeline: {nlp.meta['name']} {nlp.meta['version']}, components {nlp.pipe_names}, 1 process")
    print(f"{'stage':<34}{'seconds':>9}{'abstracts/s':>13}{'words/s':>10}{'vs spaCy':>10}")
    for name, seconds in [("spaCy nlp.pipe (same components)", spacy_s), ("kg extract (parse + rules)", extract_s),
                          ("kg build (end to end)", build_s)]:
        print(f"{name:<34}{seconds:>9.2f}{len(papers) / seconds:>13.1f}{words / seconds:>10.0f}{seconds / spacy_s:>9.2f}x")
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
