"""Views: the data of an entity's or a paper's panel, read from the graph's tables, and the limits
on what a view, a search and a neighbourhood list.

The tables :func:`kg.query.tables.graph_tables` writes are the one source of every panel. The
offline page reads the tables it embeds (``readTables`` in ``viz/explorer/tables.js``, the views
in ``viz/explorer/views.js``); ``kg serve`` and the commands read those the build kept of the whole
graph (:func:`kept_tables`) with :class:`Tables`, for its pages, their JSON twins and the served
explorer's panel. The two readers are written alike, function for
function, and ``tests/test_view_parity.py`` renders every node of two graphs both ways and
compares the views whole.

The limits are defined here once; the page is handed them in its ``meta``
(:func:`kg.viz.render.render_page`), so its script repeats none of them.
"""
from __future__ import annotations

import gc

import orjson

from ..kept import Kept, read_kept
from ..store import TABLES_SUFFIX
from ..strings import js_order
from ..vocab import ACTOR_TYPES, entity_node

SEARCH_LIMIT = 20  # suggestions a search gives, offline and in kg serve's /search.json
NEIGHBOURHOOD_LIMIT = 250  # nodes a focused view draws at most
EVIDENCE_LIMIT = 200  # pieces of evidence an entity's panel lists
PAPERS_LIMIT = 300  # papers an entity's panel lists
LIST_LIMIT = 15  # methods, datasets or tasks a dataset's or a task's panel lists
LEADERBOARD_LIMIT = 10  # results a dataset's panel ranks per metric
COMPARISON_LIMIT = 100  # papers a task's comparison table lists
ACTORS = tuple(sorted(ACTOR_TYPES))  # what papers propose and what reaches results
PROPOSING = ("proposes", "introduces")
#: The types whose panels say more: a benchmark's leaderboard, a task's comparison; and the metrics' type.
PAGE_KINDS = {"benchmark": "Dataset", "task": "Task", "metric": "Metric"}

#: The fields of one relation in the tables' ``relations`` (flat, this many numbers each): the
#: first piece of evidence is a mention in a paper's abstract (-1: none held).
RELATION_FIELDS = ("subject", "object", "relation", "support", "paper", "start", "length")
#: The layout of the tables ``kg build`` keeps: raised when a column or a row's fields change, so that
#: tables an older kg kept are refused (the store answers) rather than misread.
TABLES_FORMAT = 2
#: The fields of one row of the tables' ``results``: node indices (-1: none), the value as written
#: and as a number, its offsets in the abstract (start, length) and its confidence as the store holds it.
RESULT_FIELDS = ("paper", "text", "kind", "metric", "dataset", "subject", "start", "value", "unit", "previous", "setting",
                 "length", "confidence")
#: The fields of one statement in the kept tables' ``paper_statements`` (flat, per paper it was read from):
#: node indices (a role's subject is the paper), the relation's code in ``roles``, the mention's offsets
#: and the statement's confidence (:func:`kg.query.tables.graph_tables` with ``statements``).
STATEMENT_FIELDS = ("subject", "relation", "object", "start", "length", "confidence")
#: The fields of one similar paper in the tables' ``paper_similar`` (flat, this many numbers each).
SIMILAR_FIELDS = ("paper", "score", "words", "entities", "meaning")
SHARED_LIMIT = 5  # of the entities two similar papers share, the rarest this many are given as the reason
COLLAPSE_PAPERS = 12  # a dataset's or task's neighbourhood draws this many linked papers or more as one node


def limits() -> dict:
    """The limits as the page's ``meta`` hands them to its script.

    >>> limits()["relation_width"]
    7
    """
    return {"search_limit": SEARCH_LIMIT, "neighbourhood_limit": NEIGHBOURHOOD_LIMIT,
            "evidence_limit": EVIDENCE_LIMIT, "papers_limit": PAPERS_LIMIT, "relation_width": len(RELATION_FIELDS),
            "list_limit": LIST_LIMIT, "leaderboard_limit": LEADERBOARD_LIMIT, "comparison_limit": COMPARISON_LIMIT,
            "actors": list(ACTORS), "proposing": list(PROPOSING), "page_kinds": PAGE_KINDS,
            "similar_width": len(SIMILAR_FIELDS), "shared_limit": SHARED_LIMIT, "collapse_papers": COLLAPSE_PAPERS}


