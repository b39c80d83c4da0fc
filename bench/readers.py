"""Readers' labels: how well each reader agrees with SciER's dev gold, and their abstracts collected.

``agree``: each reader labelled a run of SciER dev sentences (LLM layout) without seeing the gold; this

Each reader labelled a run of SciER dev sentences (LLM layout) without seeing the gold; this
prints, per reader and over all, exact entity P/R/F1 (same string, same type, counted per
sentence as multisets) and strict relation F1 (same head, type and tail strings). A reader's
labels are used only where its entity F1 reaches 0.80.

    python bench/readers.py agree GOLD_DEV.jsonl READER0.out.jsonl READER1.out.jsonl ...

``collect``: the readers' labels on abstract sentences, turned into offsets into each whole abstract
(the format :mod:`kg.evaluate.annotated` reads), for the readers that passed:

    python bench/readers.py collect SELECTION.json PACKS_FOLDER --readers 0 1 2 -o bench/annotated/readers.jsonl

Each calibration output line is ``{"sent": N, "ner": [[string, type]], "rel": [[head, type, tail]]}``, where
N counts the dev file's lines from 0.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

BAR = 0.80


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def agreement(gold: list[dict], labelled: list[dict]) -> dict[str, list[int]]:
    """Entity and relation counts [tp, fp, fn] of ``labelled`` (dicts with ``sent``) against ``gold`` lines."""
    counts = {"entity": [0, 0, 0], "relation": [0, 0, 0]}
    for line in labelled:
        g = gold[line["sent"]]
        for kind, key, make in (("entity", "ner", lambda e: (_norm(e[0]), e[1])),
                                ("relation", "rel", lambda r: (_norm(r[0]), r[1], _norm(r[2])))):
            want, got = Counter(map(make, g.get(key) or [])), Counter(map(make, line.get(key) or []))
            tp = sum((want & got).values())
            counts[kind][0] += tp
            counts[kind][1] += sum(got.values()) - tp
            counts[kind][2] += sum(want.values()) - tp
    return counts


def occurrences(sentence: str, strings: list[str]) -> list[tuple[int, int, str]]:
    """Where each string stands in ``sentence`` as whole words, except inside a longer listed string.

    >>> occurrences("We use ResNet and ResNet-50 with CNNs.", ["ResNet", "ResNet-50", "CNN"])
    [(7, 13, 'ResNet'), (18, 27, 'ResNet-50')]
    """
    found = []
    for string in dict.fromkeys(strings):
        at = sentence.find(string)
        while string and at >= 0:
            end = at + len(string)
            if (at == 0 or not sentence[at - 1].isalnum()) and (end == len(sentence) or not sentence[end].isalnum()):
                found.append((at, end, string))
            at = sentence.find(string, at + 1)
    return sorted(o for o in found if not any(a <= o[0] and o[1] <= b and (a, b) != o[:2] for a, b, _ in found))


def _labelled(packs: Path, readers: list[int]) -> dict[str, dict[int, list]]:
    """Each paper's sentence labels, by reader: ``{id: {reader: [(sentence, output line)]}}``."""
    labelled: dict[str, dict[int, list]] = {}
    for k in readers:
        inputs = [json.loads(line) for line in open(packs / f"reader{k}_abstracts.jsonl", encoding="utf-8")]
        outputs = [json.loads(line) for line in open(packs / f"reader{k}_abstracts.out.jsonl", encoding="utf-8")
                   if line.strip()]
        papers: dict[str, list] = {}
        for source, out in zip(inputs, outputs):
            papers.setdefault(source["id"], []).append((source["sentence"], out))
        counts = Counter(source["id"] for source in inputs)
        for pid, lines in papers.items():
            if len(lines) == counts[pid]:  # an abstract the reader finished
                labelled.setdefault(pid, {})[k] = lines
    return labelled


def _paper_lines(packs: Path, readers: list[int]) -> dict[str, dict[int, dict]]:
    """Each paper's paper-layer line (GUIDE.md), by reader."""
    out: dict[str, dict[int, dict]] = {}
    for k in readers:
        path = packs / f"reader{k}_papers.out.jsonl"
        if path.exists():
            for line in open(path, encoding="utf-8"):
                if line.strip():
                    record = json.loads(line)
                    out.setdefault(record["id"], {})[k] = record
    return out


