"""Helpers shared by the test modules (on the path through pytest's ``pythonpath`` setting)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kg.cli import main
from kg.link.graph import KnowledgeGraph

FIXTURES = Path(__file__).parent / "fixtures"

#: Records every alert/confirm/prompt call before the page's own scripts run.
RECORD_DIALOGS = """
window.__kgDialogs = [];
for (const name of ["alert", "confirm", "prompt"]) {
  const original = window[name];
  window[name] = function (...args) { window.__kgDialogs.push(name + ": " + String(args[0])); return original.apply(this, args); };
}
"""


def build(source: Path, folder: Path) -> Path:
    """Build ``source`` with the real CLI into ``folder``; the graph's path (the -o given)."""
    stem = folder / source.stem
    result = CliRunner().invoke(main, ["build", "-q", str(source), "-o", str(stem)])
    assert result.exit_code == 0, result.output
    return stem


def sleepy_engine():
    """A query-pool engine for tests: it answers ``{"sleep": seconds}`` after sleeping that long,
    standing in for a query of that length."""
    import json
    import time

    def answer(request: dict) -> dict:
        time.sleep(request.get("sleep", 0))
        return {"status": 200, "type": "application/json", "body": json.dumps(request).encode(), "truncated": False}

    return answer


def never_ready_engine():
    """A query-pool engine that never finishes starting."""
    import threading

    threading.Event().wait()


