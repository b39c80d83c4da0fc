"""Shared concepts: does the graph join the papers that mention the same concept?

Reads a built graph and the hand-judged development set bench/concepts_dev.json
(concepts shared by two or more ICLR 2017/18 OpenReview papers, and related-method
queries) and prints

  1. shared concepts joined: the share of dev concepts for which one graph entity,
     named (prefLabel, altLabel or rdfs:label, case-insensitive) by one of the
     concept's forms or its name, is linked to ALL of the concept's papers by any
     role; then the same share when an entity also reaches the papers of the
     entities narrower than it (skos:broader*, kg:hyponymOf, kg:variantOf, followed
     transitively); and the misses, with the entities each paper has whose name
     contains one of the forms;
  2. related methods: precision@5 and recall@10 of kg.query.related.related(store, query,
     k=10, vectors=the graph's vectors; --no-similarity: none) against each query's "relevant" names (a result counts when its label or
     one of its aliases equals a relevant name, case-insensitive), mean and per
     query. "relevant" may hold synonyms (WGAN, Wasserstein GAN) and names absent
     from the corpus, so recall@10 is a lower bound;
  3. graph shape: nodes (papers and entities) per paper, entities per paper, and the
     share of linked entities seen in one paper only.

    python bench/concept_eval.py -g /tmp/cmpB2/g [--dev bench/concepts_dev.json] [--misses 20]
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from kg import vocab
from kg.errors import KGError
from kg.query.graph_index import read_tables
from kg.query.related import related
from kg.similarity import graph_vectors
from kg.store import open_graph, run_query

DEV = Path(__file__).resolve().parent / "concepts_dev.json"
KG = "https://w3id.org/kg/ontology#"
PAPER = "https://w3id.org/kg/id/paper/"
TYPES = vocab.ENTITY_TYPES
NARROWER_THAN = ("http://www.w3.org/2004/02/skos/core#broader", KG + "hyponymOf", KG + "variantOf")


class Graph:
    """What the benchmark needs from a graph: names, paper links and the narrower-than edges."""

    def __init__(self, store, tables):
        self.store, self.tables = store, tables
        self.names: dict[str, set[str]] = defaultdict(set)     # entity -> casefolded names
        self.label: dict[str, str] = {}                         # entity -> prefLabel
        self.by_name: dict[str, set[str]] = defaultdict(set)    # casefolded name -> entities
        self.papers_of: dict[str, set[str]] = defaultdict(set)  # entity -> paper PIDs
        self.entities_of: dict[str, set[str]] = defaultdict(set)  # PID -> entities
        self.narrower: dict[str, set[str]] = defaultdict(set)   # entity -> entities directly narrower
        self.n_papers = 0
        self._read()

    def _rows(self, query: str):
        return run_query(self.store, query)

    def _read(self) -> None:
        types = " ".join(f"<{KG}{t}>" for t in TYPES)
        for row in self._rows(f"""
            PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
            PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
            SELECT ?e ?name ?pref WHERE {{
              VALUES ?type {{ {types} }} ?e a ?type ; skos:prefLabel ?pref .
              {{ ?e skos:prefLabel ?name }} UNION {{ ?e skos:altLabel ?name }} UNION {{ ?e rdfs:label ?name }}
            }}"""):
            entity, name = row["e"].value, row["name"].value.casefold()
            self.label[entity] = row["pref"].value
            self.names[entity].add(name)
            self.by_name[name].add(entity)
        roles = " ".join(f"<{KG}{r}>" for r in vocab.ROLES)
        for row in self._rows(f"SELECT ?p ?e WHERE {{ VALUES ?role {{ {roles} }} ?p ?role ?e }}"):
            pid = row["p"].value.removeprefix(PAPER)
            self.papers_of[row["e"].value].add(pid)
            self.entities_of[pid].add(row["e"].value)
        for prop in NARROWER_THAN:
            for row in self._rows(f"SELECT ?n ?b WHERE {{ ?n <{prop}> ?b }}"):
                self.narrower[row["b"].value].add(row["n"].value)
        self.n_papers = int(next(iter(self._rows(
            "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }")))["n"].value)

    def named(self, names: list[str]) -> set[str]:
        """Entities one of whose names equals one of ``names``, case-insensitive."""
        return {e for n in names for e in self.by_name.get(n.casefold(), ())}

    def reached(self, entity: str) -> set[str]:
        """Papers of ``entity`` and of every entity narrower than it, transitively."""
        seen, todo, papers = {entity}, [entity], set()
        while todo:
            current = todo.pop()
            papers |= self.papers_of.get(current, set())
            for child in self.narrower.get(current, ()):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        return papers


def concept_names(concept: dict) -> list[str]:
    return [concept["concept"], *concept["forms"]]


def joined(graph: Graph, concept: dict, *, hierarchy: bool) -> str | None:
    """The label of an entity linked to all the concept's papers (directly, or through narrower ones), else None."""
    wanted = set(concept["papers"])
    for entity in sorted(graph.named(concept_names(concept)), key=lambda e: graph.label.get(e, e)):
        papers = graph.reached(entity) if hierarchy else graph.papers_of.get(entity, set())
        if wanted <= papers:
            return graph.label[entity]
    return None


