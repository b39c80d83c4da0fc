"""G7: what a command prints in text form cannot drive the terminal. Titles, labels and sentences
come from the data, and a title may end in an OSC 8 link, a colour change or a bell: every printing
command shows those control characters as ``\\x..``; its JSON escapes them as JSON does."""
import csv
import json
import re

import pytest
from click.testing import CliRunner

from kg import strings
from kg.cli import main
from hostile_papers import LINK, PAPERS

#: Any C0 control but tab and newline, DEL, any C1 control (U+009B is CSI on some terminals).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: Each printing command, as run on the hostile graph (the graph's -g is added).
COMMANDS = {
    "similar": ["similar", "-zBN5sBzdvr"],  # an id that starts with "-", read as one
    "compare": ["compare", "mathematical reasoning"],
    "explain": ["explain", "GRPO"],
    "explain-pair": ["explain", "PPO", "GRPO"],
    "related": ["related", "GRPO"],
    "leaderboard": ["leaderboard", "GSM8K"],
    "trends": ["trends"],
    "query": ["query", "SELECT ?t WHERE { ?p dcterms:title ?t }"],
    "query-csv": ["query", "--format", "csv", "SELECT ?t WHERE { ?p dcterms:title ?t }"],
    # A row that ends like an N-Triples line (" .") is still a CSV row, escaped as text.
    "query-csv-like-ntriples": ["query", "--format", "csv", 'SELECT ?t WHERE { BIND("red\\u001b[31m ." AS ?t) }'],
    "query-construct": ["query", "CONSTRUCT { ?p dcterms:title ?t } WHERE { ?p dcterms:title ?t }"],
    "stats": ["stats"],
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A graph of papers whose titles and sentences carry terminal escapes, built with the real CLI."""
    folder = tmp_path_factory.mktemp("hostile")
    with open(folder / "hostile.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["id", "year", "title", "abstract"])
        writer.writerows(PAPERS)
    stem = folder / "hostile"
    result = CliRunner().invoke(main, ["build", "-q", str(folder / "hostile.csv"), "-o", str(stem), "--formats", "nt"])
    assert result.exit_code == 0, result.output
    return stem, result.output


def test_the_build_summary_names_entities_escaped(hostile):
    summary = hostile[1]
    assert "RL\\x9bNet" in summary and not CONTROL.search(summary)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_prints_the_datas_control_characters_escaped(hostile, command):
    result = CliRunner().invoke(main, [*COMMANDS[command], "-g", str(hostile[0])])
    assert result.exit_code == 0, result.output
    # The hostile text is there, escaped: \x.. in text, \u00.. in N-Triples.
    assert "\\x" in result.output or "\\u00" in result.output.lower(), result.output
    assert not CONTROL.search(result.output), repr(CONTROL.search(result.output))


@pytest.mark.parametrize("command", ["similar", "compare", "explain", "related", "leaderboard", "trends", "query"])
def test_each_commands_json_holds_no_raw_control_character_and_the_same_text(hostile, command):
    result = CliRunner().invoke(main, [*COMMANDS[command], "-g", str(hostile[0]), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert not CONTROL.search(result.output), repr(CONTROL.search(result.output))
    assert "\x9b" in json.dumps(json.loads(result.output), ensure_ascii=False)  # escaped, not lost


@pytest.mark.parametrize("path", ["/paper/-zBN5sBzdvr.json", "/paper/-zBN5sBzdvr", "/index.json"])
def test_serve_get_prints_a_page_with_the_datas_control_characters_escaped(hostile, path):
    result = CliRunner().invoke(main, ["serve", "-g", str(hostile[0]), "--get", path])
    assert result.exit_code == 0, result.output
    assert not CONTROL.search(result.output), repr(CONTROL.search(result.output))
    if path.endswith(".json"):
        json.loads(result.output)  # still JSON


def test_an_error_quoting_a_name_escapes_it(tmp_path):
    result = CliRunner().invoke(main, ["build", str(tmp_path / "missing\x1b[31m\x9b.csv"), "-o", str(tmp_path / "g")])
    assert result.exit_code == 1 and "missing\\x1b[31m\\x9b.csv: no such file" in result.output
    assert not CONTROL.search(result.output)


def test_the_explain_marks_on_a_terminal_are_styled_while_the_data_is_escaped():
    from kg.terminal import print_answer

    class Answer:  # an answer whose marked mention itself carries an escape
        def as_text(self, mark):
            return "We propose " + mark("GR\x1b[2JPO") + "\x07."

    runner = CliRunner()
    with runner.isolation(color=True) as (out, _, _):  # as on a terminal: click keeps the styles
        print_answer(Answer(), "table", mark=lambda text: f"\x1b[1m{text}\x1b[0m")
    printed = out.getvalue().decode()
    assert printed == "We propose \x1b[1mGR\\x1b[2JPO\x1b[0m\\x07.\n"


def test_printable_escapes_c0_c1_and_del_but_keeps_tabs_newlines_and_crlf():
    assert strings.printable("a\tb\nc\r\nd") == "a\tb\nc\r\nd"
    assert strings.printable("x\ry\x00z\x7f\x85\x9b") == "x\\x0dy\\x00z\\x7f\\x85\\x9b"
    assert strings.printable("Title" + LINK) == "Title\\x1b]8;;http://evil/\\x07click\\x1b]8;;\\x07\\x1b[31m"


def test_printable_json_escapes_c1_and_del_and_keeps_the_value():
    text = json.dumps({"t": "a\x7fb\x9bc\x1b"}, ensure_ascii=False)
    assert not CONTROL.search(strings.printable_json(text))
    assert json.loads(strings.printable_json(text)) == {"t": "a\x7fb\x9bc\x1b"}
