"""kg serve in a real browser (headless Chromium): the explorer's search, kind filters, node clicks,
neighbourhoods and evidence panel, the query page, and a hostile corpus that stays text."""
from __future__ import annotations

import contextlib
import json
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from kg import serve
from kg.viz import render
from kg.build import write_outputs
from kg.vocab import DEFAULT_BASE
from support import RECORD_DIALOGS, VIEWS, build, illegible, synthetic_conference, two_fields

FIXTURES = Path(__file__).parent / "fixtures"
GRPO = "method/group-relative-policy-optimization"
GRPO_ALIAS = "Group Relative Policy Optimization"


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return build(FIXTURES / "sample.txt", tmp_path_factory.mktemp("graphs"))


@pytest.fixture(scope="module")
def server(sample):
    running = serve.start(serve.make_app(sample, timeout=5), port=0)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def small_overview(sample):
    """The sample opening on an overview of 10 of its 60 nodes, as a large graph would: its top
    concepts, laid out in Python (so the page draws at once, with physics off), leaving most nodes out."""
    app = serve.make_app(sample, timeout=5, overview_nodes=10)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "LAYOUT_ABOVE", 5)
        app.explorer_page()  # rendered once, then kept
    running = serve.start(app, port=0)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    running = serve.start(serve.make_app(build(FIXTURES / "hostile.txt", tmp_path_factory.mktemp("graphs")), timeout=5),
                          port=0)
    yield running
    running.stop()


def served_graph(G, folder: Path, **options):
    """``G`` written as a built graph in ``folder`` and served (its overview capped by ``options``)."""
    write_outputs(G, folder / "g", base=DEFAULT_BASE, title="kg", formats=("nt",))
    return serve.start(serve.make_app(folder / "g", timeout=5, **options), port=0)


@pytest.fixture(scope="module")
def fields_server(tmp_path_factory):
    running = served_graph(two_fields(), tmp_path_factory.mktemp("fields"), overview_nodes=20)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def conference_server(tmp_path_factory):
    running = served_graph(synthetic_conference(), tmp_path_factory.mktemp("conference"))
    yield running
    running.stop()


class Session:
    """A page that may reach its server only, recording anything else it tries and any dialog or error."""

    def __init__(self, browser, server, *, bypass_csp=False, viewport=None):
        self.origin = server.url
        self.context = browser.new_context(viewport=viewport or {"width": 1280, "height": 800}, bypass_csp=bypass_csp)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.elsewhere, self.dialogs, self.errors = [], [], []
        self.page.route("**/*", self._route)
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.add_init_script(RECORD_DIALOGS)

    def _route(self, route):
        url = route.request.url
        if url.startswith((self.origin + "/", "data:")):
            route.continue_()
        else:
            self.elsewhere.append(url)
            route.abort()

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, path: str = "/"):
        self.page.goto(self.origin + path)
        if urllib.parse.urlsplit(path).path == "/":
            self.page.wait_for_selector("#kg-graph canvas")
            self.page.wait_for_selector("body[data-state=ready]", state="attached")
        return self.page

    def close(self):
        self.context.close()

    def assert_clean(self):
        assert self.elsewhere == [], "the page tried to reach another server"
        assert self.dialogs == [] and self.page.evaluate("() => window.__kgDialogs") == []
        assert self.errors == []


@pytest.fixture
def session(browser, server):
    opened = Session(browser, server)
    yield opened
    opened.close()


def panel_shows(node_id, loaded=False):
    """A selector for the side panel once it shows ``node_id`` (and, with ``loaded``, what the server adds)."""
    selector = f"#kg-panel[data-node={json.dumps(node_id, ensure_ascii=False)}]"
    return selector + " .kg-served[data-loaded=true]" if loaded else selector


def texts(page, selector):
    return page.eval_on_selector_all(selector, "nodes => nodes.map(n => n.textContent)")


