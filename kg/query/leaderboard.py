"""Leaderboard: the results papers report on one dataset, best first where the metric says which way is better.

Reads the results of a built graph (see :mod:`kg.extract.results`) from its tables, as every
answer does: each value with its unit, metric, the method or model that reached it, the
paper and the sentence it was read from. A leaderboard ranks one canonical
metric at a time (the names of one metric are one entity: "test error rate"
and "top-1 error" are error, see ``kg.lexicon.METRIC_VARIANTS``), by default
the one with the most scores; within it, where the direction is known
("error" lower, "accuracy" higher), the best comes first, otherwise the order
is the papers'. A board holds one setting: the scores reached the standard
way, or those of one setting apart ("zero-shot", "adversarial", "few labels":
:mod:`kg.extract.settings`), never both. What it leaves out it counts, by
reason: scores under other metrics or settings, gains ("improves by 12%":
differences, not comparable values), and values of no named metric.

A result whose metric the sentence does not name is left off: a leaderboard
promises that its rows can be compared, and "2.89%" of no known metric may be
an error, an accuracy or a share of parameters. Such results stay in the
graph (``kg:Result`` without ``kg:ofMetric``) for queries and the explorer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import KGError
from ..lexicon import lower_is_better
from ..strings import counted
from ..vocab import ACTOR_TYPES, node_of_iri
from .lookup import find_entity
from .views import PROPOSING, Tables

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
    setting: str = ""  # "" for a score reached the standard way, else what sets it apart ("zero-shot")
    #: Where ``subject`` comes from: "sentence" (the sentence names it), "proposal" (the sentence names
    #: none and its paper proposes this one method or model), or "" (none: ``unnamed_because`` says why).
    subject_from: str = ""
    unnamed_because: str = ""

    def reached_by(self) -> str:
        """Who reached the value, as a reader is told: the method or model, marked when it is the
        paper's proposal rather than a name in the sentence, or why none can be named."""
        if self.subject_from == "proposal":
            return f"{self.subject} (its paper's proposal; the sentence names none)"
        return self.subject or f"(not named: {self.unnamed_because or 'the sentence names no method'})"

    def shown(self) -> str:
        """The value as a reader writes it: "80.2%", "57.5% -> 64.0%", "+12%", "1.37"."""
        unit = {"": "", "%": "%", "points": " points", "x": "x"}.get(self.unit, f" {self.unit}")
        value = f"{self.value:g}{unit}"
        if self.previous is not None:
            return f"{self.previous:g}{unit} -> {value}"
        return f"+{value}" if self.kind == "gain" and self.unit != "x" else value


@dataclass
class Board:
    """A dataset's leaderboard: the scores of one metric, best first, and what it left out and why."""

    dataset: str
    metric: str  # "" when no result on the dataset names a metric
    lower_is_better: bool | None
    ranked: list[Entry]
    other_metrics: dict[str, int]  # metric -> how many scores under it; each is a leaderboard of its own
    gains: list[Entry]  # differences ("by 0.3%"), not scores
    unnamed: list[Entry]  # values whose sentence names no metric
    setting: str = ""  # the setting of every ranked score ("" for the standard one)
    other_settings: dict[str, int] = field(default_factory=dict)  # setting -> scores of the metric under it

    def as_json(self) -> dict:
        return {"dataset": self.dataset, "metric": self.metric, "setting": self.setting,
                "lower_is_better": self.lower_is_better, "results": [e.__dict__ for e in self.ranked],
                "other_metrics": self.other_metrics, "other_settings": self.other_settings,
                "gains": [e.__dict__ for e in self.gains], "unranked": [e.__dict__ for e in self.unnamed]}

    def as_text(self) -> str:
        """What ``kg leaderboard`` prints: the ranked scores, each with its sentence, then what was left out."""
        lines = [f"Results on {self.dataset}" + (f", by {self.metric}" if self.metric else "")
                 + (f", {self.setting}" if self.setting else "") + ":"]
        if not self.ranked:
            lines.append("  (no paper in this graph reports a result on it with a named metric)")
        else:
            direction = {True: "lower is better", False: "higher is better"}.get(self.lower_is_better,
                                                                                "direction unknown: papers' order")
            lines.append(f"  ({direction})\n")
        for rank, e in enumerate(self.ranked, 1):
            lines.append(f"  {rank:3}. {e.shown():>16}  {e.reached_by()}  [{e.paper_label}]")
            lines.append(f"       \"{' '.join(e.sentence.split())}\"  [{e.start}:{e.end}]")
        left = []
        if self.other_metrics:
            left.append(f"{counted(sum(self.other_metrics.values()), 'score')} under other metrics: "
                        + ", ".join(f"{m} {n:,}" for m, n in self.other_metrics.items()) + " (rank them with --metric)")
        if self.other_settings:
            left.append(f"{counted(sum(self.other_settings.values()), 'score')} of {self.metric} in other settings: "
                        + ", ".join(f"{s or 'standard'} {n:,}" for s, n in self.other_settings.items())
                        + " (rank them with --setting)")
        if self.gains:
            left.append(f"{counted(len(self.gains), 'gain')}: differences, not scores")
        if self.unnamed:
            left.append(f"{counted(len(self.unnamed), 'result')} whose sentence names no metric")
        if left:
            lines.append("\n  Left out: " + "; ".join(left) + ". --format json lists them.")
        return "\n".join(lines)


