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

#: A disguised link, then a colour change, as the hostile trial put at the end of a title.
LINK = "\x1b]8;;http://evil/\x07click\x1b]8;;\x07\x1b[31m"
#: Any C0 control but tab and newline, DEL, any C1 control (U+009B is CSI on some terminals).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

ABSTRACTS = [  # (id, year, title, abstract): RL\x9bNet is a name of the 2024 papers only, so trends lists it
    ("p1", 2023, "Group Relative Policy Optimization for reasoning" + LINK,
     "We propose GRPO, a reinforcement learning method for mathematical reasoning. GRPO reaches 80.2% "
     "accuracy on GSM8K, outperforming PPO\x1b[2J. We evaluate GRPO on MATH."),
    ("p2", 2023, "Proximal policy optimization revisited" + LINK,
     "We study PPO for mathematical reasoning. PPO reaches 75.1% accuracy on GSM8K\x07. "
     "We compare PPO with GRPO on MATH and GSM8K."),
    ("p3", 2023, "Reward models for reasoning\x9b31m",
     "We propose a reward model for mathematical reasoning. It reaches 70.4% accuracy on GSM8K. "
     "We compare it with PPO and GRPO."),
    ("p4", 2024, "RL\x9bNet for reasoning" + LINK,
     "We propose RL\x9bNet, a reinforcement learning method for mathematical reasoning. RL\x9bNet reaches "
     "85.0% accuracy on GSM8K\x1b[31m, outperforming GRPO. We evaluate RL\x9bNet on MATH."),
    ("p5", 2024, "Scaling RL\x9bNet\x1b]8;;http://evil/\x07",
     "We scale RL\x9bNet for mathematical reasoning. RL\x9bNet reaches 86.1% accuracy on GSM8K. "
     "We compare RL\x9bNet with GRPO on MATH."),
    ("p6", 2024, "RL\x9bNet in practice\x85",
     "We apply RL\x9bNet to mathematical reasoning. RL\x9bNet reaches 84.0% accuracy on GSM8K. "
     "We compare RL\x9bNet with PPO."),
]

#: Each printing command, as run on the hostile graph (the graph's -g is added).
COMMANDS = {
    "similar": ["similar", "p1"],
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
        writer.writerows(ABSTRACTS)
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


@pytest.mark.parametrize("path", ["/paper/p1.json", "/paper/p1", "/index.json"])
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
    from kg.cli import _print

    class Answer:  # an answer whose marked mention itself carries an escape
        def as_text(self, mark):
            return "We propose " + mark("GR\x1b[2JPO") + "\x07."

    runner = CliRunner()
    with runner.isolation(color=True) as (out, _, _):  # as on a terminal: click keeps the styles
        _print(Answer(), "table", mark=lambda text: f"\x1b[1m{text}\x1b[0m")
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
