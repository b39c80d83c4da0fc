"""Scale: `kg build` on synthetic corpora of 1k, 20k, 100k abstracts.

Abstracts are synthesised by sampling sentences of real abstracts (the ICLR
2026 sample and the ICLR 2017/18 OpenReview exports in ../shared), 5 to 9
sentences each. For each size it prints: end-to-end abstracts/s, the ratio to
spaCy's own `nlp.pipe` running the same components on the same texts with the
same number of processes, peak RSS, output sizes, the time of an incremental
re-run after adding 1% new abstracts (extraction cache warm), and the
explorer's time to first render in headless Chromium.

    python bench/scale.py 1000 20000 [100000] [--shared ../shared] [--jobs 2] [--baseline-up-to 20000]
"""
from __future__ import annotations

import argparse
import csv
import random
import re
import resource
import subprocess
import sys
import tempfile
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


def run(command: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB, largest process of the command's tree) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def size(path: Path) -> int:
    """Bytes of a file, or of every file in a folder (the SPARQL store)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


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
    parser.add_argument("--baseline-up-to", type=int, default=None, metavar="N",
                        help="run spaCy's nlp.pipe baseline only for sizes up to N (it takes as long as the build)")
    args = parser.parse_args()
    pool = sentence_pool(args.shared)
    kg = [sys.executable, "-m", "kg.cli"]
    print(f"sentence pool: {len(pool)} sentences; processes: {args.jobs}")
    print(f"{'abstracts':>9} {'build s':>8} {'abs/s':>7} {'spaCy s':>8} {'ratio':>6} {'peak MB':>8} "
          f"{'+1% s':>7} {'+1%/full':>8} {'render s':>8}  outputs")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            corpus = tmp / "corpus.txt"
            synthesise(corpus, n, pool, seed=n)
            out = tmp / "graphs" / "g"
            build_s, peak = run(kg + ["build", "-q", "-j", str(args.jobs), str(corpus), "-o", str(out)])
            spacy_s = float("nan")
            if args.baseline_up_to is None or n <= args.baseline_up_to:
                spacy_s = float(subprocess.run([sys.executable, "-c", BASELINE, str(corpus), str(args.jobs)],
                                               check=True, capture_output=True, text=True).stdout)
            extra = tmp / "extra.txt"
            synthesise(extra, max(1, n // 100), pool, seed=n + 1)
            incremental_s, _ = run(kg + ["build", "-q", "-j", str(args.jobs), str(corpus), str(extra), "-o", str(out)])
            sizes = ", ".join(f"{p.suffix[1:]} {size(p) / 1e6:.1f}MB" for p in sorted(out.parent.glob("g.*")))
            render = first_render(out.with_suffix(".html"))
            print(f"{n:>9} {build_s:>8.1f} {n / build_s:>7.1f} {spacy_s:>8.1f} {build_s / spacy_s:>6.2f} {peak:>8.0f} "
                  f"{incremental_s:>7.1f} {incremental_s / build_s:>8.2f} "
                  f"{render if render is not None else float('nan'):>8.1f}  {sizes}", flush=True)


if __name__ == "__main__":
    main()
