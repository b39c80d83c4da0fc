"""Helpers shared by the test modules (on the path through pytest's ``pythonpath`` setting)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kg.cli import main

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
