"""Answers read from the panels of a graph read back whole: a task's papers side by side
(``kg compare``) and a paper's most similar papers (``kg similar``). They are the views kg serve's
pages show (:class:`kg.query.views.Tables`), so a command and a page never disagree.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import KGError
from ..store import open_graph
from ..strings import fold
from ..vocab import node_of_iri, paper_node
from .graph_index import load_index
from .lookup import find_entity
from .tables import graph_tables
from .views import Tables


def whole_tables(graph):
    """The graph at ``graph`` read back whole, and its tables made readable: what kg serve's pages
    read (:func:`kg.serve.pages.view_tables`)."""
    G = load_index(open_graph(graph), texts=True).graph
    return G, Tables(graph_tables(G))


@dataclass
class Comparison:
    """A task's panel: its papers side by side, its datasets and the methods proposed for it."""

    view: dict

    def as_json(self) -> dict:
        return self.view

    def as_text(self) -> str:
        view = self.view
        names = lambda entries: ", ".join(e["label"] for e in entries) or "-"  # noqa: E731
        count = view["paper_count"]
        lines = [f"{view['label']}: {count} paper{'s' * (count != 1)}"
                 + (f", the first {len(view['comparison'])} below" if len(view["comparison"]) < count else "")]
        for row in view["comparison"]:
            lines.append(f"\n  {row['title']}" + (f" ({row['year']})" if row["year"] else "") + f"  <{row['paper']}>")
            lines.append(f"    proposes: {names(row['proposes'])}\n    datasets: {names(row['datasets'])}"
                         f"\n    metrics:  {names(row['metrics'])}")
            for r in row["results"]:
                words = [r["text"] + (" gain" if r["kind"] == "gain" else ""), r["metric"],
                         r["dataset"] and f"on {r['dataset']}", r["subject"] and f"by {r['subject']}"]
                lines.append("    result:   " + " ".join(w for w in words if w))
        for key, title in (("datasets", "Datasets"), ("methods", "Methods proposed for it")):
            lines.append(f"\n{title}: " + (", ".join(f"{e['label']} ({e['papers']})" for e in view[key]) or "-"))
        return "\n".join(lines)


def compare(graph, task: str) -> Comparison:
    """The comparison of the task named ``task`` (a label or alias) in the graph at ``graph``."""
    iri = find_entity(open_graph(graph), task, type="Task")
    return Comparison(whole_tables(graph)[1].view(node_of_iri(iri)))


@dataclass
class SimilarPapers:
    """A paper and the papers most similar to it, each with its scores and the entities both name."""

    paper: str  # node id
    title: str
    similar: list[dict]

    def as_json(self) -> dict:
        return {"paper": self.paper, "title": self.title, "similar": self.similar}

    def as_text(self) -> str:
        lines = [f"Papers similar to {self.title}  <{self.paper}>:"]
        if not self.similar:
            lines.append("  (none: it shares no word, entity or meaning with another paper)")
        for rank, item in enumerate(self.similar, 1):
            lines.append(f"  {rank:2}. {item['title']}  <{item['id']}>")
            shared = ", ".join(e["label"] for e in item["shared"])
            lines.append(f"      score {item['score']:.2f}: words {item['words']:.2f}, entities {item['entities']:.2f}, "
                         f"meaning {item['meaning']:.2f}" + (f"; both name {shared}" if shared else ""))
        return "\n".join(lines)


def similar(graph, paper: str) -> SimilarPapers:
    """The papers most similar to ``paper`` (its id, node id or title, in any case) in the graph at ``graph``."""
    G, tables = whole_tables(graph)
    node = _paper_node(G, paper)
    view = tables.view(node)
    return SimilarPapers(node, view["title"], view["similar"])


def _paper_node(G, paper: str) -> str:
    """The node of the paper whose id, node id or title (in any case) is ``paper``."""
    for node in (paper, paper_node(paper)):
        if node in G and G.nodes[node].get("kind") == "Paper":
            return node
    wanted = fold(paper)
    found = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == "Paper" and fold(str(d.get("title") or "")) == wanted)
    if not found:
        raise KGError(f"No paper has the id or the title {paper!r}.")
    return found[0]
