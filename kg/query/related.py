"""Related methods: given an entity, the methods that share its tasks, datasets, papers and concepts, with reasons.

An entity's papers are those that mention it or anything narrower than it
(``skos:broader*``): "diffusion models" reaches the papers on "latent
diffusion models". The score of a candidate ``B`` for a query ``A`` adds up features, each times its
weight in :data:`WEIGHTS` (fitted on judged queries: ``bench/related_fit.py``):

- ``variant``: 1 when one is a variant or a kind of the other (``kg:variantOf``,
  ``skos:broader``; less for a one-paper variant), up to 0.5 for a concept ``C`` both are
  variants or kinds of ("both kinds of GAN"), by ``spec(C)``;
- ``listed``: ``log2(1 + papers)`` whose sentences list both (``kg:listedWith``);
- ``compared``: papers that propose one and compare with the other;
- ``co-mentioned``: papers that mention both, weighted by how much more often than chance
  they do (normalised pointwise mutual information), so that "neural networks", in every other
  paper, gains little from sharing them;
- ``tasks`` and ``datasets`` shared across different papers: the cosine of the two entities'
  task (dataset) profiles, each task weighted by its specificity ``spec(x) = log(1 + N / papers(x))``:
  a hub shares something with everything, and its long profile divides what it shares;
- ``spans`` and ``contexts`` (shown as one part, ``context``): the cosines of what the span model's
  encoder read in their mentions and around them (:func:`kg.similarity.pooled_contexts`);
- ``similar``: ``(cos - 0.5) / 0.5`` when the cosine of their names' static vectors is above 0.5:
  GRU and LSTM, never in one abstract, are alike.

A candidate sharing only words of its name or datasets is no answer (:data:`CONTEXT_FLOOR`). A name
more than 3% of a corpus of 200 papers or more mentions scores less in proportion to its share.
In a corpus of 200 papers or more, the score is then scaled by how established the candidate is,
``min(1, log(1 + papers) / log(6))``: what one paper alone names is one of many (on the judged
lists, 0.24 -> 0.34 of the top 5 on ICLR 2017/18 and 0.12 -> 0.18 on NeurIPS 2023, tuned parts); a
reading list's papers are its answers, so a smaller corpus is not scaled.

``N`` is the number of papers. Candidates below the salience threshold
(:data:`kg.link.concepts.SALIENCE_THRESHOLD`: one paper, a plain phrase, not proposed)
are left out unless ``min_salience=0``. Ties go to the candidate with more
shared papers, then more papers, never to the alphabet alone.
"""
from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from .. import lexicon, vocab
from ..errors import KGError
from ..vocab import node_of_iri
from ..link.concepts import SALIENCE_THRESHOLD
from ..keys import is_category, resolution_key
from .lookup import find_entity
from ..similarity import Vectors
from .views import RELATION_FIELDS, Tables

SIBLING_SHARE = 0.5  # of a variant's feature, what two kinds of one concept have
BROADER_SHARE = 1 / 6  # of a variant's feature, what the thing a query is a kind of has
SIMILARITY_FLOOR = 0.5  # cosines of names below are what any two names of one field share
#: What a candidate's score adds up, each feature times its weight. The weights are a logistic
#: regression's over the features of the candidates of the judged queries' tuned parts (ICLR 2017/18
#: and NeurIPS 2023: ``python bench/related_fit.py``), the judgments saying which are related.
WEIGHTS = {"variant": 4.0, "listed": 2.7, "compared": 1.5, "co-mentioned": 3.5, "tasks": 1.4, "datasets": 0.6,
           "spans": 1.8, "contexts": 1.1, "similar": 3.0}
