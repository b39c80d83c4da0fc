"""Build: the whole pipeline, from input files to the graph files beside each other.

ingest -> extract -> resolve -> concepts -> graph -> RDF (Turtle, N-Triples, JSON-LD), the explorer (HTML)
and the entities' vectors (for similarity).
Every output is first written into a staging folder beside the target, checked
before extraction starts, and the finished folder is made the graph in one step
(:mod:`kg.write.outputs`): a build that fails or is killed leaves the previous graph
exactly as it was.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import itertools
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from .write import outputs, serialize
from . import pwc
from .errors import InputError, KGError
from .cache import ExtractionCache, LastBuilds, Recorded
from .extract.cluster import connect, on_cluster
from .link.concepts import annotate, build_hierarchy
from .extract import ExtractionFailure, extract_all, extractor_name, in_processes
from .extract.judge import prune as prune_mentions
from .extract.proposals import settle as settle_proposals
from .extract.settings import settle_settings
from .extract.pipeline import load_pipeline
from .link.graph import KnowledgeGraph, build_graph
from .ingest import FileSetting, read_papers
from .link.similar import similar_papers
from .model import Entity, Paper, PaperExtraction
from .resolve.propagate import propagate
from .resolve.useful import keep_useful
from .write.triples import node_iri
from .link.relations import listed_relations, sentence_relations, variant_relations
from .resolve import corpus_names, resolution_report, resolve
from .similarity import Vectors, entity_vectors
from .strings import counted
from .kept import sign_store, write_manifest
from .query.tables import store_answers, write_tables
from .store import INDEX_SUFFIX, STORE_SUFFIX, TABLES_SUFFIX, VECTORS_SUFFIX, store_digest, write_store
from .text import normalize_for_id
from .viz.overview import field_map
from .viz.render import render_html
from .vocab import BROADER, DEFAULT_BASE, ENTITY_TYPES, LINKS

#: The files ``kg build --formats`` chooses from: the RDF serializations and the explorer page.
#: The SPARQL store and the entities' vectors are always written.
FORMATS = (*serialize.RDF_FORMATS, "html")


@dataclass
class BuildResult:
    graph: KnowledgeGraph
    entities: list[Entity]
    extractions: list[PaperExtraction]
    outputs: dict[str, Path]
    skipped: list[InputError] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # the ids of records merged into an earlier one
    warnings: list[InputError] = field(default_factory=list)  # records kept under a new id
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # what the build did to files it found damaged
    repaired: list[InputError] = field(default_factory=list)  # records read after a certain repair

    def summary(self, top: int = 10) -> str:
        """A few lines for the terminal: what was read, what the graph holds, where it went."""
        kinds = Counter(data["kind"] for _, data in self.graph.nodes(data=True))
        edges = edge_counts(self.graph)
        lines = [f"Built the graph of {counted(len(self.extractions), 'paper')} in {self.seconds:.1f} s"
                 + (f" ({counted(len(self.duplicates), 'repeated record')} merged: {_listed(self.duplicates)})"
                    if self.duplicates else "")
                 + (f"; skipped {counted(len(self.skipped), 'record')}:" if self.skipped else "")]
        lines += skipped_lines(self.skipped)
        lines += self.notes
        if self.warnings:
            lines.append(f"Kept {counted(len(self.warnings), 'record')} under new ids, "
                         "their ids being other records':")
            lines += skipped_lines(self.warnings)
        lines.append("Nodes: " + ", ".join(f"{kinds[k]:,} {k}" for k in ["Paper", *ENTITY_TYPES] if kinds[k]))
        lines.append("Edges: " + (", ".join(f"{n:,} {r}" for r, n in edges.most_common()) or "none"))
        entities = sorted((d for n, d in self.graph.nodes(data=True) if d["kind"] != "Paper"),
                          key=lambda d: (-d["papers"], d["label"]))
        if entities:
            lines.append("Top entities: " + ", ".join(f"{d['label']} ({d['kind']}, {d['papers']:,})" for d in entities[:top]))
        lines += [f"Wrote {path}" for path in self.outputs.values()]
        return "\n".join(lines)


def edge_counts(graph: nx.MultiDiGraph) -> Counter:
    """The edges of ``graph`` by role or link (relations and ``broader``): one per pair of nodes and
    kind, however many papers or rules state it, as the store holds one triple for it. The build's
    linking line, its summary and ``kg stats`` count these.

    >>> graph = nx.MultiDiGraph()
    >>> _ = graph.add_edges_from([("task/a", "task/b", "broader"), ("task/a", "task/b", "broader")])
    >>> edge_counts(graph)  # a link two rules found
    Counter({'broader': 1})
    """
    return Counter(key for _, _, key in graph.edges(keys=True))


def skipped_lines(skipped: list[InputError], *, limit: int = 100) -> list[str]:
    """One line per skipped record, ``file:line: reason``, at most ``limit`` of them and a count of the rest.

    >>> skipped_lines([InputError("a.csv", 3, "record has no abstract; skipped")] * 3, limit=2)
    ['  a.csv:3: record has no abstract; skipped', '  a.csv:3: record has no abstract; skipped', '  ... and 1 more']
    """
    lines = [f"  {error}" for error in skipped[:limit]]
    if len(skipped) > limit:
        lines.append(f"  ... and {len(skipped) - limit:,} more")
    return lines


def release_freed_memory() -> None:
    """Give back to the system the memory a stage freed. glibc's allocator keeps freed memory for the
    process's later use, scattered between what is still held, so that a build would go on holding
    what its stages once needed (at 20,000 abstracts, 0.33 GB of the 1.6 GB held after similar papers).
    Nothing where the C library is not glibc."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