def paper_entities(graph: Graph, concept: dict, pid: str) -> list[str]:
    """Labels of the paper's entities with a name containing one of the concept's forms (or equal to it)."""
    forms = {f.casefold() for f in concept_names(concept)}
    return sorted(graph.label.get(e, e) for e in graph.entities_of.get(pid, ())
                  if any(f in name for f in forms for name in graph.names.get(e, ())))


def report_concepts(graph: Graph, concepts: list[dict], max_misses: int) -> None:
    flat = {c["concept"]: joined(graph, c, hierarchy=False) for c in concepts}
    deep = {c["concept"]: joined(graph, c, hierarchy=True) for c in concepts}
    n = len(concepts)
    print(f"== shared concepts joined ({n} concepts, {sum(len(c['papers']) for c in concepts)} concept-paper pairs)")
    print(f"one entity linked to all papers:               {sum(map(bool, flat.values()))}/{n} = {sum(map(bool, flat.values())) / n:.2f}")
    print(f"... or through narrower entities (broader*):   {sum(map(bool, deep.values()))}/{n} = {sum(map(bool, deep.values())) / n:.2f}")
    named = sum(1 for c in concepts if graph.named(concept_names(c)))
    print(f"concepts with an entity named by a form:       {named}/{n} = {named / n:.2f}")
    by_type = defaultdict(lambda: [0, 0])
    for c in concepts:
        by_type[c["type"]][0] += bool(flat[c["concept"]])
        by_type[c["type"]][1] += 1
    print("joined by type: " + ", ".join(f"{t} {j}/{k}" for t, (j, k) in sorted(by_type.items())))
    misses = [c for c in concepts if not deep[c["concept"]]]
    print(f"-- misses (not joined even through narrower entities), first {max_misses} of {len(misses)}:")
    for c in misses[:max_misses]:
        candidates = sorted(graph.label[e] for e in graph.named(concept_names(c)))
        print(f"  {c['concept']} [{c['type']}] named entities: {', '.join(candidates) or '-'}")
        for pid in c["papers"]:
            print(f"    {pid}: {'; '.join(paper_entities(graph, c, pid)) or '-'}")


def result_names(graph: Graph, label: str) -> set[str]:
    """A result's label and aliases, casefolded."""
    names = {label.casefold()}
    for entity in graph.by_name.get(label.casefold(), ()):
        names |= graph.names[entity]
    return names


def report_related(graph: Graph, queries: list[dict], vectors=None) -> None:
    print(f"\n== related methods ({len(queries)} queries; kg.query.related.related, k=10)")
    print(f"{'query':<24}{'P@5':>6}{'R@10':>6}  top 5")
    p5_sum = r10_sum = 0.0
    for q in queries:
        relevant = {name.casefold() for name in q["relevant"]}
        try:
            label, ranked = related(graph.tables, q["query"], k=10, vectors=vectors)
        except KGError:
            label, ranked = "(not in graph)", []
        names = [result_names(graph, r.label) for r in ranked]
        p5 = sum(1 for n in names[:5] if n & relevant) / 5
        found = {name for n in names[:10] for name in n & relevant}
        r10 = len(found) / len(relevant)
        p5_sum, r10_sum = p5_sum + p5, r10_sum + r10
        top = ", ".join(r.label for r in ranked[:5]) or "-"
        print(f"{q['query'][:23]:<24}{p5:>6.2f}{r10:>6.2f}  [{label}] {top}")
    print(f"{'mean':<24}{p5_sum / len(queries):>6.2f}{r10_sum / len(queries):>6.2f}")


def report_shape(graph: Graph) -> None:
    linked = [e for e, papers in graph.papers_of.items() if papers]
    single = sum(1 for e in linked if len(graph.papers_of[e]) == 1)
    papers = graph.n_papers or 1
    print(f"\n== graph shape ({graph.n_papers} papers, {len(graph.label)} entities, {len(linked)} linked to a paper)")
    print(f"nodes (papers + entities) per paper: {(graph.n_papers + len(graph.label)) / papers:.2f}")
    print(f"entities per paper:                  {len(graph.label) / papers:.2f}")
    print(f"entity links per paper:              {sum(len(p) for p in graph.papers_of.values()) / papers:.2f}")
    print(f"linked entities in one paper only:   {single}/{len(linked)} = {single / max(len(linked), 1):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-g", "--graph", required=True, help="a built graph (the path given to kg build -o)")
    parser.add_argument("--dev", default=str(DEV), help="the development set (default: bench/concepts_dev.json)")
    parser.add_argument("--misses", type=int, default=20, help="how many missed concepts to list")
    parser.add_argument("--no-similarity", action="store_true", help="rank related methods without the graph's vectors")
    args = parser.parse_args()
    dev = json.loads(Path(args.dev).read_text(encoding="utf-8"))
    graph = Graph(open_graph(args.graph), read_tables(args.graph))
    report_concepts(graph, dev["concepts"], args.misses)
    report_related(graph, dev["related"], None if args.no_similarity else graph_vectors(args.graph))
    report_shape(graph)


if __name__ == "__main__":
    main()
