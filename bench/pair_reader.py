"""Strict end-to-end relations of the span model, with and without its pair reader, by corpus and part.

Relations between the model's own entities, counted as SciER counts them (both character spans, both
entity types and the relation type; Compare-With either way), on SciER dev, on the readers' dev tenth
of the tuned annotated abstracts (what ``kg train-pairs`` chooses its epoch on), and on each corpus's
held-out third (never trained or tuned on). Each setting of the reader is a row: how many pairs of a
sentence it reads again (0: the relation head alone) and its share of the blend with the head.

    python bench/pair_reader.py --model DIR --scier-dev scier/PLM/dev.jsonl \\
        neurips=oral.csv,spotlight.csv,poster.csv iclr=ICLR17_submissions.csv,ICLR18_submissions.csv \\
        corl=corl2024.csv [--per-sentence 0,2,4,8] [--blend 1,0.5]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kg.evaluate.annotated import read_annotated  # noqa: E402
from kg.extract.pipeline import load_pipeline  # noqa: E402
from kg.extract.spans import SpanModel  # noqa: E402
from kg.train.examples import read_examples, readers_dev, to_example  # noqa: E402
from kg.train.pairs import PairScores, relation_scores, remembering  # noqa: E402

LABELS = Path(__file__).resolve().parent / "annotated" / "readers.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", help="NAME=FILE,FILE...: a corpus's abstracts (every file the labels point into)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--scier-dev", required=True)
    parser.add_argument("--labels", default=str(LABELS))
    parser.add_argument("--per-sentence", default="0,2,4,8")
    parser.add_argument("--blend", default="1")
    args = parser.parse_args()

    tokenizer = load_pipeline(ner=False).tokenizer
    sets = {"SciER dev": read_examples([args.scier_dev], tokenizer)}
    files = [f for c in args.corpora for f in c.split("=", 1)[1].split(",")]
    labelled = read_annotated(args.labels, files)
    sets["readers' dev tenth"] = [to_example(a.doc, tokenizer, "scier") for a in labelled
                                  if not a.held_out and readers_dev(a.doc.doc_key)]
    for corpus in sorted({a.corpus for a in labelled}):
        sets[f"{corpus} held out"] = [to_example(a.doc, tokenizer, "scier") for a in labelled if a.held_out and a.corpus == corpus]
    model = SpanModel.from_files(Path(args.model))
    reader = model.pairs
    model.encoder = remembering(model.encoder)
    print("| pairs read again per sentence | blend | " + " | ".join(f"{name} ({len(docs)})" for name, docs in sets.items()) + " |")
    print("|---|---|" + "---|" * len(sets))
    for per_sentence in (int(n) for n in args.per_sentence.split(",")):
        for blend in ([1.0] if per_sentence == 0 else [float(b) for b in args.blend.split(",")]):
            if per_sentence and reader is None:
                continue
            model.pairs = None if per_sentence == 0 else reader
            if reader is not None:
                reader.pairs_per_sentence, reader.blend = per_sentence, blend
            started = time.perf_counter()
            # Every set is scored as SciER's: strict relations in the model's types.
            cells = [f"{PairScores.f1(relation_scores(model, docs).scier):.3f}" for docs in sets.values()]
            print(f"| {per_sentence or 'head alone'} | {blend if per_sentence else '–'} | " + " | ".join(cells)
                  + f" |  <!-- {time.perf_counter() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