def click_node(page, node_id):
    """Click ``node_id`` where it is drawn, after centring the view on it."""
    at = page.evaluate("""(id) => {
        const network = kgExplorer.network;
        network.moveTo({position: network.getPositions([id])[id], scale: 1.5});
        const dom = network.canvasToDOM(network.getPositions([id])[id]);
        const box = document.getElementById("kg-graph").getBoundingClientRect();
        return {x: box.left + dom.x, y: box.top + dom.y};
    }""", node_id)
    page.mouse.click(at["x"], at["y"])
    page.wait_for_selector(panel_shows(node_id), state="attached")


def marked(paper_view) -> list[str]:
    """The mentions a paper's abstract marks: in order, overlapping ones left out (as kg.serve.segments does)."""
    spans = [(m["start"], m["end"]) for m in paper_view["mentions"]]
    return [text for text, is_mark in serve.segments(paper_view["abstract"], spans) if is_mark]


def view_of(server, path):
    with urllib.request.urlopen(server.url + path, timeout=30) as response:
        return json.loads(response.read())


# ---------------------------------------------------------------- the explorer


def test_search_filter_click_and_read_the_evidence(session, server):
    page = session.open("/")
    page.fill("#kg-search", "group relative")  # the server completes over names and aliases
    page.wait_for_selector(f"#kg-search-options option[value='{GRPO_ALIAS}']", state="attached")
    page.press("#kg-search", "Enter")
    page.wait_for_selector(panel_shows(GRPO, loaded=True), state="attached")
    assert page.text_content("#kg-panel h2") == "GRPO"
    assert page.text_content("#kg-panel .kg-kind") == "Method"
    assert texts(page, "#kg-panel .kg-aliases li") == [GRPO_ALIAS]
    # The evidence: each sentence as text, the mention in a <mark> at its offsets.
    view = view_of(server, f"/entity/{GRPO}.json")
    assert texts(page, "#kg-panel .kg-evidence .kg-sentence") == [e["sentence"] for e in view["evidence"]]
    assert texts(page, "#kg-panel .kg-evidence mark") == [e["sentence"][e["start"]:e["end"]] for e in view["evidence"]]
    assert set(texts(page, "#kg-panel .kg-evidence mark")) == {"GRPO", GRPO_ALIAS}
    assert page.eval_on_selector("#kg-panel .kg-evidence .kg-sentence > bdi",  # isolated, the mark inside
                                 "p => Array.from(p.childNodes).map(n => n.nodeName)") == ["#text", "MARK", "#text"]
    page.wait_for_selector("#kg-panel .kg-related-box[data-loaded=true]", state="attached")
    # C-GRPO, a variant of its name, is ranked with the related methods, so not listed again after them.
    assert {"PhoneRL", "C-GRPO"} <= set(texts(page, "#kg-panel .kg-related .kg-node-button"))
    assert texts(page, "#kg-panel .kg-variants .kg-node-button") == []

    # A kind filter hides that kind only, and shows it again.
    hidden = "() => kgExplorer.nodes.get().filter(n => Boolean(n.hidden)).map(n => n.kind)"
    page.uncheck("#kg-legend input[data-kind='Dataset']")
    datasets = view_of(server, "/index.json")["nodes"]["Dataset"]
    assert set(page.evaluate(hidden)) == {"Dataset"} and len(page.evaluate(hidden)) == datasets
    page.check("#kg-legend input[data-kind='Dataset']")
    assert page.evaluate(hidden) == []

    # A click on a node shows it, with its evidence.
    click_node(page, "dataset/gsm8k")
    page.wait_for_selector(panel_shows("dataset/gsm8k", loaded=True), state="attached")
    assert page.text_content("#kg-panel h2") == "GSM8K"
    assert set(texts(page, "#kg-panel .kg-evidence mark")) == {"GSM8K"}
    session.assert_clean()


