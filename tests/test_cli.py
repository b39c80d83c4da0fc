"""The kg command end to end on the sample corpus: build, query, stats, related, and failure modes."""
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg import build as build_module
from kg.cli import main
from kg.query import examples
from kg.vocab import RELATIONS
from kg.store import open_graph, run_query
from support import FIXTURES



def test_build_writes_every_output_and_summarises(sample_build):
    stem, output = sample_build
    for suffix in (".ttl", ".nt", ".jsonld", ".html"):
        assert stem.with_name(stem.name + suffix).stat().st_size > 0
    assert "Built the graph of 8 papers in" in output
    assert "Nodes: 8 Paper" in output and "Top entities:" in output


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_query_answers_on_the_sample(sample_build, name):
    stem, _ = sample_build
    example = examples()[name]
    rows = list(run_query(open_graph(stem), example.bind(example.params)))
    assert rows, f"example {name} returned nothing"


def test_methods_on_benchmark_finds_what_papers_evaluated_on_it_propose(sample_build):
    stem, _ = sample_build
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", "methods-on-benchmark",
                                       "--bind", "benchmark=RULER", "--format", "csv"])
    assert result.exit_code == 0, result.output
    methods = {row["methodLabel"] for row in csv.DictReader(io.StringIO(result.output))}
    assert {"Llama-3.1-70B", "GPT-4o"} <= methods


def test_methods_sharing_tasks_counts_what_the_papers_share(sample_build):
    """The counts materialised at build time equal a count through every paper (of the entities at
    or above the salience threshold, which the counts cover)."""
    store = open_graph(sample_build[0])
    direct = {}
    salient = "SELECT ?m WHERE { ?m a kg:Method ; kg:salience ?s FILTER(?s >= 1.5) }"
    for m in {r["m"].value for r in run_query(store, salient)}:
        rows = run_query(store, """SELECT ?o (COUNT(DISTINCT ?task) AS ?n) WHERE {
            ?p1 kg:proposes|kg:uses|kg:comparesWith ?m ; kg:addresses ?task .
            ?p2 kg:addresses ?task ; kg:proposes|kg:uses|kg:comparesWith ?o . ?o a kg:Method . FILTER(?o != ?m)
            ?o kg:salience ?so . ?task kg:salience ?st . FILTER(?so >= 1.5 && ?st >= 1.5)
          } GROUP BY ?o""".replace("?m ;", f"<{m}> ;").replace("?o != ?m", f"?o != <{m}>"))
        direct[m] = {r["o"].value: int(r["n"].value) for r in rows}
    stored = {}
    for row in run_query(store, "SELECT ?m ?o ?n WHERE { ?m kg:taskNeighbour [ kg:neighbour ?o ; kg:sharedTaskCount ?n ] }"):
        stored.setdefault(row["m"].value, {})[row["o"].value] = int(row["n"].value)
    assert stored and set(stored) == {m for m, others in direct.items() if others}
    for m, others in stored.items():
        assert len(others) == min(10, len(direct[m]))
        assert all(direct[m][o] == n for o, n in others.items())
        assert min(others.values()) >= max([n for o, n in direct[m].items() if o not in others], default=0)


def test_query_json_is_sparql_results_json(sample_build):
    stem, _ = sample_build
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "SELECT ?d WHERE { ?d a kg:Dataset }", "--format", "json"])
    data = json.loads(result.output)
    assert data["head"]["vars"] == ["d"] and len(data["results"]["bindings"]) >= 5


def test_bound_values_are_not_spliced_into_the_query(sample_build):
    stem, _ = sample_build
    hostile = 'RULER" } } ; DROP ALL ; SELECT * { ?s ?p ?o'
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", "methods-on-benchmark", "--bind", f"benchmark={hostile}"])
    assert result.exit_code == 0 and "(0 rows)" in result.output


