"""Surface counts: does an entity show the same paper count on every surface of a built graph?

For each entity name (GAN and dropout by default) it prints one row per surface that shows a count,
with the node the surface shows, its paper count ("Papers": the papers that mention it), its reach
("With narrower concepts": the papers that mention it or a narrower concept) where the surface shows
one, and how many papers it lists:

    kg stats           the "Entities most papers mention" table of `kg stats` (its top 15 only)
    page tables        the tables the offline page (GRAPH.html) embeds, read here from its JSON
    page overview      the node's label in the offline page's overview, when drawn ("GAN · 57": reach)
    page tooltip       the node's tooltip in the offline page ("Method · 57 papers"), in Chromium
    page panel         the offline page's side panel after searching the name, in headless Chromium
    served search      the node /search.json picks first (what the served explorer opens)
    served JSON        /entity/ID.json of `kg serve` (paper_count, reach, papers listed)
    served page        /entity/ID, the entity's HTML page ("Papers", "With narrower concepts", "Papers (N)")
    served tooltip     the node's tooltip in the served explorer
    served panel       the served explorer's side panel after searching the name, in headless Chromium
    kg explain         `kg explain NAME`: it prints no count, so the papers it cites with a role edge
                       (and, in the note, all the papers it cites) are counted
    SPARQL             `kg query`: COUNT(DISTINCT ?p) of papers with a role edge to the entity, and of
                       papers with a role edge to it or to anything skos:broader* it (reach)

`kg serve -g GRAPH --port PORT` runs as a subprocess on a free loopback port and is stopped at the
end; Chromium may reach only file: URLs (offline) or that server (served); every wait is bounded.
A surface that finds another node for the name than the offline page's search says so in its row.

The exit status is 1 when, for some entity, the paper counts shown differ between surfaces (a
surface showing another node counts as a difference), 0 otherwise; reach differences are printed.

    python bench/surface_counts.py GRAPH [NAME ...] [--screenshots DIR] [--timeout S]

GRAPH is the -o of `kg build` (graphs/NAME). With --screenshots DIR, each entity's panel is saved
as DIR/<name>-offline.png and DIR/<name>-served.png (GAN: gan-offline.png, gan-served.png).
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from kg import vocab
from kg.store import graph_stem

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DEFAULT_NAMES = ("GAN", "dropout")
COUNT_IN_LABEL = re.compile(r" · (\d+)$")  # a concept overview's label: "GAN · 57"
COUNT_IN_TOOLTIP = re.compile(r"· (\d+) papers?\b")  # "Method · 57 papers"


@dataclass
class Row:
    surface: str
    node: str | None = None  # the node the surface shows (None: it names none)
    papers: int | None = None  # its paper count as shown
    reach: int | None = None  # its reach, where shown
    listed: int | None = None  # the papers it lists (or says it lists), where it does
    note: str = ""


@dataclass
class Report:
    name: str
    rows: list[Row] = field(default_factory=list)
    reference: str | None = None  # the node the offline page's search opens


# ---------------------------------------------------------------- the CLI


def kg_command() -> list[str]:
    """The `kg` beside this Python (a virtualenv's), else `python -m kg.cli`."""
    beside = Path(sys.executable).with_name("kg")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "kg.cli"]