class Tables:
    """The graph's tables made readable: node ids both ways, each entity's papers, relations and
    results, and the views a panel shows (``readTables`` and ``viz/explorer/views.js``, in Python).

    >>> from kg.query.tables import graph_tables
    >>> import networkx as nx
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("method/grpo", kind="Method", label="GRPO", aliases=[], papers=1)
    >>> G.add_node("paper/p1", kind="Paper", label="On GRPO", abstract="We propose GRPO.", venue="ICLR")
    >>> _ = G.add_edge("paper/p1", "method/grpo", key="proposes", role="proposes",
    ...                evidence=[{"start": 11, "end": 15, "sentence": "We propose GRPO."}])
    >>> tables = Tables(graph_tables(G))
    >>> view = tables.view("method/grpo")
    >>> view["paper_count"], view["papers"], view["evidence"][0]["sentence"]
    (1, [{'id': 'paper/p1', 'title': 'On GRPO', 'roles': ['proposes'], 'evidence': 'We propose GRPO.'}], 'We propose GRPO.')
    """

    def __init__(self, t: dict):
        self.t = t
        first = self.first = t["first_paper"]
        whole = set(t["whole_ids"])
        self.ids = [tail if i in whole else entity_node(kind, label.lower()) if tail == 0 else f"{kind.lower()}/{tail}"
                    for i, (tail, label, kind) in enumerate(zip(t["id"], t["label"], (t["kinds"][k] for k in t["kind"])))]
        self.index_of = {node: i for i, node in enumerate(self.ids)}
        self.papers_of = [[] for _ in range(first)]  # entity -> [(paper, role), ...]
        self.relations_of = [[] for _ in range(first)]  # entity -> offsets into t["relations"]
        self.results_of = [[] for _ in range(first)]  # entity -> rows of t["results"]
        for row, links in enumerate(t["paper_links"]):
            for k in range(0, len(links), 2):
                self.papers_of[links[k]].append((first + row, links[k + 1]))
        width = len(RELATION_FIELDS)
        for r in range(0, len(t["relations"]), width):
            subject, other = t["relations"][r:r + 2]
            self.relations_of[subject].append(r)
            if other != subject:
                self.relations_of[other].append(r)
        self.results_in = [[] for _ in t["paper_links"]]  # paper row -> rows of t["results"]
        for row, result in enumerate(t["results"]):
            self.results_in[result[0] - first].append(row)
            for end in dict.fromkeys(result[3:6]):
                if end >= 0:
                    self.results_of[end].append(row)
        self.lower, self.higher = set(t["lower_is_better"]), set(t["higher_is_better"])
        self._chars: dict[int, list[str]] = {}
        self._statements: dict[int, list[tuple[int, int]]] | None = None
        self._named: dict = {}  # how names are keyed -> key -> entities (kg.query.lookup), made when first asked

    def edges(self) -> int:
        """How many edges the graph has: each paper's roles and each link between entities."""
        return sum(len(links) // 2 for links in self.t["paper_links"]) + len(self.t["relations"]) // len(RELATION_FIELDS)

    def iri(self, i: int) -> str:
        """The IRI of node ``i``."""
        return self.t["base"] + self.ids[i]

    def names(self, i: int) -> list[str]:
        """Every name entity ``i`` goes by: its label, then its aliases."""
        return list(dict.fromkeys([self.t["label"][i], *(self.t["aliases"][i] or ())]))

    def named(self, key: str, keyed=str.lower) -> list[int]:
        """The entities one of whose names ``keyed`` makes ``key`` (:func:`kg.query.lookup.find_entity`)."""
        return self._names_by(keyed).get(key, [])

    def name_keys(self, keyed=str.lower) -> list[str]:
        """Every key ``keyed`` makes of a name (:meth:`named`)."""
        return list(self._names_by(keyed))

    def _names_by(self, keyed) -> dict[str, list[int]]:
        """Each key ``keyed`` makes of an entity's name -> the entities, made when first asked."""
        found = self._named.get(keyed)
        if found is None:  # made whole before it is kept, so that another thread never reads it half made
            found = {}
            for i in range(self.first):
                for name in self.names(i):
                    found.setdefault(keyed(name), []).append(i)
            self._named[keyed] = found
        return found

    @classmethod
    def read(cls, kept: Kept) -> Tables:
        """The tables of the kept file (:func:`kept_tables`).

        Read with the garbage collector paused: the millions of lists and strings they are made of, all
        kept, would otherwise be walked again and again as they are made (half the time at 20,000 papers)."""
        data = kept.read()
        enabled = gc.isenabled()
        gc.disable()
        try:
            found = orjson.loads(data)
            if not isinstance(found, dict):
                raise ValueError("no tables")
            if found.get("format") != TABLES_FORMAT:
                raise ValueError(f"tables of layout {found.get('format', 1)!r}, where this kg reads {TABLES_FORMAT}")
            return cls(found)
        finally:
            if enabled:
                gc.enable()

    def view(self, node: str) -> dict | None:
        """The panel's data for ``node`` (an entity's or a paper's), or None if the tables lack it."""
        i = self.index_of.get(node)
        if i is None:
            return None
        return self.paper_view(i) if i >= self.first else self.entity_view(i)

    def _kind(self, i: int) -> str:
        return self.t["kinds"][self.t["kind"][i]]

    def _string(self, code: int) -> str:
        return self.t["strings"][code] if code >= 0 else ""

    def _name(self, i: int) -> str:
        return self.t["label"][i] if i >= 0 else ""

    def _slice(self, row: int, start: int, end: int) -> str:
        if row not in self._chars:
            self._chars[row] = list(self.t["paper_abstract"][row])
        return "".join(self._chars[row][start:end])

    def statements_about(self, i: int) -> list[tuple[int, int]]:
        """The statements whose subject or object is node ``i``, each as (paper row, its offset in that
        row of ``paper_statements``), in the tables' order; none where the tables hold no statements."""
        if self._statements is None:
            self._statements = {}
            width = len(STATEMENT_FIELDS)
            for row, flat in enumerate(self.t.get("paper_statements") or ()):
                for k in range(0, len(flat), width):
                    for end in dict.fromkeys((flat[k], flat[k + 2])):
                        self._statements.setdefault(end, []).append((row, k))
        return self._statements.get(i, [])

    def evidence_at(self, row: int, start: int, length: int) -> dict | None:
        """The sentence of paper ``row`` holding a mention, with the mention's offsets in it; None if not held."""
        if self.t["paper_abstract"][row] is None:
            return None
        spans = self.t["paper_sentences"][row]
        for k in range(0, len(spans), 2):
            if spans[k] <= start and start + length <= spans[k + 1]:
                return {"sentence": self._slice(row, spans[k], spans[k + 1]),
                        "start": start - spans[k], "end": start + length - spans[k]}
        return None

    def neighbours(self, i: int) -> list[int]:
        """A node's neighbours in the tables: an entity's papers and related entities, a paper's entities."""
        t = self.t
        if i >= self.first:
            return list(dict.fromkeys(t["paper_links"][i - self.first][::2]))
        found = dict.fromkeys(paper for paper, _ in self.papers_of[i])
        for r in self.relations_of[i]:
            found[t["relations"][r + 1] if t["relations"][r] == i else t["relations"][r]] = None
        return list(found)

    def _links_left_out(self, i: int) -> int:
        """How many of the node's links in the whole graph these tables leave out."""
        total = self.t.get("links_total")
        return max(0, total[i] - len(self.neighbours(i))) if total else 0

    @staticmethod
    def _roles_by_node(pairs) -> dict[int, list[int]]:
        """``[(node, role code), ...]`` as node -> its role codes, sorted, in the order nodes first appear."""
        roles: dict[int, list[int]] = {}
        for node, role in pairs:
            if role not in roles.setdefault(node, []):
                roles[node].append(role)
        return {node: sorted(codes) for node, codes in roles.items()}

    def entity_view(self, i: int) -> dict:
        """An entity's panel: its papers (each with its roles and first evidence sentence; the
        first :data:`PAPERS_LIMIT`), relations (each with its support and first evidence sentence),
        results, and evidence (each mention's sentence; the first :data:`EVIDENCE_LIMIT`).
        ``paper_count`` counts the papers that mention it, ``reach`` those that mention it or a
        narrower concept."""
        t, ids, first = self.t, self.ids, self.first
        papers = sorted(self._roles_by_node(self.papers_of[i]).items(),
                        key=lambda item: (item[1][0], js_order(t["label"][item[0]])))
        evidence, listed = [], []
        for p, roles in papers:
            row = p - first
            links, mentions = t["paper_links"][row], t["paper_mentions"][row]
            sentence = ""
            for m in range(0, len(mentions), 3):
                if links[2 * mentions[m]] != i:
                    continue
                found = self.evidence_at(row, mentions[m + 1], mentions[m + 2])
                if found is None:
                    continue
                sentence = sentence or found["sentence"]
                evidence.append({"paper": ids[p], "title": t["label"][p], "role": t["roles"][links[2 * mentions[m] + 1]],
                                 **found})
            listed.append({"id": ids[p], "title": t["label"][p], "roles": [t["roles"][code] for code in roles],
                           "evidence": sentence})
        evidence.sort(key=lambda item: (js_order(item["title"]), item["start"]))
        relations = []
        for r in self.relations_of[i]:
            subject, other, relation, support, paper, start, length = t["relations"][r:r + len(RELATION_FIELDS)]
            found = self.evidence_at(paper - first, start, length) if paper >= 0 else None
            relations.append({"subject": ids[subject], "subject_label": t["label"][subject], "relation": t["roles"][relation],
                              "object": ids[other], "object_label": t["label"][other], "papers": support,
                              "sentence": found["sentence"] if found else ""})
        relations.sort(key=lambda r: (-r["papers"], js_order(r["relation"]), js_order(r["subject_label"]), js_order(r["object_label"])))
        results = []
        for row in self.results_of[i]:
            paper, written, kind, metric, dataset, subject, start, value, unit, previous, setting = t["results"][row][:11]
            found = self.evidence_at(paper - first, start, 1)
            results.append({"paper": ids[paper], "value": value, "unit": unit, "previous": previous, "kind": kind,
                            "setting": setting, "text": written, "metric": self._name(metric), "dataset": self._name(dataset),
                            "subject": self._name(subject), "sentence": found["sentence"] if found else ""})
        results.sort(key=lambda r: (js_order(r["dataset"]), js_order(r["metric"]), -r["value"]))
        view = {"id": ids[i], "type": self._kind(i), "label": t["label"][i], "aliases": t["aliases"][i] or [],
                "definition": self.definition(i), "years": self._years(i),
                "paper_count": t["papers"][i], "reach": t["reach"][i] or t["papers"][i],
                "papers": listed[:PAPERS_LIMIT], "papers_not_listed": max(0, len(listed) - PAPERS_LIMIT),
                "relations": relations, "results": results, "evidence": evidence[:EVIDENCE_LIMIT],
                "evidence_not_listed": max(0, len(evidence) - EVIDENCE_LIMIT), "links_left_out": self._links_left_out(i)}
        papers_of = [p for p, _ in papers]  # one each: papers are grouped by paper above
        if view["type"] == PAGE_KINDS["benchmark"]:  # a benchmark's page: its leaderboard, the methods run on it, its tasks
            methods = self._linked(papers_of, PROPOSING, ACTORS)
            for row in self.results_of[i]:
                paper, _, _, _, dataset, subject = t["results"][row][:6]
                if dataset == i and subject >= 0 and self._kind(subject) in ACTORS:
                    methods.setdefault(subject, set()).add(paper)
            view.update({"leaderboard": self._leaderboard(i), "methods": self._counted(methods),
                         "tasks": self._counted(self._linked(papers_of, None, (PAGE_KINDS["task"],)))})
        elif view["type"] == PAGE_KINDS["task"]:  # a task's page: its datasets, the methods proposed for it, a comparison
            view.update({"datasets": self._counted(self._linked(papers_of, None, (PAGE_KINDS["benchmark"],))),
                         "methods": self._counted(self._linked(papers_of, PROPOSING, ACTORS)),
                         "comparison": self._comparison(papers_of)})
        return view

    def definition(self, i: int) -> dict | None:
        """What a paper says the entity is, with the sentence it says it in where the tables hold it."""
        found = self.t["definition"][i]
        if not found:
            return None
        text, paper, start, length = found
        where = self.evidence_at(paper - self.first, start, length) if paper >= 0 else None
        return {"text": text, "paper": self.ids[paper] if paper >= 0 else "",
                "title": self.t["label"][paper] if paper >= 0 else "", "sentence": where["sentence"] if where else ""}

    def _years(self, i: int) -> list[list[int]]:
        """``[[year, papers], ...]``: the entity's papers per year, earliest first (papers of no year left out)."""
        counts: dict[int, int] = {}
        for p in dict.fromkeys(p for p, _ in self.papers_of[i]):
            year = self.t["paper_year"][p - self.first]
            if year:
                counts[year] = counts.get(year, 0) + 1
        return [[year, counts[year]] for year in sorted(counts)]

    def _linked(self, papers: list[int], roles, kinds) -> dict[int, set[int]]:
        """The entities of ``kinds`` that ``papers`` link to in one of ``roles`` (any, if None), each with those papers."""
        t, found = self.t, {}
        for p in papers:
            links = t["paper_links"][p - self.first]
            for k in range(0, len(links), 2):
                if self._kind(links[k]) in kinds and (roles is None or t["roles"][links[k + 1]] in roles):
                    found.setdefault(links[k], set()).add(p)
        return found

    def _counted(self, found: dict[int, set[int]]) -> list[dict]:
        """``found`` (entity -> papers) as a list, most papers first: the first :data:`LIST_LIMIT`."""
        t, ids = self.t, self.ids
        ranked = sorted(found.items(), key=lambda item: (-len(item[1]), js_order(t["label"][item[0]]), js_order(ids[item[0]])))
        return [{"id": ids[e], "label": t["label"][e], "type": self._kind(e), "papers": len(papers)}
                for e, papers in ranked[:LIST_LIMIT]]

    def _leaderboard(self, i: int) -> list[dict]:
        """The scores reported on dataset ``i`` (each with its sentence), by metric and setting (most scores first; a
        zero-shot or adversarial score is ranked apart), best first where the metric's direction is known, else in the
        papers' order: the first :data:`LEADERBOARD_LIMIT` each."""
        t, ids, boards = self.t, self.ids, {}
        for row in self.results_of[i]:
            paper, written, kind, metric, dataset, subject, start, value, unit, previous, setting = t["results"][row][:11]
            if dataset == i and kind == "score" and metric >= 0:
                found = self.evidence_at(paper - self.first, start, 1)
                boards.setdefault((metric, setting), []).append({
                    "value": value, "unit": unit, "previous": previous, "text": written, "subject": self._name(subject),
                    "paper": ids[paper], "title": t["label"][paper], "sentence": found["sentence"] if found else "",
                    "order": [paper, start]})
        listed = []
        for (metric, setting), entries in boards.items():
            better = "lower" if metric in self.lower else "higher" if metric in self.higher else ""
            sign = {"lower": 1, "higher": -1}.get(better, 0)
            entries.sort(key=lambda e: (sign * e["value"], e["order"][0], e["order"][1]))
            for entry in entries:
                del entry["order"]
            listed.append({"metric": t["label"][metric], "metric_id": ids[metric], "setting": setting, "better": better,
                           "results": entries[:LEADERBOARD_LIMIT], "not_listed": max(0, len(entries) - LEADERBOARD_LIMIT)})
        listed.sort(key=lambda board: (-(len(board["results"]) + board["not_listed"]), js_order(board["metric"]),
                                       js_order(board["setting"])))
        return listed

    def _comparison(self, papers: list[int]) -> list[dict]:
        """A task's papers as a table: each paper's proposed methods, datasets, metrics and results
        (each with its sentence);
        papers with results first, then the latest, then by title: the first :data:`COMPARISON_LIMIT`."""
        t, ids, rows = self.t, self.ids, []
        for p in papers:
            row = p - self.first
            links = t["paper_links"][row]
            cells: dict[str, list] = {"proposes": [], "datasets": [], "metrics": []}
            for k in range(0, len(links), 2):
                e, role, kind = links[k], t["roles"][links[k + 1]], self._kind(links[k])
                column = ("proposes" if role in PROPOSING and kind in ACTORS else
                          "datasets" if kind == PAGE_KINDS["benchmark"] else "metrics" if kind == PAGE_KINDS["metric"] else None)
                entry = {"id": ids[e], "label": t["label"][e]}
                if column and entry not in cells[column]:
                    cells[column].append(entry)
            results = []
            for r in self.results_in[row]:
                _, written, kind, metric, dataset, subject, start, *_, setting = t["results"][r][:11]
                found = self.evidence_at(row, start, 1)
                results.append({"text": written, "kind": kind, "setting": setting, "metric": self._name(metric),
                                "dataset": self._name(dataset), "subject": self._name(subject),
                                "sentence": found["sentence"] if found else ""})
            rows.append({"paper": ids[p], "title": t["label"][p], "year": t["paper_year"][row] or "", **cells,
                         "results": results})
        rows.sort(key=lambda r: (-len(r["results"]), -(r["year"] or 0), js_order(r["title"]), js_order(r["paper"])))
        return rows[:COMPARISON_LIMIT]

    def paper_view(self, i: int) -> dict:
        """A paper's panel: its fields, its abstract (None where the tables do not hold it) with
        every mention's offsets, and its entities with their roles."""
        t, ids = self.t, self.ids
        row = i - self.first
        links = t["paper_links"][row]
        entities = sorted(self._roles_by_node(zip(links[::2], links[1::2])).items(),
                          key=lambda item: (item[1][0], js_order(t["label"][item[0]])))
        spans = t["paper_mentions"][row]
        mentions = []
        for m in range(0, len(spans), 3):
            e = links[2 * spans[m]]
            mentions.append({"entity": ids[e], "label": t["label"][e], "type": self._kind(e),
                             "role": t["roles"][links[2 * spans[m] + 1]], "start": spans[m + 1],
                             "end": spans[m + 1] + spans[m + 2]})
        return {"id": ids[i], "type": "Paper", "label": t["label"][i], "title": t["label"][i],
                "venue": self._string(t["paper_venue"][row]), "year": t["paper_year"][row] or "",
                "decision": self._string(t["paper_decision"][row]),
                "url": t["paper_url"][row], "authors": [self._string(code) for code in t["paper_authors"][row]],
                "abstract": t["paper_abstract"][row], "mentions": mentions,
                "entities": [{"id": ids[e], "label": t["label"][e], "type": self._kind(e),
                              "roles": [t["roles"][code] for code in roles]} for e, roles in entities],
                "similar": self._similar(row), "links_left_out": self._links_left_out(i)}

    def _similar(self, row: int) -> list[dict]:
        """Paper ``row``'s similar papers (kg.link.similar), each with its scores and the entities both
        name, rarest first: the reason."""
        t, ids, first = self.t, self.ids, self.first
        mine = set(t["paper_links"][row][::2])
        found, flat = [], t["paper_similar"][row]
        for k in range(0, len(flat), len(SIMILAR_FIELDS)):
            other, score, words, entities, meaning = flat[k:k + len(SIMILAR_FIELDS)]
            shared = sorted(mine & set(t["paper_links"][other - first][::2]),
                            key=lambda e: (t["papers"][e], js_order(t["label"][e]), js_order(ids[e])))
            found.append({"id": ids[other], "title": t["label"][other], "score": score, "words": words,
                          "entities": entities, "meaning": meaning,
                          "shared": [{"id": ids[e], "label": t["label"][e]} for e in shared[:SHARED_LIMIT]]})
        return found


def kept_tables(graph) -> Tables | None:
    """The tables ``kg build`` kept of the whole graph at ``graph`` (``NAME.tables.json``), or None where
    the store answers instead (:func:`kg.kept.read_kept`)."""
    return read_kept(graph, TABLES_SUFFIX, Tables.read)