def test_paper_panel_marks_every_mention_in_the_abstract(session, server):
    paper = view_of(server, f"/entity/{GRPO}.json")["papers"][0]["id"]
    view = view_of(server, f"/{paper}.json")
    page = session.open("/?" + urllib.parse.urlencode({"node": paper}))  # as linked from /query
    page.wait_for_selector(panel_shows(paper, loaded=True), state="attached")
    assert page.text_content("#kg-panel .kg-abstract") == view["abstract"]
    assert texts(page, "#kg-panel .kg-abstract mark") == marked(view)
    session.assert_clean()


def test_focus_on_a_neighbourhood_and_back(session, server):
    everything = sum(view_of(server, "/index.json")["nodes"].values())
    page = session.open("/?" + urllib.parse.urlencode({"node": GRPO}))
    page.wait_for_selector(panel_shows(GRPO), state="attached")
    assert page.evaluate("() => kgExplorer.nodes.length") == everything
    page.click("#kg-panel .kg-focus[data-hops='1']")
    page.wait_for_selector("body[data-view=focus]", state="attached")
    # One link: the two papers that mention GRPO, and the entity related to it (C-GRPO is a variant of it
    # and outperforms it).
    assert page.evaluate("() => kgExplorer.nodes.getIds().sort()") == sorted(
        [GRPO, "paper/a9f7eaad9627b871", "paper/a7db03a50a5fa476",
         "method/curriculum-aware-group-relative-policy-optimization"])
    assert page.text_content("#kg-overview") == "Within 1 link of GRPO: 4 nodes."
    assert page.text_content("#kg-legend input[data-kind='Paper'] ~ .kg-count") == "2"
    page.click("#kg-panel .kg-focus[data-hops='2']")
    page.wait_for_selector("#kg-overview:has-text('Within 2 links')", state="attached")
    assert page.evaluate("() => kgExplorer.nodes.length") > 3
    page.click("#kg-back")
    page.wait_for_selector("body[data-view=overview]", state="attached")
    assert page.evaluate("() => kgExplorer.nodes.length") == everything
    assert page.get_attribute("#kg-panel", "data-node") == GRPO
    session.assert_clean()


def test_the_served_map_opens_a_topic_whose_members_panels_and_neighbourhoods_come_from_the_server(browser, fields_server):
    """Served, the map is the first view too: a topic opens from its link, a member's panel loads from
    the server, its neighbourhood is drawn from the server's, and Back returns to the topic."""
    opened = Session(browser, fields_server)
    try:
        page = opened.open("/")
        assert sorted(page.evaluate("() => kgExplorer.nodes.getIds()")) == ["topic/1", "topic/2"]
        page.goto(fields_server.url + "/#topic=topic%2F1")
        page.wait_for_selector("body[data-view=topic]", state="attached")
        assert sorted(page.evaluate("() => kgExplorer.nodes.getIds()")) == ["dataset/cifar-10", "dataset/mnist", "method/gan"]
        page.click("#kg-panel .kg-node-button:has-text('MNIST')")
        page.wait_for_selector(panel_shows("dataset/mnist", loaded=True), state="attached")
        page.click("#kg-panel .kg-focus[data-hops='1']")
        page.wait_for_selector("body[data-view=focus]", state="attached")
        assert page.evaluate("() => location.hash") == "#focus=dataset%2Fmnist&hops=1"
        assert page.text_content("#kg-overview").startswith("Within 1 link of MNIST: 2 nodes")  # itself, its 15 papers as one
        page.go_back()
        page.wait_for_selector("body[data-view=topic]", state="attached")
        assert page.text_content("#kg-overview").startswith("Topic GAN · CIFAR-10")
        opened.assert_clean()
    finally:
        opened.close()