def run_kg(args: list[str], timeout: float) -> str:
    done = subprocess.run(kg_command() + args, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"kg {' '.join(args[:2])} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return done.stdout


def stats_table(graph: Path, timeout: float) -> list[dict]:
    """The rows of `kg stats`'s "Entities most papers mention" table: entity, type, papers."""
    out = run_kg(["stats", "-g", str(graph)], timeout)
    lines = out.split("Entities most papers mention:", 1)[1].strip().splitlines()
    header, rule = lines[0], lines[1]
    cuts = [m.span() for m in re.finditer(r"-+", rule)]  # the columns, as the rule under the header draws them
    names = [header[a:b].strip() for a, b in cuts]
    rows = []
    for line in lines[2:]:
        if not line.strip() or re.fullmatch(r"\(\d+ rows?\)", line.strip()):
            continue
        cells = [line[a:b if i + 1 < len(cuts) else None].strip() for i, (a, b) in enumerate(cuts)]
        rows.append(dict(zip(names, cells)))
    return rows


def stats_row(table: list[dict], name: str, label: str | None, kind: str | None) -> Row:
    wanted = {name.casefold()} | ({label.casefold()} if label else set())
    matches = [r for r in table if r["entity"].casefold() in wanted]
    same = [r for r in matches if kind is None or r["type"] == kind]
    if not matches:
        return Row("kg stats", note=f"not in its top {len(table)} (it lists no more)")
    pick = (same or matches)[0]
    note = "" if same else f"lists only a {pick['type']} of that name"
    others = [f"{r['type']} {r['papers']}" for r in matches if r is not pick]
    if others:
        note = (note + "; " if note else "") + "also " + ", ".join(others)
    node = None if not same else "(by label and type)"
    return Row("kg stats", node, int(pick["papers"]), note=note)


def explain_row(graph: Path, name: str, timeout: float) -> Row:
    """`kg explain NAME`: the papers whose evidence it prints, those with a role edge counted."""
    from kg.query.graph_index import read_tables
    from kg.query.lookup import find_entity

    out = run_kg(["explain", name, "-g", str(graph)], timeout)
    papers, with_role, current = set(), set(), None
    for line in out.splitlines():
        head = re.fullmatch(r"(.*)  <(\S+/paper/\S+)>", line)
        if head:
            current = head.group(2)
            papers.add(current)
        elif line.startswith("  paper ") and current:  # "paper ROLE LABEL": a role edge's evidence
            with_role.add(current)
    try:  # the node explain looked up, as it looks it up (kg.query.lookup.find_entity)
        node = vocab.node_of_iri(find_entity(read_tables(graph), name))
    except Exception as error:  # noqa: BLE001 - reported in the row
        return Row("kg explain", None, note=f"lookup failed: {error}")
    return Row("kg explain", node, len(with_role),
               note=f"prints no count: papers it cites with a role edge; {len(papers)} cited in all")


def literal(text: str) -> str:
    """``text`` as a SPARQL string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def sparql_rows(graph: Path, name: str, timeout: float) -> list[tuple[str, str, str, int, int, int, int]]:
    """Every entity whose kg:lookupKey is the name: (node, type, label, distinct papers with a role
    edge, papers with a role edge to it or anything narrower, kg:paperCount, kg:paperCountWithNarrower)."""
    roles = " ".join(f"kg:{role}" for role in vocab.ROLES)
    classes = " ".join(f"kg:{kind}" for kind in vocab.ENTITY_TYPES)
    query = f"""
SELECT ?e ?class ?label ?stored ?storedReach
       (COUNT(DISTINCT ?p) AS ?papers) (COUNT(DISTINCT ?q) AS ?reach)
WHERE {{
  ?e kg:lookupKey {literal(vocab.lookup_key(name))} ; a ?class ; skos:prefLabel ?label .
  VALUES ?class {{ {classes} }}
  OPTIONAL {{ ?e kg:paperCount ?stored }}
  OPTIONAL {{ ?e kg:paperCountWithNarrower ?storedReach }}
  {{ OPTIONAL {{ ?p ?role ?e . ?p a kg:Paper . VALUES ?role {{ {roles} }} }} }}
  UNION
  {{ OPTIONAL {{ ?n skos:broader* ?e . ?q ?role2 ?n . ?q a kg:Paper . VALUES ?role2 {{ {roles} }} }} }}
}}
GROUP BY ?e ?class ?label ?stored ?storedReach
"""
    out = run_kg(["query", "-g", str(graph), "--format", "json", "--timeout", str(timeout),
                  query], timeout + 60)
    rows = []
    for b in json.loads(out)["results"]["bindings"]:
        number = lambda k: int(b[k]["value"]) if k in b else None  # noqa: E731
        rows.append((vocab.node_of_iri(b["e"]["value"]), b["class"]["value"].rsplit("#", 1)[-1], b["label"]["value"],
                     number("papers"), number("reach"), number("stored"), number("storedReach")))
    return rows


# ---------------------------------------------------------------- the offline page's own data


def page_data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<script id="kg-data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


def table_row(data: dict, node: str | None) -> Row:
    """The offline page's embedded tables (graph_tables) for ``node``, read as readTables reads them."""
    t = data["explorer"]["tables"]
    if node is None:
        return Row("page tables", note="no node to look up")
    whole = set(t["whole_ids"])
    for i, tail in enumerate(t["id"]):
        kind = t["kinds"][t["kind"][i]]
        if i in whole:
            ident = tail
        elif tail == 0:
            ident = vocab.entity_node(kind, t["label"][i].lower())
        else:
            ident = f"{kind.lower()}/{tail}"
        if ident == node:
            first = t["first_paper"]
            linked = {row for row, links in enumerate(t["paper_links"]) if i in links[::2]} if i < first else set()
            holds = t["holds"]
            note = "" if holds["papers"] == holds["of_papers"] else f"page holds {holds['papers']} of {holds['of_papers']} papers"
            return Row("page tables", node, t["papers"][i], t["reach"][i] or t["papers"][i], len(linked), note)
    return Row("page tables", note=f"{node} not in the page's tables")


def overview_row(surface: str, data: dict, node: str | None) -> Row:
    """The node's label where the overview draws it: a concept overview ends it with the papers it reaches."""
    for item in data["nodes"]:
        if item["id"] == node:
            label = item.get("label", "")
            found = COUNT_IN_LABEL.search(label)
            if found:
                return Row(surface, node, reach=int(found.group(1)), note=f"label {label!r}: the number is its reach")
            return Row(surface, node, note=f"label {label!r} shows no count")
    return Row(surface, node, note=f"not drawn in the overview ({len(data['nodes'])} nodes)")


# ---------------------------------------------------------------- the browser


def panel_facts(page) -> dict:
    """What the side panel shows: its node, label, type, "Papers", "With narrower concepts", "Linked papers (N)"."""
    return page.evaluate("""() => {
        const panel = document.getElementById("kg-panel");
        const text = (sel) => { const n = panel.querySelector(sel); return n ? n.textContent.trim() : null; };
        const linked = [...panel.querySelectorAll("h3")].map((h) => h.textContent).find((s) => s.startsWith("Linked papers"));
        return {node: panel.dataset.node || null, label: text("h2.kg-label"), kind: text(".kg-kind"),
                papers: text(".kg-paper-count"), reach: text(".kg-reach"), linked: linked || null,
                status: document.getElementById("kg-search-status").textContent};
    }""")


def tooltip_of(page, node: str) -> str | None:
    """The count line of the tooltip vis-network shows for ``node`` (its title element), if drawn."""
    return page.evaluate("""(id) => {
        const item = kgExplorer.nodes.get(id);
        if (!item || !item.title) return null;
        const line = item.title.querySelector ? item.title.querySelector(".kg-muted") : null;
        return line ? line.textContent : String(item.title);
    }""", node)


def open_in_explorer(page, url: str, name: str, *, served: bool, timeout_ms: int) -> dict:
    """Open the explorer at ``url``, search ``name`` (Enter: the best match), wait for its panel."""
    page.goto(url, timeout=timeout_ms)
    page.wait_for_selector("#kg-graph canvas", timeout=timeout_ms)
    page.wait_for_selector("body[data-state=ready]", state="attached", timeout=timeout_ms)
    page.fill("#kg-search", name)
    page.press("#kg-search", "Enter")
    done = "#kg-panel[data-node] .kg-served[data-loaded=true]" if served else "#kg-panel[data-node] .kg-facts"
    page.wait_for_selector(f"{done}, #kg-panel[data-node] .kg-abstract, #kg-panel .kg-error, "
                           "#kg-search-status:not(:empty)", state="attached", timeout=timeout_ms)
    page.wait_for_timeout(1500)  # the focus animation (450 ms), so the screenshot shows the node centred
    return panel_facts(page)


def panel_row(surface: str, facts: dict) -> Row:
    linked = re.search(r"\((\d+)\)", facts["linked"] or "")
    number = lambda s: int(s) if s and s.isdigit() else None  # noqa: E731
    papers = number(facts["papers"])
    note = f"{facts['kind'] or '?'} {facts['label']!r}" if facts["node"] else (facts["status"] or "no panel")
    return Row(surface, facts["node"], papers, number(facts["reach"]) or papers, int(linked.group(1)) if linked else None,
               note + ("" if facts["reach"] else "; no 'With narrower concepts' (so reach = papers)"))


def tooltip_row(surface: str, page, node: str | None) -> Row:
    line = tooltip_of(page, node) if node else None
    if line is None:
        return Row(surface, node, note="node not drawn: no tooltip")
    found = COUNT_IN_TOOLTIP.search(line)
    return Row(surface, node, int(found.group(1)) if found else None, note=f"tooltip {line!r}")


class Browser:
    """Headless Chromium (playwright) that reaches only file: URLs or one origin."""

    def __init__(self):
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self.browser = self._playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)

    def page(self, origin: str | None, elsewhere: list[str], timeout_ms: int):
        context = self.browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(timeout_ms)

        def route(request_route):
            url = request_route.request.url
            if url.startswith(("data:",)) or (origin is None and url.startswith("file:")) \
                    or (origin is not None and url.startswith(origin + "/")):
                request_route.continue_()
            else:
                elsewhere.append(url)
                request_route.abort()

        page.route("**/*", route)
        page.on("dialog", lambda dialog: dialog.dismiss())
        return page

    def close(self):
        self.browser.close()
        self._playwright.stop()


