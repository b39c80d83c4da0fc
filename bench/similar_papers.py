"""Similar papers against a TF-IDF baseline, with the authors' keywords as weak labels.

For each paper with keywords, the share of its 10 most similar papers that share one of its
keywords (precision@10), for kg's measure (kg.link.similar), its parts, and a TF-IDF cosine over the
abstracts (sublinear tf, smoothed idf, stop words left in), written here apart from kg, all in one
run; also with the 10 most frequent keywords ignored ("deep learning" is shared by a third of the
papers). Then the same for each year's papers among themselves (built with --set FILE year=...):
kg's weights were chosen on the 2017 papers, so the 2018 figures are on papers they were not tuned on.

    python bench/similar_papers.py GRAPH ICLR17_submissions.csv ICLR18_submissions.csv

GRAPH is a graph built from the CSVs (kg build ... -o GRAPH); the CSVs give the keywords by PID.
"""
from __future__ import annotations

import ast
import csv
import math
import re
import sys
from collections import Counter

import numpy as np

from kg.link import similar
from kg.query.graph_index import load_graph
from kg.store import open_graph
from kg.text import clean

K = 10


def keywords_by_id(files):
    found = {}
    for file in files:
        with open(file, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                try:
                    words = ast.literal_eval(row.get("Keyword") or "[]")
                except (ValueError, SyntaxError):
                    words = []
                found[row["PID"]] = {" ".join(str(w).lower().split()) for w in words if str(w).strip()}
    return found


def tfidf_neighbours(texts, k):
    tokens = [re.findall(r"[a-z][a-z0-9\-]+", t.lower()) for t in texts]
    df = Counter(w for words in tokens for w in set(words))
    vocab = {w: i for i, w in enumerate(w for w, n in df.items() if n >= 2)}
    n = len(texts)
    matrix = np.zeros((n, len(vocab)), dtype=np.float32)
    for i, words in enumerate(tokens):
        for w, c in Counter(words).items():
            if w in vocab:
                matrix[i, vocab[w]] = (1 + math.log(c)) * (math.log((1 + n) / (1 + df[w])) + 1)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -1)
    return [list(np.argsort(-row)[:k]) for row in sims]


def precision(neighbours, labels, ignore=frozenset()):
    scores = []
    for i, near in enumerate(neighbours):
        mine = labels[i] - ignore
        if not mine or not near:
            continue
        scores.append(sum(bool(mine & (labels[j] - ignore)) for j in near[:K]) / K)
    return sum(scores) / len(scores), len(scores)


def scores(G, labels_of, title):
    papers = sorted(n for n, d in G.nodes(data=True) if d["kind"] == "Paper")
    row = {p: i for i, p in enumerate(papers)}
    labels = [labels_of(p) for p in papers]
    common = frozenset(w for w, _ in Counter(w for ws in labels for w in ws).most_common(10))
    texts = [clean(f"{G.nodes[p].get('title') or ''}. {G.nodes[p].get('abstract') or ''}").text for p in papers]
    systems = {"TF-IDF cosine (baseline)": tfidf_neighbours(texts, K)}
    for name, weight in ((f"kg similar (words + {similar.PART_WEIGHT} entities + {similar.PART_WEIGHT} meaning)",
                          similar.PART_WEIGHT), ("kg similar, words alone", 0.0),
                         ("kg similar, entities and meaning weighted 0.35", 0.35)):
        found = similar.similar_papers(G, k=K, weight=weight)
        systems[name] = [[row[q] for q, *_ in found.get(p, [])] for p in papers]
    for name, weight in (("kg: entities and meaning alone", 100.0),):
        found = similar.similar_papers(G, k=K, weight=weight)
        systems[name] = [[row[q] for q, *_ in found.get(p, [])] for p in papers]
    print(f"\n{title}: {len(papers)} papers, {sum(1 for l in labels if l)} with keywords; the second column "
          "ignores the 10 most frequent keywords: " + ", ".join(sorted(common)))
    print(f"  {'system':55} {'P@10':>7} {'P@10, rarer kw':>15}")
    for name, neighbours in systems.items():
        p_all, _ = precision(neighbours, labels)
        p_rare, _ = precision(neighbours, labels, common)
        print(f"  {name:55} {p_all:7.3f} {p_rare:15.3f}")


def main(graph, *files):
    G = load_graph(open_graph(graph), texts=True)
    keywords = keywords_by_id(files)
    labels_of = lambda p: keywords.get(G.nodes[p]["paper_id"], set())  # noqa: E731
    scores(G, labels_of, "All papers")
    years = sorted({d.get("year") for _, d in G.nodes(data=True) if d["kind"] == "Paper" and d.get("year")})
    for year in years:  # each year's papers among themselves: the weights were chosen on the first year's
        keep = [n for n, d in G.nodes(data=True) if d["kind"] != "Paper" or d.get("year") == year]
        scores(G.subgraph(keep), labels_of, f"Papers of {year} only")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