@pytest.mark.parametrize("window", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_every_label_of_every_served_view_is_legible_inside_the_canvas_and_clear_of_the_others(browser, conference_server,
                                                                                              window):
    """The rule of tests/test_viz.py on the page kg serve sends for a synthetic 20,000-paper graph:
    the map, a topic, a task's, a dataset's, a method's and a paper's neighbourhood."""
    opened = Session(browser, conference_server, viewport={"width": window[0], "height": window[1]})
    try:
        page = opened.open("/")
        for view, draw in VIEWS.items():
            page.evaluate(draw)
            assert illegible(page) == [], view
        opened.assert_clean()
    finally:
        opened.close()


def test_search_reaches_nodes_the_overview_leaves_out(browser, small_overview):
    opened = Session(browser, small_overview)
    try:
        page = opened.open("/")
        assert page.evaluate("() => kgExplorer.nodes.length") == 10
        assert page.evaluate("(id) => kgExplorer.nodes.get(id)", "dataset/refcoco") is None
        page.fill("#kg-search", "RefCOCO")
        page.press("#kg-search", "Enter")
        page.wait_for_selector(panel_shows("dataset/refcoco", loaded=True), state="attached")
        assert page.evaluate("() => kgExplorer.network.getSelectedNodes()") == ["dataset/refcoco"]
        assert page.text_content("#kg-overview").startswith("Within 1 link of RefCOCO")
        opened.assert_clean()
    finally:
        opened.close()


def test_a_deep_link_opens_a_node_the_overview_leaves_out(browser, small_overview):
    """/?node=ID for a node outside the overview: its neighbourhood is drawn and its panel filled."""
    opened = Session(browser, small_overview)
    try:
        node = "dataset/refcoco"
        view = view_of(small_overview, f"/entity/{node}.json")
        page = opened.open("/?" + urllib.parse.urlencode({"node": node}))
        page.wait_for_selector(panel_shows(node, loaded=True), state="attached")
        assert page.evaluate("(id) => kgExplorer.network.getSelectedNodes()") == [node]
        assert page.text_content("#kg-panel h2") == "RefCOCO"
        papers = texts(page, "#kg-panel h3:text-matches('^Linked papers') + .kg-links .kg-link")
        assert sorted(papers) == sorted(p["title"] for p in view["papers"])
        assert {"Dataset", "Paper"} <= {box.get_attribute("data-kind") for box in page.query_selector_all("#kg-legend input")}
        opened.assert_clean()  # no page error: the panel and legend were not left blank
    finally:
        opened.close()


def test_a_query_result_opens_in_the_explorer_beyond_the_overview(browser, small_overview):
    opened = Session(browser, small_overview)
    try:
        page = opened.open("/query?" + urllib.parse.urlencode(
            {"query": 'SELECT ?dataset WHERE { ?dataset skos:prefLabel "AndroidWorld" }'}))
        page.wait_for_selector("body[data-state=done]", state="attached")
        assert page.get_attribute("#kg-results a.kg-node-link", "href") == "/?node=dataset%2Fandroidworld"
        page.click("#kg-results a.kg-node-link")
        page.wait_for_selector(panel_shows("dataset/androidworld", loaded=True), state="attached")
        assert page.text_content("#kg-panel h2") == "AndroidWorld"
        assert page.query_selector_all("#kg-legend input")
        opened.assert_clean()
    finally:
        opened.close()


# ---------------------------------------------------------------- the query page


def test_query_page_runs_an_example_links_into_the_explorer_and_downloads_csv(session):
    page = session.open("/query")
    page.wait_for_selector("body[data-state=idle]", state="attached")
    page.select_option("#kg-examples-menu", "paper-proposes")
    page.wait_for_selector("body[data-state=done]", state="attached")
    columns = ["entity", "entityLabel", "paper", "paperLabel", "role", "proposed", "proposedLabel", "type"]
    assert texts(page, "#kg-results th") == columns
    rows = page.eval_on_selector_all("#kg-results tbody tr", "rows => rows.length")
    assert rows > 0 and page.text_content("#kg-query-status").startswith(f"{rows} row")
    href = page.get_attribute("#kg-download", "href")
    download = page.request.get(session.origin + href)
    assert download.status == 200 and download.headers["content-type"] == "text/csv; charset=utf-8"
    assert download.text().splitlines()[0] == ",".join(columns)
    assert len(download.text().splitlines()) == rows + 1

    paper = "#kg-results td:nth-child(3) a.kg-node-link"  # the paper column
    first = page.get_attribute(paper, "href")
    assert first.startswith("/?node=paper%2F")
    page.click(paper)
    node = urllib.parse.parse_qs(first[2:])["node"][0]
    page.wait_for_selector(panel_shows(node, loaded=True), state="attached")
    session.assert_clean()


def _label_links(page, column):
    """(text, href, the IRI of the node beside it) of each cell of ``column`` (?XLabel) on the query page."""
    headers = texts(page, "#kg-results th")
    label, node = headers.index(column) + 1, headers.index(column[:-len("Label")]) + 1
    return page.eval_on_selector_all("#kg-results tbody tr", f"""rows => rows.map(row => {{
        const link = row.querySelector("td:nth-child({label}) a.kg-node-link");
        return [link && link.textContent, link && link.getAttribute("href"), row.querySelector("td:nth-child({node})").textContent];
    }})""")


@pytest.mark.parametrize("name, column", [("top-datasets", "datasetLabel"), ("methods-on-benchmark", "methodLabel"),
                                          ("methods-on-benchmark", "benchmarkLabel"), ("entity-evidence", "paperLabel"),
                                          ("entity-evidence", "subjectLabel")])
def test_query_page_links_each_label_an_example_answers_to_its_node(session, name, column):
    """An example answers a node as ?X beside its label ?XLabel: the label links to the node in the explorer."""
    page = session.open("/query")
    page.wait_for_selector("body[data-state=idle]", state="attached")
    page.select_option("#kg-examples-menu", name)
    page.wait_for_selector("body[data-state=done]", state="attached")
    links = _label_links(page, column)
    assert links
    for text, href, iri in links:
        node = iri.split("/kg/id/", 1)[1]
        assert text and href == "/?node=" + urllib.parse.quote(node, safe="-_.!~*'()")
    page.click(f"#kg-results tbody tr:first-child td:nth-child({texts(page, '#kg-results th').index(column) + 1}) a")
    page.wait_for_selector(panel_shows(urllib.parse.parse_qs(links[0][1][2:])["node"][0], loaded=True), state="attached")
    session.assert_clean()


def test_query_page_shows_the_labels_it_links_as_text(browser, hostile_server):
    """Every example on the hostile corpus: each label link reads what the endpoint answered, markup and all."""
    opened, markup = Session(browser, hostile_server), []
    try:
        for example in view_of(hostile_server, "/query.json")["examples"]:
            page = opened.open("/query?" + urllib.parse.urlencode({"query": example["query"]}))
            page.wait_for_selector("body[data-state=done]", state="attached")
            request = urllib.request.Request(hostile_server.url + "/sparql", data=urllib.parse.urlencode(
                {"query": example["query"]}).encode(), headers={"Accept": "application/sparql-results+json"})
            with urllib.request.urlopen(request) as response:
                answer = json.load(response)
            for column in answer["head"]["vars"]:
                if column.endswith("Label") and column[:-len("Label")] in answer["head"]["vars"]:
                    shown = [text for text, _, _ in _label_links(page, column)]
                    assert shown == [row.get(column, {}).get("value") for row in answer["results"]["bindings"]], example["name"]
                    markup += [text for text in shown if text and "<" in text]
            assert page.evaluate("() => document.querySelectorAll('img, iframe, object, embed').length") == 0
            assert page.evaluate("() => document.querySelectorAll('script:not([src]):not([type])').length") == 0
        assert any("<script>" in text for text in markup)  # the hostile names did reach the table
        opened.assert_clean()
    finally:
        opened.close()


def test_the_panels_sparql_link_lists_what_the_panel_shows(session, server):
    page = session.open("/?" + urllib.parse.urlencode({"node": GRPO}))
    page.wait_for_selector(panel_shows(GRPO, loaded=True), state="attached")
    evidence = len(texts(page, "#kg-panel .kg-evidence .kg-sentence"))
    page.click("#kg-panel a[data-link=sparql]")
    page.wait_for_selector("body[data-state=done]", state="attached")
    assert {"paper", "title", "role", "sentence", "start", "end"} <= set(texts(page, "#kg-results th"))
    assert page.eval_on_selector_all("#kg-results tbody tr", "rows => rows.length") == evidence
    session.assert_clean()


def test_a_query_error_is_shown_as_text(session):
    page = session.open("/query?" + urllib.parse.urlencode({"query": "SELECT ?x WHERE { <script>alert(1)</script>"}))
    page.wait_for_selector("body[data-state=error]", state="attached")
    assert page.text_content("#kg-query-status").startswith("Invalid SPARQL")
    assert page.input_value("#kg-query-text") == "SELECT ?x WHERE { <script>alert(1)</script>"
    assert page.evaluate("() => document.scripts.length") == 2  # the examples' JSON and query.js
    # (Chromium logs the 400 answer as a console error, so only dialogs and other servers are checked.)
    assert session.dialogs == [] and session.elsewhere == []


# ---------------------------------------------------------------- hostile corpus


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "escaping-alone"])
def test_hostile_corpus_renders_as_text(browser, hostile_server, bypass_csp):
    """With the CSP bypassed, escaping alone must still keep the hostile fixture inert."""
    opened = Session(browser, hostile_server, bypass_csp=bypass_csp)
    try:
        page = opened.open("/")
        page.fill("#kg-search", "Evil-Net")  # its sentence holds the script and the image
        page.press("#kg-search", "Enter")
        page.wait_for_selector("#kg-panel .kg-served[data-loaded=true]", state="attached")
        entity = page.get_attribute("#kg-panel", "data-node")
        view = view_of(hostile_server, f"/entity/{entity}.json")
        assert page.text_content("#kg-panel h2") == view["label"] == "Evil-Net"
        assert texts(page, "#kg-panel .kg-evidence .kg-sentence") == [e["sentence"] for e in view["evidence"]]
        assert any("<script>alert(1)</script>" in e["sentence"] for e in view["evidence"])

        page.click("#kg-panel .kg-evidence .kg-node-button")  # its paper
        paper = view["evidence"][0]["paper"]
        page.wait_for_selector(panel_shows(paper, loaded=True), state="attached")
        abstract = view_of(hostile_server, f"/{paper}.json")
        assert "<script>alert(1)</script>" in abstract["abstract"] and "\U0001F600" in abstract["abstract"]
        assert page.text_content("#kg-panel .kg-abstract") == abstract["abstract"]
        # Offsets count code points: marks after the emoji still hold their mention.
        assert texts(page, "#kg-panel .kg-abstract mark") == marked(abstract)

        for path in (f"/entity/{entity}", f"/{paper}",
                     "/query?" + urllib.parse.urlencode({"query": f"SELECT ?a WHERE {{ <{abstract['iri']}> dcterms:abstract ?a }}"})):
            opened.open(path)
            if path.startswith("/query"):
                page.wait_for_selector("body[data-state=done]", state="attached")
                assert texts(page, "#kg-results td") == [abstract["abstract"]]
            assert page.evaluate("() => document.querySelectorAll('img, iframe, object, embed').length") == 0
        assert page.evaluate("() => document.querySelectorAll('script:not([src]):not([type])').length") == 0
        opened.assert_clean()
    finally:
        opened.close()


