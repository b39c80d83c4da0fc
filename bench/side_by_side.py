"""Two versions of kg building one corpus, side by side: build time and page size, as ratios.

Each revision is checked out into a temporary git worktree and run from there with the same
Python environment; builds alternate between the two (A, B, A, B, ...) so that both see the same
load on a shared machine, with the extraction cache off. Prints each build's wall seconds and
CPU seconds (user + system of the build and every process it started, which another job on the
machine inflates far less than the wall clock), the fastest of each version, the ratios B/A, and
the size of every output file of B's last build against A's.

    python bench/side_by_side.py 60218c7 HEAD ../shared/data/iclr_openreview/*.csv [--repeat 2] [-j 2]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout(revision: str, folder: Path) -> Path:
    """A worktree of ``revision`` in ``folder`` that imports as ``kg`` from PYTHONPATH: the packages
    the project maps from other folders (kg.viz, kg.ontology) are linked where Python looks."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(folder), revision], check=True)
    for package, source in (("viz", "viz"), ("ontology", "ontology")):
        if not (folder / "kg" / package).exists():
            (folder / "kg" / package).symlink_to(folder / source, target_is_directory=True)
    return folder


def remove_checkout(folder: Path) -> None:
    """Remove the worktree :func:`checkout` made in ``folder``."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=False)


def children_cpu() -> float:
    """CPU seconds of every finished child process and its descendants so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build_once(tree: Path, inputs: list[str], output: Path, jobs: int) -> tuple[float, float]:
    """Wall and CPU seconds of one build of ``inputs`` by the kg in ``tree``."""
    shutil.rmtree(output.parent, ignore_errors=True)
    output.parent.mkdir(parents=True)
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    started, cpu = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-m", "kg.cli", "build", "-q", "--no-cache", "-j", str(jobs), *inputs,
                    "-o", str(output)], check=True, env=environment, cwd=output.parent, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="the revision measured against (e.g. a commit)")
    parser.add_argument("b", help="the revision measured (e.g. HEAD)")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--repeat", type=int, default=2, help="builds per revision; the fastest counts")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    inputs = [str(Path(path).resolve()) for path in args.inputs]
    scratch = Path(tempfile.mkdtemp(prefix="kg-side-by-side-"))
    trees = {}
    try:
        for name, revision in (("A", args.a), ("B", args.b)):
            trees[name] = checkout(revision, scratch / f"tree-{name}")
        times: dict[str, list[float]] = {"A": [], "B": []}
        cpu: dict[str, list[float]] = {"A": [], "B": []}
        for round_ in range(args.repeat):
            for name in ("A", "B"):
                seconds, cpu_seconds = build_once(trees[name], inputs, scratch / f"out-{name}" / "graph", args.jobs)
                times[name].append(seconds)
                cpu[name].append(cpu_seconds)
                print(f"build {round_ + 1} of {name} ({getattr(args, name.lower())}): {seconds:.1f} s wall, "
                      f"{cpu_seconds:.1f} s CPU", flush=True)
        for what, figures in (("wall", times), ("CPU", cpu)):
            a, b = min(figures["A"]), min(figures["B"])
            print(f"\nfastest {what}: A {a:.1f} s, B {b:.1f} s; B/A = {b / a:.3f}")
        print(f"\n{'file':<22}{'A bytes':>14}{'B bytes':>14}{'B/A':>8}")
        for path in sorted((scratch / "out-B").glob("graph.*")):
            other = scratch / "out-A" / path.name
            if path.is_file() and other.is_file():
                size_a, size_b = other.stat().st_size, path.stat().st_size
                print(f"{path.name:<22}{size_a:>14,}{size_b:>14,}{size_b / size_a:>8.3f}")
    finally:
        for tree in trees.values():
            remove_checkout(tree)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
