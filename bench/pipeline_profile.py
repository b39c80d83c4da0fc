"""Where extraction's time goes on one core: each component of kg's spaCy pipeline, then kg's rules.

    python bench/pipeline_profile.py ../shared/data/iclr_openreview/ICLR18_submissions.csv [--papers 300]

The abstracts are cleaned as ``kg build`` cleans them, run through the pipeline one component at
a time (each on the whole batch, so its share is its own), and then through the rules
(``extract_doc``) on the finished docs. Prints seconds, words/s and share of the whole.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from kg.extract import extract_doc, extractor_name, rules  # noqa: E402
from kg.extract.pipeline import load_pipeline  # noqa: E402
from kg.ingest import read_papers  # noqa: E402
from kg.text import clean  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--papers", type=int, default=300)
    args = parser.parse_args()
    nlp = load_pipeline(encoder_threads=1)
    papers = list(read_papers([args.corpus]))[:args.papers]
    cleaned = [clean(p.abstract) for p in papers]
    seconds: dict[str, float] = {}
    began = time.perf_counter()
    docs = [nlp.make_doc(c.text) for c in cleaned]
    seconds["tokenizer"] = time.perf_counter() - began
    for name, component in nlp.pipeline:
        began = time.perf_counter()
        docs = list(component.pipe(docs, batch_size=64)) if hasattr(component, "pipe") else [component(d) for d in docs]
        seconds[name] = time.perf_counter() - began
    matchers = {"lexicon": rules.lexicon_matchers(nlp)}
    extractor = extractor_name(nlp)
    began = time.perf_counter()
    for paper, doc, text in zip(papers, docs, cleaned):
        extract_doc(paper, doc, text, extractor=extractor, matchers=matchers)
    seconds["kg rules"] = time.perf_counter() - began
    words = sum(len(doc) for doc in docs)
    total = sum(seconds.values())
    print(f"{len(docs)} abstracts, {words:,} tokens, one core: {total:.1f} s, {words / total:,.0f} tokens/s\n")
    print("| step | s | tokens/s | share |")
    print("|---|---:|---:|---:|")
    for name, spent in seconds.items():
        print(f"| {name} | {spent:.2f} | {words / spent:,.0f} | {spent / total:.0%} |")


if __name__ == "__main__":
    main()
