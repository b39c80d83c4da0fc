"""Views: the data of an entity's or a paper's panel, read from the graph's tables, and the limits
on what a view, a search and a neighbourhood list.

The tables :func:`kg.tables.graph_tables` writes are the one source of every panel. The
offline page reads the tables it embeds (``readTables`` in ``viz/explorer/tables.js``, the views
in ``viz/explorer/views.js``); ``kg serve`` builds the same tables of its whole graph
(:func:`kg.index.load_index` with ``texts``) and reads them with :class:`Tables`, for its pages,
their JSON twins and the served explorer's panel. The two readers are written alike, function for
function, and ``tests/test_view_parity.py`` renders every node of two graphs both ways and
compares the views whole.

The limits are defined here once; the page is handed them in its ``meta``
(:func:`kg.viz.render.render_page`), so its script repeats none of them.
"""
from __future__ import annotations

from .vocab import entity_node

SEARCH_LIMIT = 20  # suggestions a search gives, offline and in kg serve's /search.json
NEIGHBOURHOOD_LIMIT = 250  # nodes a focused view draws at most
EVIDENCE_LIMIT = 200  # pieces of evidence an entity's panel lists
PAPERS_LIMIT = 300  # papers an entity's panel lists

#: The fields of one relation in the tables' ``relations`` (flat, this many numbers each): the
#: first piece of evidence is a mention in a paper's abstract (-1: none held).
RELATION_FIELDS = ("subject", "object", "relation", "support", "paper", "start", "length")
#: The fields of one row of the tables' ``results``: node indices (-1: none), the value as written
#: and as a number.
RESULT_FIELDS = ("paper", "text", "kind", "metric", "dataset", "subject", "start", "value", "unit", "previous")


def limits() -> dict:
    """The limits as the page's ``meta`` hands them to its script.

    >>> limits()["relation_width"]
    7
    """
    return {"search_limit": SEARCH_LIMIT, "neighbourhood_limit": NEIGHBOURHOOD_LIMIT,
            "evidence_limit": EVIDENCE_LIMIT, "papers_limit": PAPERS_LIMIT, "relation_width": len(RELATION_FIELDS)}


def _text(value: str) -> bytes:
    """A sort key that orders text as JavaScript's ``<`` does: by UTF-16 code unit, not by code point."""
    return value.encode("utf-16-be", "surrogatepass")


class Tables:
    """The graph's tables made readable: node ids both ways, each entity's papers, relations and
    results, and the views a panel shows (``readTables`` and ``viz/explorer/views.js``, in Python).

    >>> from kg.tables import graph_tables
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
        for row, result in enumerate(t["results"]):
            for end in dict.fromkeys(result[3:6]):
                if end >= 0:
                    self.results_of[end].append(row)
        self._chars: dict[int, list[str]] = {}

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

    def _evidence_at(self, row: int, start: int, length: int) -> dict | None:
        """The sentence of paper ``row`` holding a mention, with the mention's offsets in it; None if not held."""
        if self.t["paper_abstract"][row] is None:
            return None
        spans = self.t["paper_sentences"][row]
        for k in range(0, len(spans), 2):
            if spans[k] <= start and start + length <= spans[k + 1]:
                return {"sentence": self._slice(row, spans[k], spans[k + 1]),
                        "start": start - spans[k], "end": start + length - spans[k]}
        return None

    def _neighbours(self, i: int) -> list[int]:
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
        return max(0, total[i] - len(self._neighbours(i))) if total else 0

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
                        key=lambda item: (item[1][0], _text(t["label"][item[0]])))
        evidence, listed = [], []
        for p, roles in papers:
            row = p - first
            links, mentions = t["paper_links"][row], t["paper_mentions"][row]
            sentence = ""
            for m in range(0, len(mentions), 3):
                if links[2 * mentions[m]] != i:
                    continue
                found = self._evidence_at(row, mentions[m + 1], mentions[m + 2])
                if found is None:
                    continue
                sentence = sentence or found["sentence"]
                evidence.append({"paper": ids[p], "title": t["label"][p], "role": t["roles"][links[2 * mentions[m] + 1]],
                                 **found})
            listed.append({"id": ids[p], "title": t["label"][p], "roles": [t["roles"][code] for code in roles],
                           "evidence": sentence})
        evidence.sort(key=lambda item: (_text(item["title"]), item["start"]))
        relations = []
        for r in self.relations_of[i]:
            subject, other, relation, support, paper, start, length = t["relations"][r:r + len(RELATION_FIELDS)]
            found = self._evidence_at(paper - first, start, length) if paper >= 0 else None
            relations.append({"subject": ids[subject], "subject_label": t["label"][subject], "relation": t["roles"][relation],
                              "object": ids[other], "object_label": t["label"][other], "papers": support,
                              "sentence": found["sentence"] if found else ""})
        relations.sort(key=lambda r: (-r["papers"], _text(r["relation"]), _text(r["subject_label"]), _text(r["object_label"])))
        results = []
        for row in self.results_of[i]:
            paper, written, kind, metric, dataset, subject, start, value, unit, previous = t["results"][row]
            found = self._evidence_at(paper - first, start, 1)
            results.append({"paper": ids[paper], "value": value, "unit": unit, "previous": previous, "kind": kind,
                            "text": written, "metric": self._name(metric), "dataset": self._name(dataset),
                            "subject": self._name(subject), "sentence": found["sentence"] if found else ""})
        results.sort(key=lambda r: (_text(r["dataset"]), _text(r["metric"]), -r["value"]))
        return {"id": ids[i], "type": self._kind(i), "label": t["label"][i], "aliases": t["aliases"][i] or [],
                "paper_count": t["papers"][i], "reach": t["reach"][i] or t["papers"][i],
                "papers": listed[:PAPERS_LIMIT], "papers_not_listed": max(0, len(listed) - PAPERS_LIMIT),
                "relations": relations, "results": results, "evidence": evidence[:EVIDENCE_LIMIT],
                "evidence_not_listed": max(0, len(evidence) - EVIDENCE_LIMIT), "links_left_out": self._links_left_out(i)}

    def paper_view(self, i: int) -> dict:
        """A paper's panel: its fields, its abstract (None where the tables do not hold it) with
        every mention's offsets, and its entities with their roles."""
        t, ids = self.t, self.ids
        row = i - self.first
        links = t["paper_links"][row]
        entities = sorted(self._roles_by_node(zip(links[::2], links[1::2])).items(),
                          key=lambda item: (item[1][0], _text(t["label"][item[0]])))
        spans = t["paper_mentions"][row]
        mentions = []
        for m in range(0, len(spans), 3):
            e = links[2 * spans[m]]
            mentions.append({"entity": ids[e], "label": t["label"][e], "type": self._kind(e),
                             "role": t["roles"][links[2 * spans[m] + 1]], "start": spans[m + 1],
                             "end": spans[m + 1] + spans[m + 2]})
        return {"id": ids[i], "type": "Paper", "label": t["label"][i], "title": t["label"][i],
                "venue": self._string(t["paper_venue"][row]), "year": t["paper_year"][row] or "",
                "url": t["paper_url"][row], "authors": [self._string(code) for code in t["paper_authors"][row]],
                "abstract": t["paper_abstract"][row], "mentions": mentions,
                "entities": [{"id": ids[e], "label": t["label"][e], "type": self._kind(e),
                              "roles": [t["roles"][code] for code in roles]} for e, roles in entities],
                "links_left_out": self._links_left_out(i)}
