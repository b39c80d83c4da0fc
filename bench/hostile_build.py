"""G4, G5 and G6, re-run: can damaged or swapped files of the last build get into the next one?

On a scratch copy of tests/fixtures/sample.txt, builds a graph with `kg build` (a real subprocess, as
a user runs it), damages what the last build left, builds again, and compares the graph with a build
that had no cache (its N-Triples, Turtle, JSON-LD and index byte for byte, its store triple for triple):

- G4: one letter of the last build's .nt, .jsonld or .index.nt changed in place (the same size), or the
  .nt's lines sorted; checked in the next build and the one after it.
- G6: the last build's store replaced by another graph's.
- G5: .kg-cache/builds.sqlite truncated or overwritten by 4 KB of random bytes, and the extraction cache
  overwritten so: the build must go on, saying it set the file aside.

    python bench/hostile_build.py

One line per check, then "N failures"; exit status 1 on any (0 expected). About 25 builds of 8 abstracts.
"""
from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.store import open_graph  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "sample.txt"
FILES = (".nt", ".ttl", ".jsonld", ".index.nt")


def kg_build(folder: Path, output: str, *options: str) -> subprocess.CompletedProcess:
    """``kg build`` of the corpus in ``folder`` (the graph names its input files relative to it)."""
    return subprocess.run([sys.executable, "-m", "kg.cli", "build", "-j", "1", *options, "sample.txt", "-o", output],
                          cwd=folder, capture_output=True, text=True, timeout=300)


def graph(stem: Path) -> tuple[dict[str, bytes], set]:
    """What the graph ``stem`` holds: its files' bytes and its store's triples."""
    return {suffix: stem.with_name(stem.name + suffix).read_bytes() for suffix in FILES}, set(open_graph(stem))


def one_letter_changed(path: Path) -> None:
    data = bytearray(path.read_bytes())
    at = next(i for i in range(len(data) // 2, len(data)) if chr(data[i]).isalpha())
    data[at] = ord("Q") if data[at] != ord("Q") else ord("R")
    with path.open("r+b") as file:  # in place: the same file, the same size
        file.write(data)


def lines_sorted(path: Path) -> None:
    data = b"".join(sorted(path.read_bytes().splitlines(keepends=True)))
    with path.open("r+b") as file:
        file.write(data)


def truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:3000])


def random_bytes(path: Path) -> None:
    path.write_bytes(random.Random(0).randbytes(4096))


def check_damaged_file(scratch: Path, reference, suffix: str, damage) -> str | None:
    """G4: the last build's ``suffix`` file damaged in place; the next two builds must be the reference,
    the first of them naming the file."""
    stem = scratch / "g"
    kg_build(scratch, "g")
    damage(stem.with_name(stem.name + suffix).resolve())
    said = ""
    for build in ("next", "one after"):
        done = kg_build(scratch, "g")
        if done.returncode:
            return f"the {build} build failed: {done.stderr.strip().splitlines()[-1]}"
        if graph(stem) != reference:
            return f"the {build} build's graph is not a full build's"
        said = said or done.stderr
    if f"g{suffix} changed since the last build" not in said:
        return "the build did not say which file changed"
    return None


def check_swapped_store(scratch: Path, reference) -> str | None:
    """G6: the last build's store replaced by another graph's."""
    kg_build(scratch, "g")
    (scratch / "other.txt").write_text(CORPUS.read_text(encoding="utf-8").split("\n\n", 3)[-1], encoding="utf-8")
    subprocess.run([sys.executable, "-m", "kg.cli", "build", "-q", "-j", "1", "other.txt", "-o", "h"], cwd=scratch,
                   capture_output=True, timeout=300, check=True)
    store = (scratch / "g.oxigraph").resolve()
    shutil.rmtree(store)
    shutil.copytree((scratch / "h.oxigraph").resolve(), store)
    done = kg_build(scratch, "g")
    if done.returncode:
        return f"the build failed: {done.stderr.strip().splitlines()[-1]}"
    if graph(scratch / "g") != reference:
        return "the store is not a full build's"
    if "not the one the last build wrote" not in done.stderr:
        return "the build did not say why it wrote the store in full"
    return None


def check_damaged_cache(scratch: Path, reference, name: str, damage) -> str | None:
    """G5: a cache file damaged; the build must go on, set it aside and say so."""
    kg_build(scratch, "g")
    damage(scratch / ".kg-cache" / name)
    done = kg_build(scratch, "g")
    if done.returncode:
        return f"the build failed: {(done.stdout + done.stderr).strip().splitlines()[-1]}"
    if "set aside" not in done.stdout or not list((scratch / ".kg-cache").glob(f"{name}.damaged-*")):
        return "the build did not set the file aside and say so"
    if graph(scratch / "g") != reference:
        return "the graph is not a full build's"
    return None


def main() -> int:
    checks = [(f"G4 {suffix} {damage.__name__.replace('_', ' ')}", check_damaged_file, (suffix, damage))
              for suffix, damage in ((".nt", one_letter_changed), (".jsonld", one_letter_changed),
                                     (".index.nt", one_letter_changed), (".nt", lines_sorted))]
    checks.append(("G6 store swapped for another graph's", check_swapped_store, ()))
    checks += [(f"G5 {name} {damage.__name__.replace('_', ' ')}", check_damaged_cache, (name, damage))
               for name, damage in (("builds.sqlite", truncated), ("builds.sqlite", random_bytes),
                                    ("extractions.sqlite", random_bytes))]
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "reference").mkdir()
        shutil.copy(CORPUS, folder / "reference" / "sample.txt")
        made = kg_build(folder / "reference", "g", "--no-cache")
        if made.returncode:
            print(f"the reference build failed: {made.stderr}")
            return 1
        reference = graph(folder / "reference" / "g")
        for n, (name, check, args) in enumerate(checks):
            scratch = folder / f"check{n}"
            scratch.mkdir()
            shutil.copy(CORPUS, scratch / "sample.txt")
            problem = check(scratch, reference, *args)
            failures += problem is not None
            print(f"{name}: {'FAIL: ' + problem if problem else 'ok'}", flush=True)
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
