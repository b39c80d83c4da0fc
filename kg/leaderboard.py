"""Leaderboard: the results papers report on one dataset, best first where the metric says which way is better.

Reads the ``kg:Result`` nodes of a built graph (see :mod:`kg.extract.results`):
each value with its unit, metric, the method or model that reached it, the
paper and the sentence it was read from. Results are grouped by metric;
within a metric whose direction is known ("error" lower, "accuracy" higher)
the best comes first, otherwise the order is the papers'. Gains ("improves
by 12%") follow the scores: they are differences, not comparable values.

A result whose metric the sentence does not name is left off: a leaderboard
promises that its rows can be compared, and "2.89%" of no known metric may be
an error, an accuracy or a share of parameters. Such results stay in the
graph (``kg:Result`` without ``kg:ofMetric``) for queries and the explorer.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from .lexicon import lower_is_better
from .lookup import find_entity, labels_of
from .queries import view, with_values
from .store import PREFIXES

@dataclass
class Entry:
    """One reported result on the dataset."""

    value: float
    unit: str
    previous: float | None
    kind: str  # "score" or "gain"
    metric: str
    subject: str
    paper: str  # IRI
    paper_label: str
    sentence: str
    start: int  # offsets of the value in the paper's abstract
    end: int
    confidence: float
    lower_is_better: bool | None

    def shown(self) -> str:
        """The value as a reader writes it: "80.2%", "57.5% -> 64.0%", "+12%", "1.37"."""
        unit = {"": "", "%": "%", "points": " points", "x": "x"}.get(self.unit, f" {self.unit}")
        value = f"{self.value:g}{unit}"
        if self.previous is not None:
            return f"{self.previous:g}{unit} -> {value}"
        return f"+{value}" if self.kind == "gain" and self.unit != "x" else value


def leaderboard(store: ox.Store, dataset: str) -> tuple[str, list[Entry], list[Entry]]:
    """The label of the dataset named ``dataset``, the results reported on it in leaderboard order,
    and those left unranked because their sentence names no metric.

    Raises ``KGError`` when no dataset has that name (with close names to try).
    """
    iri = find_entity(store, dataset, type="Dataset")
    rows = list(store.query(with_values(view("leaderboard"), "dataset", ox.NamedNode(iri)), prefixes=PREFIXES))
    labels = labels_of(store, [iri] + [row[part].value for row in rows for part in ("metric", "subject") if row[part]])
    entries = []
    for row in rows:
        metric = labels.get(row["metric"].value, "") if row["metric"] else ""
        entries.append(Entry(
            value=float(row["value"].value), unit=row["unit"].value if row["unit"] else "",
            previous=float(row["previous"].value) if row["previous"] else None, kind=row["kind"].value,
            metric=metric, subject=labels.get(row["subject"].value, "") if row["subject"] else "",
            paper=row["paper"].value, paper_label=row["paperLabel"].value, sentence=row["sentence"].value,
            start=int(row["start"].value), end=int(row["end"].value), confidence=float(row["confidence"].value),
            lower_is_better=lower_is_better(metric) if metric else None))
    return labels[iri], rank(entries), [e for e in entries if not e.metric]


def rank(entries: list[Entry]) -> list[Entry]:
    """Scores grouped by metric (most results first), best first where the direction is known; then gains.
    Results of no named metric are left off (see the module's doc).

    >>> e = lambda v, m: Entry(v, "%", None, "score", m, "", "p", "p", "", 0, 1, 0.8, m == "error")
    >>> [x.value for x in rank([e(3.0, "error"), e(80.2, "success rate"), e(2.0, "error"), e(0.1, "")])]
    [2.0, 3.0, 80.2]
    """
    entries = [e for e in entries if e.metric]
    scores = [e for e in entries if e.kind == "score"]
    by_metric: dict[str, list[Entry]] = {}
    for entry in sorted(scores, key=lambda e: (e.paper_label, e.start)):
        by_metric.setdefault(entry.metric.casefold(), []).append(entry)
    ranked = []
    for group in sorted(by_metric.values(), key=lambda g: (-len(g), g[0].metric.casefold())):
        direction = group[0].lower_is_better
        if direction is not None:
            group = sorted(group, key=lambda e: e.value if direction else -e.value)
        ranked += group
    return ranked + sorted((e for e in entries if e.kind != "score"), key=lambda e: (e.paper_label, e.start))

