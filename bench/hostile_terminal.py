"""G7, re-run: can data drive the terminal of whoever reads kg's output?

Builds a tiny graph (in a temporary folder) from abstracts whose titles and sentences carry terminal
escapes: OSC 8 hyperlinks that disguise a link, CSI colour changes and screen clears, a bell, C1
controls (U+009B is CSI on some terminals, U+0085 a line end). Then runs every command that prints
what the graph holds, through a real subprocess as a user would, in text and JSON, and counts the
outputs (stdout and stderr) that hold a control character: a C0 control but tab and newline (a
carriage return only where it ends a line), DEL, or a C1 control.

    python bench/hostile_terminal.py

One line per command, then "N failures"; exit status 1 on any (0 expected).
"""
from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hostile_papers import LINK, PAPERS  # noqa: E402

TITLES = "SELECT ?t WHERE { ?p dcterms:title ?t }"
COMMANDS = {  # name -> argv after "kg" (the graph's -g is put first)
    "similar": ["similar", "--", "-zBN5sBzdvr"],
    "similar (title)": ["similar", "Proximal policy optimization revisited" + LINK],
    "compare": ["compare", "mathematical reasoning"],
    "explain": ["explain", "GRPO"],
    "explain (pair)": ["explain", "PPO", "GRPO"],
    "related": ["related", "GRPO"],
    "leaderboard": ["leaderboard", "GSM8K"],
    "trends": ["trends"],
    "query (table)": ["query", TITLES],
    "query (csv)": ["query", "--format", "csv", TITLES],
    "query (construct)": ["query", "CONSTRUCT { ?p dcterms:title ?t } WHERE { ?p dcterms:title ?t }"],
    "query --list": ["query", "--list"],
    "stats": ["stats"],
    "error quoting a name": ["explain", "no\x1b[31mname\x9b"],
}
JSON_COMMANDS = ["similar", "compare", "explain", "related", "leaderboard", "trends", "query (table)"]


def control_characters(text: str) -> int:
    """How many characters of ``text`` a terminal would act on: C0 but tab and newline (a carriage
    return before a newline is a line end), DEL and C1."""
    count = 0
    for index, char in enumerate(text):
        code = ord(char)
        if char in "\t\n" or (char == "\r" and text[index + 1 : index + 2] == "\n"):
            continue
        count += code < 0x20 or 0x7F <= code < 0xA0
    return count


def kg_command() -> list[str]:
    """The kg command of this Python: its console script, or the module."""
    script = Path(sys.executable).with_name("kg")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kg.cli"]


def run(argv: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(kg_command() + argv, cwd=cwd, capture_output=True, timeout=300)
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", errors="replace")


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="kg-hostile-terminal-"))
    try:
        with open(folder / "hostile.csv", "w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(["id", "year", "title", "abstract"])
            writer.writerows(PAPERS)
        status, output = run(["build", "-q", "hostile.csv", "-o", "graph", "--formats", "nt"], folder)
        if status != 0:
            print(f"the build failed ({status}):\n{output}")
            return 1
        checks = {"build (summary)": (status, output)}
        for name, argv in COMMANDS.items():
            checks[name] = run([argv[0], "-g", "graph", *argv[1:]], folder)
        for name in JSON_COMMANDS:
            argv = COMMANDS[name]
            checks[f"{name} --format json"] = run([argv[0], "-g", "graph", "--format", "json", *argv[1:]], folder)
        failures = 0
        for name, (status, output) in checks.items():
            controls = control_characters(output)
            # An error is expected only where the command asks for a name no graph holds.
            broke = status != (1 if name.startswith("error") else 0)
            failures += bool(controls) or broke
            verdict = "FAIL" if controls or broke else "ok"
            print(f"{verdict:4}  {name:32} exit {status}, {len(output):6,} characters, {controls} control characters")
        print(f"{failures} failures")
        return 1 if failures else 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
