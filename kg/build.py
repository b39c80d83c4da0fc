"""Build: the whole pipeline, from input files to the graph files beside each other.

ingest -> extract -> resolve -> concepts -> graph -> RDF (Turtle, N-Triples, JSON-LD), the explorer (HTML)
and the entities' vectors (for similarity).
Every output is first written into a temporary folder beside the target and
moved into place only when all of them are ready, so a build that fails
leaves the previous graph files exactly as they were.
"""
from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from . import pwc, rdf
from .errors import InputError, KGError
from .cache import ExtractionCache
from .cluster import connect
from .concepts import build_hierarchy
from .extract import extract_all, extractor_name
from .extract.pipeline import load_pipeline
from .graph import build_graph
from .ingest import read_papers
from .model import Entity, Paper, PaperExtraction
from .propagate import propagate
from .relations import sentence_relations, variant_relations
from .resolve import resolution_report, resolve
from .similarity import Vectors, entity_vectors
from .store import STORE_SUFFIX, VECTORS_SUFFIX, write_store
from .viz.render import render_html
from .vocab import DEFAULT_BASE

#: The files ``kg build --formats`` chooses from: the RDF serializations and the explorer page.
#: The SPARQL store and the entities' vectors are always written.
FORMATS = (*rdf.RDF_FORMATS, "html")


@dataclass
class BuildResult:
    graph: nx.MultiDiGraph
    entities: list[Entity]
    extractions: list[PaperExtraction]
    outputs: dict[str, Path]
    skipped: list[InputError] = field(default_factory=list)
    duplicates: int = 0
    seconds: float = 0.0

    def summary(self, top: int = 10) -> str:
        """A few lines for the terminal: what was read, what the graph holds, where it went."""
        kinds = Counter(data["kind"] for _, data in self.graph.nodes(data=True))
        edges = Counter(role for _, _, role in self.graph.edges(keys=True))
        lines = [f"Built the graph of {len(self.extractions)} papers in {self.seconds:.1f} s"
                 + (f" ({self.duplicates} duplicates merged)" if self.duplicates else "")
                 + (f"; skipped {len(self.skipped)} records:" if self.skipped else "")]
        lines += skipped_lines(self.skipped)
        lines.append("Nodes: " + ", ".join(f"{kinds[k]} {k}" for k in ["Paper", "Task", "Method", "Dataset", "Metric", "Model"] if kinds[k]))
        lines.append("Edges: " + ", ".join(f"{n} {r}" for r, n in edges.most_common()))
        entities = sorted((d for n, d in self.graph.nodes(data=True) if d["kind"] != "Paper"),
                          key=lambda d: (-d["papers"], d["label"]))
        if entities:
            lines.append("Top entities: " + ", ".join(f"{d['label']} ({d['kind']}, {d['papers']})" for d in entities[:top]))
        lines += [f"Wrote {path}" for path in self.outputs.values()]
        return "\n".join(lines)


def skipped_lines(skipped: list[InputError], *, limit: int = 20) -> list[str]:
    """One line per skipped record, ``file:line: reason``, at most ``limit`` of them and a count of the rest.

    >>> skipped_lines([InputError("a.csv", 3, "record has no abstract; skipped")] * 3, limit=2)
    ['  a.csv:3: record has no abstract; skipped', '  a.csv:3: record has no abstract; skipped', '  ... and 1 more']
    """
    lines = [f"  {error}" for error in skipped[:limit]]
    if len(skipped) > limit:
        lines.append(f"  ... and {len(skipped) - limit} more")
    return lines


def unique_papers(papers: Iterable[Paper]) -> tuple[list[Paper], int]:
    """Papers with duplicate ids merged: the first record wins, later ones fill its empty fields."""
    kept: dict[str, Paper] = {}
    duplicates = 0
    for paper in papers:
        first = kept.get(paper.id)
        if first is None:
            kept[paper.id] = paper
            continue
        duplicates += 1
        for name in ("title", "venue", "year", "url"):
            if not getattr(first, name) and getattr(paper, name):
                setattr(first, name, getattr(paper, name))
    return list(kept.values()), duplicates


