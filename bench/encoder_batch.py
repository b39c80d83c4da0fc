"""The span model's encoder on one core: words per second at batch sizes 1, 4, 16 and 64, and
how many chunks come out with other entities when batched than alone.

    python bench/encoder_batch.py ../shared/data/iclr_openreview/ICLR18_submissions.csv [--model DIR ...] [--papers 300]

Chunks (kg's sentences packed to at most 256 word pieces, as ``kg build`` makes them) are sorted
by length, so a batch pads little, and run ``b`` at a time; each model (the shipped one by default,
or each ``--model DIR`` with an ``encoder.onnx``, ``heads.npz`` and ``tokenizer.json``) reads the
same chunks. A chunk whose decoded entities differ from those it gets alone depends on its neighbours.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kg.extract.pipeline import load_pipeline  # noqa: E402
from kg.extract.spans import MODEL_DIR, SpanModel, candidate_spans, decode_entities, make_chunks  # noqa: E402
from kg.ingest import read_papers  # noqa: E402
from kg.text import clean  # noqa: E402

BATCHES = (1, 4, 16, 64)


def chunks_of(path: Path, papers: int, tokenizer) -> list:
    nlp = load_pipeline(ner=False)
    texts = [clean(p.abstract).text for p in list(read_papers([path]))[:papers]]
    chunks = []
    for index, doc in enumerate(nlp.pipe(texts, batch_size=64)):
        sentences = [[t.text for t in sent if not t.is_space] for sent in doc.sents]
        chunks += make_chunks(index, [s for s in sentences if s], tokenizer)
    return sorted(chunks, key=lambda c: len(c.ids))


def run(model: SpanModel, chunks: list, batch: int) -> tuple[float, list]:
    """Seconds to encode every chunk ``batch`` at a time, and each chunk's entities."""
    session_encoder = model.encoder
    found, seconds = [], 0.0
    for start in range(0, len(chunks), batch):
        group = chunks[start:start + batch]
        width = max(len(c.ids) for c in group)
        ids = np.zeros((len(group), width), dtype=np.int64)
        mask = np.zeros((len(group), width), dtype=np.int64)
        for row, chunk in enumerate(group):
            ids[row, :len(chunk.ids)] = chunk.ids
            mask[row, :len(chunk.ids)] = 1
        began = time.perf_counter()
        hidden = np.asarray(session_encoder(ids, mask), dtype=np.float32)
        seconds += time.perf_counter() - began
        for row, chunk in enumerate(group):
            spans = candidate_spans(chunk.sentences)
            states = hidden[row, :len(chunk.ids)]
            found.append(decode_entities(spans, model.entity_probabilities(states, chunk, spans)) if len(spans) else [])
    return seconds, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--model", type=Path, action="append", help="a model folder (default: the shipped one)")
    parser.add_argument("--papers", type=int, default=300)
    args = parser.parse_args()
    folders = args.model or [MODEL_DIR]
    models = {folder: SpanModel.from_files(folder, threads=1) for folder in folders}
    chunks = chunks_of(args.corpus, args.papers, next(iter(models.values())).tokenizer)
    words = sum(len(c.first) for c in chunks)
    print(f"{len(chunks)} chunks, {words:,} words, one core\n")
    print("| model | batch | words/s | chunks whose entities differ from batch 1 | entities |")
    print("|---|---:|---:|---:|---:|")
    for folder, model in models.items():
        alone = None
        for batch in BATCHES:
            seconds, found = run(model, chunks, batch)
            alone = alone or found
            differ = sum(1 for a, b in zip(alone, found) if [x[:3] for x in a] != [x[:3] for x in b])
            print(f"| {folder.name} | {batch} | {words / seconds:,.0f} | {differ} | {sum(map(len, found)):,} |", flush=True)


if __name__ == "__main__":
    main()