def test_stats_and_related(sample_build):
    stem, _ = sample_build
    stats = CliRunner().invoke(main, ["stats", "-g", str(stem)])
    assert "Paper" in stats.output and "evaluatesOn" in stats.output
    relations = stats.output.split("Links (entity -> entity: relations and broader):")[1]  # counts per entity-to-entity relation
    assert "evaluatedOn" in relations and "variantOf" in relations and "Result" in stats.output
    related = CliRunner().invoke(main, ["related", "group relative policy optimization", "-g", str(stem), "--format", "json"])
    data = json.loads(related.output)
    assert data["query"] == "GRPO"
    # C-GRPO, which its paper compares with GRPO, is GRPO's name with a letter added: a variant of it,
    # ranked with the rest (and so not listed again after the list).
    ranked = {r["label"]: r for r in data["results"]}
    assert "C-GRPO" in ranked and ranked["C-GRPO"]["reason"].startswith("a kind or variant of GRPO")
    assert "C-GRPO" not in {v["label"] for v in data["variants"]}


def test_related_suggests_names_on_a_miss(sample_build):
    stem, _ = sample_build
    result = CliRunner().invoke(main, ["related", "PhoneRLL", "-g", str(stem)])
    assert result.exit_code == 1 and "Did you mean" in result.output and "PhoneRL" in result.output


def test_missing_graph_is_one_clear_line_not_a_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "kg.cli", "query", "-g", str(tmp_path / "nope"), "ASK {}"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "No graph at" in result.stderr and "Traceback" not in result.stderr


def test_failed_build_leaves_previous_outputs_untouched(sample_build, tmp_path, monkeypatch):
    stem = tmp_path / "g"
    assert CliRunner().invoke(main, ["build", str(FIXTURES / "papers.jsonl"), "-o", str(stem)]).exit_code == 0
    outputs = lambda: {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}  # noqa: E731
    before = outputs()

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(build_module, "render_html", broken)
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(stem)])
    assert result.exit_code != 0
    assert outputs() == before


def test_bad_records_are_listed_in_the_summary_or_fail_with_strict(tmp_path):
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "papers.jsonl"), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0 and "skipped 2 records" in result.output
    assert "papers.jsonl:4: invalid JSON" in result.output
    strict = CliRunner().invoke(main, ["build", "--strict", str(FIXTURES / "papers.jsonl"), "-o", str(tmp_path / "h")])
    assert strict.exit_code == 1 and "papers.jsonl:3" in strict.output


@pytest.mark.parametrize("command", [[], ["build"], ["query"], ["stats"], ["related"]])
def test_every_command_has_help(command):
    result = CliRunner().invoke(main, command + ["--help"])
    assert result.exit_code == 0 and "Usage: main" in result.output and "Example" in result.output


@pytest.mark.slow  # two whole builds, each in a fresh process
def test_rebuilds_write_identical_rdf_files(tmp_path):
    # Different hash seeds: set and dict orders must not leak into the files.
    for name, seed in (("a", "1"), ("b", "2")):
        subprocess.run([sys.executable, "-m", "kg.cli", "build", "-q", str(FIXTURES / "sample.txt"), "-o", str(tmp_path / name)],
                       check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed})
    for suffix in (".ttl", ".nt", ".jsonld"):
        assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes(), suffix


def test_formats_choose_the_files_and_the_store_holds_the_same_triples(sample_build, tmp_path):
    stem = tmp_path / "sample"
    (tmp_path / "sample.ttl").write_text("an older graph's Turtle", encoding="utf-8")
    result = CliRunner().invoke(main, ["build", "-q", str(FIXTURES / "sample.txt"), "-o", str(stem), "--formats", "nt"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "sample.index.nt", "sample.manifest.json", "sample.nt", "sample.oxigraph",
        "sample.tables.json", "sample.vectors.npz"]
    import pyoxigraph as ox
    from_files = ox.Store()
    for name in ("sample.nt", "sample.index.nt"):  # the graph, and the index derived from it
        from_files.bulk_load(path=str(tmp_path / name), format=ox.RdfFormat.N_TRIPLES)
    assert set(open_graph(stem)) == set(from_files)
    assert len(from_files) > len(ox.Store()) and (tmp_path / "sample.index.nt").stat().st_size
    assert (tmp_path / "sample.nt").read_bytes() == sample_build[0].with_suffix(".nt").read_bytes()


def test_an_unknown_format_is_refused_before_anything_is_built(tmp_path):
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(tmp_path / "g"),
                                       "--formats", "nt,rdfxml"])
    assert result.exit_code == 2 and "rdfxml is not an output format" in result.output
    assert not list(tmp_path.iterdir())