def leaderboard(tables: Tables, dataset: str, metric: str | None = None, setting: str | None = None) -> Board:
    """The leaderboard of the dataset named ``dataset`` (a label or alias) under ``metric``, by
    default the metric with the most scores on it, in ``setting`` (see :func:`board`), read from the
    graph's ``tables`` (:func:`kg.query.graph_index.read_tables`).

    Raises ``KGError`` when no dataset has that name (with close names to try), or when no score
    on it is of ``metric`` (naming those there are).
    """
    i = tables.index_of[node_of_iri(find_entity(tables, dataset, type="Dataset"))]
    return board(tables.t["label"][i], entries_on(tables, i), metric, setting)


def entries_on(tables: Tables, i: int) -> list[Entry]:
    """Every result reported on the dataset ``i`` of ``tables``. Where the sentence names no method, the
    paper's one proposed method or model reached it, if it proposes exactly one."""
    t, first = tables.t, tables.first
    entries = []
    for row in tables.results_of[i]:
        paper, _, kind, metric, dataset, subject, start, value, unit, previous, setting, length, confidence = t["results"][row]
        if dataset != i:
            continue
        named = t["label"][metric] if metric >= 0 else ""
        who, source, because = (t["label"][subject], "sentence", "") if subject >= 0 else ("", "", "")
        if subject < 0:
            own = _proposals(tables, paper)
            if len(own) == 1:  # "our method achieves ...", "it reaches ...": the paper's one proposal
                who, source = own[0], "proposal"
            else:
                because = ("the sentence names no method, and the paper proposes several" if own else
                           "the sentence names no method, and the paper proposes none by name")
        found = tables.evidence_at(paper - first, start, length)
        entries.append(Entry(
            value=float(value), unit=unit, previous=float(previous) if previous is not None else None, kind=kind,
            metric=named, subject=who, subject_from=source, unnamed_because=because,
            paper=t["base"] + tables.ids[paper], paper_label=t["label"][paper],
            sentence=found["sentence"] if found else "", start=start, end=start + length,
            confidence=float(confidence), lower_is_better=lower_is_better(named) if named else None, setting=setting))
    return entries


def _proposals(tables: Tables, paper: int) -> list[str]:
    """The labels of the methods and models the paper (a row of ``tables``) proposes or introduces."""
    t, links = tables.t, tables.t["paper_links"][paper - tables.first]
    return sorted({t["label"][links[k]] for k in range(0, len(links), 2)
                   if t["roles"][links[k + 1]] in PROPOSING and t["kinds"][t["kind"][links[k]]] in ACTOR_TYPES})


def board(dataset: str, entries: list[Entry], metric: str | None = None, setting: str | None = None) -> Board:
    """Rank ``entries`` under one metric: ``metric``, or the one with the most scores (ties: by name), and in
    one setting: ``setting`` ("standard" or "" for scores reached the standard way), by default the standard
    one where the metric has such scores, else the setting with the most. Within it the best comes first
    where the direction is known, else the papers' order is kept. Only the papers' own scores are ranked:
    the value one improved on ("from 93.2% to 94.3%": 93.2%) is shown beside it, not ranked.

    >>> e = lambda v, m, kind="score": Entry(v, "%", None, kind, m, "", "p", "p", "", 0, 1, 0.8, m == "error")
    >>> b = board("CIFAR-10", [e(3.0, "error"), e(80.2, "accuracy"), e(2.0, "error"), e(0.1, ""), e(1.0, "error", "gain")])
    >>> b.metric, [x.value for x in b.ranked], b.other_metrics, len(b.gains), len(b.unnamed)
    ('error', [2.0, 3.0], {'accuracy': 1}, 1, 1)
    """
    in_order = sorted(entries, key=lambda e: (e.paper_label, e.start))
    scores = [e for e in in_order if e.kind == "score" and e.metric]
    counts: dict[str, int] = {}
    for entry in scores:
        counts[entry.metric] = counts.get(entry.metric, 0) + 1
    if metric is None:
        chosen = min(counts, key=lambda m: (-counts[m], m.casefold()), default="")
    else:
        chosen = next((m for m in counts if m.casefold() == metric.casefold()), None)
        if chosen is None:
            there = ", ".join(f"{m} ({n})" for m, n in sorted(counts.items(), key=lambda x: -x[1])) or "none"
            raise KGError(f"No result on {dataset} is of the metric {metric!r}; its metrics: {there}")
    direction = lower_is_better(chosen) if chosen else None
    of_metric = [e for e in scores if e.metric == chosen]
    settings: dict[str, int] = {}
    for entry in of_metric:
        settings[entry.setting] = settings.get(entry.setting, 0) + 1
    if setting is None:
        kept = "" if "" in settings or not settings else min(settings, key=lambda s: (-settings[s], s))
    else:
        wanted = "" if setting.casefold() in ("", "standard") else setting.casefold()
        kept = next((s for s in settings if s.casefold() == wanted), None)
        if kept is None:
            there = ", ".join(f"{s or 'standard'} ({n})" for s, n in sorted(settings.items(), key=lambda x: -x[1]))
            raise KGError(f"No {chosen} score on {dataset} is in the setting {setting!r}; its settings: {there or 'none'}")
    ranked = [e for e in of_metric if e.setting == kept]
    if direction is not None:
        ranked.sort(key=lambda e: e.value if direction else -e.value)
    return Board(dataset, chosen, direction, ranked,
                 {m: n for m, n in sorted(counts.items(), key=lambda x: (-x[1], x[0].casefold())) if m != chosen},
                 [e for e in in_order if e.kind != "score" and e.metric], [e for e in in_order if not e.metric],
                 kept, {s: n for s, n in sorted(settings.items(), key=lambda x: (-x[1], x[0])) if s != kept})