#: In the explorer, each labelled node's label size on screen and its box (dot and label) in page
#: pixels, at the zoom the page opened on (vis-network draws on a canvas: its API is the only ruler).
LABEL_BOXES = """() => {
  const network = kgExplorer.network, scale = network.getScale();
  const canvas = document.getElementById("kg-graph").getBoundingClientRect();
  return kgExplorer.nodes.get().filter((n) => n.label).map((n) => {
    const box = network.getBoundingBox(n.id);
    const low = network.canvasToDOM({ x: box.left, y: box.top }), high = network.canvasToDOM({ x: box.right, y: box.bottom });
    return { id: n.id, label: n.label, px: ((n.font && n.font.size) || 14) * scale,
             box: [low.x, low.y, high.x, high.y], inside: low.x >= 0 && low.y >= 0 && high.x <= canvas.width && high.y <= canvas.height };
  });
}"""


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    """The pairs of labels whose boxes (from ``LABEL_BOXES``) overlap."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            (a0, a1, a2, a3), (b0, b1, b2, b3) = a["box"], b["box"]
            if a0 < b2 and b0 < a2 and a1 < b3 and b1 < a3:
                found.append((a["label"], b["label"]))
    return found


def two_fields(per_field: int = 30) -> KnowledgeGraph:
    """Two fields that share no entity: GAN papers (with CIFAR-10 or MNIST) and RL papers (with Atari or
    MuJoCo), ``per_field`` each."""
    G = KnowledgeGraph()
    fields = {"GAN": ("method", ["CIFAR-10", "MNIST"]), "RL": ("task", ["Atari", "MuJoCo"])}
    for f, (name, (kind, datasets)) in enumerate(fields.items()):
        G.add_node(f"{kind}/{name.lower()}", kind=kind.title(), label=name, aliases=[], papers=per_field, key=name.lower())
        for d in datasets:
            G.add_node(f"dataset/{d.lower()}", kind="Dataset", label=d, aliases=[], papers=per_field // 2, key=d.lower())
        for p in range(per_field):
            paper = f"paper/{f}-{p}"
            G.add_node(paper, kind="Paper", label=f"{name} paper {p}", title=f"{name} paper {p}", abstract="", venue="V",
                       paper_id=f"{f}-{p}")
            G.add_edge(paper, f"{kind}/{name.lower()}", key="uses", role="uses", evidence=[])
            G.add_edge(paper, f"dataset/{datasets[p % 2].lower()}", key="evaluatesOn", role="evaluatesOn", evidence=[])
            # Similar papers as the build finds them (kg.link.similar): the field's others.
            G.nodes[paper]["similar"] = [(f"paper/{f}-{q}", 0.5, 0.0, 1.0, 0.0) for q in range(per_field) if q != p][:10]
    return G


def synthetic_conference(papers: int = 20_000, roots: int = 80) -> KnowledgeGraph:
    """A conference-sized graph: ``roots`` top concepts with long labels, each with six narrower
    concepts, and ``papers`` papers naming two narrower concepts each, one of 40 tasks and one of
    30 datasets; each narrower concept is used for a task and evaluated on a dataset."""
    G = KnowledgeGraph()
    words = ["representation", "learning", "graph", "neural", "adversarial", "reinforcement", "language",
             "generative", "optimization", "robust", "contrastive", "diffusion", "federated", "causal"]
    for r in range(roots):
        label = " ".join(words[(r * k + 3) % len(words)] for k in (1, 2, 5)) + f" models {r}"
        G.add_node(f"method/r{r}", kind="Method", label=label, aliases=[], papers=0, reach=0)
        for c in range(6):
            G.add_node(f"method/r{r}c{c}", kind="Method", label=f"{label} variant {c}", aliases=[], papers=0, reach=0)
            G.add_edge(f"method/r{r}c{c}", f"method/r{r}", key="broader", role="broader", evidence=[], papers=2)
    for t in range(40):
        G.add_node(f"task/t{t}", kind="Task", label=f"{words[t % len(words)]} {words[(3 * t) % len(words)]} task {t}",
                   aliases=[], papers=0, reach=0)
    for d in range(30):
        G.add_node(f"dataset/d{d}", kind="Dataset", label=f"Benchmark-{d}", aliases=[], papers=0, reach=0)
    stated = {"text": "x", "start": 0, "end": 1, "sentence": "x", "sentence_index": 0, "confidence": 1.0,
              "extractor": "synthetic"}  # the one sentence "x" of an abstract
    for p in range(papers):
        G.add_node(f"paper/{p}", kind="Paper", label=f"Paper {p}", title=f"Paper {p}", abstract="x", sentences=[(0, 1)],
                   venue="V")
        named = [(f"method/r{r}c{c}", "uses") for r, c in (((p * 7) % roots, p % 6), ((p * 13 + 1) % roots, (p // 6) % 6))]
        for node, role in named + [(f"task/t{(p * 7) % 40}", "addresses"), (f"dataset/d{(p * 7) % 30}", "evaluatesOn")]:
            # Papers 0..roots-1 state the relations below, in that sentence: kg serve reads a relation by its papers.
            G.add_edge(f"paper/{p}", node, key=role, role=role, evidence=[dict(stated)] if p < roots else [])
            G.nodes[node]["papers"] += 1
    for r in range(roots):
        for c in range(6):
            for relation, other in (("usedFor", f"task/t{(r + 7 * c) % 40}"), ("evaluatedOn", f"dataset/d{(r + 5 * c) % 30}")):
                G.add_edge(f"method/r{r}c{c}", other, key=relation, role=relation, evidence=[{**stated, "paper": str(r)}],
                           papers=1, confidence=1.0)
    for p in range(papers):  # similar papers as the build finds them: those naming the same concepts first
        G.nodes[f"paper/{p}"]["similar"] = [(f"paper/{q}", 0.5, 0.0, 1.0, 0.0) for j in range(1, 6)
                                            for q in (p - roots * j, p + roots * j) if 0 <= q < papers]
    for node, data in G.nodes(data=True):
        if data["kind"] == "Paper":
            data["paper_id"] = node.split("/")[1]
        else:
            data["key"] = node.split("/")[1]
            data["reach"] = data["papers"] or sum(G.nodes[s]["papers"] for s, _, k in G.in_edges(node, keys=True) if k == "broader")
    return G


#: Each view the legibility rule holds on, as the page is asked to draw it.
VIEWS = {"map": "() => kgExplorer.showOverview()", "topic": "() => kgExplorer.openTopic('topic/1')",
         "task": "() => kgExplorer.focus('task/t3', 1)", "dataset": "() => kgExplorer.focus('dataset/d4', 1)",
         "paper": "() => kgExplorer.focus('paper/17', 1)", "method": "() => kgExplorer.focus('method/r3c1', 1)"}


def illegible(page) -> list:
    """What breaks the explorer's rule for what it draws now: labels under 11 px high, outside the
    canvas or over another label (each as its label), and the legend over the canvas."""
    boxes = page.evaluate(LABEL_BOXES)
    problems = [("small", box["label"], round(box["px"], 1)) for box in boxes if box["px"] < 11]
    problems += [("outside", box["label"]) for box in boxes if not box["inside"]]
    problems += [("overlap", *pair) for pair in overlapping(boxes)]
    legend, canvas = (page.eval_on_selector(selector, "e => e.getBoundingClientRect().toJSON()")
                      for selector in ("#kg-legend", "#kg-graph"))
    if legend["height"] and legend["top"] < canvas["bottom"] - 1:
        problems.append(("legend over the canvas",))
    if len(boxes) < 3:
        problems.append(("fewer than 3 labels", len(boxes)))
    return problems
