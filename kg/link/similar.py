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
from array import array
from collections import Counter
from collections.abc import Callable

import networkx as nx
import numpy as np

from ..text import clean

SIMILAR = 10  # papers listed as similar to each paper
PART_WEIGHT = 0.2  # the entities' and the meaning's weight each, beside the words' 1
CELLS = 4_000_000  # cosines computed at once (a block of papers against those after it): 96 MB of buffers
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
    words = _tfidf(texts, lambda text: _WORD.findall(text.lower()))
    entities = _tfidf(papers, lambda paper: sorted({e for _, e in G.out_edges(paper)}), sublinear=False)
    meaning = _meaning(texts, encoder)
    # Each part is of unit length or zero: the whole vector's squared length is the sum of its parts'.
    length = np.sqrt(_present(words) + weight ** 2 * (_present(entities) + _present(meaning)))
    length[length == 0] = 1.0
    best = _Best(n, k)
    # One buffer per array a block needs, reused: a block's arrays are hundreds of megabytes, which
    # made anew for each block cost more than the arithmetic.
    cells = min(n * n, max(CELLS, n))
    lexical_cells, shared_cells, alike_cells, mix_cells = (np.empty(cells, dtype=np.float32) for _ in range(4))
    score_cells = np.empty(cells)
    # The scores are symmetric: a block of papers is compared with itself and the papers after it only,
    # each row keeping its best, and each later paper its best among the block's rows.
    start = 0
    while start < n:
        stop = min(n, start + max(1, CELLS // (n - start)))
        shape = (stop - start, n - start)
        lexical, shared, alike, mix, score = (buffer[:shape[0] * shape[1]].reshape(shape) for buffer in
                                              (lexical_cells, shared_cells, alike_cells, mix_cells, score_cells))
        (words[start:stop] @ words[start:].T).toarray(out=lexical)
        (entities[start:stop] @ entities[start:].T).toarray(out=shared)
        np.matmul(meaning[start:stop], meaning[start:].T, out=alike)
        # score = (lexical + weight ** 2 * (shared + alike)) / length[rows] / length[columns], in place
        np.add(shared, alike, out=mix)
        np.multiply(mix, weight ** 2, out=mix)
        np.add(lexical, mix, out=mix)
        np.divide(mix, length[start:stop, None], out=score)
        np.divide(score, length[None, start:], out=score)
        rows = np.arange(stop - start)
        score[rows, rows] = -np.inf  # a paper is not similar to itself
        parts = (lexical, shared, np.maximum(alike, 0, out=alike))
        best.offer(np.arange(start, stop), score, parts, first_column=start)
        if stop < n:
            later = slice(stop - start, None)
            best.offer(np.arange(stop, n), score[:, later].T, tuple(part[:, later].T for part in parts), first_column=start)
        start = stop
    found: dict[str, list[Similar]] = {}
    for i, (columns, scores, parts) in enumerate(best.ranked()):
        found[papers[i]] = [(papers[j], round(float(score), DECIMALS), *(round(float(x), DECIMALS) for x in part))
                            for j, score, part in zip(columns, scores, parts)]
    return found


class _Best:
    """Each paper's ``k`` best-scoring others so far, offered a block of scores at a time."""

    def __init__(self, n: int, k: int):
        self.k = k
        self.scores = np.full((n, k), -np.inf)
        self.columns = np.zeros((n, k), dtype=np.int64)
        self.parts = np.zeros((n, k, 3), dtype=np.float32)

    def offer(self, rows: np.ndarray, scores: np.ndarray, parts: tuple, *, first_column: int) -> None:
        """Offer ``scores[r, c]`` of paper ``rows[r]`` against paper ``first_column + c``, with the
        words', entities' and meaning's cosines, ``parts``, each of the shape of ``scores``."""
        keep = min(self.k, scores.shape[1])
        top = np.argpartition(scores, -keep, axis=1)[:, -keep:] if keep < scores.shape[1] else \
            np.broadcast_to(np.arange(scores.shape[1]), (len(rows), scores.shape[1]))
        pick = np.take_along_axis
        merged_scores = np.concatenate([self.scores[rows], pick(scores, top, axis=1)], axis=1)
        merged_columns = np.concatenate([self.columns[rows], top + first_column], axis=1)
        offered = np.stack([pick(part, top, axis=1) for part in parts], axis=-1)
        merged_parts = np.concatenate([self.parts[rows], offered], axis=1)
        order = np.lexsort((merged_columns, -merged_scores), axis=1)[:, :self.k]
        self.scores[rows] = pick(merged_scores, order, axis=1)
        self.columns[rows] = pick(merged_columns, order, axis=1)
        self.parts[rows] = pick(merged_parts, order[..., None], axis=1)

    def ranked(self):
        """Each paper's others, best first (ties: by position), those scoring above 0 only."""
        for scores, columns, parts in zip(self.scores, self.columns, self.parts):
            above = scores > 0
            yield columns[above], scores[above], parts[above]


def _tfidf(documents: list, terms: Callable[[object], list[str]], *, sublinear: bool = True) -> "sparse.csr_matrix":
    """Rows of unit length, one per document: each of its ``terms``' (1 + log count, or 1) times its
    smoothed inverse document frequency; terms of one document only are left out (they match nothing).

    The terms are read twice, once to count and once to weigh, rather than held for a whole corpus."""
    # Imported here: scipy brings OpenBLAS, whose thread buffers a process that only imports kg
    # (a kg serve query worker, under its memory cap) should not pay for.
    from scipy import sparse

    n = len(documents)
    df = Counter(term for document in documents for term in set(terms(document)))
    column = {term: c for c, term in enumerate(sorted(term for term, count in df.items() if count > 1))}
    idf = {term: math.log((1 + n) / (1 + df[term])) + 1 for term in column}
    del df
    rows, columns, values = array("i"), array("i"), array("f")
    for r, document in enumerate(documents):
        for term, count in Counter(terms(document)).items():
            if term in column:
                rows.append(r)
                columns.append(column[term])
                values.append(((1 + math.log(count)) if sublinear else 1.0) * idf[term])
    matrix = sparse.csr_matrix((np.frombuffer(values, dtype=np.float32),
                                (np.frombuffer(rows, dtype=np.int32), np.frombuffer(columns, dtype=np.int32))),
                               shape=(n, len(column)), dtype=np.float32)
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
