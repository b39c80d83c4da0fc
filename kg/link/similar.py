"""Similar papers: for each paper, the papers that use the same rare words, name the same rare
things and read alike.

A paper is one vector of three parts, each of unit length, and papers are compared by its cosine:

- **words**: the abstract's and title's TF-IDF (sublinear term frequency, smoothed inverse
  document frequency), the measure of lexical overlap;
- **entities** (weight :data:`PART_WEIGHT`): the entities the paper names, each weighted by its
  inverse document frequency, so that sharing "CelebA" counts and sharing "neural networks"
  hardly does, whatever words name them ("GANs", "generative adversarial networks");
- **meaning** (weight :data:`PART_WEIGHT`): the abstract's vector from the shipped static model
  (:mod:`kg.similarity`), centred on the corpus mean, as every two ML abstracts read somewhat alike.

On the 1,400 ICLR 2017/18 papers, with the authors' keywords as weak labels, the three together
find more papers sharing a keyword among the top 10 than the words alone (``bench/similar_papers.py``;
the weights were chosen on the 2017 papers, measured on 2018's).

:func:`similar_papers` ranks every paper's :data:`SIMILAR` nearest; the build writes them on the
paper nodes (``similar``), from which the index (:mod:`kg.write.cooccurrence`) and the explorer's tables
(:mod:`kg.query.tables`) take them. A view's reasons (the shared entities, rarest first) are read from
the two papers' links.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import networkx as nx
import numpy as np

from ..text import clean

SIMILAR = 10  # papers listed as similar to each paper
PART_WEIGHT = 0.2  # the entities' and the meaning's weight each, beside the words' 1
CELLS = 16_000_000  # cosines computed at once (a block of papers against all): 64 MB of float32
_WORD = re.compile(r"[a-z][a-z0-9\-]+")

#: One similar paper: (paper node, score, words' cosine, entities' cosine, meaning's cosine).
Similar = tuple[str, float, float, float, float]
#: Decimals of the scores written. Two tell the scores apart; more would change with every paper a
#: corpus gains (the words' weights and the mean vector are the corpus's), and so would the
#: similar-paper nodes of every paper, which a rebuild then writes anew (:class:`kg.cache.BlockCache`).
DECIMALS = 2


def similar_papers(G: nx.MultiDiGraph, k: int = SIMILAR, *, weight: float = PART_WEIGHT, encoder=None) -> dict[str, list[Similar]]:
    """For each paper node of ``G``, its ``k`` most similar papers, best first (ties: by node id);
    papers sharing nothing are left out.

    >>> G = nx.MultiDiGraph()
    >>> for p, text in (("paper/a", "Training GANs on faces"), ("paper/b", "GANs for faces, trained anew"),
    ...                 ("paper/c", "Parsing sentences into trees")):
    ...     G.add_node(p, kind="Paper", abstract=text, title="")
    >>> G.add_node("method/gan", kind="Method")
    >>> G.add_node("task/parsing", kind="Task")
    >>> _ = [G.add_edge(p, "method/gan", key="uses") for p in ("paper/a", "paper/b")]
    >>> _ = G.add_edge("paper/c", "task/parsing", key="addresses")
    >>> [(other, entities) for other, _, _, entities, _ in similar_papers(G, k=1)["paper/a"]]
    [('paper/b', 1.0)]
    """
    papers = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "Paper")
    n = len(papers)
    if n < 2:
        return {}
    texts = [clean(f"{G.nodes[p].get('title') or ''}. {G.nodes[p].get('abstract') or ''}").text for p in papers]
    words = _tfidf([_WORD.findall(text.lower()) for text in texts])
    entities = _tfidf([sorted({e for _, e in G.out_edges(p)}) for p in papers], sublinear=False)
    meaning = _meaning(texts, encoder)
    # Each part is of unit length or zero: the whole vector's squared length is the sum of its parts'.
    length = np.sqrt(_present(words) + weight ** 2 * (_present(entities) + _present(meaning)))
    length[length == 0] = 1.0
    found: dict[str, list[Similar]] = {}
    block = max(1, min(n, CELLS // n))
    for start in range(0, n, block):
        stop = min(n, start + block)
        lexical = (words[start:stop] @ words.T).toarray()
        shared = (entities[start:stop] @ entities.T).toarray()
        alike = meaning[start:stop] @ meaning.T
        score = (lexical + weight ** 2 * (shared + alike)) / length[start:stop, None] / length[None, :]
        for r, i in enumerate(range(start, stop)):
            row = score[r]
            row[i] = -np.inf
            best = np.argpartition(-row, k)[:k + 1] if n > k + 1 else np.arange(n)
            ranked = sorted((int(j) for j in best if j != i and row[j] > 0), key=lambda j: (-row[j], papers[j]))[:k]
            found[papers[i]] = [(papers[j], round(float(row[j]), DECIMALS), round(float(lexical[r, j]), DECIMALS),
                                 round(float(shared[r, j]), DECIMALS), round(max(0.0, float(alike[r, j])), DECIMALS))
                                for j in ranked]
    return found


def _tfidf(documents: list[list[str]], *, sublinear: bool = True) -> "sparse.csr_matrix":
    """Rows of unit length: each term's (1 + log count, or 1) times its smoothed inverse document
    frequency; terms of one document only are left out (they match nothing)."""
    # Imported here: scipy brings OpenBLAS, whose thread buffers a process that only imports kg
    # (a kg serve query worker, under its memory cap) should not pay for.
    from scipy import sparse

    n = len(documents)
    df = Counter(term for terms in documents for term in set(terms))
    column = {term: c for c, term in enumerate(sorted(term for term, count in df.items() if count > 1))}
    rows, columns, values = [], [], []
    for r, terms in enumerate(documents):
        for term, count in Counter(terms).items():
            if term in column:
                rows.append(r)
                columns.append(column[term])
                values.append(((1 + math.log(count)) if sublinear else 1.0) * (math.log((1 + n) / (1 + df[term])) + 1))
    matrix = sparse.csr_matrix((values, (rows, columns)), shape=(n, len(column)), dtype=np.float32)
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A.ravel()
    norms[norms == 0] = 1.0
    return sparse.diags(1 / norms).dot(matrix).tocsr()


def _meaning(texts: list[str], encoder) -> np.ndarray:
    """Each text's static-model vector, centred on the corpus mean, of unit length (zero if empty)."""
    from ..similarity import load

    vectors = (encoder or load()).encode(texts)
    vectors -= vectors.mean(axis=0)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def _present(part) -> np.ndarray:
    """1 for each row of ``part`` that is not all zero, else 0."""
    if hasattr(part, "getnnz"):  # a scipy sparse matrix
        return (part.getnnz(axis=1) > 0).astype(np.float64)
    return np.any(part != 0, axis=1).astype(np.float64)
