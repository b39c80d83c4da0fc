"""Are the graph's answers ones a researcher would defend? Figures on a built graph of the ICLR 2017/18
OpenReview corpus, scored against hand judgments made by reading its abstracts.

    kg build ICLR17_submissions.csv ICLR18_submissions.csv -o /tmp/iclr
    python bench/answers.py /tmp/iclr [--judged bench/concepts_dev.json]

Prints, each as one figure:

- proposes: the share of papers with no proposes/introduces edge; on the judged papers, the
  recall of their named proposals (a proposes/introduces edge to an entity one of whose names is
  the judged name) and the precision of the edges (edges to a judged name, over all edges of
  papers with a named proposal);
- checks the corpus makes easy to read: what the zoneout paper does with zoneout, how many papers
  "propose" GAN, LSTM or dropout, whether "accuracy" is an entity;
- leaderboards: per judged dataset, the recall of the judged scores (same paper, same value) and
  the precision of what `kg leaderboard DATASET --metric M` ranks over all its metrics M, with the
  metric it ranks by default;
- merges: of the judged synonym pairs, the share resolved to one entity; of the near-names, the
  number wrongly joined;
- related: the share of each judged method's top 5 related methods that the judgments name as
  related (a lenient figure: a hub or an echo the judgments happen to list counts as related);
- graph shape: the share of entities that one paper only mentions.

Names match through kg's resolution key, as `kg related NAME` finds an entity.
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from kg.keys import resolution_key
from kg.query.leaderboard import leaderboard
from kg.query.graph_index import read_tables
from kg.store import open_graph, run_query

JUDGED = Path(__file__).with_name("concepts_dev.json")
PREFIXES = """PREFIX kg: <https://w3id.org/kg/ontology#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
"""


def rows(store, query: str) -> list[list[str]]:
    return [[getattr(term, "value", None) if term is not None else None for term in row]
            for row in run_query(store, PREFIXES + query)]


def share(part: int, whole: int) -> str:
    return f"{part / whole:.3f} ({part}/{whole})" if whole else "n/a (0)"


def names_of(store) -> dict[str, set[str]]:
    """Every entity's resolution keys: its label's and its aliases'."""
    found = defaultdict(set)
    for iri, name in rows(store, """SELECT ?e ?n WHERE { { ?e skos:prefLabel ?n } UNION { ?e skos:altLabel ?n } }"""):
        found[iri].add(resolution_key(name))
    return found


def proposals(store) -> dict[str, set[str]]:
    """Paper id -> the IRIs it proposes or introduces."""
    found = defaultdict(set)
    for paper, entity in rows(store, """SELECT ?id ?e WHERE { ?p a kg:Paper ; dcterms:identifier ?id .
                                        ?p kg:proposes|kg:introduces ?e }"""):
        found[paper].add(entity)
    return found


def graph_figures(store) -> None:
    papers = [r[0] for r in rows(store, "SELECT ?id WHERE { ?p a kg:Paper ; dcterms:identifier ?id }")]
    proposed = proposals(store)
    print(f"papers with no proposes/introduces edge: {share(sum(1 for p in papers if not proposed[p]), len(papers))}")
    counts = [int(r[0]) for r in rows(store, """SELECT ?n WHERE { ?e a ?type ; kg:paperCount ?n .
                                          VALUES ?type { kg:Method kg:Model kg:Task kg:Dataset kg:Metric } }""")]
    print(f"entities one paper only mentions: {share(sum(1 for n in counts if n == 1), len(counts))}")
    names = names_of(store)
    for name in ("GAN", "LSTM", "dropout"):
        keys = {resolution_key(name)}
        iris = {iri for iri, k in names.items() if k & keys}
        print(f"papers proposing {name}: {sum(1 for p in papers if proposed[p] & iris)}")
    zoneout = rows(store, """SELECT ?role ?label WHERE { ?p a kg:Paper ; dcterms:title ?t . FILTER(CONTAINS(LCASE(?t), "zoneout"))
                            ?p ?role ?e . ?e skos:prefLabel ?label . FILTER(CONTAINS(LCASE(?label), "zoneout")) }""")
    print(f"the zoneout paper: {sorted({(r[0].rsplit('#', 1)[-1], r[1]) for r in zoneout}) or 'no zoneout entity'}")
    accuracy = rows(store, """SELECT ?label ?n WHERE { ?e a kg:Metric ; skos:prefLabel ?label ; kg:paperCount ?n .
                             FILTER(LCASE(?label) = "accuracy") }""")
    print(f"'accuracy' as a Metric: {accuracy[0][1] + ' papers' if accuracy else 'no such entity'}")


def proposal_figures(store, judged: list[dict]) -> None:
    names = names_of(store)
    proposed = proposals(store)
    named = [p for p in judged if p["proposed"]]
    found = edges = right = 0
    for paper in named:
        gold = {resolution_key(n) for n in paper["proposed"]}
        hits = [iri for iri in proposed[paper["id"]] if names[iri] & gold]
        found += bool(hits)
        edges += len(proposed[paper["id"]])
        right += len(hits)
    print(f"proposes recall on {len(named)} judged papers with a named proposal: {share(found, len(named))}")
    print(f"proposes precision (edges to the judged name): {share(right, edges)}")
    unnamed = [p for p in judged if not p["proposed"] and p.get("unnamed")]
    print(f"papers with an unnamed proposal that have some proposes edge: "
          f"{share(sum(1 for p in unnamed if proposed[p['id']]), len(unnamed))}")
    nothing = [p for p in judged if not p["proposed"] and not p.get("unnamed")]
    print(f"papers proposing nothing that have a proposes edge (lower is better): "
          f"{share(sum(1 for p in nothing if proposed[p['id']]), len(nothing))}")


