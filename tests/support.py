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
