"""Paper-level check: is each paper's own contribution found with the proposes/introduces role?

Builds the graph of a corpus and prints, per paper, what it is found to propose or
introduce; then how many papers have at least one, and how many of the
contributions named in EXPECTED (read by hand from the ICLR 2026 sample in
../shared/corpus) are found that way.

    python bench/proposals.py ../shared/corpus/*.txt
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from kg.build import build
from kg.keys import resolution_key

#: The named contribution of papers in ../shared/corpus, as a reader names it.
EXPECTED = """FedGEM SFT-auto LumiTex WebDevJudge E-GRPO RADAR Nüwa LongFilter ASIDE GeneBreaker
JudiFair MOBILERL MergOPT CurlFlow Vision-SR1 PSCL J1 AUHead GmNet Earth-Agent TCPE KECode
SpatialGenEval World2Minecraft GraphOmni GRAM-DTI VGRefine BAM JailbreakDNABench Earth-Bench""".split()


def main(inputs: list[str]) -> None:
    with tempfile.TemporaryDirectory() as out:
        result = build(inputs, Path(out) / "graph")
    G = result.graph
    found_names = set()
    with_proposal = 0
    for node, data in sorted(G.nodes(data=True), key=lambda n: n[1].get("source_line", 0)):
        if data["kind"] != "Paper":
            continue
        proposed = sorted({G.nodes[target]["label"] for _, target, role in G.out_edges(node, keys=True)
                           if role in ("proposes", "introduces")})
        with_proposal += bool(proposed)
        for target in (t for _, t, r in G.out_edges(node, keys=True) if r in ("proposes", "introduces")):
            found_names |= {resolution_key(a) for a in [G.nodes[target]["label"], *G.nodes[target]["aliases"]]}
        print(f"{data['label'][:60]:<62} {', '.join(proposed) or '-'}")
    papers = sum(1 for _, d in G.nodes(data=True) if d["kind"] == "Paper")
    hits = [name for name in EXPECTED if resolution_key(name) in found_names]
    print(f"\npapers with a proposes/introduces edge: {with_proposal}/{papers} ({with_proposal / papers:.0%})")
    print(f"expected contributions found with that role: {len(hits)}/{len(EXPECTED)} ({len(hits) / len(EXPECTED):.0%})")
    missing = [n for n in EXPECTED if n not in hits]
    if missing:
        print("missing: " + ", ".join(missing))


if __name__ == "__main__":
    main(sys.argv[1:] or ["../shared/corpus"])