def _number(text: str) -> float | None:
    match = re.search(r"\d+(?:\.\d+)?", text.replace(",", ""))
    return float(match.group()) if match else None


def leaderboard_figures(store, judged: list[dict], tables) -> None:
    ids = dict(rows(store, "SELECT ?p ?id WHERE { ?p a kg:Paper ; dcterms:identifier ?id }"))
    gold = defaultdict(set)
    for result in judged:
        if result.get("kind") == "score" and not result.get("variant"):
            gold[result["dataset"]].add((result["paper"], _number(result["value"])))
    for dataset, expected in sorted(gold.items()):
        try:
            first = leaderboard(tables, dataset)
        except Exception as error:  # noqa: BLE001 - a dataset the graph lacks scores nothing
            print(f"leaderboard {dataset}: {error}")
            continue
        # Every metric's board: a judged score counts as found when the board of its metric ranks it.
        boards = [first] + [leaderboard(tables, dataset, metric) for metric in first.other_metrics]
        scores = [e for b in boards for e in b.ranked]
        ranked = {(ids.get(e.paper), round(e.value, 4)) for e in scores}
        expected = {(p, round(v, 4)) for p, v in expected if v is not None}
        metrics = Counter(e.metric for e in scores)
        print(f"leaderboard {dataset}: recall {share(len(ranked & expected), len(expected))}, "
              f"precision {share(len(ranked & expected), len(ranked))}; ranked by {first.metric!r} "
              f"({len(first.ranked)}), all metrics {dict(metrics.most_common(4))}; left out: "
              f"{len(first.gains)} gains, {len(first.unnamed)} of no metric")


def named_in_paper(store):
    """A function of (paper id, name): the entities that paper links that go by that name, so that a
    pair of names is read in its papers and two senses of one spelling ("precision") stay apart."""
    names = names_of(store)
    in_paper = defaultdict(set)
    for paper, entity in rows(store, """SELECT ?id ?e WHERE { ?p a kg:Paper ; dcterms:identifier ?id ; ?role ?e .
                                        ?e skos:prefLabel ?l }"""):
        in_paper[paper].add(entity)
    return lambda paper, name: {iri for iri in in_paper[paper] if resolution_key(name) in names[iri]}


def merge_figures(store, judged: dict) -> None:
    """A judged pair is joined when the entity paper a names with ``a`` is the one paper b names with
    ``b``: by paper, so that two senses of one spelling ("precision") are told apart too."""
    entities = named_in_paper(store)

    def joined(pair: dict) -> bool:
        return bool(entities(pair["a_paper"], pair["a"]) & entities(pair["b_paper"], pair["b"]))

    join, apart = judged.get("join", []), judged.get("apart", [])
    found = sum(1 for p in join if entities(p["a_paper"], p["a"]) and entities(p["b_paper"], p["b"]))
    print(f"synonym pairs joined: {share(sum(map(joined, join)), len(join))} (both names found in {found})")
    missed = [f"{p['a']} / {p['b']}" for p in join if not joined(p)]
    print(f"  not joined: {missed}")
    wrong = [f"{p['a']} = {p['b']}" for p in apart if joined(p)]
    print(f"near-names wrongly joined: {len(wrong)} of {len(apart)} {wrong}")


def related_figures(store, graph: str, judged: list[dict]) -> None:
    """The share of the top 5 related methods that the judgments list as related to the query."""
    from kg.query.related import RelatedIndex
    from kg.similarity import graph_vectors

    index, vectors = RelatedIndex(read_tables(graph)), graph_vectors(graph)
    hits = shown = 0
    for item in judged:
        relevant = {resolution_key(name) for name in item["relevant"]}
        try:
            _, found = index.related(item["query"], k=5, vectors=vectors)
        except Exception:  # noqa: BLE001 - a query the graph lacks
            continue
        good = [r.label for r in found if resolution_key(r.label) in relevant]
        hits, shown = hits + len(good), shown + len(found)
        print(f"  related {item['query']}: {len(good)}/{len(found)} {[r.label for r in found]}")
    print(f"related top 5 listed as related by the judgments: {share(hits, shown)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graph", help="a graph built by kg build (its -o path)")
    parser.add_argument("--judged", default=str(JUDGED), help="the judgments (default: bench/concepts_dev.json)")
    args = parser.parse_args()
    store = open_graph(args.graph)
    graph_figures(store)
    judged = json.loads(Path(args.judged).read_text(encoding="utf-8")) if Path(args.judged).exists() else {}
    if "proposals" in judged:
        proposal_figures(store, judged["proposals"])
    if "results" in judged:
        leaderboard_figures(store, judged["results"], read_tables(args.graph))
    if "synonyms" in judged:
        merge_figures(store, judged["synonyms"])
    if "related" in judged:
        related_figures(store, args.graph, judged["related"])


if __name__ == "__main__":
    main()