# ---------------------------------------------------------------- the same page from disk


def test_the_built_page_focuses_on_a_neighbourhood_offline(browser, sample):
    """From disk the page fetches nothing; its neighbourhoods come from the graph it embeds."""
    page_file = sample.with_name("sample.html")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    reached = []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:"))
               else (reached.append(route.request.url), route.abort()))
    try:
        page.goto(page_file.resolve().as_uri())
        page.wait_for_selector("body[data-state=ready]", state="attached")
        node = page.evaluate("() => kgExplorer.find('GRPO')")
        view = page.evaluate("(id) => kgExplorer.view(id)", node)
        links = len(view["papers"]) + len({r["object"] if r["subject"] == node else r["subject"] for r in view["relations"]})
        page.evaluate("(id) => kgExplorer.select(id)", node)
        page.click("#kg-panel .kg-focus[data-hops='1']")
        page.wait_for_selector("body[data-view=focus]", state="attached")
        assert page.evaluate("() => kgExplorer.nodes.length") == links + 1
        assert page.is_visible("#kg-back") and page.query_selector("#kg-panel .kg-served") is None
        page.click("#kg-back")
        assert page.evaluate("() => kgExplorer.nodes.length") == len(json.loads(
            view_embedded(page_file))["nodes"])
        assert reached == []
    finally:
        context.close()