FEATURES = tuple(WEIGHTS)
#: The parts a score is shown in: the two vectors of what the encoder read are one part, "context".
PARTS = ("variant", "listed", "compared", "co-mentioned", "tasks", "datasets", "context", "similar")
#: A candidate that shares nothing but words of its name or datasets is no answer: it needs a part
#: that says what it is for (a variant, a list, a comparison, a paper, a task), or contexts this alike.
CONTEXT_FLOOR = 0.3
HUB_SHARE = 0.03  # the share of the corpus's papers above which a name counts as a hub
HUB_MIN_PAPERS = 200  # a corpus too small to tell a hub from a shared topic
ESTABLISHED_PAPERS = 5  # papers from which a candidate counts as established in a large corpus
#: Words that, added to a name, name the same thing: "GAN models", "LSTM RNNs", "Adam optimizer".
_SAME_THING = lexicon.KIND_WORDS | {"network", "networks", "net", "nets", "rnn", "rnns", "variant", "variants"}


def _echo(query: str, candidate: str) -> bool:
    """Whether a candidate's name is the query's with only words saying what kind of thing it is.

    >>> _echo("GAN", "GAN models"), _echo("LSTM", "LSTM RNNs"), _echo("LSTM", "Bi-LSTM"), _echo("dropout", "variational dropout")
    (True, True, False, False)
    """
    q, c = resolution_key(query).split(), resolution_key(candidate).split()
    shorter, longer = sorted((q, c), key=len)
    return len(longer) > len(shorter) and longer[: len(shorter)] == shorter \
        and all(w in _SAME_THING for w in longer[len(shorter):])


@functools.lru_cache(maxsize=1 << 16)
def _words(name: str) -> tuple[str, ...]:
    """A name's words, hyphenated parts apart, each as its key: "3C-GANs" -> ("3c", "gan")."""
    return tuple(key for key in map(resolution_key, re.split(r"[\s\-/]+", name)) if key)


def _run_together(name: str) -> str:
    """A name folded as its words' keys are (NFKC, case), without the spaces and marks between them.

    >>> _run_together("E-GRPO policies"), _run_together("GPT_4.5")
    ('egrpopolicies', 'gpt45')
    """
    return re.sub(r"[\s\-_./]+", "", unicodedata.normalize("NFKC", name).casefold())


def name_variant(query: str, candidate: str) -> bool:
    """Whether a candidate's name is the query's with words added: a variant of its name
    ("Wasserstein GAN", "3C-GAN" for GAN; "self-attention", "neural attention" for attention):
    ranked as a kind or variant of the query, by how many papers use it.

    >>> name_variant("GAN", "Wasserstein GAN"), name_variant("GAN", "3C-GANs"), name_variant("LSTM", "S-RNN")
    (True, True, False)
    >>> name_variant("batch normalization", "layer normalization"), name_variant("dropout", "DropConnect")
    (False, False)
    """
    q, c = _words(query), _words(candidate)
    return len(c) > len(q) > 0 and any(c[i : i + len(q)] == q for i in range(len(c) - len(q) + 1))


@dataclass
class Related:
    label: str
    type: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    shared: dict[str, list[str]] = field(default_factory=dict)
    #: Each of :data:`FEATURES`' values before its weight: what ``bench/related_fit.py`` fits the weights on.
    features: dict[str, float] = field(default_factory=dict, repr=False)

    def reason(self) -> str:
        bits = []
        for part in PARTS:
            if self.shared.get(part):
                items = self.shared[part]
                shown = ", ".join(items[:4]) + (f" +{len(items) - 4}" if len(items) > 4 else "")
                bits.append(shown if part == "variant" else f"{part}: {shown}")
        return "; ".join(bits)

    def as_json(self) -> dict:
        return {"label": self.label, "type": self.type, "score": self.score, "parts": self.parts,
                "shared": self.shared, "reason": self.reason()}