# ---------------------------------------------------------------- kg serve


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`kg serve -g GRAPH --port PORT` on 127.0.0.1, waited for (bounded), stopped by its process id."""

    def __init__(self, graph: Path, log: Path, timeout: float):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("w")
        self.process = subprocess.Popen(kg_command() + ["serve", "-g", str(graph), "--host", "127.0.0.1",
                                                        "--port", str(self.port)],
                                        stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"kg serve exited with {self.process.returncode}; see {log}")
            try:
                self.get("/index.json", timeout=10)
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"kg serve did not answer within {timeout:g} s; see {log}")
                time.sleep(0.5)

    def get(self, path: str, timeout: float = 120) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
            return response.read()

    def json(self, path: str, timeout: float = 300):
        return json.loads(self.get(path, timeout))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self._log.close()


def path_of(node: str) -> str:
    return urllib.parse.quote(node, safe="/%")


def entity_page_row(server: Server, node: str) -> Row:
    """/entity/ID: its facts ("Papers", "With narrower concepts") and its "Papers (N)" heading."""
    text = server.get(f"/entity/{path_of(node)}", timeout=600).decode("utf-8")
    facts = dict((html.unescape(k).strip(), html.unescape(v).strip())
                 for k, v in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", text, re.S))
    listed = re.search(r"<h2>Papers \((\d+)\)</h2>", text)
    papers = int(facts["Papers"]) if facts.get("Papers", "").isdigit() else None
    reach = int(facts["With narrower concepts"]) if "With narrower concepts" in facts else papers
    label = re.search(r"<h1>(.*?)</h1>", text, re.S)
    return Row("served page", node, papers, reach, int(listed.group(1)) if listed else None,
               f"{html.unescape(label.group(1)) if label else '?'!r}"
               + ("" if "With narrower concepts" in facts else "; no 'With narrower concepts' (so reach = papers)"))


def json_row(server: Server, node: str) -> Row:
    view = server.json(f"/entity/{path_of(node)}.json?related=0")
    return Row("served JSON", view["id"], view["paper_count"], view["reach"],
               len(view["papers"]) + view["papers_not_listed"], f"{view['type']} {view['label']!r}")


def search_row(server: Server, name: str) -> Row:
    results = server.json("/search.json?" + urllib.parse.urlencode({"q": name}))["results"]
    if not results:
        return Row("served search", note="no match")
    top = results[0]
    same = [f"{r['id']} ({r['papers']})" for r in results[1:] if r["name"].casefold() == name.casefold()]
    return Row("served search", top["id"], top["papers"],
               note=f"{top['kind']} {top['label']!r}" + (f"; also named so: {', '.join(same)}" if same else ""))


# ---------------------------------------------------------------- the table


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "entity"


def cell(value) -> str:
    return "—" if value is None else str(value)


def print_report(report: Report) -> tuple[bool, bool]:
    """Print the entity's rows; return (paper counts agree, reaches agree)."""
    ref = report.reference
    print(f"\n{report.name}  (the offline page's search opens {ref or 'nothing'})")
    widths = (16, 44, 7, 7, 7)
    head = ("surface", "node shown", "papers", "reach", "listed")
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  note")
    print("  ".join("-" * w for w in widths) + "  ----")
    for r in report.rows:
        node = r.node or "—"
        if ref and r.node and not r.node.startswith("(") and r.node != ref:
            node += " (other node!)"
        print("  ".join(s.ljust(w) for s, w in zip((r.surface, node, cell(r.papers), cell(r.reach), cell(r.listed)),
                                                     widths)) + "  " + r.note)
    other = [r for r in report.rows if ref and r.node and not r.node.startswith("(") and r.node != ref
             and r.papers is not None]
    papers = {r.papers for r in report.rows if r.papers is not None} | {r.listed for r in report.rows if r.listed is not None}
    reaches = {r.reach for r in report.rows if r.reach is not None and not (r in other)}
    agree = len(papers) <= 1 and not other
    print(f"  paper counts {'agree: ' + cell(next(iter(papers), None)) if agree else 'DIFFER: ' + ', '.join(map(str, sorted(papers)))}"
          + (f" (and {len(other)} surface(s) show another node)" if other else "")
          + f"; reach {'agrees: ' + cell(next(iter(reaches), None)) if len(reaches) <= 1 else 'DIFFERS: ' + ', '.join(map(str, sorted(reaches)))}")
    return agree, len(reaches) <= 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="the -o of kg build (graphs/NAME)")
    parser.add_argument("names", nargs="*", default=list(DEFAULT_NAMES), help="entity names (default: GAN dropout)")
    parser.add_argument("--screenshots", metavar="DIR", help="save each entity's panel as DIR/NAME-offline.png, NAME-served.png")
    parser.add_argument("--timeout", type=float, default=300, help="seconds any one step may take (default 300)")
    args = parser.parse_args()
    graph = graph_stem(args.graph)
    page_file = graph.with_name(graph.name + ".html")
    if not page_file.is_file():
        parser.error(f"no offline page {page_file}: build the graph with the html format")
    if not Path(CHROMIUM).exists():
        parser.error(f"no Chromium at {CHROMIUM}")
    shots = Path(args.screenshots) if args.screenshots else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    timeout_ms = int(args.timeout * 1000)
    reports = [Report(name) for name in args.names]

    started = time.perf_counter()
    data = page_data(page_file)
    table = stats_table(graph, args.timeout)
    browser = Browser()
    elsewhere: list[str] = []
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"surface_counts-serve-{os.getpid()}.log"
    server = None
    try:
        # The offline page: its search picks the node every other surface is compared with.
        page = browser.page(None, elsewhere, timeout_ms)
        offline = {}
        for report in reports:
            facts = open_in_explorer(page, page_file.resolve().as_uri(), report.name, served=False, timeout_ms=timeout_ms)
            report.reference = facts["node"]
            offline[report.name] = (facts, tooltip_row("page tooltip", page, facts["node"]))
            if shots:
                page.screenshot(path=str(shots / f"{slug(report.name)}-offline.png"))
        page.context.close()

        server = Server(graph, log, args.timeout)
        served_data = page_data_from(server)
        page = browser.page(server.url, elsewhere, timeout_ms)
        for report in reports:
            ref = report.reference
            facts, tooltip = offline[report.name]
            label = facts["label"]
            kind = (facts["kind"] or "").strip() or None
            report.rows.append(stats_row(table, report.name, label, kind))
            report.rows.append(table_row(data, ref))
            report.rows.append(overview_row("page overview", data, ref))
            report.rows.append(tooltip)
            report.rows.append(panel_row("page panel", facts))
            report.rows.append(search_row(server, report.name))
            if ref:
                report.rows.append(json_row(server, ref))
                report.rows.append(entity_page_row(server, ref))
            report.rows.append(overview_row("served overview", served_data, ref))
            served = open_in_explorer(page, server.url + "/", report.name, served=True, timeout_ms=timeout_ms)
            report.rows.append(tooltip_row("served tooltip", page, served["node"]))
            report.rows.append(panel_row("served panel", served))
            if shots:
                page.screenshot(path=str(shots / f"{slug(report.name)}-served.png"))
        page.context.close()
    finally:
        if server is not None:
            server.stop()
        browser.close()
    log.unlink(missing_ok=True)  # kept only when something above failed

    for report in reports:
        report.rows.append(explain_row(graph, report.name, args.timeout))
        candidates = sparql_rows(graph, report.name, args.timeout)
        mine = [c for c in candidates if c[0] == report.reference] or candidates[:1]
        for node, kind, label, papers, reach, stored, stored_reach in mine:
            others = [f"{c[0]} ({c[3]})" for c in candidates if c[0] != node]
            report.rows.append(Row("SPARQL", node, papers, reach,
                                   note=f"COUNT DISTINCT; stored kg:paperCount {stored}, kg:paperCountWithNarrower "
                                        f"{stored_reach}" + (f"; also named so: {', '.join(others)}" if others else "")))
        if not candidates:
            report.rows.append(Row("SPARQL", note="no entity has this kg:lookupKey"))

    print(f"Surface counts of {graph} ({time.perf_counter() - started:.0f} s). papers: the paper count shown "
          "(papers mentioning it); reach: with narrower concepts; listed: papers the surface lists or says it links")
    results = [print_report(report) for report in reports]
    if elsewhere:
        print(f"\nChromium tried to reach elsewhere (refused): {sorted(set(elsewhere))[:5]}")
    disagree = [r.name for r, (agree, _) in zip(reports, results) if not agree]
    print("\n" + (f"Paper counts differ for: {', '.join(disagree)}" if disagree else "Paper counts agree on every surface."))
    return 1 if disagree else 0


def page_data_from(server: Server) -> dict:
    """The served explorer's embedded data (its overview's nodes and their labels)."""
    text = server.get("/", timeout=600).decode("utf-8")
    found = re.search(r'<script id="kg-data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


if __name__ == "__main__":
    sys.exit(main())