def view_embedded(page_file: Path) -> str:
    html = page_file.read_text(encoding="utf-8")
    start = html.index('<script id="kg-data" type="application/json">') + len('<script id="kg-data" type="application/json">')
    return html[start:html.index("</script>", start)]


@contextlib.contextmanager
def offline_panel(browser, sample: Path, label: str):
    """The built page opened from disk with the node labelled ``label`` selected."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(sample.with_name("sample.html").resolve().as_uri())
        page.wait_for_selector("body[data-state=ready]", state="attached")
        node = page.evaluate("(label) => kgExplorer.find(label)", label)
        page.evaluate("(id) => kgExplorer.select(id)", node)
        yield page
    finally:
        context.close()


def test_an_entity_panel_lists_papers_and_relations_apart(browser, sample):
    with offline_panel(browser, sample, "PhoneRL-9B") as page:
        headings = page.locator("#kg-panel h3").all_inner_texts()
        assert [h.split(" (")[0].upper() for h in headings] == ["LINKED PAPERS", "RELATIONS", "RESULTS", "EVIDENCE"]
        relations = page.locator("#kg-panel ul").nth(1).inner_text()
        assert "evaluatedOn →" in relations and "AndroidWorld" in relations and "variantOf →" in relations


def test_names_listed_together_show_their_relation_without_a_direction(browser, sample):
    # The sample lists "GCN and GAT" in one sentence: kg:listedWith, written once from the smaller key,
    # reads the same from either end.
    for name, other in (("GAT", "GCN"), ("GCN", "GAT")):
        with offline_panel(browser, sample, name) as page:
            relations = page.locator("#kg-panel ul").nth(1).inner_text()
            assert "listedWith ↔" in relations and other in relations and "listedWith →" not in relations


def test_a_dataset_panel_lists_the_results_reported_on_it(browser, sample):
    with offline_panel(browser, sample, "AndroidWorld") as page:
        result = page.locator("#kg-panel .kg-results li")
        assert result.count() == 1
        assert result.inner_text().split() == "61.3% success rate on AndroidWorld by PhoneRL-9B".split()
        assert "reaches a success rate of 61.3% on AndroidWorld" in result.get_attribute("title")


def test_pages_isolate_corpus_text_so_an_rtl_override_stays_inside_it(session):
    page = session.open(f"/entity/{GRPO}")
    isolated = page.evaluate("""() => ["h1", ".kg-evidence a", ".kg-evidence mark", ".kg-sentence"].map(
        selector => getComputedStyle(document.querySelector(selector)).unicodeBidi)""")
    assert isolated == ["isolate"] * 4
    session.assert_clean()


def open_panel(browser, server, sample, where, node):
    """A page opened on ``node``'s panel: the sample's offline page from disk, or the page ``kg serve``
    serves once the server's part of the panel has loaded."""
    query = "?" + urllib.parse.urlencode({"node": node})
    if where == "kg serve":
        page = Session(browser, server).open("/" + query)
        page.wait_for_selector(panel_shows(node, loaded=True), state="attached")
    else:
        page = browser.new_page()
        page.goto(sample.with_name(sample.name + ".html").as_uri() + query)
        page.wait_for_selector(panel_shows(node), state="attached")
    return page