@dataclass
class RelatedAnswer:
    """What ``kg related`` answers: the entity asked about, its related entities best first (the
    variants of its name among them), and the variants of its name not ranked, with their papers."""

    query: str
    results: list[Related]
    variants: list[tuple[str, int]]

    def as_json(self) -> dict:
        return {"query": self.query, "results": [r.as_json() for r in self.results],
                "variants": [{"label": v, "papers": n} for v, n in self.variants]}

    def as_text(self) -> str:
        lines = [f"Related to {self.query}:"]
        if not self.results:
            lines.append("  (nothing shares a task, dataset or paper with it)")
        for rank, r in enumerate(self.results, 1):
            lines.append(f"{rank:3}. {r.label} [{r.type}]  score {r.score:.2f}  "
                         + " + ".join(f"{part} {value:.2f}" for part, value in r.parts.items()))
            lines.append(f"     {r.reason()}")
        if self.variants:
            lines.append("\nMore variants of its name: "
                         + ", ".join(f"{v} ({n:,})" for v, n in self.variants))
        return "\n".join(lines)


#: The roles :class:`RelatedTables` keeps, each a papers x entities matrix.
TASK_ROLES, DATASET_ROLES = ("addresses",), ("evaluatesOn", "introduces")


@dataclass
class RelatedTables:
    """What :class:`RelatedIndex` reads of a graph, as arrays: each entity (IRI, label, type,
    salience), each paper's role edges to them (one papers x entities 0/1 matrix per role), and the
    variant and broader links between them (pairs of entity rows).

    Made from the graph's tables (:meth:`of`: milliseconds).
    """

    entities: list[str]  # IRIs, sorted
    labels: list[str]
    types: list[str]
    salience: np.ndarray
    papers: int  # papers with a role edge to one of the entities
    roles: dict[str, sparse.csr_matrix]  # role -> papers x entities
    variants: np.ndarray  # (variant, base) rows of entities
    broader: np.ndarray  # (narrower, broader) rows of entities
    listed: np.ndarray  # (entity, entity, papers): pairs some sentence lists together, and in how many papers

    @classmethod
    def of(cls, tables: Tables) -> RelatedTables:
        """The tables of the graph whose tables (:func:`kg.query.graph_index.read_tables`) are ``tables``."""
        t, ids, first = tables.t, tables.ids, tables.first
        iri = [t["base"] + node for node in ids]
        order = sorted(range(first), key=lambda i: iri[i])
        row_of = {i: row for row, i in enumerate(order)}
        linked = sorted((j for j in range(first, len(ids)) if t["paper_links"][j - first]), key=lambda j: iri[j])
        roles = {role: set() for role in vocab.ROLES}
        for paper, j in enumerate(linked):
            links = t["paper_links"][j - first]
            for k in range(0, len(links), 2):
                role = t["roles"][links[k + 1]]
                if role in roles:
                    roles[role].add((paper, row_of[links[k]]))
        shape = (len(linked), first)
        pairs: dict[str, set] = {"variantOf": set(), "broader": set(), "listedWith": set()}
        rows, width = t["relations"], len(RELATION_FIELDS)
        for r in range(0, len(rows), width):
            subject, other, relation, support = rows[r:r + 4]
            name = t["roles"][relation]
            if name in pairs:
                pairs[name].add((row_of[subject], row_of[other]) + ((support,) if name == "listedWith" else ()))

        def array(name: str, width: int) -> np.ndarray:
            return np.array(sorted(pairs[name]), dtype=np.int64).reshape(-1, width)

        return cls([iri[i] for i in order], [t["label"][i] for i in order], [t["kinds"][t["kind"][i]] for i in order],
                   np.array([t["salience"][i] for i in order], dtype=np.float64), len(linked),
                   {role: _incidence(sorted(found), shape) for role, found in roles.items()},
                   array("variantOf", 2), array("broader", 2), array("listedWith", 3))


