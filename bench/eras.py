"""The answers' figures on several corpora side by side, each split into the part judgments may be
tuned on and the third set aside by a hash of the paper id, so that a figure measured where it was
tuned is never read alone.

    python bench/eras.py iclr=/tmp/iclr:bench/concepts_dev.json \\
        neurips=/tmp/neurips:bench/judged/neurips2023.json small=/tmp/small:bench/judged/neurips2023_ssl40.json

Each argument is NAME=GRAPH:JUDGED (a graph built by ``kg build``, the judgments made by reading its
abstracts, in the format of ``bench/concepts_dev.json``; several judged files joined by ``+``). A
paper (or a judged keyword) is held out when ``int(sha1(id), 16) % 3 == 0``. Figures, each as a share with its counts:

- proposals recall: judged papers with a named proposal that have a proposes/introduces edge to an
  entity one of whose names is a judged name; precision: such edges over all proposes/introduces
  edges of those papers;
- the same precision over every judged paper, those proposing nothing by name included (an edge
  to "a sampling method" where the paper names nothing is wrong);
- papers proposing nothing at all that have a proposes edge (lower is better);
- leaderboard recall: judged scores (kind ``score`` on the dataset itself, not a variant such as
  ImageNet-C) that some board of the dataset ranks (same paper, same value); precision: ranked
  entries of judged papers that are judged scores of that dataset; method named: of the right
  entries, those whose method is the judged one (by name, or the paper's own proposal where the
  judgment says the paper's method reached it).

- broader links right, similar papers (top 5) judged similar: of the graph's broader links and top 5
  similar papers that were judged (``bench/judged/broader_similar.json``, sampled once with random
  controls mixed in, judged blind), those judged right.

- kg compare rows right: of the scores every task's comparison table shows on the judged datasets,
  those the judgments list as that paper's score there.

- related top 5 listed as related: of each judged query's top 5 related methods, those the
  judgments list as related (judged from the abstracts and domain knowledge, not from the graph).
- related top 5 judged related (blind): the same, against judgments of the candidates themselves
  (``bench/judged/related_blind.json``: two versions' lists shuffled together, judged without knowing
  which listed what), over the answers judged; those the judges were not shown are counted apart.

- synonym pairs joined / near names kept apart: judged pairs of written forms, each in its paper.

- judged entities: right type and useful: of the entities judged in ``bench/judged/types.json``
  (sampled once, judged blind from their sentences) that the graph still has, those whose type is the
  judged one (Model and Method alike) and that the judges call useful; useful judged entities kept:
  of those judged useful, the share the graph still has.

- shared keywords that are entities: of the author keywords that five or more papers share, judged
  to name a method or a task (``bench/judged/neurips2023_keywords.json``), those that name an entity
  of the graph; the misses are listed after the table.

Names match through kg's resolution key, as ``kg related NAME`` finds an entity. The noise of a
figure is estimated as the binomial standard error sqrt(p(1-p)/n) of its share, printed beside it.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from answers import _number, named_in_paper, names_of, proposals, rows  # noqa: E402

from kg import vocab  # noqa: E402
from kg.keys import resolution_key  # noqa: E402
from kg.errors import KGError  # noqa: E402
from kg.query.leaderboard import leaderboard  # noqa: E402
from kg.query.lookup import find_entity  # noqa: E402
from kg.query.graph_index import index_graph, read_tables  # noqa: E402
from kg.store import open_graph  # noqa: E402

PARTS = ("tuned", "held out")
#: The written forms of a dataset that are the dataset itself, not a variant of it.
SAME_DATASET = {"imagenet": {"imagenet-1k", "imagenet1k", "ilsvrc", "ilsvrc-2012", "ilsvrc2012",
                             "imagenet-2012", "imagenet 2012", "imagenet-1k (ilsvrc 2012)"},
                "coco": {"ms-coco", "mscoco", "ms coco", "coco 2017", "coco val2017", "coco test-dev", "coco2017"}}


def part_of(paper_id: str) -> str:
    return PARTS[int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % 3 == 0]


class Tally:
    """Hits over totals, per figure and part."""

    def __init__(self):
        self.counts = defaultdict(lambda: [0, 0])
        self.missed = defaultdict(list)  # part -> what a figure missed, where it lists them
        self.examples = []  # the tuned part's leaderboard misses, wrong rows and unnamed methods, for --examples

    def add(self, figure: str, paper_id: str, hits: int, total: int = 1) -> None:
        """``hits`` of ``total`` (a bool counts as 0 or 1 of 1) for the part ``paper_id`` is in."""
        cell = self.counts[figure, part_of(paper_id)]
        cell[0] += int(hits)
        cell[1] += total

    def cell(self, figure: str, part: str) -> str:
        hits, total = self.counts[figure, part]
        if not total:
            return "–"
        p = hits / total
        return f"{p:.2f}±{math.sqrt(p * (1 - p) / total):.2f} ({hits}/{total})"


def proposal_figures(store, judged: list[dict], tally: Tally) -> None:
    names, proposed = names_of(store), proposals(store)
    for paper in judged:
        edges = proposed[paper["id"]]
        gold = {resolution_key(n) for n in paper["proposed"]}
        if edges:  # every edge of a judged paper, a paper proposing nothing by name included
            tally.add("proposals precision, every judged paper", paper["id"],
                      sum(1 for iri in edges if names[iri] & gold), len(edges))
        if paper["proposed"]:
            hits = [iri for iri in edges if names[iri] & gold]
            tally.add("proposals recall", paper["id"], bool(hits))
            if edges:
                tally.add("proposals precision", paper["id"], len(hits), len(edges))
        elif not paper.get("unnamed"):
            tally.add("proposes nothing, has an edge (lower is better)", paper["id"], bool(edges))


def _itself(dataset: str, variant: str | None) -> bool:
    if not variant:
        return True
    written = variant.strip().lower()
    return written == dataset.lower() or written in SAME_DATASET.get(dataset.lower(), set())


def leaderboard_figures(store, judged: list[dict], read: set[str] | None, tally: Tally, tables) -> None:
    ids = dict(rows(store, "SELECT ?p ?id WHERE { ?p a kg:Paper ; dcterms:identifier ?id }"))
    names, proposed = names_of(store), proposals(store)
    gold = defaultdict(dict)  # dataset -> (paper, value) -> judged record
    for result in judged:
        value = _number(str(result["value"]))
        if result.get("kind") == "score" and value is not None and _itself(result["dataset"], result.get("variant")):
            gold[result["dataset"]][result["paper"], round(value, 4)] = result
    for dataset, expected in sorted(gold.items()):
        boards = []  # every metric's, in every setting (a zero-shot score is on its own board)
        try:
            first = leaderboard(tables, dataset)
            for metric in [first.metric] + list(first.other_metrics):
                board = first if metric == first.metric else leaderboard(tables, dataset, metric)
                boards += [board] + [leaderboard(tables, dataset, metric, s or "standard")
                                     for s in board.other_settings]
        except Exception:  # noqa: BLE001 - a dataset the graph lacks: every judged score is missed
            pass
        entries = {}
        for entry in (e for b in boards for e in b.ranked):
            paper = ids.get(entry.paper)
            if read is None or paper in read:
                entries[paper, round(entry.value, 4)] = entry
        for (paper, value), record in expected.items():
            tally.add("leaderboard recall", paper, (paper, value) in entries)
            if (paper, value) not in entries and part_of(paper) == "tuned":
                tally.examples.append({"missed": dataset, "paper": paper, "value": value,
                                       "metric": record.get("metric"), "sentence": record.get("sentence")})
        for (paper, value), entry in entries.items():
            right = (paper, value) in expected
            tally.add("leaderboard precision", paper, right)
            if not right and part_of(paper) == "tuned":
                tally.examples.append({"wrong": dataset, "paper": paper, "value": value, "metric": entry.metric,
                                       "subject": entry.subject, "sentence": getattr(entry, "sentence", None)})
            if right:
                record = expected[paper, value]
                subject = resolution_key(entry.subject) if entry.subject else None
                own = {k for iri in proposed[paper] for k in names.get(iri, ())}
                named = subject is not None and (
                    (record.get("subject") and subject == resolution_key(record["subject"]))
                    or (record.get("subject_is_proposal") and subject in own))
                tally.add("leaderboard method named", paper, bool(named))
                if not named and part_of(paper) == "tuned":
                    tally.examples.append({"unnamed": dataset, "paper": paper, "value": value,
                                           "subject": entry.subject, "judged": record.get("subject"),
                                           "own": sorted(own), "sentence": record.get("sentence")})


def whole_tables(graph):
    """The graph at ``graph`` as its index, and its tables: every task's view at once."""
    tables = read_tables(graph)
    return index_graph(tables), tables