def _readers_of(paper: dict) -> list[int]:
    return paper["readers"] if "readers" in paper else [paper["reader"]]


def _spans(text: str, lines: list) -> tuple[set, set]:
    """One reader's sentence labels as entity and relation offsets into the whole ``text``."""
    entities, relations, cursor = set(), set(), 0
    for sentence, out in lines:
        base = text.find(sentence, cursor)
        if base < 0:
            continue
        cursor = base + len(sentence)
        typed = {}
        for layer, key in ((1, "ner"), (2, "ner2")):
            for string, label in out.get(key) or []:
                typed.setdefault(string, (label, layer))  # layer 1 first: a span is in one layer
        where = {}
        for start, end, string in occurrences(sentence, list(typed)):
            label, layer = typed[string]
            entities.add((base + start, base + end, label, layer))
            where.setdefault(string, []).append((base + start, base + end))
        for head, label, tail in out.get("rel") or []:
            for h in where.get(head, [])[:1]:
                for t in where.get(tail, [])[:1]:
                    if h != t:
                        relations.add((*h, label, *t))
    return entities, relations


def _tally(counts: dict, kind: str, first: set, second: set) -> None:
    """Add ``second`` read against ``first`` to ``counts[kind]``, as [tp, fp, fn]."""
    tp = len(first & second)
    tally = counts[kind]
    tally[0], tally[1], tally[2] = tally[0] + tp, tally[1] + len(second) - tp, tally[2] + len(first) - tp


def _at(text: str, string: str) -> list[int] | None:
    at = text.find(string) if string else -1
    return [at, at + len(string)] if at >= 0 else None


def paper_layer(text: str, line: dict) -> dict:
    """A paper-layer line with its strings as offsets into ``text`` (the paper's own method as "OURS")."""
    results = []
    for r in line.get("results") or []:
        results.append({"kind": r["kind"], "value": _at(text, r["value"]),
                        **{f: ("OURS" if f == "method" and r[f] == "OURS" else _at(text, r[f]))
                           for f in ("metric", "dataset", "method", "setting")}})
    own = [(_at(text, s), t) for s, t in line.get("own") or []]
    poor = [_at(text, s) for s in line.get("not_nodes") or []]
    return {"own": [[*at, t] for at, t in own if at], "results": [r for r in results if r["value"]],
            "not_nodes": [at for at in poor if at]}


def collect(selection: dict, packs: Path, readers: list[int]) -> tuple[list[dict], list[dict]]:
    """One record per paper that a passing reader finished, by the first such reader of the paper:
    entities ``[start, end, type, layer]`` and relations ``[hs, he, type, ts, te]`` as offsets into the
    whitespace-normalised abstract; and, where that reader wrote one, its paper-layer record."""
    import hashlib

    labelled, layer = _labelled(packs, readers), _paper_lines(packs, readers)
    records, papers = [], []
    for paper in selection["papers"]:
        by = [k for k in _readers_of(paper) if k in labelled.get(paper["id"], {})]
        if not by:
            continue
        k = by[0]
        text = " ".join(paper["abstract"].split())
        entities, relations = _spans(text, labelled[paper["id"]][k])
        head = {"corpus": paper["corpus"], "id": paper["id"], "reader": k, "held_out": paper["held_out"],
                "sha1": hashlib.sha1(text.encode("utf-8")).hexdigest()}
        records.append({**head, "entities": [list(e) for e in sorted(entities)],
                        "relations": [list(r) for r in sorted(relations)]})
        if k in layer.get(paper["id"], {}):
            papers.append({**head, **paper_layer(text, layer[paper["id"]][k])})
    return records, papers


