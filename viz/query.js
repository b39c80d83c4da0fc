/* kg serve's query page: runs the editor's SPARQL against /sparql and shows the results.
 *
 * SELECT results become a table whose kg IRIs link into the explorer (/?node=ID),
 * and so does the label beside each: a column ?XLabel links to the node in ?X
 * (the example queries answer each entity and paper so). ASK shows true or false;
 * CONSTRUCT and DESCRIBE show Turtle. Every value from the graph enters the page
 * through textContent, never innerHTML. A query in the page's URL (?query=...)
 * runs on load, so a query can be shared as a link, unless another site opened the
 * page (the server says so in data-autorun): then it waits for Run.
 */
(function () {
  "use strict";

  const examples = JSON.parse(document.getElementById("kg-examples").textContent);
  const form = document.getElementById("kg-query-form");
  const editor = document.getElementById("kg-query-text");
  const menu = document.getElementById("kg-examples-menu");
  const status = document.getElementById("kg-query-status");
  const results = document.getElementById("kg-results");
  const download = document.getElementById("kg-download");
  // kg mints node IRIs ending in KIND/KEY, KIND being paper or an entity type (the page names them);
  // that tail is the node's id in the explorer.
  const NODE_TAIL = new RegExp("(?:" + form.dataset.nodeKinds.split(" ").join("|") + ")/[^/#?]+$");

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function setStatus(text, isError) {
    status.textContent = text;
    status.className = isError ? "kg-error" : "kg-muted";
    document.body.dataset.state = isError ? "error" : "done";
  }

  /** The explorer's address of a kg node's IRI, or null for any other term. */
  function explorerHref(term) {
    const tail = term && term.type === "uri" ? term.value.match(NODE_TAIL) : null;
    return tail ? "/?node=" + encodeURIComponent(tail[0]) : null;
  }

  /** One cell of a SPARQL JSON result: kg nodes link into the explorer, and so does a label given
   *  the node it names (``labelOf``); anything else is text. */
  function cell(term, labelOf) {
    const td = el("td");
    if (!term) return td;
    const href = explorerHref(term) || (term.type === "literal" ? explorerHref(labelOf) : null);
    if (href) {
      const link = el("a", term.value, "kg-node-link");
      link.href = href;
      if (term.type === "literal") link.title = labelOf.value;
      td.append(link);
    } else if (term.type === "uri") {
      td.append(el("span", term.value));
    } else if (term.type === "bnode") {
      td.textContent = "_:" + term.value;
    } else {
      td.textContent = term.value;
    }
    if (term.type === "literal" && term["xml:lang"]) td.append(el("span", " @" + term["xml:lang"], "kg-muted"));
    return td;
  }

  function table(vars, bindings) {
    const head = el("tr");
    for (const name of vars) head.append(el("th", name));
    const thead = el("thead");
    thead.append(head);
    // ?XLabel is the label of the node in ?X, when the query answers both.
    const named = {};
    for (const name of vars) {
      if (name.endsWith("Label") && vars.includes(name.slice(0, -"Label".length))) named[name] = name.slice(0, -"Label".length);
    }
    const tbody = el("tbody");
    for (const binding of bindings) {
      const row = el("tr");
      for (const name of vars) row.append(cell(binding[name], named[name] ? binding[named[name]] : null));
      tbody.append(row);
    }
    const grid = el("table", null, "kg-table");
    grid.append(thead, tbody);
    return grid;
  }

  function offerDownload(query, format, label) {
    download.href = "/sparql?" + new URLSearchParams({ query: query, format: format }).toString();
    download.textContent = label;
    download.hidden = false;
  }

  let latest = 0; // the run whose answer may be shown: a newer run makes an older answer stale

  async function run() {
    const query = editor.value;
    if (!query.trim()) return;
    const runNumber = ++latest;
    const current = () => runNumber === latest;
    history.replaceState(null, "", "?" + new URLSearchParams({ query: query }).toString());
    results.replaceChildren();
    download.hidden = true;
    setStatus("Running…", false);
    document.body.dataset.state = "running";
    const started = performance.now();
    let response;
    try {
      response = await fetch("/sparql", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/sparql-results+json, text/turtle;q=0.9" },
        body: new URLSearchParams({ query: query }),
      });
    } catch (error) {
      if (current()) setStatus("Could not reach the server: " + error, true);
      return;
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(2) + " s";
    if (!response.ok) {
      const problem = await response.json().catch(() => null);
      if (current()) setStatus((problem && problem.error) || response.status + " " + response.statusText, true);
      return;
    }
    const truncated = response.headers.get("KG-Results-Truncated");
    const type = response.headers.get("Content-Type") || "";
    if (type.startsWith("application/sparql-results+json")) {
      const data = await response.json();
      if (!current()) return;
      if (Object.prototype.hasOwnProperty.call(data, "boolean")) {
        results.append(el("p", String(data.boolean), "kg-boolean"));
        setStatus("ASK answered in " + seconds, false);
        return;
      }
      const rows = data.results.bindings;
      results.append(table(data.head.vars, rows));
      setStatus(rows.length + " row" + (rows.length === 1 ? "" : "s") + " in " + seconds + (truncated ? " — " + truncated : ""), false);
      offerDownload(query, "csv", "Download CSV");
    } else {
      const text = await response.text();
      if (!current()) return;
      results.append(el("pre", text, "kg-graph-text"));
      setStatus("Graph in " + seconds + (truncated ? " — " + truncated : ""), false);
      offerDownload(query, "turtle", "Download Turtle");
    }
  }

  menu.addEventListener("change", function () {
    const example = examples.find((e) => e.name === menu.value);
    if (!example) return;
    editor.value = example.query;
    run();
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    run();
  });
  editor.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  });

  document.body.dataset.state = "idle";
  if (new URLSearchParams(location.search).get("query")) {
    if (form.dataset.autorun === "no") {
      setStatus("This query came from a link on another site: read it, then press Run.");
      document.body.dataset.state = "idle";
    } else run();
  }
})();