def compare_figures(tables, judged: list[dict], read: set[str] | None, tally: Tally) -> None:
    """Of the results ``kg compare`` shows in every task's table on the judged datasets, those the
    judgments list as that paper's score on that dataset (its value, as a score, not a gain or a
    baseline's). ``tables`` is the graph read back whole (:func:`whole_tables`)."""
    G, tables = tables
    canonical = {}  # a written dataset's key -> the judged dataset it is
    for record in judged:
        for form in (record["dataset"], record.get("variant")):
            if form and _itself(record["dataset"], form):
                canonical[resolution_key(form)] = record["dataset"]
    for dataset, forms in SAME_DATASET.items():
        name = next((r["dataset"] for r in judged if r["dataset"].lower() == dataset), None)
        canonical.update({resolution_key(f): name for f in forms if name})
    scores = {(r["paper"], canonical.get(resolution_key(r["dataset"]), r["dataset"]), round(_number(str(r["value"])), 4))
              for r in judged if r.get("kind") == "score" and _number(str(r["value"])) is not None}
    shown = set()
    for node, data in G.nodes(data=True):
        if data.get("kind") != "Task":
            continue
        for row in tables.view(node).get("comparison", []):
            paper = row["paper"].split("/", 1)[1]
            for result in row["results"]:
                dataset = canonical.get(resolution_key(result.get("dataset") or ""))
                value = _number(result["text"])
                if dataset and value is not None and result.get("kind") == "score" and (read is None or paper in read):
                    shown.add((paper, dataset, round(value, 4)))
    for paper, dataset, value in shown:
        tally.add("kg compare rows right", paper, (paper, dataset, value) in scores)


