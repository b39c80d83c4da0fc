"""Check an annotation output file against its input: same lines, strings found, types valid.

    python3 bench/annotated/validate.py readerK_abstracts.out.jsonl   (or _calibration, or _papers)
"""
import json, sys
out = sys.argv[1]
inp = out.replace(".out.jsonl", ".jsonl")
src = [json.loads(l) for l in open(inp)]
got = [json.loads(l) for l in open(out) if l.strip()]
T1, T2 = {"Method", "Task", "Dataset"}, {"Method", "Task", "Metric"}
OWN = {"Method", "Dataset", "Task", "Metric"}
KINDS = {"own", "baseline", "gain", "others", "not_result"}
FIELDS = ("value", "metric", "dataset", "method", "setting", "kind")
R = {"Used-For", "Part-Of", "Synonym-Of", "Compare-With", "Evaluated-With", "SubClass-Of", "Benchmark-For", "Trained-With", "SubTask-Of"}
bad = 0


def paper_problems(g, s):
    """What is wrong with one paper-layer line ``g`` for the abstract ``s``."""
    text = s["abstract"]
    if g.get("id") != s["id"]:
        yield f"id {g.get('id')} but input has {s['id']}"
        return
    for e in g.get("own", []):
        if not (isinstance(e, list) and len(e) == 2 and e[1] in OWN and isinstance(e[0], str) and e[0] in text):
            yield f"own item {e!r}: want [string in the abstract, one of {sorted(OWN)}]"
    for r in g.get("results", []):
        if not (isinstance(r, dict) and set(r) == set(FIELDS) and all(isinstance(r[f], str) for f in FIELDS)):
            yield f"result {r!r}: want an object with exactly {', '.join(FIELDS)} (strings)"
            continue
        if r["kind"] not in KINDS:
            yield f"result {r!r}: kind is one of {sorted(KINDS)}"
        for f in ("value", "metric", "dataset", "method", "setting"):
            if r[f] and r[f] not in text and not (f == "method" and r[f] == "OURS"):
                yield f"result {f} {r[f]!r} is not in the abstract"
        if not r["value"]:
            yield f"result {r!r}: value is empty"
    for n in g.get("not_nodes", []):
        if not (isinstance(n, str) and n in text):
            yield f"not_nodes item {n!r} is not in the abstract"


for i, g in enumerate(got):
    if i >= len(src): print(f"line {i+1}: more lines than the input"); bad += 1; break
    s = src[i]
    if "abstract" in s:
        for problem in paper_problems(g, s):
            print(f"line {i+1}: {problem}"); bad += 1
        continue
    if g.get("sent") != s["sent"] or g.get("id", s.get("id")) != s.get("id"):
        print(f"line {i+1}: sent/id {g.get('id')},{g.get('sent')} but input has {s.get('id')},{s['sent']}"); bad += 1; continue
    names = set()
    for layer, types in (("ner", T1), ("ner2", T2)):
        for e in g.get(layer, []):
            if not (isinstance(e, list) and len(e) == 2 and e[1] in types):
                print(f"line {i+1}: {layer} item {e!r}: want [string, one of {sorted(types)}]"); bad += 1; continue
            if e[0] not in s["sentence"]:
                print(f"line {i+1}: {layer} string {e[0]!r} is not in the sentence"); bad += 1
            if layer == "ner": names.add(e[0])
    for r in g.get("rel", []):
        if not (isinstance(r, list) and len(r) == 3 and r[1] in R and r[0] in names and r[2] in names):
            print(f"line {i+1}: rel {r!r}: want [head, type, tail] with head and tail among this line's ner strings"); bad += 1
print(f"{len(got)} of {len(src)} lines written, {bad} problems")
