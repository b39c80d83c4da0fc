/* A task's comparison table and a dataset's leaderboard at the page's full width: a view of
 * their own (#comparison=ID, #leaderboard=ID), sortable by any column, each score's sentence
 * shown on hover, and downloadable as CSV. Their rows are the panel's (views.js offline, the
 * server's JSON twin when served).
 */

const wide = document.getElementById("kg-wide");

/** The columns of each board: a header, the cell's text (what sorting and the CSV read), and
 * the cell as drawn. */
const BOARDS = {
  comparison: {
    title: "Comparison", rows: (view) => view.comparison || [],
    columns: [
      { name: "Paper", text: (row) => row.title, draw: (row) => nodeButton(row.paper, row.title) },
      { name: "Year", text: (row) => String(row.year || ""), numeric: true },
      { name: "Proposes", text: (row) => row.proposes.map((e) => e.label).join("; "), draw: (row) => entityButtons(row.proposes) },
      { name: "Datasets", text: (row) => row.datasets.map((e) => e.label).join("; "), draw: (row) => entityButtons(row.datasets) },
      { name: "Metrics", text: (row) => row.metrics.map((e) => e.label).join("; "), draw: (row) => entityButtons(row.metrics) },
      { name: "Results", text: (row) => row.results.map(resultText).join("; "), draw: (row) => resultCells(row.results) },
    ],
  },
  leaderboard: {
    title: "Leaderboard",
    rows: (view) => (view.leaderboard || []).flatMap((board) => board.results.map((entry, rank) => Object.assign(
      { metric: board.metric, better: board.better, rank: rank + 1 }, entry))),
    columns: [
      { name: meta.page_kinds.metric, text: (row) => row.metric },
      { name: "Rank", text: (row) => (row.better ? String(row.rank) : ""), numeric: true },
      { name: "Score", text: (row) => row.text, sortBy: (row) => row.value, numeric: true,
        draw: (row) => scoreCell(row.text, row.sentence) },
      { name: "Reached by", text: (row) => row.subject || "" },
      { name: "Paper", text: (row) => row.title, draw: (row) => nodeButton(row.paper, row.title) },
    ],
  },
};

function entityButtons(entries) {
  const cell = document.createDocumentFragment();
  entries.forEach((entry, k) => cell.append(k ? ", " : "", nodeButton(entry.id, entry.label)));
  return cell;
}

function resultText(r) {
  return r.text + (r.kind === "gain" ? " gain" : "")
    + [r.metric, r.setting && "(" + r.setting + ")", r.dataset && "on " + r.dataset, r.subject && "by " + r.subject].filter(Boolean).map((w) => " " + w).join("");
}

function scoreCell(text, sentence) {
  const cell = corpus("span", text, sentence ? "kg-score" : null);
  if (sentence) cell.title = sentence; // the sentence it was read from, on hover
  return cell;
}

function resultCells(results) {
  const cell = document.createDocumentFragment();
  results.forEach((r, k) => cell.append(k ? "; " : "", scoreCell(resultText(r), r.sentence)));
  return cell;
}

/** Open node `id`'s comparison or leaderboard (`kind`) at full width; with `record`, the URL says so. */
async function openBoard(kind, id, record = true) {
  const board = BOARDS[kind];
  if (!board) return false;
  let view;
  try {
    view = served ? await getJSON(nodeUrl(id) + ".json?related=0") : api.view(resolveNode(tables, id) || id);
  } catch (error) {
    searchStatus.textContent = error.message;
    return false;
  }
  if (!view) return false;
  const rows = board.rows(view);
  setView("board");
  wide.replaceChildren();
  const head = el("div", null, "kg-wide-head");
  const title = el("h2");
  title.append(board.title + ": ", bdi(view.label));
  const download = el("a", "Download CSV", "kg-download");
  download.download = (view.label.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 60) || "kg") + "-" + kind + ".csv";
  download.href = URL.createObjectURL(new Blob([csv(board.columns, rows)], { type: "text/csv" }));
  const close = el("button", "Back", "kg-focus");
  close.type = "button";
  close.addEventListener("click", () => history.back());
  head.append(title, el("span", plural(rows.length, "row"), "kg-muted"), download, close);
  const box = el("div", null, "kg-wide-table");
  box.append(sortableTable(board.columns, rows));
  wide.append(head, box);
  overviewText.replaceChildren(board.title + " of ", bdi(view.label), ": " + plural(rows.length, "row")
    + ". Click a column's header to sort by it; hover a score for its sentence.");
  if (record) setHash(new URLSearchParams({ [kind]: view.id }).toString());
  return true;
}

