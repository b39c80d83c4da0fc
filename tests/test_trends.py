"""Per-file metadata (kg build --set) reaches the graph, and kg trends ranks entities by the change
of their share of papers between two periods."""
import csv
import json

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.store import open_graph, run_query
from kg.query.graph_index import GraphIndex, graph_index, store_tables
from kg.query.trends import trends

from support import FIXTURES


def _abstracts():
    blocks = FIXTURES.joinpath("sample.txt").read_text(encoding="utf-8").split("\n\n")
    return [" ".join(block.split()) for block in blocks[1:] if block.strip()]


@pytest.fixture(scope="module")
def two_years(tmp_path_factory):
    """The sample's eight abstracts in two CSV files with decision codes: the first four of 2024,
    the last four of 2025, given their year, venue, URL and code meanings on the command line."""
    folder = tmp_path_factory.mktemp("trends")
    abstracts = _abstracts()
    for name, rows in (("early.csv", abstracts[:4]), ("late.csv", abstracts[4:])):
        with open(folder / name, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["PID", "Decision", "Abstract"])
            for n, abstract in enumerate(rows):
                writer.writerow([f"{name[0]}{n}", n % 2, abstract])
    stem = folder / "g"
    result = CliRunner().invoke(main, [
        "build", str(folder / "early.csv"), str(folder / "late.csv"), "-o", str(stem), "-q",
        "--set", "early.csv", "year=2024", "--set", "late.csv", "year=2025", "--set", "*", "venue=Workshop",
        "--set", "late.csv", "venue=Workshop 2025",
        "--set", "*", "url=https://example.org/forum?id={id}", "--set", "*", "decisions=1=Accept;0=Reject"])
    assert result.exit_code == 0, result.output
    return stem


def test_set_gives_each_file_its_year_venue_url_and_the_meaning_of_its_decision_codes(two_years):
    rows = {row["id"].value: (row["year"].value, row["venue"].value, row["decision"].value, row["url"].value)
            for row in run_query(open_graph(two_years), """
                SELECT ?id ?year ?venue ?decision ?url WHERE {
                  ?p a kg:Paper ; dcterms:identifier ?id ; dcterms:issued ?year ; kg:venue ?venue ;
                     kg:decision ?decision ; schema:url ?url }""")}
    assert rows["e0"] == ("2024", "Workshop", "Reject", "https://example.org/forum?id=e0")
    assert rows["e1"][2] == "Accept"
    assert rows["l3"] == ("2025", "Workshop 2025", "Accept", "https://example.org/forum?id=l3")
    assert len(rows) == 8


def test_a_setting_that_names_no_input_file_or_no_known_key_stops_the_build_with_one_line(tmp_path):
    for setting, message in ((["--set", "other.csv", "year=2020"], "names none of the input files"),
                             (["--set", "*", "year=twenty"], "is not a year"),
                             (["--set", "*", "url=https://example.org/"], "has no {id}"),
                             (["--set", "*", "colour=red"], "is not KEY=VALUE")):
        result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(tmp_path / "g"), *setting])
        assert result.exit_code != 0 and message in result.output, result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "g.ttl").exists()


def test_trends_from_the_kept_tables_equal_those_from_the_store(two_years):
    for by in ("year", "venue"):
        kept = trends(graph_index(two_years), by=by, min_papers=1, top=100)
        stored = trends(GraphIndex(store_tables(open_graph(two_years))), by=by, min_papers=1, top=100)
        assert kept.as_json() == stored.as_json() and kept.rising


def test_trends_counts_each_entity_per_period_and_ranks_the_change_of_its_share(two_years):
    found = trends(graph_index(two_years), by="year", min_papers=1, top=100)
    assert found.periods == {"2024": 4, "2025": 4}
    assert (found.earlier, found.later) == ("2024", "2025")
    rising = {t.label: t for t in found.rising}
    falling = {t.label: t for t in found.falling}
    # AndroidWorld is named by PhoneRL alone (2025), GSM8K by C-GRPO alone (2024); GRPO by both,
    # so its share did not change and it neither rises nor falls.
    assert rising["AndroidWorld"].counts == {"2024": 0, "2025": 1} and rising["AndroidWorld"].z > 0
    assert falling["GSM8K"].counts == {"2024": 1, "2025": 0}
    assert rising["AndroidWorld"].z == pytest.approx(-falling["GSM8K"].z)
    assert "GRPO" not in rising and "GRPO" not in falling
    for trend in [*found.rising, *found.falling]:
        assert sum(trend.counts.values()) >= 1
        assert (trend.z > 0) == (trend.counts["2025"] > trend.counts["2024"])
    assert all(a.z >= b.z for a, b in zip(found.rising, found.rising[1:]))
    assert all(a.z <= b.z for a, b in zip(found.falling, found.falling[1:]))


def test_trends_by_venue_and_its_json_twin(two_years):
    result = CliRunner().invoke(main, ["trends", "-g", str(two_years), "--by", "venue", "--type", "Method",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["periods"] == {"Workshop": 4, "Workshop 2025": 4}
    assert {t["type"] for t in data["rising"] + data["falling"]} <= {"Method"}
    table = CliRunner().invoke(main, ["trends", "-g", str(two_years), "--type", "Method"])
    assert table.exit_code == 0 and "Rising:" in table.output and "Falling:" in table.output


def test_trends_on_a_graph_of_one_year_says_how_to_give_papers_their_years(sample):
    result = CliRunner().invoke(main, ["trends", "-g", str(sample)])
    assert result.exit_code != 0
    assert "--set FILE year=VALUE" in result.output and "Traceback" not in result.output


def test_kg_serve_answers_trends_as_json_as_the_cli_does(two_years):
    served = CliRunner().invoke(main, ["serve", "-g", str(two_years), "--get", "/trends.json?type=Method&k=5"])
    assert served.exit_code == 0, served.output
    cli = CliRunner().invoke(main, ["trends", "-g", str(two_years), "--type", "Method", "-k", "5", "--format", "json"])
    assert json.loads(served.output[served.output.index("{"):]) == json.loads(cli.output)
    bad = CliRunner().invoke(main, ["serve", "-g", str(two_years), "--get", "/trends.json?by=colour"])
    assert bad.exit_code != 0 and "400" in bad.output
