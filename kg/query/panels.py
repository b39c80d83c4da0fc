"""Answers read from the panels of a graph: a task's papers side by side (``kg compare``) and a
paper's most similar papers (``kg similar``). They are the views kg serve's pages show
(:meth:`kg.query.views.Tables.view`, of the graph's tables), so a command and a page never disagree.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import KGError
from ..strings import fold, counted
from ..vocab import node_of_iri, paper_node
from .graph_index import read_tables
from .lookup import check_kind, find_entity, kinds_named
from .views import Tables


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
        lines = [f"{view['label']}: {counted(count, 'paper')}"
                 + (f", the first {len(view['comparison']):,} below" if len(view["comparison"]) < count else "")]
        for row in view["comparison"]:
            lines.append(f"\n  {row['title']}" + (f" ({row['year']})" if row["year"] else "") + f"  <{row['paper']}>")
            lines.append(f"    proposes: {names(row['proposes'])}\n    datasets: {names(row['datasets'])}"
                         f"\n    metrics:  {names(row['metrics'])}")
            for r in row["results"]:
                words = [r["text"] + (" gain" if r["kind"] == "gain" else ""), r["metric"],
                         r["setting"] and f"({r['setting']})",
                         r["dataset"] and f"on {r['dataset']}", r["subject"] and f"by {r['subject']}"]
                lines.append("    result:   " + " ".join(w for w in words if w))
        for key, title in (("datasets", "Datasets"), ("methods", "Methods proposed for it")):
            lines.append(f"\n{title}: " + (", ".join(f"{e['label']} ({e['papers']})" for e in view[key]) or "-"))
        return "\n".join(lines)


def compare(graph, task: str) -> Comparison:
    """The comparison of the task named ``task`` (a label or alias) in the graph at ``graph``."""
    tables = read_tables(graph)
    return Comparison(tables.view(node_of_iri(find_entity(tables, task, type="Task"))))


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
    tables = read_tables(graph)
    node = paper_node_named(tables, paper)
    view = tables.view(node)
    return SimilarPapers(node, view["title"], view["similar"])


def paper_node_named(tables: Tables, paper: str) -> str:
    """The node of the paper whose id, node id or title (in any case) is ``paper``."""
    for node in (paper_node(paper), paper):  # the node minted from its id, or its node id
        if tables.index_of.get(node, -1) >= tables.first:
            return node
    wanted = fold(paper)
    found = sorted(node for node, title in zip(tables.ids[tables.first:], tables.t["paper_title"])
                   if title and fold(title) == wanted)
    if not found:
        check_kind(paper, "paper", kinds_named(tables, paper))  # "kg similar GRPO": a method's command is another
        raise KGError(f"No paper has the id or the title {paper!r}.")
    return found[0]