def pairs(selection: dict, packs: Path, readers: list[int]) -> dict[str, list[int]]:
    """Two readers on the same abstracts: entity (exact offsets and kg's type, both layers) and relation
    counts [tp, fp, fn] of the second reader against the first, over the papers both finished; and the
    paper layer's own contributions and results (value and kind) the same way."""
    labelled, layer = _labelled(packs, readers), _paper_lines(packs, readers)
    counts = {"papers": 0, "entity": [0, 0, 0], "relation": [0, 0, 0], "own": [0, 0, 0], "result": [0, 0, 0]}
    for paper in selection["papers"]:
        by = [k for k in _readers_of(paper) if k in labelled.get(paper["id"], {})]
        if len(by) < 2:
            continue
        counts["papers"] += 1
        text = " ".join(paper["abstract"].split())
        (e1, r1), (e2, r2) = (_spans(text, labelled[paper["id"]][k]) for k in by[:2])
        # The guide's layer-2 types are kg's types already (Method, Task, Metric): the layer is dropped.
        _tally(counts, "entity", {(s, e, t) for s, e, t, _ in e1}, {(s, e, t) for s, e, t, _ in e2})
        _tally(counts, "relation", r1, r2)
        lines = [layer.get(paper["id"], {}).get(k) for k in by[:2]]
        if all(lines):
            _tally(counts, "own", *({s.lower() for s, _ in line.get("own") or []} for line in lines))
            _tally(counts, "result", *({(r["value"], r["kind"]) for r in line.get("results") or []} for line in lines))
    return counts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    agree = commands.add_parser("agree", help="each reader against SciER dev gold")
    agree.add_argument("gold")
    agree.add_argument("readers", nargs="+")
    gather = commands.add_parser("collect", help="the passing readers' abstracts as offsets")
    gather.add_argument("selection")
    gather.add_argument("packs")
    gather.add_argument("--readers", type=int, nargs="+", required=True)
    gather.add_argument("-o", "--output", required=True)
    gather.add_argument("--papers", help="also write the paper layer (results, own contributions, poor nodes) here")
    gather.add_argument("--append", action="store_true", help="add to the output files instead of replacing them")
    gather.add_argument("--round", type=int, help="mark each record with the round of reading it came from")
    twice = commands.add_parser("pairs", help="the readers' agreement on the abstracts two of them labelled")
    twice.add_argument("selection")
    twice.add_argument("packs")
    twice.add_argument("--readers", type=int, nargs="+", required=True)
    args = parser.parse_args(argv)
    if args.command == "pairs":
        counts = pairs(json.load(open(args.selection, encoding="utf-8")), Path(args.packs), args.readers)
        print(f"{counts['papers']} abstracts labelled by two readers")
        for kind in ("entity", "relation", "own", "result"):
            p, r, f = prf(*counts[kind])
            print(f"{kind:9s} P {p:.3f} R {r:.3f} F1 {f:.3f}  (tp {counts[kind][0]}, fp {counts[kind][1]}, fn {counts[kind][2]})")
        return
    if args.command == "collect":
        records, papers = collect(json.load(open(args.selection, encoding="utf-8")), Path(args.packs), args.readers)
        if args.round:
            records = [{**r, "round": args.round} for r in records]
            papers = [{**r, "round": args.round} for r in papers]
        mode = "a" if args.append else "w"
        with open(args.output, mode, encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record) + "\n")
        if args.papers:
            with open(args.papers, mode, encoding="utf-8") as out:
                for record in papers:
                    out.write(json.dumps(record) + "\n")
        layers = Counter(e[3] for r in records for e in r["entities"])
        print(f"{len(records)} abstracts ({sum(r['held_out'] for r in records)} held out): "
              f"{layers[1]} layer-1 and {layers[2]} layer-2 entities, "
              f"{sum(len(r['relations']) for r in records)} relations -> {args.output}")
        return
    gold = [json.loads(line) for line in open(args.gold, encoding="utf-8") if line.strip()]
    total = {"entity": [0, 0, 0], "relation": [0, 0, 0]}
    print(f"{'reader':40s} {'sentences':>9s} {'entity P':>8s} {'R':>6s} {'F1':>6s} {'rel F1':>7s}  use")
    for path in args.readers:
        labelled = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        counts = agreement(gold, labelled)
        for kind in total:
            total[kind] = [a + b for a, b in zip(total[kind], counts[kind])]
        p, r, f = prf(*counts["entity"])
        print(f"{path:40s} {len(labelled):9d} {p:8.3f} {r:6.3f} {f:6.3f} {prf(*counts['relation'])[2]:7.3f}  "
              f"{'yes' if f >= BAR else 'no'}")
    p, r, f = prf(*total["entity"])
    print(f"{'all':40s} {'':9s} {p:8.3f} {r:6.3f} {f:6.3f} {prf(*total['relation'])[2]:7.3f}")


if __name__ == "__main__":
    main()