@pytest.mark.parametrize("where", ["offline page", "kg serve"])
def test_a_datasets_panel_lists_the_results_reported_on_it(browser, server, sample, where):
    """One panel, drawn by one function from the same view, whether the page is opened from disk
    or served: the results on AndroidWorld appear in both."""
    page = open_panel(browser, server, sample, where, "dataset/androidworld")
    results = texts(page, "#kg-panel .kg-results li")
    assert results and all("on AndroidWorld" in result for result in results)
    assert any(result.startswith("61.3%") and "by PhoneRL-9B" in result for result in results)
    page.close()


def test_a_second_run_replaces_the_first_runs_answer_instead_of_adding_to_it(session):
    page = session.open("/query?" + urllib.parse.urlencode({"query": "SELECT ?paper WHERE { ?paper a kg:Paper } LIMIT 3"}))
    page.wait_for_selector("body[data-state=done]", state="attached")
    # Two runs in flight at once (a double click on Run): only the later one's answer is shown.
    page.evaluate("""() => { const form = document.getElementById("kg-query-form");
                             form.requestSubmit(); form.requestSubmit(); }""")
    page.wait_for_selector("body[data-state=done]", state="attached")
    page.wait_for_function("() => !document.querySelector('#kg-query-status').textContent.startsWith('Running')")
    assert page.eval_on_selector_all("#kg-results table", "tables => tables.length") == 1
    assert page.eval_on_selector_all("#kg-results tbody tr", "rows => rows.length") == 3
    session.assert_clean()


