"""Cluster: `kg build --cluster local:2` (a Dask LocalCluster of two single-threaded workers)
against the local multi-process build (`--jobs 2`) on the same corpus.

The corpus is N abstracts synthesised from sentences of real ones, as bench/scale.py makes them.
Each build runs in a fresh interpreter without the extraction cache and writes N-Triples only;
the two are checked to be identical, byte for byte. For each it prints the wall time, the time
until the last abstract came back from extraction (ingest, pipeline load and cluster start-up
included), and the ratio of the cluster build to the local one. From the cluster run's own
figures it then estimates, on paper, a 2-node cluster (two machines like this one, four workers):
the extraction phase halves, the results cross a 1 Gb/s network, the corpus-wide stages stay
as measured.

    python bench/cluster.py 20000 [--shared ../shared] [--keep DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from scale import sentence_pool, synthesise  # noqa: E402

DRIVER = """
import json, pickle, sys, time
from kg.build import build
start, marks = time.perf_counter(), {}
def progress(done, total):
    if done == total:
        marks.setdefault("extracted", time.perf_counter() - start)
result = build([sys.argv[1]], sys.argv[2], processes=2, cache=None, progress=progress, formats=("nt",),
               cluster=sys.argv[3] or None)
total = time.perf_counter() - start
print(json.dumps({"total": total, "extracted": marks["extracted"],
                  "bytes_per_abstract": len(pickle.dumps(result.extractions)) / len(result.extractions)}))
"""
#: Bytes per second a 1 Gb/s network carries, at about 80% of its nominal rate.
NETWORK = 0.8 * 1e9 / 8


def build(corpus: Path, output: Path, cluster: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(corpus), str(output), cluster], check=True,
                          capture_output=True, text=True, env=env, cwd=output.parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("size", type=int, help="Abstracts in the corpus.")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"), help="Where the real abstracts are.")
    parser.add_argument("--keep", help="Work in this folder (kept) instead of a temporary one.")
    parser.add_argument("--json", help="Also write the figures to this file.")
    args = parser.parse_args()

    folder = Path(args.keep or tempfile.mkdtemp(prefix="kg-bench-cluster-"))
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / f"corpus-{args.size}.txt"
    if not corpus.exists():
        synthesise(corpus, args.size, sentence_pool(Path(args.shared)), seed=args.size)
    runs = {}
    for name, cluster in (("local, 2 processes", ""), ("LocalCluster, 2 workers", "local:2")):
        (folder / name.split(",")[0].lower().replace(" ", "-")).mkdir(exist_ok=True)
        output = folder / name.split(",")[0].lower().replace(" ", "-") / "graph"
        runs[name] = build(corpus, output, cluster) | {"nt": output.with_name("graph.nt")}
        print(f"{name}: {runs[name]['total']:.1f} s (extraction done at {runs[name]['extracted']:.1f} s)", flush=True)
    local, dask = runs.values()
    same = local["nt"].read_bytes() == dask["nt"].read_bytes()
    rest = dask["total"] - dask["extracted"]
    transfer = dask["bytes_per_abstract"] * args.size / NETWORK
    two_nodes = dask["extracted"] / 2 + transfer + rest

    print()
    print(f"| {args.size:,} abstracts | build s | extraction done at s | abstracts/s | vs local |")
    print("|---|---:|---:|---:|---:|")
    for name, run in runs.items():
        print(f"| {name} | {run['total']:.1f} | {run['extracted']:.1f} | {args.size / run['total']:.1f} | "
              f"{run['total'] / local['total']:.3f} |")
    print(f"| 2 nodes × 2 workers (estimate) | {two_nodes:.1f} | {dask['extracted'] / 2 + transfer:.1f} | "
          f"{args.size / two_nodes:.1f} | {two_nodes / local['total']:.3f} |")
    print(f"\nN-Triples identical: {'yes' if same else 'NO'}. The estimate: extraction {dask['extracted']:.1f} s / 2, "
          f"plus {dask['bytes_per_abstract'] / 1024:.1f} KB of pickled extraction per abstract over 1 Gb/s "
          f"({transfer:.1f} s), plus the corpus-wide stages as measured ({rest:.1f} s).")
    if args.json:
        Path(args.json).write_text(json.dumps({name: {k: v for k, v in run.items() if k != "nt"}
                                               for name, run in runs.items()} | {"identical": same,
                                                                                  "two_nodes_estimate": two_nodes}))


if __name__ == "__main__":
    main()