def broader_figures(store, judged: list[dict], corpus: str, tally: Tally) -> None:
    """Of the graph's broader links that were judged (``bench/judged/broader_similar.json``, this
    corpus's), those judged right; the narrower name decides its part."""
    label = dict(rows(store, "SELECT ?e ?l WHERE { ?e skos:prefLabel ?l }"))
    links = {(label.get(a), label.get(b)) for a, b in rows(store, "SELECT ?a ?b WHERE { ?a skos:broader ?b }")}
    for item in (i for i in judged if i["corpus"] == corpus):
        if (item["narrower"], item["broader"]) in links:
            tally.add("broader links right", item["narrower"], item["right"])


def similar_figures(tables, judged: list[dict], corpus: str, tally: Tally) -> None:
    """Of the top 5 similar papers the graph lists for each judged paper, those judged similar; a
    paper the judges did not see is left out of the share (the query decides its part)."""
    G, tables = tables
    for item in (i for i in judged if i["corpus"] == corpus):
        node = "paper/" + item["query"]
        if node not in G:
            continue
        verdict = {c["id"]: c["similar"] for c in item["candidates"]}
        shown = [x["id"].split("/", 1)[1] for x in tables.view(node)["similar"][:5]]
        seen = [verdict[p] for p in shown if p in verdict]
        if seen:
            tally.add("similar papers (top 5) judged similar", item["query"], sum(seen), len(seen))


def keyword_figures(tables, judged: list[dict], tally: Tally) -> None:
    """Of the shared author keywords judged to name a method or a task, those an entity goes by (as
    ``kg related KEYWORD`` finds one); the keyword itself decides its part."""
    for record in judged:
        if record["kind"] in ("method", "task"):
            try:
                find_entity(tables, record["keyword"])
                found = True
            except KGError:
                found = False
            tally.add("shared keywords that are entities", record["keyword"], found)
            if not found:
                tally.missed[part_of(record["keyword"])].append(record["keyword"])


def related_figures(store, graph: str, judged: list[dict], tally: Tally) -> None:
    """Of the top 5 related methods of each judged query, those the judgments list as related (the
    query decides its part)."""
    from kg.query.related import RelatedIndex
    from kg.similarity import graph_vectors

    index, vectors = RelatedIndex(read_tables(graph)), graph_vectors(graph)
    for item in judged:
        relevant = {resolution_key(name) for name in item["relevant"]}
        try:
            _, found = index.related(item["query"], k=5, vectors=vectors)
        except KGError:
            found = []
        if found:
            tally.add("related top 5 listed as related", item["query"],
                      sum(1 for r in found if resolution_key(r.label) in relevant), len(found))
        tally.add("related queries answered", item["query"], bool(found))


def blind_related_figures(store, graph: str, judged: dict[str, dict[str, str]], tally: Tally) -> None:
    """Of the top 5 related methods of each query judged blind, those judged related, over those judged
    (an answer the judges were not shown is counted apart, as not judged); the query decides its part."""
    from kg.query.related import RelatedIndex
    from kg.similarity import graph_vectors

    index, vectors = RelatedIndex(read_tables(graph)), graph_vectors(graph)
    for query, labels in judged.items():
        try:
            _, found = index.related(query, k=5, vectors=vectors)
        except KGError:
            continue
        shown = [labels[r.label] for r in found if r.label in labels]
        if shown:
            tally.add("related top 5 judged related (blind)", query, sum(label == "related" for label in shown), len(shown))
        tally.add("related top 5 not judged (lower is better)", query, len(found) - len(shown), max(len(found), 1))


