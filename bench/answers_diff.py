"""Do two commits of kg give the same answers? Every read command's output on built graphs, OLD's
against NEW's byte for byte, to show that a refactor or a faster read path changes nothing a user sees.

    python bench/answers_diff.py OLD_COMMIT NEW_COMMIT GRAPH [GRAPH ...] [--work DIR] [--sweep N] [--seed S]
                                 [--new-graphs GRAPH ...]

Each commit is a detached git worktree of this repository (in DIR, by default a temporary folder)
answering in its own subprocess through click's CliRunner (stdout not a tty, as when piped). The
queries, gathered from each graph with NEW's code: the 15 most mentioned entities of each type,
aliases, 10 random papers by id and 5 by title, every dataset with results, deliberate misses; asked of
stats, query (--list, --example), related, explain, compare, leaderboard, similar and trends, as a
table and as --format json. Then kg export in each of its formats, and compare and similar --format
json over N random tasks and N random papers. Prints per graph the cases compared, identical,
different and exiting non-zero, then each difference with the start of its unified diff; exit
status 1 when any answer differs.

A change to what the build keeps beside a graph is compared with ``--new-graphs``: the same corpora built
by NEW's code, one per GRAPH and in its order. OLD answers from GRAPH, NEW from its own build, and the
paths are swapped back before comparing.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TYPES = ["Task", "Method", "Dataset", "Metric", "Model"]
TOP_PER_TYPE, ALIASES_OF_TOP, PAPERS_BY_ID, PAPERS_BY_TITLE = 15, 5, 10, 5
DIFF_LINES = 12
ANY_ENTITY_EXAMPLES = [("relations-of", "entity"), ("papers-per-year", "entity"),
                       ("paper-proposes", "entity"), ("entity-evidence", "entity")]
TYPE_EXAMPLES = {"Method": [("evaluations", "method"), ("methods-sharing-tasks", "method")],
                 "Dataset": [("methods-on-benchmark", "benchmark")],
                 "Task": [("papers-addressing-task", "task"), ("papers-on-concept", "concept")]}


# ---- run in each version's subprocess: kg is imported from that version's worktree ----

def gather(job: dict) -> dict:
    """What to ask of each graph, read from it with this version's kg."""
    from kg.cli import main
    from kg.store import PREFIXES, open_graph

    export_formats = list(next(p for p in main.commands["export"].params if p.name == "to").type.choices)
    queries = {}
    for graph in job["graphs"]:
        store = open_graph(graph)

        def rows(sparql: str) -> list:
            return [[None if term is None else term.value for term in row]
                    for row in store.query(sparql, prefixes=PREFIXES)]

        top, aliases = {}, {}
        for entity_type in TYPES:
            ranked = rows(f"SELECT ?label (MIN(?alias) AS ?first) WHERE {{ ?e a kg:{entity_type} ; "
                          f"skos:prefLabel ?label ; kg:paperCount ?papers OPTIONAL {{ ?e skos:altLabel ?alias }} }} "
                          f"GROUP BY ?e ?label ?papers ORDER BY DESC(?papers) ?label LIMIT {TOP_PER_TYPE}")
            top[entity_type] = [label for label, _ in ranked]
            aliases[entity_type] = [alias for _, alias in ranked[:ALIASES_OF_TOP] if alias is not None]
        papers = sorted(rows("SELECT ?id ?title WHERE { ?p a kg:Paper ; dcterms:identifier ?id ; "
                             "dcterms:title ?title }"))
        tasks = sorted({label for label, in rows("SELECT ?label WHERE { ?e a kg:Task ; skos:prefLabel ?label }")})
        # one generator per graph, so a graph's picks do not depend on the graphs before it
        rng = random.Random(job["seed"])
        picked = rng.sample(papers, min(PAPERS_BY_ID, len(papers)))
        queries[graph] = {
            "top": top, "aliases": aliases,
            "paper_ids": [paper_id for paper_id, _ in picked],
            "paper_titles": [title for _, title in picked[:PAPERS_BY_TITLE]],
            "result_datasets": sorted({label for label, in rows(
                "SELECT DISTINCT ?label WHERE { ?r a kg:Result ; kg:onDataset ?d . ?d skos:prefLabel ?label }")}),
            "venues": sorted({venue for venue, in rows("SELECT DISTINCT ?v WHERE { ?p a kg:Paper ; kg:venue ?v }")}),
            "sweep_tasks": rng.sample(tasks, min(job["sweep"], len(tasks))),
            "sweep_papers": rng.sample([paper_id for paper_id, _ in papers], min(job["sweep"], len(papers))),
            "export_formats": export_formats}
    return queries


