"""Check an annotation output file against its input: same lines, strings found, types valid."""
import json, sys
out = sys.argv[1]
inp = out.replace(".out.jsonl", ".jsonl")
src = [json.loads(l) for l in open(inp)]
got = [json.loads(l) for l in open(out) if l.strip()]
T1, T2 = {"Method", "Task", "Dataset"}, {"Method", "Task", "Metric"}
R = {"Used-For", "Part-Of", "Synonym-Of", "Compare-With", "Evaluated-With", "SubClass-Of", "Benchmark-For", "Trained-With", "SubTask-Of"}
bad = 0
for i, g in enumerate(got):
    if i >= len(src): print(f"line {i+1}: more lines than the input"); bad += 1; break
    s = src[i]
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