def synonym_figures(store, judged: dict, tally: Tally) -> None:
    """Judged pairs of forms of one thing joined into one entity, and near names kept apart; a pair is
    read in its two papers, so two senses of one spelling are told apart (the first paper decides
    its part)."""
    entities = named_in_paper(store)
    for pair in judged.get("join", []):
        tally.add("synonym pairs joined", pair["a_paper"],
                  bool(entities(pair["a_paper"], pair["a"]) & entities(pair["b_paper"], pair["b"])))
    for pair in judged.get("apart", []):
        tally.add("near names kept apart", pair["a_paper"],
                  not entities(pair["a_paper"], pair["a"]) & entities(pair["b_paper"], pair["b"]))


#: Types judged alike: the judges were told to call an architecture family a Method when in doubt.
_ACTOR = {"Method": "Method", "Model": "Method"}


def type_figures(tables, judged: list[dict], corpus: str, tally: Tally) -> None:
    """Of the judged entities of this corpus that are still entities, those with the judged type that
    the judges call useful; and of those judged useful, the share still entities (dropping junk must
    not drop these). The name decides its part."""
    for item in (i for i in judged if i["corpus"] == corpus):
        try:
            found = tables.index_of[vocab.node_of_iri(find_entity(tables, item["name"]))]
        except KGError:
            found = None
        if item["useful"]:
            tally.add("useful judged entities kept", item["name"], found is not None)
        if found is not None:
            kind = tables.t["kinds"][tables.t["kind"][found]]
            right = item["useful"] and _ACTOR.get(kind, kind) == _ACTOR.get(item["type"], item["type"])
            tally.add("judged entities: right type and useful", item["name"], right)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpora", nargs="+", metavar="NAME=GRAPH:JUDGED")
    parser.add_argument("--examples", metavar="FILE", help="write the tuned parts' leaderboard misses, unnamed methods and wrong "
                        "rows to FILE (JSON), to read while tuning; the held-out thirds are never listed")
    args = parser.parse_args()
    tallies = {}
    for spec in args.corpora:
        name, _, rest = spec.partition("=")
        graph, _, judged_path = rest.partition(":")
        judged = {}
        for path in judged_path.split("+"):
            judged.update(json.loads(Path(path).read_text(encoding="utf-8")))
        store, tally = open_graph(graph), Tally()
        tables = functools.cache(lambda graph=graph: whole_tables(graph))  # read once, and only if asked
        if judged.get("keywords"):
            keyword_figures(tables()[1], judged["keywords"], tally)
        if judged.get("broader"):
            broader_figures(store, judged["broader"], name, tally)
        if judged.get("similar"):
            similar_figures(tables(), judged["similar"], name, tally)
        if judged.get("types"):
            type_figures(tables()[1], judged["types"], name, tally)
        if judged.get("related"):
            related_figures(store, graph, judged["related"], tally)
        if judged.get("related_judged", {}).get(name):
            blind_related_figures(store, graph, judged["related_judged"][name], tally)
        if judged.get("synonyms"):
            synonym_figures(store, judged["synonyms"], tally)
        if judged.get("proposals"):
            proposal_figures(store, judged["proposals"], tally)
        if judged.get("results"):
            read = set(judged["results_read"]) if judged.get("results_read") else None
            leaderboard_figures(store, judged["results"], read, tally, tables()[1])
            compare_figures(tables(), judged["results"], read, tally)
        tallies[name] = tally
    if args.examples:
        Path(args.examples).write_text(json.dumps({name: t.examples for name, t in tallies.items()}, indent=1))
    figures = sorted({figure for t in tallies.values() for figure, _ in t.counts})
    columns = [(name, part) for name in tallies for part in PARTS]
    width = max(len(f) for f in figures) + 2
    print(" " * width + "".join(f"{name + ' ' + part:>26}" for name, part in columns))
    for figure in figures:
        print(f"{figure:<{width}}" + "".join(f"{tallies[name].cell(figure, part):>26}" for name, part in columns))
    for name, tally in tallies.items():
        for part, missed in tally.missed.items():
            print(f"\n{name} {part}, shared keywords that are no entity ({len(missed)}): " + "; ".join(missed))


if __name__ == "__main__":
    main()
