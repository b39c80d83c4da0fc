"""What the README promises a fresh clone: each command it shows on the sample graph runs as
written, with names the sample holds, and building the sample, its first command, writes exactly
the graphs/sample.* files committed (so a fresh clone is not dirty after it)."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import main

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SAMPLE = "graphs/sample"
#: The commands that read a graph and print what they found; the README shows them on the sample.
READING = {"stats", "query", "related", "explain", "leaderboard"}
#: The committed files of the sample graph that are text, compared byte for byte with a build.
TEXT_SUFFIXES = (".ttl", ".nt", ".jsonld", ".index.nt", ".html")


def _fenced(language: str) -> list[str]:
    """The README's fenced code blocks in ``language``, at any indentation (a block in a list item)."""
    blocks = re.finditer(rf"(?ms)^([ \t]*)```{language}\n(.*?)^\1```", README)
    return ["\n".join(line[len(block.group(1)):] for line in block.group(2).splitlines()) for block in blocks]


def _with_sample(argv: list[str], sample: Path) -> list[str]:
    """``argv`` with the graph it names (``-g graphs/sample``) replaced by the sample built for the tests."""
    return [str(sample) if i and argv[i - 1] in ("-g", "--graph") else arg for i, arg in enumerate(argv)]


def _shell_commands() -> list[list[str]]:
    """Every ``kg`` command line of the README's bash blocks that reads a graph (``kg serve --get``
    included), as argv without ``kg``."""
    found = []
    for block in _fenced("bash"):
        for line in block.replace("\\\n", " ").splitlines():  # a line continued with "\" is one command
            line = line.strip()
            if not line.startswith("kg "):
                continue
            argv = shlex.split(line, comments=True)[1:]
            if argv[0] in READING or (argv[0] == "serve" and "--get" in argv):
                found.append(argv)
    return found


def _inline_commands() -> list[list[str]]:
    """The ``kg explain|related|leaderboard NAME`` and ``kg query ... --example`` commands written
    inline in the README's text, to be run on the sample: argv without ``kg``, any ``-g`` dropped."""
    found = []
    for span in re.findall(r"`(kg [^`\n]+)`", README):
        argv = shlex.split(span)[1:]
        if argv[0] in ("explain", "related", "leaderboard") and len(argv) > 1 or argv[0] == "query" and "--example" in argv:
            found.append([arg for i, arg in enumerate(argv) if arg not in ("-g", "--graph")
                          and not (i and argv[i - 1] in ("-g", "--graph"))] + ["-g", SAMPLE])
    return found


def _table_examples() -> list[list[str]]:
    """The example queries the README's table shows with a parameter: ``| `NAME` | ... (`--bind K=V`) |``."""
    return [["query", "-g", SAMPLE, "--example", name, *shlex.split(bind)]
            for name, bind in re.findall(r"(?m)^\| `([\w-]+)` \|[^|\n]*\(`(--bind [^`]+)`\)", README)]


COMMANDS = _shell_commands() + _inline_commands() + _table_examples()


def test_the_readme_shows_commands_on_the_sample_of_every_kind_checked():
    shown = {argv[0] for argv in COMMANDS} | {"example" for argv in COMMANDS if "--example" in argv}
    assert {"explain", "related", "leaderboard", "query", "example", "stats", "serve"} <= shown
    assert any(argv[:2] == ["explain", "C-GRPO"] for argv in COMMANDS)  # two names: the links between them


@pytest.mark.parametrize("argv", [argv for argv in COMMANDS if argv[0] in READING | {"serve"}], ids=shlex.join)
def test_every_command_the_readme_shows_runs_on_the_sample(sample, argv):
    assert "-g" in argv and argv[argv.index("-g") + 1] == SAMPLE, \
        f"kg {shlex.join(argv)}: the README shows reading commands on -g {SAMPLE}, so that this test runs them"
    result = CliRunner().invoke(main, _with_sample(argv, sample))
    assert result.exit_code == 0, f"kg {shlex.join(argv)}:\n{result.output}"
    lines = result.stdout.splitlines()
    answered = len(lines) > 1 if "csv" in argv else lines and "(0 rows)" not in result.stdout
    assert answered, f"kg {shlex.join(argv)} found nothing:\n{result.output}"


@pytest.mark.parametrize("sparql", [text for text in _fenced("sparql") if "kg:currentBuild" not in text],
                         ids=lambda text: " ".join(text.split())[:40])
def test_every_sparql_query_the_readme_shows_answers_on_the_sample(sample, sparql):
    """Queries of a graph published to a server (its catalog, kg:currentBuild) are left out."""
    result = CliRunner().invoke(main, ["query", "-g", str(sample), sparql, "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) > 1, f"no answer to:\n{sparql}"


def test_building_the_sample_writes_the_committed_graph_files(sample):
    """The README's first command writes graphs/sample.*: what is committed must be what it writes."""
    committed = sorted(path for path in (ROOT / "graphs").glob("sample.*")
                       if path.is_file() and any(path.name.endswith(suffix) for suffix in TEXT_SUFFIXES))
    assert {path.name for path in committed} >= {"sample.ttl", "sample.nt", "sample.jsonld"}
    for path in committed:
        built = sample.with_name(sample.name + path.name[len("sample"):])
        assert built.read_bytes() == path.read_bytes(), (
            f"graphs/{path.name} is not what 'kg build tests/fixtures/sample.txt -o graphs/sample' writes: "
            "run it and commit the files")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_first_command_leaves_a_fresh_clone_clean(tmp_path):
    """What a fresh clone holds of graphs/, committed; then the README's first command; then git status."""
    clone = tmp_path / "clone"
    (clone / "graphs").mkdir(parents=True)
    shutil.copy(ROOT / ".gitignore", clone / ".gitignore")
    for path in (ROOT / "graphs").glob("sample.*"):
        if path.is_file():
            shutil.copyfile(path, clone / "graphs" / path.name)  # the bytes, as a plain file, as git checks it out
    git = ["git", "-C", str(clone), "-c", "user.name=kg", "-c", "user.email=kg@example.org"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "clone"]):
        subprocess.run(git + command, check=True, capture_output=True)
    result = CliRunner().invoke(main, ["build", "-q", str(ROOT / "tests" / "fixtures" / "sample.txt"),
                                       "-o", str(clone / "graphs" / "sample")])
    assert result.exit_code == 0, result.output
    status = subprocess.run(git + ["status", "--porcelain"], check=True, capture_output=True, text=True).stdout
    assert status == "", f"the build left the clone changed:\n{status}"