def answer(job: dict) -> dict:
    """Every case's stdout, stderr, exit code and uncaught exception, and the files each export wrote."""
    import kg
    from click.testing import CliRunner
    from kg.cli import main

    if not Path(kg.__file__).resolve().is_relative_to(Path(job["worktree"]).resolve()):
        raise SystemExit(f"kg was imported from {kg.__file__}, not from the worktree {job['worktree']}")
    runner = CliRunner()

    def run(args: list[str]) -> dict:
        result = runner.invoke(main, args, prog_name="kg")
        crash = result.exception if not isinstance(result.exception, (SystemExit, type(None))) else None
        return {"stdout": text(result.stdout_bytes), "stderr": text(result.stderr_bytes or b""),
                "exit": str(result.exit_code),
                # the type and message only: a traceback names the worktree's paths, which always differ
                "exception": f"{type(crash).__name__}: {crash}" if crash else ""}

    def export(args: list[str], folder: Path) -> dict:
        folder.mkdir(parents=True)
        os.chdir(folder)  # -o is relative, so the "Wrote PATH" line is the same for both versions
        answer = run(args)
        files = sorted(path for path in folder.rglob("*") if path.is_file())
        return {**answer, **{f"file {path.relative_to(folder)}": text(path.read_bytes()) for path in files}}

    shutil.rmtree(job["exports"], ignore_errors=True)
    return {graph: {kind: [export(args, Path(job["exports"], str(number), args[-1])) if args[0] == "export"
                           else run(args) for args in cases] for kind, cases in kinds.items()}
            for number, (graph, kinds) in enumerate(job["cases"].items())}


def text(output: bytes) -> str:
    # surrogateescape keeps undecodable bytes, so comparing the texts compares the bytes
    return output.decode("utf-8", "surrogateescape")


# ---- run here: the worktrees, the cases, the comparison ----

def cases_of(graph: str, queries: dict) -> dict[str, list[list[str]]]:
    """What is asked of ``graph``, as kg's argument lists: the read commands (each as a table and as
    json), the sweep and the exports."""
    cases = [["stats", "-g", graph], ["query", "--list", "-g", graph],
             ["query", "--example", "top-datasets", "--format", "csv", "-g", graph]]

    def both(*args: str) -> None:
        cases.extend([[*args, "-g", graph], [*args, "-g", graph, "--format", "json"]])

    both("query", "--example", "top-datasets")
    top = queries["top"]
    for entity_type in TYPES:
        for name in top[entity_type]:
            both("related", name)  # related ranks Methods unless told a type
            if entity_type != "Method":
                both("related", name, "--type", entity_type)
            both("explain", name)
            for example, parameter in ANY_ENTITY_EXAMPLES + TYPE_EXAMPLES.get(entity_type, []):
                both("query", "--example", example, "--bind", f"{parameter}={name}")
            if entity_type == "Task":
                both("compare", name)
            if entity_type == "Dataset":
                both("leaderboard", name)
        for first, second in zip(top[entity_type][:5], top[entity_type][1:6]):
            both("explain", first, second)
        for alias in queries["aliases"][entity_type]:
            both("related", alias, "--type", entity_type)
            both("explain", alias)
            if entity_type == "Task":
                both("compare", alias)
    for dataset in queries["result_datasets"]:
        if dataset not in top["Dataset"]:
            both("leaderboard", dataset)
        both("leaderboard", dataset, "--metric", "accuracy")
    for paper in queries["paper_ids"] + queries["paper_titles"]:
        both("similar", paper)
    for by in ("year", "venue"):
        both("trends", "--by", by)
        for entity_type in TYPES:
            both("trends", "--by", by, "--type", entity_type, "-k", "5")
    if len(queries["venues"]) >= 2:
        both("trends", "--by", "venue", "--from", queries["venues"][0], "--to", queries["venues"][-1],
             "--type", "Method")
    # misses: a method where a task is expected, a name no entity has, a misspelled one, an unknown paper
    for method in top["Method"][:1]:
        both("compare", method)
    misspelled = [top["Method"][0][:-1] + "x" + top["Method"][0][-1]] if top["Method"] else []
    for miss in ["zzqx no such thing", *misspelled]:
        for command in ("related", "explain", "compare", "leaderboard"):
            both(command, miss)
    both("similar", "zzNoSuchPaper")
    # "--" before the name: a task or a paper id may start with "-"
    sweep = [["compare", "-g", graph, "--format", "json", "--", task] for task in queries["sweep_tasks"]]
    sweep += [["similar", "-g", graph, "--format", "json", "--", paper] for paper in queries["sweep_papers"]]
    exports = [["export", "-g", graph, "--to", export_format, "-o", f"{Path(graph).name}.{export_format}"]
               for export_format in queries["export_formats"]]
    return {"read commands": cases, "sweep": sweep, "exports": exports}


