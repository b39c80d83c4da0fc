"""The hostile trial, re-run: G1 and G2 (the server), G4, G5 and G6 (the last build's files, store and
caches) and G7 (terminal controls in what commands print), each by its own script, then their sum.

    python bench/hostile.py

Runs bench/hostile_server.py, bench/hostile_build.py and bench/hostile_terminal.py in turn (each on
127.0.0.1 or a scratch folder, each bounded and stopping by itself; about 4 minutes in all on two
cores), prints what each printed, then one line "N failures" over all of them; exit status 1 on any.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("hostile_server.py", "hostile_build.py", "hostile_terminal.py")


def main() -> int:
    total = 0
    for script in SCRIPTS:
        print(f"== {script}", flush=True)
        run = subprocess.run([sys.executable, str(HERE / script)], capture_output=True, text=True)
        print(run.stdout.rstrip(), flush=True)
        counted = re.findall(r"^(\d+) failures?$", run.stdout, re.MULTILINE)
        # A script that died before counting counts as one failure, with what it said.
        failures = int(counted[-1]) if counted else 1
        if not counted:
            print(f"{script} ended without counting (exit {run.returncode}): {run.stderr.strip()[-500:]}")
        total += failures
    print(f"{total} failures")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