@pytest.mark.parametrize("where", ["offline page", "kg serve"])
def test_a_concepts_panel_lists_its_narrower_names_and_theirs_the_broader_concept(browser, server, sample, where):
    """The hierarchy in both pages: "reasoning" lists "mathematical reasoning" and "spatial reasoning" as
    narrower, and "mathematical reasoning" lists "reasoning" as broader."""
    pages = []
    for node in ("task/reasoning", "task/mathematical-reasoning"):
        page = open_panel(browser, server, sample, where, node)
        pages.append(page)
        relations = " ".join(texts(page, "#kg-panel li"))
        if node == "task/reasoning":
            assert "narrower →" in relations and "mathematical reasoning" in relations and "spatial reasoning" in relations
        else:
            assert "broader →" in relations and "reasoning" in relations
    pages[0].screenshot(path=str(sample.parent / f"concept-panel-{where.replace(' ', '-')}.png"))
    for page in pages:
        page.close()


#: Fragments anyone can put in a link to the served page: none names a node, so each opens the first
#: view, and none may lead the page to ask the server anything but a node's own URL.
HOSTILE_FRAGMENTS = [
    "#comparison=__proto__", "#leaderboard=constructor", "#focus=__proto__&hops=2", "#topic=__proto__",
    "#comparison=..%2Fsparql%3Fquery%3DASK%7B%7D%2523", "#focus=..%2F..%2Fsparql%3Fquery%3DASK%7B%7D",
    "#leaderboard=dataset%2F..%2F..%2Fsparql%3Fquery%3DASK%7B%7D", "#comparison=task%2F%252e%252e",
    "#nothing=at-all",
]


@pytest.mark.parametrize("fragment", HOSTILE_FRAGMENTS)
def test_a_fragment_naming_no_node_opens_the_first_view_and_runs_no_query(browser, server, fragment):
    opened = Session(browser, server)
    asked = []
    opened.page.on("request", lambda request: asked.append(urllib.parse.urlsplit(request.url).path))
    try:
        page = opened.open("/" + fragment)
        page.wait_for_timeout(300)
        assert page.evaluate("() => document.body.dataset.view") in ("overview", "map")
        assert not [path for path in asked if path.startswith("/sparql") or path.startswith("/query")]
        opened.assert_clean()
    finally:
        opened.close()