/** A table of `rows` under `columns`, re-sorted by a column when its header is clicked (again: the
 * other way). */
function sortableTable(columns, rows) {
  const table = el("table", null, "kg-comparison kg-sortable");
  const head = el("tr");
  const body = el("tbody");
  let sorted = { column: -1, sign: 1 };
  const fill = (list) => body.replaceChildren(...list.map((row) => {
    const line = el("tr");
    for (const column of columns) {
      const cell = el("td", null, column.numeric ? "kg-number" : null);
      cell.append(column.draw ? column.draw(row) : corpus("span", column.text(row)));
      line.append(cell);
    }
    return line;
  }));
  columns.forEach((column, c) => {
    const button = el("button", column.name, "kg-sort");
    button.type = "button";
    const th = el("th");
    th.setAttribute("aria-sort", "none");
    button.addEventListener("click", () => {
      sorted = { column: c, sign: sorted.column === c ? -sorted.sign : 1 };
      for (const other of head.children) other.setAttribute("aria-sort", "none");
      th.setAttribute("aria-sort", sorted.sign > 0 ? "ascending" : "descending");
      const key = column.sortBy || column.text;
      fill(rows.slice().sort((a, b) => sorted.sign * compareCells(key(a), key(b))));
    });
    th.append(button);
    head.append(th);
  });
  table.append(el("thead"), body);
  table.firstChild.append(head);
  fill(rows);
  return table;
}

/** Numbers as numbers, empty cells last, text as the tables compare it. */
function compareCells(a, b) {
  if (a === b) return 0;
  if (a === "" || a === null || a === undefined) return 1;
  if (b === "" || b === null || b === undefined) return -1;
  const x = Number(a), y = Number(b);
  return !Number.isNaN(x) && !Number.isNaN(y) ? x - y : compareText(String(a), String(b));
}

/** `rows` as CSV (RFC 4180) under `columns`' names, each cell made safe to open in a spreadsheet. */
function csv(columns, rows) {
  const quote = (text) => {
    const safe = spreadsheetCell(text);
    return /[",\r\n]/.test(safe) ? '"' + safe.replace(/"/g, '""') + '"' : safe;
  };
  const lines = [columns.map((column) => quote(column.name)).join(",")];
  for (const row of rows) lines.push(columns.map((column) => quote(column.text(row))).join(","));
  return lines.join("\r\n") + "\r\n";
}

/** A cell as a spreadsheet should show it, by OWASP's CSV-injection rule: one that starts with
 * =, +, -, @, tab or CR, which a spreadsheet may run as a formula, gets a leading apostrophe unless
 * it is wholly a number ("-0.5", "+1.6%"); control characters other than tab and line ends are
 * written as visible \xNN, so no ESC or BEL reaches the sheet raw. */
function spreadsheetCell(text) {
  const visible = String(text).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g,
    (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
  const number = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?%?$/i.test(visible);
  return /^[=+\-@\t\r]/.test(visible) && !number ? "'" + visible : visible;
}

/** A button that opens a board at full width, for the panel. */
function boardButton(kind, id) {
  const button = el("button", "Open at full width", "kg-focus kg-open-board");
  button.type = "button";
  button.dataset.board = kind;
  button.addEventListener("click", () => openBoard(kind, id));
  return button;
}