def build(
    inputs: Iterable[str | Path],
    output: str | Path,
    *,
    base: str = DEFAULT_BASE,
    format: str | None = None,
    strict: bool = False,
    title: str | None = None,
    report: bool = False,
    processes: int | None = None,
    cache: str | Path | None = "default",
    progress: Callable[[int, int], None] | None = None,
    formats: Iterable[str] = FORMATS,
    cluster: str | None = None,
) -> BuildResult:
    """Build the graph of ``inputs`` and write ``output``.ttl/.nt/.jsonld/.html (those of
    ``formats``), its SPARQL store ``output``.oxigraph and its entities' vectors.

    ``progress(done, total)`` is called as papers are extracted. With ``report``, also
    writes ``output.report.md``: every merged cluster and every ambiguous acronym.
    Extraction runs on ``processes`` processes (default: every core) and reuses the
    extraction cache at ``cache`` (default: ``.kg-cache/`` beside the output; None: no cache).
    With ``cluster`` (a Dask scheduler address, or ``local:N``: :mod:`kg.cluster`), extraction
    runs on that cluster's workers instead; the rest of the build runs here.
    Raises ``InputError`` for unreadable input (every bad record, with ``strict``).
    """
    started = time.perf_counter()
    skipped: list[InputError] = []
    papers, duplicates = unique_papers(read_papers(inputs, format=format, strict=strict, on_skip=skipped.append))
    if not papers:
        raise KGError("\n".join(["No abstracts found in the input" + (f"; skipped {len(skipped)} records:" if skipped else ".")]
                                 + skipped_lines(skipped)))
    output = Path(output)
    remove_stale_staging(output)
    store = None
    if cache is not None:
        path = output.parent / ".kg-cache" / "extractions.sqlite" if cache == "default" else Path(cache)
        store = ExtractionCache(path, extractor=extractor_name(load_pipeline()))
    try:
        with connect(cluster) if cluster else contextlib.nullcontext() as client:
            extractions = extract_all(papers, processes=processes or os.cpu_count() or 1, cache=store,
                                      progress=progress, cluster=client)
    finally:
        if store is not None:
            store.close()
    # Resolution, then its last step: the names it found looked up in every abstract.
    extractions, entities = propagate(extractions, resolve(extractions))
    relations = variant_relations(entities, extractions) + sentence_relations(entities, extractions)
    # The concept hierarchy joins specific names to the concepts papers share.
    taxonomy = pwc.load()
    hierarchy = build_hierarchy(entities, extractions, taxonomy)
    entities = entities + hierarchy.concepts
    graph = build_graph(extractions, entities, relations + hierarchy.links, taxonomy)
    vectors = entity_vectors(entities, extractions)
    extra = {"report.md": resolution_report(entities, extractions)} if report else {}
    outputs = write_outputs(graph, output, base=base, title=title or output.name, extra=extra, vectors=vectors,
                            formats=formats)
    return BuildResult(graph, entities, extractions, outputs, skipped, duplicates, time.perf_counter() - started)


def write_outputs(graph: nx.MultiDiGraph, stem: Path, *, base: str, title: str,
                  extra: dict[str, str] | None = None, vectors: Vectors | None = None,
                  formats: Iterable[str] = FORMATS) -> dict[str, Path]:
    """Write the outputs of ``graph`` next to ``stem``, all or nothing: the files of ``formats``
    (:data:`FORMATS`) and the SPARQL store, filled from the same triples in the same pass.

    ``extra`` maps further suffixes (``"report.md"``) to text written alongside; ``vectors``,
    the entities' vectors, go to ``stem.vectors.npz``. Files of the formats not asked for that
    an earlier build left at ``stem`` are removed, so no output describes another graph."""
    formats = set(formats)
    unknown = formats - set(FORMATS)
    if unknown:
        raise KGError(f"Unknown output format {', '.join(sorted(unknown))}; choose from {', '.join(FORMATS)}.")
    stem.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{stem.name}.staging-{os.getpid()}-", dir=stem.parent))
    try:
        # The store 'kg serve' and 'kg query' open in milliseconds, instead of parsing a file.
        folder = staging / f"{stem.name}{STORE_SUFFIX}"
        staged = write_store(folder, lambda store: rdf.write_rdf(graph, staging / stem.name, base=base,
                                                                  formats=formats, store=store))
        staged["oxigraph"] = folder
        if "html" in formats:
            staged["html"] = render_html(graph, staging / f"{stem.name}.html", title=title)
        if vectors is not None:
            staged["vectors"] = vectors.save(staging / f"{stem.name}{VECTORS_SUFFIX}")
        for suffix, text in (extra or {}).items():
            staged[suffix] = staging / f"{stem.name}.{suffix}"
            staged[suffix].write_text(text, encoding="utf-8")
        outputs = {}
        for kind, path in staged.items():
            target = stem.parent / path.name
            _move_into_place(path, target, staging)
            outputs[kind] = target
        for kind in set(FORMATS) - formats:
            stem.with_name(f"{stem.name}.{kind}").unlink(missing_ok=True)
        return outputs
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove_stale_staging(stem: Path) -> list[Path]:
    """Remove the staging folders that killed builds of ``stem`` left beside it; return them.

    A build stages its outputs in ``.NAME.staging-PID-<8 random characters>`` (:func:`write_outputs`)
    and removes it when done, unless it is killed. Only folders of this ``NAME`` whose build process
    is gone are removed: another graph's, or a build of the same name still running, are left alone.
    Folders named ``.NAME.<8 random characters>`` are staging folders of earlier kg versions.
    """
    removed = []
    for folder in stem.parent.glob(f".{glob.escape(stem.name)}.*"):
        staged = _STAGING.fullmatch(folder.name[len(stem.name) + 2:])
        if folder.is_dir() and staged and not (staged.group(1) and _running(int(staged.group(1)))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


_STAGING = re.compile(r"staging-(\d+)-\w{8}|\w{8}")  # what follows ".NAME." in a staging folder's name


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _move_into_place(path: Path, target: Path, staging: Path) -> None:
    """``os.replace`` for files and folders: a folder cannot replace a non-empty folder, so the
    old one is first moved into ``staging`` (deleted with it) and the new one takes its name."""
    if path.is_dir() and target.is_dir():
        os.replace(target, staging / f"{target.name}.old")
    os.replace(path, target)