def retarget(value, paths: dict[str, str]):
    """``value`` (strings, lists and dicts, keys included) with each path of ``paths`` written as its value."""
    if isinstance(value, str):
        for old, new in paths.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [retarget(item, paths) for item in value]
    if isinstance(value, dict):
        return {retarget(key, paths): retarget(item, paths) for key, item in value.items()}
    return value


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if check and done.returncode:
        raise SystemExit(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout.strip()


def in_versions(worktrees: dict[str, Path], mode: str, jobs: dict[str, dict], work: Path) -> dict[str, dict]:
    """Run ``mode`` with each version's code, the versions side by side; their results by version."""
    running = {}
    for version, job in jobs.items():
        job_file, result_file = work / f"{version}.{mode}.job.json", work / f"{version}.{mode}.json"
        job_file.write_text(json.dumps({**job, "worktree": str(worktrees[version])}))
        # PYTHONHASHSEED: a difference must come from the code, not from one process's set order
        env = {**os.environ, "PYTHONPATH": str(worktrees[version]), "PYTHONHASHSEED": "0"}
        running[version] = (result_file, subprocess.Popen(
            [sys.executable, __file__, "--worker", mode, str(job_file), str(result_file)],
            cwd=worktrees[version], env=env))
    for version, (_, process) in running.items():
        if process.wait():
            raise SystemExit(f"{mode} with {version}'s code failed (exit {process.returncode}); see above")
    return {version: json.loads(result_file.read_text()) for version, (result_file, _) in running.items()}


def report(graph: str, old: dict, new: dict, cases: dict[str, list[list[str]]]) -> int:
    """Print ``graph``'s table and its differences; return how many answers differ."""
    print(f"\n{Path(graph).name:<16}{'cases':>8}{'identical':>11}{'different':>11}{'exit≠0':>8}")
    differing = []
    for kind, kind_cases in cases.items():
        pairs = list(zip(old[kind], new[kind]))
        failing = sum(a["exit"] != "0" or b["exit"] != "0" for a, b in pairs)
        different = [(args, a, b) for args, (a, b) in zip(kind_cases, pairs) if a != b]
        print(f"  {kind:<14}{len(pairs):>8}{len(pairs) - len(different):>11}{len(different):>11}{failing:>8}")
        differing += different
    for args, a, b in differing:
        parts = [part for part in dict.fromkeys([*a, *b]) if a.get(part) != b.get(part)]  # stdout, a file ...
        lines = difflib.unified_diff(a.get(parts[0], "").splitlines(), b.get(parts[0], "").splitlines(),
                                     f"old {parts[0]}", f"new {parts[0]}", n=1, lineterm="")
        command = shlex.join(arg for arg in args if arg not in ("-g", graph))
        print(f"\n  differs: kg {command}   in {', '.join(parts)}")
        print("\n".join("    " + line[:160] for line in list(lines)[:DIFF_LINES]))
    return len(differing)


def compare(old_commit: str, new_commit: str, graphs: list[str], work: Path, *, sweep: int, seed: int,
            new_graphs: list[str] | None = None) -> int:
    repo = Path(git(Path(__file__).resolve().parent, "rev-parse", "--show-toplevel"))
    commits = {"old": git(repo, "rev-parse", "--verify", f"{old_commit}^{{commit}}"),
               "new": git(repo, "rev-parse", "--verify", f"{new_commit}^{{commit}}")}
    worktrees = {version: work / version for version in commits}
    try:
        for version, path in worktrees.items():
            git(repo, "worktree", "remove", "--force", str(path), check=False)  # left by an earlier run
            if path.exists():
                raise SystemExit(f"{path} exists and is not a worktree of {repo}; choose another --work")
            git(repo, "worktree", "add", "--detach", str(path), commits[version])
        print(f"old {commits['old'][:10]}, new {commits['new'][:10]}: gathering the queries", flush=True)
        job = {"graphs": graphs, "sweep": sweep, "seed": seed}
        queries = in_versions(worktrees, "gather", {"new": job}, work)["new"]
        cases = {graph: cases_of(graph, asked) for graph, asked in queries.items()}
        print(f"answering {sum(len(c) for kinds in cases.values() for c in kinds.values())} cases", flush=True)
        moved = dict(zip(graphs, new_graphs or ()))  # each GRAPH -> NEW's own build of its corpus
        jobs = {version: {"cases": retarget(cases, moved) if version == "new" else cases,
                          "exports": str(work / "exports" / version)} for version in commits}
        answers = in_versions(worktrees, "answer", jobs, work)
        answers["new"] = retarget(answers["new"], {new: old for old, new in moved.items()})
        differences = sum(report(graph, answers["old"][graph], answers["new"][graph], cases[graph])
                          for graph in graphs)
        print(f"\n{differences} answers differ" if differences else "\nevery answer identical")
        return differences
    finally:
        for path in worktrees.values():
            git(repo, "worktree", "remove", "--force", str(path), check=False)
        git(repo, "worktree", "prune", check=False)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:  # this file, run again inside one version's subprocess
        mode, job_file, result_file = sys.argv[2:5]
        job = json.loads(Path(job_file).read_text())
        Path(result_file).write_text(json.dumps({"gather": gather, "answer": answer}[mode](job)))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", metavar="OLD_COMMIT", help="The commit answering as before.")
    parser.add_argument("new", metavar="NEW_COMMIT", help="The commit to check; its code gathers the queries.")
    parser.add_argument("graphs", metavar="GRAPH", nargs="+", help="A graph built by kg build (its -o path).")
    parser.add_argument("--work", metavar="DIR", help="Where the worktrees DIR/old and DIR/new (remade, then "
                        "removed) and the answers (kept) go. Default: a temporary folder, removed at the end.")
    parser.add_argument("--sweep", metavar="N", type=int, default=100,
                        help="Random tasks for compare and random papers for similar. Default: 100.")
    parser.add_argument("--seed", metavar="S", type=int, default=20231204,
                        help="Of the random picks. Default: 20231204.")
    parser.add_argument("--new-graphs", metavar="GRAPH", nargs="+",
                        help="The same corpora built by NEW's code, one per GRAPH, for NEW to answer from.")
    args = parser.parse_args()
    if args.new_graphs and len(args.new_graphs) != len(args.graphs):
        parser.error(f"--new-graphs names {len(args.new_graphs)} graphs for {len(args.graphs)} GRAPHs")
    with tempfile.TemporaryDirectory(prefix="answers_diff.") as temporary:
        work = Path(args.work or temporary).resolve()
        work.mkdir(parents=True, exist_ok=True)
        differences = compare(args.old, args.new, [os.path.abspath(graph) for graph in args.graphs], work,
                              sweep=args.sweep, seed=args.seed,
                              new_graphs=[os.path.abspath(graph) for graph in args.new_graphs or ()])
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