class RelatedIndex:
    """What :meth:`related` reads (:class:`RelatedTables`), with what it derives of them: each
    entity's papers (its own and its narrower ones'), and per entity how many of its papers
    address each task or evaluate on each dataset.

    Built from the graph's tables (:func:`kg.query.graph_index.read_tables`) in a few hundred milliseconds
    at 20,000 papers; each :meth:`related` call then touches only what the query shares with others:
    candidates come from its papers, its variants and concepts, the inverted lists of its tasks and
    datasets, and its vector. ``kg serve`` builds the index once, as it warms up; ``kg related`` once per run.
    """

    def __init__(self, graph_tables: Tables):
        self.graph_tables = graph_tables
        tables = RelatedTables.of(graph_tables)
        self.rows, self.labels, self.types = tables.entities, tables.labels, tables.types
        self.row = {e: i for i, e in enumerate(self.rows)}
        self.roles = tables.roles
        self.n_papers = tables.papers or 1
        self.listed: dict[int, dict[int, int]] = defaultdict(dict)  # entity -> entity listed with it -> papers
        for a, b, papers in tables.listed.tolist():
            self.listed[a][b] = self.listed[b][a] = papers
        self.above: dict[int, set[int]] = defaultdict(set)  # entity -> what it varies or is a kind of
        self.below: dict[int, set[int]] = defaultdict(set)  # the inverse of ``above``
        narrower: dict[int, set[int]] = defaultdict(set)
        for (variant, base), is_broader in [(pair, False) for pair in tables.variants.tolist()] \
                + [(pair, True) for pair in tables.broader.tolist()]:
            self.above[variant].add(base)
            self.below[base].add(variant)
            if is_broader:
                narrower[base].add(variant)
        # Each entity's papers, entities x papers: its own, and for a concept those of everything below it.
        n_entities = len(self.rows)
        own = sum(self.roles.values(), sparse.csr_matrix((tables.papers, n_entities))).T.tocsr()
        reach = _incidence(sorted({(i, i) for i in range(n_entities)}
                                  | {(concept, child) for concept in narrower for child in _closure(narrower, concept)}),
                           (n_entities, n_entities))
        self.papers_of = (reach @ own).tocsr()
        self.papers_of.data[:] = 1.0
        self.papers_of.sort_indices()
        self.n_of = np.diff(self.papers_of.indptr)  # papers of each entity
        n = self.n_papers
        self.spec = [math.log(1 + n / count) if count else 0.0 for count in self.n_of.tolist()]
        # Each entity's task and dataset profile: how many of its papers address each task (evaluate
        # on each dataset), one sparse matrix product over all entities at once, its columns the
        # inverted lists of which entities hold a task.
        self.counts: dict[str, sparse.csr_matrix] = {}
        self.holders: dict[str, sparse.csc_matrix] = {}
        self.norms: dict[str, np.ndarray] = {}
        specs = np.array(self.spec)
        for part, roles in (("tasks", TASK_ROLES), ("datasets", DATASET_ROLES)):
            on = sum((self.roles[role] for role in roles[1:]), self.roles[roles[0]])
            on.data[:] = 1.0
            counts = (self.papers_of @ on).tocsr()
            counts.sort_indices()
            self.counts[part], self.holders[part] = counts, counts.tocsc()
            self.norms[part] = (counts > 0).astype(np.float64) @ (specs ** 2)
        self.kind = np.array(self.types, dtype=object)
        self.salient = tables.salience
        self.support = np.array([support(count, self.n_papers) for count in self.n_of.tolist()])
        self._vector_rows: tuple | None = None  # (vectors, our rows, their rows) of the last vectors seen
        self._flat: list[tuple[str, int]] | None = None  # read by _name_variants, made on its first call

    def _papers(self, row: int) -> set[int]:
        """The papers of the entity in ``row`` (its own and its narrower ones')."""
        return set(self.papers_of.indices[self.papers_of.indptr[row]:self.papers_of.indptr[row + 1]].tolist())

    def _with(self, paper: int, *roles: str) -> set[int]:
        """The entities ``paper`` has one of ``roles`` towards."""
        return {e for role in roles for e in
                self.roles[role].indices[self.roles[role].indptr[paper]:self.roles[role].indptr[paper + 1]].tolist()}

    def _profile(self, part: str, row: int) -> Counter:
        """How many papers of the entity in ``row`` address each task (evaluate on each dataset), by row."""
        counts = self.counts[part]
        start, end = counts.indptr[row], counts.indptr[row + 1]
        return Counter(dict(zip(counts.indices[start:end].tolist(), map(int, counts.data[start:end].tolist()))))

    def _cosines(self, vectors: Vectors | None, query: int, of: str = "matrix") -> np.ndarray:
        """The cosine of each entity (in ``rows`` order) with the query, in ``vectors``' matrix ``of``
        (:class:`kg.similarity.Vectors`); 0 without a vector."""
        cosines = np.zeros(len(self.rows), dtype=np.float32)
        if vectors is None or getattr(vectors, of) is None:
            return cosines
        if self._vector_rows is None or self._vector_rows[0] is not vectors:  # which row is which: once per vectors
            pairs = [(i, vectors.row[node]) for i, e in enumerate(self.rows) if (node := node_of_iri(e)) in vectors.row]
            mine, theirs = (np.array(side, dtype=int) for side in zip(*pairs)) if pairs else (np.zeros(0, int),) * 2
            self._vector_rows = (vectors, mine, theirs)
        _, mine, theirs = self._vector_rows
        cosines[mine] = vectors.similarity(node_of_iri(self.rows[query]), of)[theirs]
        return cosines

    def _items(self, paper: int, part: str) -> set[int]:
        """The tasks a paper addresses, or the datasets it evaluates on or introduces."""
        return self._with(paper, *(TASK_ROLES if part == "tasks" else DATASET_ROLES))

    def _query(self, name: str) -> tuple[int, set[str]]:
        """The row of the entity named ``name`` (or with that IRI), and every name it goes by."""
        iri = name if name in self.row else find_entity(self.graph_tables, name)
        if iri not in self.row:
            raise KGError(f"{name!r} is not an entity of this graph's types ({', '.join(vocab.ENTITY_TYPES)}).")
        query = self.row[iri]
        return query, set(self.graph_tables.names(self.graph_tables.index_of[node_of_iri(iri)]))

    def answer(self, name: str, *, k: int = 10, type: str = "Method", vectors: Vectors | None = None) -> RelatedAnswer:
        """:meth:`related`, and the variants of the name it did not rank (:meth:`variants`), as
        ``kg related`` prints them."""
        label, results = self.related(name, k=k, type=type, vectors=vectors)
        ranked = {r.label for r in results}
        return RelatedAnswer(label, results, [v for v in self.variants(name, k=k + len(ranked), type=type)
                                              if v[0] not in ranked][:k])

    def variants(self, name: str, *, k: int = 10, type: str = "Method") -> list[tuple[str, int]]:
        """The ``k`` entities of ``type`` whose names are variants of the name of the one named
        ``name`` (:func:`name_variant`), with their papers, most papers first."""
        query, query_names = self._query(name)
        found = [(self.labels[e], int(self.n_of[e])) for e in self._name_variants(query, query_names)
                 if self.n_of[e] and (not type or self.types[e] == type)]
        return sorted(found, key=lambda x: (-x[1], x[0].casefold()))[:k]

    def _name_variants(self, query: int, query_names: set[str]) -> set[int]:
        """The entities whose names are one of the query's names with words added (:func:`name_variant`),
        not only a word for its kind (``_echo``): "Wasserstein GAN", E-GRPO."""
        if self._flat is None:  # each name folded and run together, searched for the query's first word
            self._flat = [(_run_together(label), e) for e, label in enumerate(self.labels)]
        found = set()
        for q in query_names:
            if not _words(q):
                continue
            # A word's key is its folded text less a plural ending: "policies" -> "policy", whose
            # last letter alone is not in the name.
            first = _words(q)[0].replace(" ", "")
            probe = first[:-1] if first.endswith("y") and len(first) > 1 else first
            found |= {e for flat, e in self._flat if probe in flat}
        return {e for q in query_names for e in found
                if e != query and name_variant(q, self.labels[e]) and not _echo(q, self.labels[e])}

    def related(self, name: str, *, k: int = 10, type: str = "Method", min_salience: float = SALIENCE_THRESHOLD,
                vectors: Vectors | None = None) -> tuple[str, list[Related]]:
        """The ``k`` entities of ``type`` most related to the one named ``name`` (or with that IRI),
        best first (see the module's documentation for the score), leaving out the query's
        synonyms; the variants of its name are ranked with the rest. Returns the query entity's
        label and the list."""
        query, query_names = self._query(name)
        query_papers = self._papers(query)
        if not query_papers:  # no paper links it: it shares nothing
            return self.labels[query], []
        profiles = {part: {x: self.spec[x] for x in self._profile(part, query)} for part in ("tasks", "datasets")}
        # What every candidate's score reads of the query's profiles: a hub's holds thousands of tasks.
        read = ({part: set(profile) for part, profile in profiles.items()},
                {part: sum(v * v for v in profile.values()) for part, profile in profiles.items()})
        cosines = {of: self._cosines(vectors, query, of) for of in ("matrix", "spans", "contexts")}
        similarity = lambda candidate: {of: float(c[candidate]) for of, c in cosines.items()}  # noqa: E731
        # A first score of every entity at once, exact for those sharing no paper with the query
        # (the usual case): the parts that need shared papers are added for the few that do.
        first = np.zeros(len(self.rows))
        for part, profile in profiles.items():
            own_norm = sum(w * w for w in profile.values())
            if not own_norm:
                continue
            shared = np.zeros(len(self.rows))
            holders = self.holders[part]
            for x, weight in profile.items():
                if x != query:
                    held = holders.indices[holders.indptr[x]:holders.indptr[x + 1]]
                    shared[held] += weight * weight
                    if self.counts[part][x, x]:  # a task shares nothing with itself
                        shared[x] -= weight * weight
            first += WEIGHTS[part] * np.divide(shared, np.sqrt(own_norm * self.norms[part]),
                                               out=np.zeros_like(shared), where=self.norms[part] > 0)
        first += WEIGHTS["similar"] * np.maximum(0.0, cosines["matrix"] - SIMILARITY_FLOOR) / (1 - SIMILARITY_FLOOR)
        first += WEIGHTS["spans"] * np.maximum(0.0, cosines["spans"]) + WEIGHTS["contexts"] * np.maximum(0.0, cosines["contexts"])
        first *= self.support
        # The entities whose score needs more than the first pass: those sharing a paper with
        # the query, its variants and kinds, and its siblings under a concept. Of the others, the
        # first pass's score is the score, so only its best k (and ties) can make the list.
        below, above = _closure(self.below, query), _closure(self.above, query)
        # A name that is the query's with words added ("Wasserstein GAN", E-GRPO) is a variant of it,
        # ranked with the rest by how many papers use it, whether or not a link says so.
        below |= self._name_variants(query, query_names)
        on_query_papers = np.zeros(self.papers_of.shape[1])
        on_query_papers[list(query_papers)] = 1.0  # the entities whose papers hold one of the query's
        exact = set(np.flatnonzero(self.papers_of @ on_query_papers).tolist()) | below | above
        exact |= {sibling for concept in self.above[query] for sibling in self.below[concept]} | set(self.listed[query])
        wanted = (self.salient >= min_salience) & (first > 0)
        if type:
            wanted &= self.kind == type
        others = [i for i in np.flatnonzero(wanted).tolist() if i not in exact]
        if len(others) > k:
            floor = np.sort(first[others])[-k] - 1e-6 if k > 0 else math.inf
            others = [i for i in others if first[i] >= floor]
        results = []
        for candidate in set(others) | exact:
            if candidate == query or not self.n_of[candidate] or (type and self.types[candidate] != type):
                continue
            if any(_echo(name, self.labels[candidate]) for name in query_names):
                continue  # "attention network" for attention: the query itself, by another name
            if self.salient[candidate] < min_salience or is_category(self.labels[candidate]):
                continue
            found = self._score(query, candidate, query_papers, profiles, read, similarity, below, above)
            if found is not None:
                results.append(found)
        results.sort(key=lambda r: (-r[0].score, *(-x for x in r[1]), r[0].label))
        return self.labels[query], [r for r, _ in results[:k]]

    def _score(self, query: int, candidate: int, query_papers: set[int], profiles: dict[str, dict[int, float]],
               read: tuple[dict, dict], similarity, below: set[int], above: set[int]):
        """The exact score of ``candidate`` for ``query`` (rows), with its parts and reasons; None if not
        positive. ``read`` holds the items and the squared norm of each of the query's ``profiles``;
        ``below`` and ``above`` are the query's variants and kinds, and what it is a kind of."""
        label, spec, n = self.labels, self.spec, self.n_papers
        papers = self._papers(candidate)
        both = query_papers & papers
        compared = {p for p in both
                    if (query in self._with(p, "proposes") and candidate in self._with(p, "comparesWith"))
                    or (candidate in self._with(p, "proposes") and query in self._with(p, "comparesWith"))}
        nested = candidate in below or candidate in above
        if candidate in below:  # weighed by how many papers use it: one-paper variants are many
            variant = [f"a kind or variant of {label[query]}"]
            variant_score = min(1.0, math.log2(1 + len(papers)) / 4)
        elif nested:
            variant, variant_score = [f"{label[query]} is a kind or variant of it"], BROADER_SHARE
        else:
            common = sorted(self.above[query] & self.above[candidate], key=lambda c: (-spec[c], label[c]))
            variant = [f"both kinds of {label[c]}" for c in common]
            variant_score = SIBLING_SHARE * max((spec[c] for c in common), default=0.0) / math.log(1 + n)
        # A concept and what is narrower than it share papers by construction: that says nothing.
        association = 0.0 if nested or not both else _npmi(len(both), len(query_papers), len(papers), n)
        listed = self.listed[query].get(candidate, 0)
        # Tasks and datasets count when shared across different papers: within one paper,
        # everything shares everything, and that is what co-mention already scores.
        features = {"variant": variant_score, "listed": math.log2(1 + listed), "compared": float(len(compared)),
                    "co-mentioned": association * math.log2(1 + len(both))}
        shared: dict[str, list[str]] = {}
        keys, norms = read
        for part, profile in profiles.items():
            theirs = self._profile(part, candidate)
            for paper in both:  # their profile is that of the papers they do not share
                theirs.subtract(self._items(paper, part))
            their_profile = {x: spec[x] for x, count in theirs.items() if count > 0}
            common = keys[part] & set(their_profile) - {query, candidate}
            features[part] = _cosine(profile, their_profile, common, norms[part]) if len(both) < len(query_papers) else 0.0
            shared[part] = [label[e] for e in sorted(common, key=lambda e: (-spec[e], label[e]))]
        cosine = similarity(candidate)
        features.update({"spans": max(0.0, cosine["spans"]), "contexts": max(0.0, cosine["contexts"]),
                         "similar": max(0.0, cosine["matrix"] - SIMILARITY_FLOOR) / (1 - SIMILARITY_FLOOR)})
        grounded = any(features[f] > 0 for f in ("variant", "listed", "compared", "co-mentioned", "tasks")) \
            or features["contexts"] >= CONTEXT_FLOOR
        # A name a large share of the corpus mentions ("neural networks", "deep learning") is related
        # to everything, so to nothing in particular: its score shrinks with its share. What one paper
        # alone uses is less established than what several do: in a large corpus the score shrinks for
        # a candidate with fewer papers (a small one's papers are its answers).
        share = len(papers) / max(n, 1)
        scale = (HUB_SHARE / share if share > HUB_SHARE and n >= HUB_MIN_PAPERS else 1.0) * float(self.support[candidate])
        features = {f: value * scale for f, value in features.items()}
        weighed = {f: WEIGHTS[f] * value for f, value in features.items()}
        parts = {**{p: weighed[p] for p in PARTS if p in weighed}, "context": weighed["spans"] + weighed["contexts"]}
        score = sum(weighed.values())
        if score <= 0 or not grounded:
            return None
        shared.update({"variant": variant,
                       "listed": [f"in {listed} paper{'s' if listed != 1 else ''}"] if listed else [],
                       "co-mentioned": [f"{len(both)} paper{'s' if len(both) != 1 else ''}"] if both and not nested else [],
                       "compared": [f"in {len(compared)} paper{'s' if len(compared) != 1 else ''}"] if compared else [],
                       "context": [f"{max(0.0, cosine['contexts']):.2f} around it, {max(0.0, cosine['spans']):.2f} itself"]
                       if parts["context"] else [],  # the cosines as scored: one below 0 adds nothing
                       "similar": [f"{cosine['matrix']:.2f}"] if parts["similar"] else []})
        return (Related(label[candidate], self.types[candidate], round(score, 3),
                        {p: round(parts[p], 3) for p in PARTS if parts[p]}, {p: shared.get(p, []) for p in PARTS},
                        {f: round(v, 4) for f, v in features.items()}),
                (len(both), len(papers), float(self.salient[candidate])))