def test_no_output_of_a_build_holds_an_absolute_path(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    corpus.mkdir()
    (corpus / "sample.txt").write_bytes((FIXTURES / "sample.txt").read_bytes())
    result = CliRunner().invoke(main, ["build", "-q", "--report", str(corpus / "sample.txt"), "-o", str(out / "g")])
    assert result.exit_code == 0, result.output
    files = [path for path in out.rglob("*") if path.is_file()]
    assert {path.suffix for path in files} >= {".nt", ".ttl", ".jsonld", ".html", ".md"}
    for path in files:
        assert str(tmp_path).encode() not in path.read_bytes(), path
    assert b'<https://w3id.org/kg/ontology#sourceFile> "sample.txt"' in (out / "g.nt").read_bytes()


def test_a_build_removes_the_staging_folders_killed_builds_of_its_graph_left(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)  # a process that has exited
    stale = [tmp_path / f".g.staging-{dead}-a1b2c3d4", tmp_path / ".g.x1y2z3w4"]  # the second: an older kg's
    kept = [tmp_path / f".g.staging-{os.getpid()}-a1b2c3d4",  # a build still running
            tmp_path / f".other.staging-{dead}-a1b2c3d4", tmp_path / ".g.notes"]
    for folder in stale + kept:
        folder.mkdir()
        (folder / "g.nt").write_text("half-written")
    result = CliRunner().invoke(main, ["build", "-q", str(FIXTURES / "papers.csv"), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert [folder.exists() for folder in stale + kept] == [False, False, True, True, True]


def test_a_build_of_unreadable_files_alone_says_why_for_each(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01binary")
    (tmp_path / "latin1.txt").write_bytes(b"Header\n\ncaf\xe9\n")
    (tmp_path / "no-abstract.csv").write_text("title,summary\nA,B\n")
    result = CliRunner().invoke(main, ["build", "-q", str(tmp_path / "*.*"), "-o", str(tmp_path / "out" / "g")])
    assert result.exit_code == 1
    assert "No abstracts found in the input; skipped 4 records:" in result.output
    for line in ["binary.txt: binary file", "empty.txt: empty file", "latin1.txt:3: not valid UTF-8",
                 "no-abstract.csv:1: no 'abstract' column (columns: title, summary)"]:
        assert line in result.output


def test_skipped_records_are_listed_up_to_a_hundred_with_a_count_of_the_rest(tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text("title,abstract\nok,We propose X.\n" + "".join(f"t{i},\n" for i in range(105)), encoding="utf-8")
    result = CliRunner().invoke(main, ["build", "-q", str(path), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0 and "skipped 105 records:" in result.output
    assert "gaps.csv:102: record has no abstract" in result.output and "gaps.csv:103:" not in result.output
    assert "... and 5 more" in result.output


def test_an_example_asks_for_its_parameters_instead_of_using_the_samples(sample_build):
    stem, _ = sample_build
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", "methods-on-benchmark"])
    assert result.exit_code == 2
    assert "needs --bind benchmark=VALUE (for instance --bind benchmark='AndroidWorld')" in result.output


#: A corpus that names none of the sample's entities.
OTHER_CORPUS = """Other Vision Workshop 2024 Papers

We propose SegMamba, a segmentation network for semantic segmentation. SegMamba is evaluated on Cityscapes and \
ADE20K, where it outperforms DeepLabV3 and reaches 82.1% mIoU on Cityscapes.

We introduce DepthFormer, a transformer for monocular depth estimation. Experiments on KITTI and NYUv2 show that \
DepthFormer outperforms DeepLabV3 and SegMamba.
"""


@pytest.fixture(scope="module")
def other_graph(tmp_path_factory):
    corpus = tmp_path_factory.mktemp("other") / "other.txt"
    corpus.write_text(OTHER_CORPUS, encoding="utf-8")
    result = CliRunner().invoke(main, ["build", "-q", str(corpus), "-o", str(corpus.with_suffix(""))])
    assert result.exit_code == 0, result.output
    return corpus.with_suffix("")


def test_list_and_a_missing_parameter_cite_names_of_the_graph_queried(other_graph):
    """Not the sample's GRPO or RULER: a name of this graph for which the example answers."""
    listed = CliRunner().invoke(main, ["query", "-g", str(other_graph), "--list"])
    assert listed.exit_code == 0, listed.output
    cited = {}  # example -> the name cited for its parameter
    for block in listed.output.strip().split("\n\n"):
        found = re.search(r"parameters: --bind \w+=VALUE \(a \w+, e\.g\. ([^)]+)\)", block)
        if found:
            cited[block.split("\n")[0]] = found.group(1)
    assert len(cited) >= 5, listed.output
    sample_names = {value for example in examples().values() for value in example.params.values()}
    assert not sample_names & set(cited.values()) and "GRPO" not in listed.output
    for name, value in cited.items():
        [param] = examples()[name].params
        answer = CliRunner().invoke(main, ["query", "-g", str(other_graph), "--example", name,
                                           "--bind", f"{param}={value}", "--format", "csv"])
        assert answer.exit_code == 0 and len(answer.output.splitlines()) > 1, f"{name} {value}: {answer.output}"
        missing = CliRunner().invoke(main, ["query", "-g", str(other_graph), "--example", name])
        assert missing.exit_code == 2 and f"(for instance --bind {param}={value!r})" in missing.output


def test_list_and_a_missing_parameter_cite_no_name_where_the_graph_has_none(tmp_path):
    graph = tmp_path / "bare.nt"
    graph.write_text('<https://w3id.org/kg/id/paper/p1> <http://www.w3.org/2000/01/rdf-schema#label> "A paper" .\n'
                     '<https://w3id.org/kg/id/paper/p1> '
                     '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://w3id.org/kg/ontology#Paper> .\n')
    listed = CliRunner().invoke(main, ["query", "-g", str(graph), "--list"])
    assert listed.exit_code == 0 and "--bind benchmark=VALUE (a Dataset)" in listed.output
    assert "e.g." not in listed.output
    missing = CliRunner().invoke(main, ["query", "-g", str(graph), "--example", "methods-on-benchmark"])
    assert missing.exit_code == 2 and "needs --bind benchmark=VALUE." in missing.output
    assert "for instance" not in missing.output


@pytest.mark.parametrize("name", sorted(name for name, example in examples().items() if example.params))
def test_examples_answer_the_entity_and_its_label_not_the_name_bound(sample_build, name):
    """Bound as "grpo", the first columns are GRPO's IRI and its label "GRPO"; every ?X beside an
    ?XLabel is a node's IRI."""
    stem, _ = sample_build
    [(param, value)] = examples()[name].params.items()
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", name,
                                       "--bind", f"{param}={value.lower()}", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert rows and list(rows[0])[:2] == [param, param + "Label"]
    assert {row[param + "Label"] for row in rows} == {value}
    for column in rows[0]:
        if column.endswith("Label") and column[:-5] in rows[0]:
            assert all(row[column[:-5]].startswith("https://w3id.org/kg/id/") for row in rows if row[column])


def test_kg_query_stops_a_runaway_query_at_its_time_limit(sample_build):
    stem, _ = sample_build
    runaway = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # minutes, unchecked
    result = CliRunner().invoke(main, ["query", "-g", str(stem), runaway, "--timeout", "1"])
    assert result.exit_code == 1 and "time limit of 1 s (kg query --timeout)" in result.output


def test_entity_evidence_names_papers_in_its_paper_column_and_the_subject_apart(sample_build):
    stem, _ = sample_build
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", "entity-evidence",
                                       "--bind", "entity=GRPO", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert rows and all("/paper/" in row["paper"] for row in rows)
    assert {"the paper", "C-GRPO"} <= {row["subjectLabel"] for row in rows}  # C-GRPO variantOf GRPO
    titles = {row["paper"].value: row["label"].value for row in run_query(
        open_graph(stem), "SELECT ?paper ?label WHERE { ?paper a kg:Paper ; rdfs:label ?label }")}
    assert all(row["paperLabel"] == titles[row["paper"]] for row in rows)  # each paper with its title


@pytest.mark.parametrize("name", ["evaluations", "entity-evidence", "relations-of", "paper-proposes"])
def test_examples_print_no_row_twice(sample_build, name):
    stem, _ = sample_build
    [param] = examples()[name].params.items()
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", name, "--bind", "=".join(param),
                                       "--format", "csv"])
    lines = result.output.splitlines()
    assert len(lines) > 1 and len(lines) == len(set(lines))


@pytest.mark.parametrize("command", [["stats"], ["query", "ASK { ?p a kg:Paper }"], ["related", "GRPO"],
                                     ["explain", "GRPO"], ["leaderboard", "AndroidWorld"],
                                     ["serve", "--get", "/index.json"]])
def test_every_command_takes_the_graph_as_g_or_uses_the_only_one_under_graphs(sample_build, tmp_path, monkeypatch,
                                                                            command):
    stem, _ = sample_build
    given = CliRunner().invoke(main, [*command, "-g", str(stem)])
    assert given.exit_code == 0, given.output + given.stderr
    monkeypatch.chdir(tmp_path)
    (tmp_path / "graphs").mkdir()
    for path in stem.parent.glob(stem.name + ".*"):
        os.symlink(path, tmp_path / "graphs" / path.name)
    alone = CliRunner().invoke(main, command)
    assert alone.exit_code == 0 and alone.stdout == given.stdout
    assert "Using graphs/sample, the only graph under graphs/" in alone.stderr


def test_without_g_several_graphs_or_none_under_graphs_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    none = CliRunner().invoke(main, ["stats"])
    assert none.exit_code == 2 and "No graph given and none under graphs/" in none.output
    (tmp_path / "graphs").mkdir()
    for name in ("a.nt", "b.nt", ".b.staging-1-abcdefgh", "b.html"):
        (tmp_path / "graphs" / name).write_text("")
    several = CliRunner().invoke(main, ["stats"])
    assert several.exit_code == 2 and "Several graphs under graphs/ (a, b); choose one with -g" in several.output


def test_methods_on_benchmark_ranks_what_its_papers_propose_before_what_they_use(sample_build):
    stem, _ = sample_build
    result = CliRunner().invoke(main, ["query", "-g", str(stem), "--example", "methods-on-benchmark",
                                       "--bind", "benchmark=AndroidWorld", "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = [(r["methodLabel"], int(r["proposedBy"]), int(r["results"])) for r in csv.DictReader(io.StringIO(result.output))]
    # The method its paper proposes and the model with a result on it, before GPT-4o and GRPO, which it only uses.
    assert rows[:2] == [("PhoneRL", 1, 0), ("PhoneRL-9B", 0, 1)]
    assert {label for label, proposed, results in rows[2:]} >= {"GPT-4o", "GRPO"}
    assert all(proposed + results == 0 for _, proposed, results in rows[2:])


def test_a_piped_build_prints_one_line_per_stage_and_counts_what_came_from_the_cache(tmp_path):
    """Not on a terminal (CliRunner): no bar, a line as each stage ends; a rebuild says its
    extractions came from the cache."""
    stem = tmp_path / "g"
    first = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(stem)])
    assert first.exit_code == 0, first.output
    stages = [line.split()[0] for line in first.output.splitlines()[:6]]
    assert stages == ["Read", "Extracted", "Resolved", "Linked", "Made", "Wrote"]
    assert "Extracted 8 papers (0 from the cache, 8 parsed) in " in first.output
    assert all(re.search(r" in \d+\.\d s$", line) for line in first.output.splitlines()[:6])
    again = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(stem)])
    assert "Extracted 8 papers (8 from the cache, 0 parsed) in " in again.output
    quiet = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(stem), "-q"])
    assert not quiet.output.startswith("Read")


# --- ids and names that start with "-" (OpenReview ids do: -zBN5sBzdvr) ---------------------------

@pytest.fixture(scope="module")
def dashed_ids(tmp_path_factory):
    """A graph whose papers have OpenReview ids that start with "-"."""
    folder = tmp_path_factory.mktemp("dashed")
    (folder / "dashed.csv").write_text(
        "id,title,abstract\n"
        "-zBN5sBzdvr,Group policies,We propose GRPO for mathematical reasoning. GRPO reaches 80.2% accuracy on GSM8K.\n"
        "-h,Proximal policies,We study PPO for mathematical reasoning. PPO reaches 75.1% accuracy on GSM8K.\n"
        "p3,Rewards,We compare GRPO with PPO for mathematical reasoning on GSM8K.\n", encoding="utf-8")
    stem = folder / "dashed"
    result = CliRunner().invoke(main, ["build", "-q", str(folder / "dashed.csv"), "-o", str(stem), "--formats", "nt"])
    assert result.exit_code == 0, result.output
    return stem


def test_similar_takes_a_paper_id_that_starts_with_a_dash_and_one_named_like_an_option_after_a_double_dash(dashed_ids):
    for args in (["similar", "-zBN5sBzdvr", "-g", str(dashed_ids)], ["similar", "-g", str(dashed_ids), "-zBN5sBzdvr"],
                 ["similar", "-g", str(dashed_ids), "--format=json", "--", "-zBN5sBzdvr"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        assert "Group policies" in result.output and "Proximal policies" in result.output
    # An id that is also an option's name goes after "--", which ends the options.
    result = CliRunner().invoke(main, ["similar", "-g", str(dashed_ids), "--", "-h"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Papers similar to Proximal policies")
    assert "Usage:" in CliRunner().invoke(main, ["similar", "-h"]).output  # -h alone is still help


@pytest.mark.parametrize("args, answer", [
    (["related", "-GRPO"], "Related to GRPO"),
    (["explain", "-GRPO"], "GRPO: Group Relative Policy Optimization"),
    (["explain", "-C-GRPO", "-GRPO"], "C-GRPO variantOf GRPO"),
    (["compare", "-mathematical reasoning"], "mathematical reasoning"),
    (["leaderboard", "-AndroidWorld"], "Results on AndroidWorld"),
])
def test_every_command_taking_an_entity_name_reads_one_that_starts_with_a_dash(sample_build, args, answer):
    """The names are looked up (hyphens are ignored by the lookup), not refused as unknown options."""
    result = CliRunner().invoke(main, [*args, "-g", str(sample_build[0])])
    assert result.exit_code == 0, result.output
    assert answer in result.output


@pytest.mark.parametrize("command", ["similar", "related", "explain", "compare", "leaderboard"])
def test_the_help_of_each_command_taking_a_name_says_how_to_give_one_that_starts_with_a_dash(command):
    result = CliRunner().invoke(main, [command, "--help"])
    text = " ".join(result.output.split())
    assert "starts with '-' is read as one" in text and f"kg {command} -g graphs/NAME -- -h" in text


def test_the_build_summary_counts_the_rows_repaired_and_skipped_by_reason(tmp_path):
    scrape = tmp_path / "scrape.csv"
    scrape.write_text(
        "paper_id,title,link,keywords,abstract\n"
        'p1,Spatial channels, shape bias, and robustness,https://openreview.net/forum?id=p1,"vision",'
        '"We propose SCNet for image classification. SCNet reaches 80.2% accuracy on ImageNet."\n'
        'p2,Two,https://openreview.net/forum?id=p2,"rl",We propose GRPO, a method for reasoning, and test it on GSM8K.\n'
        "p3,Three,https://openreview.net/forum?id=p3,rl,https://openreview.net/forum?id=p3\n"
        'p4,Four,https://openreview.net/forum?id=p4,rl,"object recognition,shape bias"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["build", "-q", str(scrape), "-o", str(tmp_path / "g"), "--formats", "nt"])
    assert result.exit_code == 0, result.output
    assert "Built the graph of 2 papers" in result.output
    assert ("Repaired 2 records: 1 title split at unquoted commas (scrape.csv:2), "
            "1 abstract split at unquoted commas (scrape.csv:3)") in result.output
    assert "Skipped 2 records: 1 abstract is a URL (scrape.csv:4), 1 abstract is a keyword list (scrape.csv:5)" in result.output


def test_related_and_trends_take_the_same_option_for_how_many(sample):
    """-k or --top, as a click user expects, and --k, the old spelling, so that scripts keep working."""
    for command in (["related", "GRPO"], ["trends"]):  # the sample has one year: trends answers why it cannot
        for option in ("-k", "--top", "--k", "--top=1"):
            given = [option] if "=" in option else [option, "1"]
            result = CliRunner().invoke(main, [*command, "-g", str(sample), *given, "--format", "json"])
            assert result.exit_code != 2 and "No such option" not in result.output, (command, option, result.output)
            if command[0] == "related":
                assert len(json.loads(result.output)["results"]) == 1, (option, result.output)


def test_the_build_says_1_paper_and_1_record_not_1_papers(tmp_path):
    rows = tmp_path / "one.csv"
    rows.write_text("id,title,abstract\n"
                    "p1,One,We propose FooNet for image classification on CIFAR-10.\n"
                    "p2,Two,https://openreview.net/forum?id=p2\n"
                    "p1,One,We propose FooNet for image classification on CIFAR-10.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["build", str(rows), "-o", str(tmp_path / "g"), "--formats", "nt"])
    assert result.exit_code == 0, result.output
    for said in ("Read 1 paper (1 record skipped)", "Extracted 1 paper (", "Built the graph of 1 paper in",
                 "(1 repeated record merged: p1); skipped 1 record:", "Skipped 1 record: "):
        assert said in result.output, said
    prose = [line for line in result.output.splitlines() if not line.startswith("Edges:")]  # those are role names
    assert not re.findall(r"\b1 [a-z]+s\b", "\n".join(prose)), result.output


#: A corpus whose most mentioned method and task are classes of things: neural networks, classification.
GENERIC_CORPUS = """Generic Workshop 2024 Papers

We propose SegMamba, a neural network for semantic segmentation. Neural networks are widely used for \
classification; SegMamba is evaluated on Cityscapes, where it outperforms DeepLabV3 and reaches 82.1% mIoU.

We introduce DepthFormer, a neural network for monocular depth estimation. Unlike other neural networks trained \
for classification, DepthFormer is evaluated on KITTI and outperforms SegMamba.

We study neural networks for image classification. We propose WideNet, a neural network evaluated on CIFAR-10, \
where it reaches 96.1% accuracy and outperforms SegMamba.

We analyse why neural networks generalize in classification and propose FlatReg, a regularizer evaluated on CIFAR-10.
"""


def test_list_cites_a_specific_name_of_each_parameters_type_and_a_concept_with_narrower_names(tmp_path):
    """Not "neural network" (a class of methods, the most mentioned) for every method parameter, nor
    "classification" for a task; but "classification" for a concept, which image classification is under."""
    corpus = tmp_path / "generic.txt"
    corpus.write_text(GENERIC_CORPUS, encoding="utf-8")
    assert CliRunner().invoke(main, ["build", "-q", str(corpus), "-o", str(tmp_path / "g")]).exit_code == 0
    listed = CliRunner().invoke(main, ["query", "-g", str(tmp_path / "g"), "--list"])
    cited = set(re.findall(r"--bind (\w+)=VALUE \(a \w+, e\.g\. ([^)]+)\)", listed.output))
    assert cited == {("entity", "SegMamba"), ("method", "SegMamba"), ("benchmark", "CIFAR-10"),
                     ("task", "image classification"), ("concept", "classification")}, listed.output


def test_the_build_line_its_summary_and_stats_count_broader_links_and_relations_alike(sample_build):
    """One count of each link, one per pair of entities however many papers or rules state it: the
    build's "Linked N relations and M broader links", its summary's Edges line and kg stats."""
    stem, output = sample_build
    said = re.search(r"Linked ([\d,]+) relations? and ([\d,]+) broader links?", output)
    edges = {name: int(n.replace(",", "")) for n, name in re.findall(r"(\d[\d,]*) (\w+)", output.split("Edges: ")[1].split("\n")[0])}
    stats = CliRunner().invoke(main, ["stats", "-g", str(stem)]).output
    links = stats.split("Links (entity -> entity")[1].split("Entities most papers mention")[0]
    stated = {name: int(n.replace(",", "")) for name, n in re.findall(r"^(\w+) +(\d[\d,]*) *$", links, re.M)}
    relations, broader = (int(n.replace(",", "")) for n in said.groups())
    assert broader == edges["broader"] == stated["broader"] > 0
    assert relations == sum(n for name, n in edges.items() if name in RELATIONS) == sum(stated.values()) - broader


def test_counts_printed_have_thousands_separators_and_a_querys_own_numbers_stay(tmp_path):
    """2,795 on every line: the build's summary, kg stats' tables; a year a query answers stays 2017."""
    import networkx as nx
    import pyoxigraph as ox

    from kg.build import BuildResult
    from kg.store import format_results

    graph = nx.MultiDiGraph()
    graph.add_node("paper/p", kind="Paper", label="A paper", papers=0)
    graph.add_node("method/cnn", kind="Method", label="CNN", papers=2795)
    assert "Top entities: CNN (Method, 2,795)" in BuildResult(graph, [], [], {}).summary()
    numbers = ox.Store().query("SELECT (2795 AS ?papers) WHERE {}")
    assert "2,795" in format_results(numbers, counts=True)
    assert "2017" in format_results(ox.Store().query("SELECT (2017 AS ?year) WHERE {}"))
    papers = tmp_path / "papers.nt"
    papers.write_text("".join(f"<https://w3id.org/kg/id/paper/{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
                              "<https://w3id.org/kg/ontology#Paper> .\n" for i in range(1200)), encoding="utf-8")
    stats = CliRunner().invoke(main, ["stats", "-g", str(papers)])
    assert stats.exit_code == 0 and re.search(r"^Paper +1,200 *$", stats.output, re.M), stats.output


@pytest.mark.parametrize("command, blocked", [(["stats", "-g", "graphs/sample"], True), (["train-ner", "--help"], False)])
def test_only_training_commands_let_pytorch_be_imported(command, blocked):
    """spaCy's thinc imports PyTorch wherever the train extra installed it; kg's other commands never
    run it and keep it out of their process (and their extraction workers)."""
    script = ("import sys\nfrom kg.cli import run\n"
              f"sys.argv = ['kg', *{command!r}]\ntry:\n    run()\nexcept SystemExit:\n    pass\n"
              "print('torch' in sys.modules and sys.modules['torch'] is None)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.strip().splitlines()[-1] == str(blocked)