@functools.cache
def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def _listed(ids: list[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit:,} more" if len(ids) > limit else "")


def unique_papers(papers: Iterable[Paper], *, strict: bool = False,
                  on_warning: Callable[[InputError], None] | None = None) -> tuple[list[Paper], list[str]]:
    """Papers with repeated ids sorted out; returns the papers and the ids merged.

    A record with an earlier one's id and abstract (case, spacing and markup aside) is merged into it: the first
    wins, later ones fill its empty fields. One with the same id but another abstract is kept under
    a new id, ``ID~2``, and ``on_warning`` is told which records clash (with ``strict``, that is an
    ``InputError``), so no abstract is lost.

    >>> papers, merged = unique_papers([Paper("p1", "One.", title="A"), Paper("p1", " One. ", url="u"),
    ...                                 Paper("p1", "Two."), Paper("p2", "Three.")], on_warning=print)
    p1: id 'p1' is another record's, with another abstract; kept as 'p1~2'
    >>> [(p.id, p.title, p.url) for p in papers], merged
    ([('p1', 'A', 'u'), ('p1~2', '', ''), ('p2', '', '')], ['p1'])
    """
    kept: dict[str, Paper] = {}
    merged: list[str] = []
    for paper in papers:
        first = kept.get(paper.id)
        if first is None:
            kept[paper.id] = paper
        elif normalize_for_id(first.abstract) == normalize_for_id(paper.abstract):
            merged.append(paper.id)
            for name in ("title", "venue", "year", "url", "decision"):
                if not getattr(first, name) and getattr(paper, name):
                    setattr(first, name, getattr(paper, name))
        else:
            new_id = next(f"{paper.id}~{n}" for n in itertools.count(2) if f"{paper.id}~{n}" not in kept)
            where = f" ({first.source})" if first.source else ""
            warning = InputError(paper.source.file if paper.source else paper.id, paper.source.line if paper.source else None,
                                 f"id {paper.id!r} is another record's{where}, with another abstract"
                                 + ("" if strict else f"; kept as {new_id!r}"))
            if strict:
                raise warning
            if on_warning:
                on_warning(warning)
            paper.id = new_id
            kept[new_id] = paper
    return list(kept.values()), list(dict.fromkeys(merged))


def resolved(extractions: list[PaperExtraction], taxonomy: pwc.Lexicon, *, judged: bool = True
             ) -> tuple[list[PaperExtraction], list[Entity], list[Entity]]:
    """The corpus stages between extraction and linking: ``(extractions, entities, poor nodes)``.

    Each paper's mentions are judged (learned, after the cache, so cached papers too: the mentions a
    reader would label, then each paper's own names among them, then what makes a score
    incomparable); the names are resolved across papers and looked up in every abstract; and with
    ``judged``, the entities that are poor nodes (:mod:`kg.resolve.useful`) are set apart."""
    for extraction in extractions:
        prune_mentions(extraction)
        settle_proposals(extraction)
        settle_settings(extraction)
    names = corpus_names(extractions)  # what resolution and its last step both read
    entities = resolve(extractions, known_datasets=taxonomy.datasets, names=names)
    extractions, entities = propagate(extractions, entities, names=names)
    entities, poor = keep_useful(entities, extractions) if judged else (entities, [])
    return extractions, entities, poor


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
    settings: Iterable[FileSetting] = (),
    on_stage: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build the graph of ``inputs`` and write ``output``.ttl/.nt/.jsonld/.html (those of
    ``formats``), its SPARQL store ``output``.oxigraph and its entities' vectors.

    ``progress(done, total)`` is called as papers are extracted. With ``report``, also
    writes ``output.report.md``: every merged cluster and every ambiguous acronym.
    Extraction runs on ``processes`` processes (default: every core) and reuses the
    extraction cache at ``cache`` (default: ``.kg-cache/`` beside the output; None: no cache).
    With ``cluster`` (a Dask scheduler address, or ``local:N``: :mod:`kg.extract.cluster`), extraction
    runs on that cluster's workers instead; the rest of the build runs here. ``settings`` give
    the records of the files they name a venue, year, decision or URL (:class:`kg.ingest.FileSetting`).
    ``on_stage(line)`` is told as each stage ends, with what it made and how long it took
    ("Resolved 6,953 entities in 4.1 s").
    Raises ``InputError`` for unreadable input (every bad record, with ``strict``).
    """
    started = time.perf_counter()
    clock = [started]

    def said(line: str) -> None:  # a stage has ended: its line, with the seconds since the last one
        release_freed_memory()
        now = time.perf_counter()
        if on_stage:
            on_stage(f"{line} in {now - clock[0]:.1f} s")
        clock[0] = now

    skipped: list[InputError] = []
    warnings: list[InputError] = []
    repaired: list[InputError] = []
    papers, duplicates = unique_papers(read_papers(inputs, format=format, strict=strict, on_skip=skipped.append,
                                                   settings=settings, on_repair=repaired.append),
                                       strict=strict, on_warning=warnings.append)
    if not papers:
        raise KGError("\n".join(["No abstracts found in the input" + (f"; skipped {counted(len(skipped), 'record')}:" if skipped else ".")]
                                 + skipped_lines(skipped)))
    said(f"Read {counted(len(papers), 'paper')}" + (f" ({counted(len(skipped), 'record')} skipped)" if skipped else ""))

    def failed(failure: ExtractionFailure) -> None:  # one record's extraction raised: listed, or fatal with strict
        source = failure.paper.source
        error = InputError(source.file if source else failure.paper.id, source.line if source else None,
                           f"could not be extracted ({failure.error})")
        if strict:
            raise error
        skipped.append(error)

    notes: list[str] = []
    output = Path(output)
    staging = outputs.stage(output)  # before any work: an output that cannot be written is said now
    try:
        store = builds = None
        if cache is not None:
            path = output.parent / ".kg-cache" / "extractions.sqlite" if cache == "default" else Path(cache)
            store = ExtractionCache(path, extractor=extractor_name(load_pipeline()))
            builds = LastBuilds(path.with_name("builds.sqlite"))
        try:
            with connect(cluster) if cluster else contextlib.nullcontext() as client:
                executor = on_cluster(client) if client else in_processes(processes or os.cpu_count() or 1)
                extractions = extract_all(papers, executor=executor, cache=store, progress=progress, on_failure=failed)
        finally:
            if store is not None:
                store.close()
                notes += store.set_aside
        if not extractions:
            raise KGError("\n".join([f"None of the {counted(len(papers), 'abstract')} could be extracted:"] + skipped_lines(skipped)))
        hits = store.hits if store is not None else 0
        said(f"Extracted {counted(len(extractions), 'paper')} ({hits:,} from the cache, {len(extractions) - hits:,} parsed)")
        taxonomy = pwc.load()
        extractions, entities, judged_out = resolved(extractions, taxonomy)
        for extraction in extractions:  # the parse's tokens, which propagation read, are not held from here on
            extraction.tokens = extraction.token_spans = ""
        said(f"Resolved {counted(sum(len(ex.mentions) for ex in extractions), 'mention')} into "
             f"{counted(len(entities), 'entity', 'entities')} ({counted(len(judged_out), 'poor node')} left out)")
        relations = (variant_relations(entities, extractions) + sentence_relations(entities, extractions)
                     + listed_relations(entities, extractions))
        # The concept hierarchy joins specific names to the concepts papers share.
        hierarchy = build_hierarchy(entities, extractions, taxonomy)
        entities = entities + hierarchy.concepts
        # Each entity's reach, salience and Papers with Code name, written on its node.
        annotations = annotate(entities, hierarchy.links, extractions, taxonomy)
        vectors = entity_vectors(entities, extractions)
        for extraction in extractions:  # pooled: what the encoder read is not held while the graph is made
            extraction.contexts = ""
        graph = build_graph(extractions, entities, relations + hierarchy.links, annotations)
        links = edge_counts(graph)
        said(f"Linked {counted(sum(links[link] for link in LINKS) - links[BROADER], 'relation')} and "
             f"{counted(links[BROADER], 'broader link')} ({counted(len(hierarchy.concepts), 'concept')}), "
             "with the entities' vectors")
        for paper, similar in similar_papers(graph).items():  # for the index and the explorer's paper pages
            graph.nodes[paper]["similar"] = similar
        said(f"Made the graph of {counted(graph.number_of_nodes(), 'node')} and {counted(graph.number_of_edges(), 'edge')}, "
             "with similar papers")
        extra = {"report.md": resolution_report(entities, extractions, judged_out)} if report else {}
        tally = serialize.Tally()
        written = write_outputs(graph, output, base=base, title=title or output.name, extra=extra, vectors=vectors,
                                formats=formats, staging=staging, builds=builds, tally=tally)
        said(f"Wrote {counted(len(written), 'output')} and the SPARQL store{_rewritten(graph, tally, base)}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if builds is not None:
            builds.close()
            notes += builds.set_aside
    return BuildResult(graph, entities, extractions, written, skipped, duplicates, warnings,
                       time.perf_counter() - started, notes, repaired)


def _last_build(record: Recorded | None, setting: str, home: Path, stem: Path, store_is_last: bool,
                tally: serialize.Tally) -> serialize.LastBuild | None:
    """The last build of the graph ``stem`` as ``record``ed, to copy blocks from, or None; ``tally`` is told
    why its store cannot be patched (``unpatched``) and which of its files changed since (``untrusted``)."""
    if record is None or record.setting != setting:
        tally.unpatched = "the graph's first build" if record is None else "another base IRI or kg version"
        return None
    try:
        placed = {stream: serialize.Placed.from_bytes(value) for stream, value in record.parts.items()}
    except ValueError:
        tally.unpatched = "the build cache's record of the last build is damaged"
        return None
    folder = home / record.folder
    last = serialize.LastBuild(placed, {"export": {part: folder / f"{stem.name}.{part}" for part in serialize.PARTS},
                                        "index": {"nt": folder / f"{stem.name}{INDEX_SUFFIX}"}})
    n_triples = last.can_patch()  # checks the last build's files, naming those changed in last.untrusted
    # Patched, a store other than the last build's (swapped, restored from elsewhere) would hold a wrong graph.
    if not store_is_last:
        tally.unpatched = "the store is gone or not the one the last build wrote"
    elif not n_triples:
        tally.unpatched = "the last build's N-Triples are gone or changed"
    tally.untrusted = last.untrusted
    return last


def _rewritten(graph: nx.MultiDiGraph, tally: serialize.Tally, base: str) -> str:
    """What a build that followed another wrote anew: " (patched: 2,310 of 112,593 subjects new or
    changed, 14 papers and 402 entities among them)", or why it wrote everything, and the last build's
    files it found changed, whose bytes it did not copy; nothing for a build with no cache."""
    untrusted = (f"; {', '.join(tally.untrusted)} changed since the last build: not copied, serialized anew"
                 if tally.untrusted else "")
    if not tally.patched:
        return f" (written in full: {tally.unpatched}{untrusted})" if tally.unpatched else ""
    changed = set(tally.changed)
    papers = entities = 0
    for node, data in graph.nodes(data=True):
        if node_iri(node, data, base) in changed:
            if data["kind"] == "Paper":
                papers += 1
            else:
                entities += 1
    return (f" (patched: {len(changed):,} of {counted(tally.subject_count(), 'subject')} new or changed, "
            f"{counted(papers, 'paper')} and {counted(entities, 'entity', 'entities')} among them{untrusted})")


def write_outputs(graph: nx.MultiDiGraph, stem: Path, *, base: str, title: str,
                  extra: dict[str, str] | None = None, vectors: Vectors | None = None,
                  formats: Iterable[str] = FORMATS, staging: Path | None = None,
                  builds: LastBuilds | None = None, tally: serialize.Tally | None = None) -> dict[str, Path]:
    """Write the outputs of ``graph`` as the graph ``stem``, all or nothing (:mod:`kg.write.outputs`): the
    files of ``formats`` (:data:`FORMATS`) and the SPARQL store, filled from the same triples in the same pass.

    ``extra`` maps further endings (``"report.md"``) to text written alongside. The files kept for the
    answers (:mod:`kg.kept`) go beside: the graph's tables, what the answers read, to ``stem.tables.json``,
    ``vectors``, the entities' vectors, to
    ``stem.vectors.npz``, and their record to ``stem.manifest.json``, whose mark the store carries. Outputs an earlier build left at ``stem``
    that this one does not write are removed, so no output describes another graph. ``staging``
    is a folder from :func:`kg.write.outputs.stage` (made here when not given); it is used up.

    With ``builds``, where the last build of ``stem`` wrote its blocks of triples, only the blocks that
    changed are serialized, the others copied from that build's files where they still hold what it
    wrote, and that build's store, copied, is patched rather than a new one filled when it is the one
    there (:func:`kg.write.serialize.write_rdf`); ``tally`` is told what was written, and why not more
    was copied."""
    formats = set(formats)
    unknown = formats - set(FORMATS)
    if unknown:
        raise KGError(f"Unknown output format {', '.join(sorted(unknown))}; choose from {', '.join(FORMATS)}.")
    staging = staging or outputs.stage(stem)
    tally = tally if tally is not None else serialize.Tally()
    store_path = stem.with_name(f"{stem.name}{STORE_SUFFIX}")
    # The graph and its files by their paths from the cache, which moves with them (and names no machine's folders).
    home = Path(os.path.dirname(os.path.abspath(builds.path))) if builds is not None else Path()
    name = os.path.relpath(os.path.abspath(stem), home)
    setting = f"{base}\n{serialize.SERIALIZATION}"  # what the last build's blocks must share to be compared
    record = builds.last(name) if builds is not None else None
    # Whether the store there holds what the last build wrote, byte for byte: only that one may be patched, or
    # kept beside files that are the same as this build's (without a cache to tell, a store is kept as it was).
    store_is_last = bool(record and record.store) and store_digest(store_path) == record.store
    last = _last_build(record, setting, home, stem, store_is_last, tally) if builds is not None else None
    patch = last is not None and not tally.unpatched
    try:
        def fill(store) -> dict:
            serialize.write_rdf(graph, staging / stem.name, base=base, formats=formats, store=store,
                                last=last, patch=patch, tally=tally)
            return store_answers(store)

        # The store 'kg serve' and 'kg query' open in milliseconds, instead of parsing a file.
        staged_store = staging / f"{stem.name}{STORE_SUFFIX}"
        answers = write_store(staged_store, fill, start_from=store_path if patch else None)
        topics = field_map(graph)  # the map of the field: the page draws it, kg serve's page reads it kept
        write_tables(graph, staging / f"{stem.name}{TABLES_SUFFIX}", base=base, topics=topics, **answers)
        kept = [TABLES_SUFFIX]
        if vectors is not None:
            vectors.save(staging / f"{stem.name}{VECTORS_SUFFIX}")
            kept.append(VECTORS_SUFFIX)
        sign_store(staged_store, write_manifest(staging / stem.name, kept))
        if "html" in formats:
            render_html(graph, staging / f"{stem.name}.html", title=title, topics=topics)
        for suffix, text in (extra or {}).items():
            (staging / f"{stem.name}.{suffix}").write_text(text, encoding="utf-8")
        written = outputs.make_current(staging, stem, keep_store=builds is None or store_is_last)
        if builds is not None:  # where the files now are (the new build's folder, or the last one's if they are the
            # same) and the store there (this build's, or the last one's, kept)
            folder = os.path.relpath(os.path.dirname(os.path.realpath(stem.with_name(f"{stem.name}{INDEX_SUFFIX}"))), home)
            builds.record(name, Recorded(setting, folder, store_digest(store_path),
                                         {stream: placed.to_bytes() for stream, placed in tally.placed.items()}))
        return written
    except OSError as error:  # a full disk, a folder made read-only meanwhile: one line, the graph as it was
        raise KGError(f"Cannot write {error.filename or stem.parent} ({error.strerror or error}); "
                      f"the previous graph at {stem} is unchanged.") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
