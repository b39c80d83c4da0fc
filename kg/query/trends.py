"""Trends: the entities whose share of papers rises or falls the most from one period to another.

A period is a year (``dcterms:issued``) or a venue (``kg:venue``), set per input file with
``kg build --set FILE year=2017``. Trends read the graph's index (:func:`kg.query.graph_index.graph_index`:
the tables the build kept), as every answer does. An entity's count in a period is the number of that period's
papers that name it in any role. Shares are compared by the log-odds ratio with an informative
prior (Monroe, Colaresi and Quinn, "Fightin' words", 2008), divided by its standard error: a
z-score. The prior adds :data:`PRIOR_PAPERS` papers to each period at the entity's share over
both, so a name seen in one paper of one period and none of the other scores near 0, where a raw
ratio would call it the fastest riser.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..errors import KGError
from ..strings import counted
from ..vocab import ENTITY_TYPES, ROLES
from .graph_index import GraphIndex

#: What a period can be, by ``--by``: a paper's attribute in the index.
PERIODS = ("year", "venue")
#: The prior's weight, in papers added to each period at the entity's pooled share.
PRIOR_PAPERS = 20.0
#: Entities named by fewer papers in the two periods together are not ranked.
MIN_PAPERS = 3


def log_odds_z(later: int, later_papers: int, earlier: int, earlier_papers: int,
               prior: float = PRIOR_PAPERS) -> float:
    """The z-score of the change in an entity's share of papers, from ``earlier`` of
    ``earlier_papers`` to ``later`` of ``later_papers``: the difference of the two log-odds, each
    smoothed by a Beta prior of ``prior`` papers at the pooled share, over its standard error.

    Worked by hand: 10 of 100 papers, then 30 of 100; the pooled share is 0.2, so the prior adds
    4 papers naming it and 16 not. log(34/86) - log(14/106) = 1.0964, with variance
    1/34 + 1/86 + 1/14 + 1/106 = 0.1219, so z = 1.0964 / 0.3491 = 3.14.

    >>> round(log_odds_z(30, 100, 10, 100), 2)
    3.14
    >>> round(log_odds_z(1, 100, 0, 100), 2)  # one paper is not a trend
    0.73
    >>> log_odds_z(10, 100, 30, 100) < 0
    True
    """
    share = (later + earlier) / max(1, later_papers + earlier_papers)
    alpha, beta = prior * share, prior * (1 - share)
    if alpha <= 0 or beta <= 0:  # named by every paper or by none: no change to measure
        return 0.0
    delta = (math.log((later + alpha) / (later_papers - later + beta))
             - math.log((earlier + alpha) / (earlier_papers - earlier + beta)))
    variance = (1 / (later + alpha) + 1 / (later_papers - later + beta)
                + 1 / (earlier + alpha) + 1 / (earlier_papers - earlier + beta))
    return delta / math.sqrt(variance)


@dataclass
class Trend:
    """One entity's papers per period and the z-score of its change from ``earlier`` to ``later``."""

    entity: str  # IRI
    label: str
    type: str
    counts: dict[str, int]  # period -> papers naming it
    z: float


@dataclass
class Trends:
    """The periods (each with its papers) and the entities rising and falling most between two of them."""

    by: str
    periods: dict[str, int]  # period -> papers, in order
    earlier: str
    later: str
    rising: list[Trend]
    falling: list[Trend]

    def as_json(self) -> dict:
        return asdict(self)

    def as_text(self, types: list[str] | None = None) -> str:
        """What ``kg trends`` prints: a table of the rising, then of the falling, with papers per period."""
        periods = list(self.periods)
        what = " and ".join(f"{t}s" for t in types) if types else "Entities"
        lines = [f"{what} by share of papers, {self.earlier} ({counted(self.periods[self.earlier], 'paper')}) -> "
                 f"{self.later} ({counted(self.periods[self.later], 'paper')}); z: log-odds z-score."]
        width = max(len(p) for p in periods) + 8
        for title, listed in (("Rising", self.rising), ("Falling", self.falling)):
            lines.append(f"\n{title}:\n  {'z':>6}  " + "".join(f"{p:>{width}}" for p in periods) + "  entity")
            if not listed:
                lines.append("  (none)")
            for t in listed:
                cells = "".join(f"{f'{t.counts[p]:,} ({100 * t.counts[p] / self.periods[p]:.1f}%)':>{width}}"
                                for p in periods)
                lines.append(f"  {t.z:+6.2f}  {cells}  {t.label} [{t.type}]")
        return "\n".join(lines)


def _period_order(period: str):
    return (0, int(period), "") if period.isdigit() else (1, 0, period)


def trends(index: GraphIndex, *, by: str = "year", types: list[str] | None = None, earlier: str | None = None,
           later: str | None = None, top: int = 15, min_papers: int = MIN_PAPERS) -> Trends:
    """The entities of ``types`` (default: every type) of the graph in ``index`` whose share of
    papers rises or falls most from the period ``earlier`` to ``later`` (default: the first and
    the last; years in order, venues by name), ``top`` each way."""
    if by not in PERIODS:
        raise KGError(f"Cannot group papers by {by!r}; choose one of {', '.join(PERIODS)}.")
    G = index.graph
    period_of = {node: str(data[by]) for node, data in G.nodes(data=True)
                 if data.get("kind") == "Paper" and data.get(by) not in (None, "")}
    periods: dict[str, int] = {}
    for period in period_of.values():
        periods[period] = periods.get(period, 0) + 1
    periods = dict(sorted(periods.items(), key=lambda item: _period_order(item[0])))
    if len(periods) < 2:
        found = f"only {next(iter(periods))!r}" if periods else "none"
        raise KGError(f"The graph's papers have {found} as their {by}, so nothing can rise or fall: give each "
                      f"input file its {by} with kg build --set FILE {by}=VALUE.")
    earlier = earlier or next(iter(periods))
    later = later or list(periods)[-1]
    for period in (earlier, later):
        if period not in periods:
            raise KGError(f"No paper has the {by} {period!r}; the graph's are {', '.join(periods)}.")
    types = types or list(ENTITY_TYPES)
    unknown = set(types) - set(ENTITY_TYPES)
    if unknown:
        raise KGError(f"Unknown type {', '.join(sorted(unknown))}; choose from {', '.join(ENTITY_TYPES)}.")
    papers_of: dict[str, set[str]] = {}  # entity -> the papers of a period naming it in a role
    for paper, entity, role in G.edges(keys=True):
        if paper in period_of and role in ROLES and G.nodes[entity].get("kind") in types:
            papers_of.setdefault(entity, set()).add(paper)
    ranked = []
    for entity, papers in papers_of.items():
        counts = dict.fromkeys(periods, 0)
        for paper in papers:
            counts[period_of[paper]] += 1
        a, b = counts[earlier], counts[later]
        if a + b >= min_papers:
            data = G.nodes[entity]
            ranked.append(Trend(index.iri[entity], data["label"], data["kind"], counts,
                                round(log_odds_z(b, periods[later], a, periods[earlier]), 3)))
    ranked.sort(key=lambda t: (-t.z, t.label))
    rising = [t for t in ranked if t.z > 0][:top]
    falling = [t for t in reversed(ranked) if t.z < 0][:top]
    return Trends(by, periods, earlier, later, rising, falling)