def _incidence(pairs: list[tuple[int, int]], shape: tuple[int, int]) -> sparse.csr_matrix:
    """A 0/1 matrix of ``shape`` with a 1 at each (row, column) of ``pairs``, none repeated.

    >>> _incidence([(0, 1), (1, 0)], (2, 3)).toarray().tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """
    rows, columns = (np.array(side, dtype=np.int64) for side in zip(*pairs)) if pairs else (np.zeros(0, np.int64),) * 2
    return sparse.csr_matrix((np.ones(len(rows)), (rows, columns)), shape=shape)


def support(papers: int, corpus: int) -> float:
    """How established a candidate is, in (0, 1]: 1 from :data:`ESTABLISHED_PAPERS` papers on, less
    below, and 1 for all in a corpus under :data:`HUB_MIN_PAPERS` papers, where one paper is what
    a reading list has.

    >>> round(support(1, 3000), 2), support(5, 3000), support(1, 40)
    (0.39, 1.0, 1.0)
    """
    if corpus < HUB_MIN_PAPERS:
        return 1.0
    return min(1.0, math.log(1 + papers) / math.log(1 + ESTABLISHED_PAPERS))


def _cosine(a: dict, b: dict, shared: set, a_norm: float | None = None) -> float:
    """The cosine of two weighted sets over their ``shared`` items: a hub's long list of tasks
    shares something with every list, and is divided by its length. ``a_norm``, the sum of
    ``a``'s squared weights, if known (a query's, the same for every candidate).

    >>> round(_cosine({"t": 1.0, "u": 1.0}, {"t": 2.0}, {"t"}), 3)
    0.707
    """
    if not shared:
        return 0.0
    a_norm = sum(v * v for v in a.values()) if a_norm is None else a_norm
    return sum(a[x] * b[x] for x in shared) / math.sqrt(a_norm * sum(v * v for v in b.values()))


def _npmi(both: int, a: int, b: int, n: int) -> float:
    """Normalised pointwise mutual information of two paper sets, in [-1, 1]; 1 when they coincide."""
    if both >= n:
        return 0.0
    return math.log(n * both / (a * b)) / -math.log(both / n)


def _closure(links: dict[int, set[int]], entity: int) -> set[int]:
    """Everything ``links`` lead to from ``entity``, transitively (``entity`` itself left out)."""
    seen, todo = set(), [entity]
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    seen.discard(entity)
    return seen


def related(tables: Tables, name: str, *, k: int = 10, type: str = "Method",
            min_salience: float = SALIENCE_THRESHOLD, vectors: Vectors | None = None) -> tuple[str, list[Related]]:
    """The ``k`` entities of ``type`` most related to the one named ``name``, best first.

    ``vectors`` (the graph's :class:`kg.similarity.Vectors`) add the ``similar`` and ``context``
    parts; without them, neither is scored. Returns the query entity's label and the ranked list. To ask
    more than once, load a :class:`RelatedIndex` and call its :meth:`~RelatedIndex.related`.
    """
    return RelatedIndex(tables).related(name, k=k, type=type, min_salience=min_salience, vectors=vectors)
