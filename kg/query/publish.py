"""Publish: a built graph bulk-loaded into a SPARQL server (``kg publish``).

Each build goes into a named graph of its own (:func:`kg.vocab.build_graph_iri`),
through the server's own bulk path:

- **Oxigraph server** (``oxigraph serve``): the SPARQL 1.1 Graph Store Protocol,
  ``POST /store?graph=…`` with the N-Triples streamed from disk, in the server's
  non-transactional bulk mode (nothing reads a build graph before it is complete);
- **Virtuoso**: its bulk loader over ``isql`` (``ld_dir`` + ``rdf_loader_run``),
  which reads the files from a folder the server may read (``DirsAllowed``).

Only once the build graph holds every triple (counted through the server) does
one SPARQL Update move the catalog's ``kg:currentBuild`` pointer to it, so a
reader following the pointer sees the old build or the new one, never half of
either. The previous build is then dropped. The ontology and its SHACL shapes go
to a named graph of their own, :data:`kg.vocab.ONTOLOGY_GRAPH`.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import datetime
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from .. import vocab
from .endpoint import SparqlEndpoint, current_builds, with_prologue
from ..errors import GraphNotFound, KGError
from . import update
from ..store import PREFIXES, graph_file, graph_stem, index_file, open_graph, store_dir

ENGINES = ("oxigraph", "virtuoso")


@dataclass
class Published:
    """What :func:`publish` loaded: the published graph's IRI, the named graph of this build,
    its triples and the seconds the bulk load took."""

    name: str
    graph: str
    build: str
    triples: int
    seconds: float
    dropped: list[str]

    @property
    def rate(self) -> float:
        """Triples loaded per second."""
        return self.triples / self.seconds if self.seconds else float("inf")


# ------------------------------------------------------------------- servers


class OxigraphServer:
    """An ``oxigraph serve`` at ``url`` (e.g. http://127.0.0.1:7878): queries at /query,
    updates at /update, bulk loads through the Graph Store Protocol at /store."""

    engine = "oxigraph"

    def __init__(self, url: str, *, timeout: float = 3600.0):
        self.url, self.timeout = url.rstrip("/"), timeout
        self.query_url = self.url + "/query"

    def load(self, files: list[Path], graph: str) -> None:
        for path in files:
            kind = "application/n-triples" if path.suffix == ".nt" else "text/turtle"
            params = urllib.parse.urlencode({"graph": graph, "no_transaction": ""})
            with path.open("rb") as body:
                self._send(f"{self.url}/store?{params}", body, kind, length=path.stat().st_size)

    def update(self, sparql: str) -> None:
        self._send(self.url + "/update", sparql.encode("utf-8"), "application/sparql-update")

    def drop(self, graph: str) -> None:
        self.update(f"DROP SILENT GRAPH <{graph}>")

    def _send(self, url: str, body, kind: str, *, length: int | None = None) -> None:
        headers = {"Content-Type": kind}
        if length is not None:
            headers["Content-Length"] = str(length)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
        except urllib.error.HTTPError as error:
            detail = " ".join(error.read().decode("utf-8", "replace").split())[:500]
            raise KGError(f"The Oxigraph server at {self.url} refused {url.split('?')[0]} ({error.code}): {detail}") from None
        except (urllib.error.URLError, OSError) as error:
            raise KGError(f"Cannot reach the Oxigraph server at {self.url}: {getattr(error, 'reason', error)}") from None


class Virtuoso:
    """A Virtuoso server: SPARQL over HTTP at ``url``/sparql, bulk loads and updates over
    ``isql`` at ``isql`` (HOST:PORT) as ``user``. The bulk loader reads files on the server's
    machine: they are copied, in parts, into ``load_dir``, a folder of its ``DirsAllowed``."""

    engine = "virtuoso"

    def __init__(self, url: str, *, isql: str = "127.0.0.1:1111", user: str = "dba", password: str = "dba",
                 load_dir: str | Path | None = None, isql_command: str | None = None):
        self.url = url.rstrip("/")
        self.query_url = self.url if self.url.endswith("/sparql") else self.url + "/sparql"
        self.isql, self.user, self.password = isql, user, password
        self.load_dir = Path(load_dir) if load_dir else None
        self.isql_command = isql_command or shutil.which("isql-vt") or shutil.which("isql") or "isql-vt"
        self.loaders = max(1, os.cpu_count() or 1)  # loaders at once: Virtuoso's advice is one per core

    def run(self, *statements: str) -> str:
        """Run SQL ``statements`` in one isql session; raise ``KGError`` with Virtuoso's message on an
        error (isql itself exits 0 after a failed statement and goes on with the next)."""
        # One statement per line: isql reads a script line by line; no macros, so SPARQL's $var is kept.
        script = "".join(" ".join(s.split()).rstrip(";") + ";\n" for s in statements)
        try:
            done = subprocess.run([self.isql_command, self.isql, self.user, self.password, "VERBOSE=OFF",
                                   "PROMPT=OFF", "BANNER=OFF", "MACRO_SUBSTITUTION=OFF", "ERRORS=STDOUT"],
                                  input=script, capture_output=True, text=True, timeout=24 * 3600)
        except FileNotFoundError:
            raise KGError(f"Virtuoso's isql client ({self.isql_command}) is not installed here: "
                          "apt-get install virtuoso-opensource brings isql-vt.") from None
        output = done.stdout + done.stderr
        errors = [line.strip() for line in output.splitlines() if "*** Error" in line]
        if done.returncode != 0 or errors:
            raise KGError(f"Virtuoso (isql at {self.isql}) failed: " + (" ".join(errors) or output.strip()[-500:]))
        return output

    def load(self, files: list[Path], graph: str) -> None:
        """Bulk-load ``files`` into ``graph``: split into parts for :attr:`loaders` loaders running
        at once (each loader takes whole files), registered with ``ld_dir`` and loaded by
        ``rdf_loader_run``; a part the loader could not read fails the load."""
        folder = (self.load_dir or files[0].parent).resolve()
        with tempfile.TemporaryDirectory(prefix=".kg-load-", dir=folder) as staging:
            _split(files, Path(staging), self.loaders * 2)
            self.run(f"ld_dir({_sql_string(staging)}, '%', {_sql_string(graph)})")
            try:
                with concurrent.futures.ThreadPoolExecutor(self.loaders) as pool:
                    list(pool.map(lambda _: self.run("rdf_loader_run()"), range(self.loaders)))
                self.run("checkpoint")
                # SQL, not SPARQL: the bulk loader's list of files, with what went wrong in each.
                failed = self.run("SELECT ll_file, ll_error FROM DB.DBA.LOAD_LIST WHERE ll_file LIKE "
                                  + _sql_string(staging + "/%") + " AND (ll_error IS NOT NULL OR ll_state <> 2)")
                if staging in failed:
                    raise KGError(f"Virtuoso's bulk loader failed on {graph}: {' '.join(failed.split())[:500]}")
            finally:
                self.run(f"DELETE FROM DB.DBA.LOAD_LIST WHERE ll_file LIKE {_sql_string(staging + '/%')}")

    def update(self, sparql: str) -> None:
        self.run("SPARQL " + sparql)

    def drop(self, graph: str) -> None:
        # Deleting the graph's rows is faster than SPARQL CLEAR on a large graph.
        self.run(f"DELETE FROM DB.DBA.RDF_QUAD WHERE G = iri_to_id({_sql_string(graph)})", "checkpoint")


def _split(files: list[Path], folder: Path, count: int) -> None:
    """Copy ``files`` into ``folder`` as about ``count`` N-Triples parts of whole lines (Turtle
    files as they are: a Turtle file cannot be cut at any line)."""
    for number, path in enumerate(files):
        if path.suffix != ".nt":
            shutil.copyfile(path, folder / f"{number}-{path.name}")
            continue
        size = max(1, path.stat().st_size // max(1, count - len(files) + 1))
        with path.open("rb") as source:
            index = 0
            while chunk := source.read(size):
                chunk += source.readline()  # to the end of the line
                (folder / f"{number}-{index}.nt").write_bytes(chunk)
                index += 1


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def server(engine: str, url: str, **options):
    """The server ``kg publish --to ENGINE --url URL`` loads into."""
    if engine == "oxigraph":
        return OxigraphServer(url)
    if engine == "virtuoso":
        return Virtuoso(url, **options)
    raise KGError(f"Unknown server {engine!r}; choose one of {', '.join(ENGINES)}.")


# ------------------------------------------------------------------- publishing


def graph_files(graph: str | Path, scratch: Path) -> tuple[list[Path], int]:
    """The N-Triples files of ``graph`` (its ``.nt`` and its index) and their number of triples.
    A graph without ``.nt`` is written out, with its index, from its store into ``scratch`` first."""
    try:
        rdf = graph_file(graph)
    except GraphNotFound:
        if store_dir(graph) is None:
            raise
        rdf = None  # a store alone
    if rdf is not None and rdf.suffix == ".nt":
        files = [rdf] + ([index_file(rdf)] if index_file(rdf) else [])
    else:
        files = [scratch / (graph_stem(graph).name + ".nt")]
        open_graph(graph).dump(str(files[0]), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    return files, sum(_lines(path) for path in files)


def _lines(path: Path) -> int:
    count = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 24):
            count += chunk.count(b"\n")
    return count


def publish(graph: str | Path, target, *, name: str | None = None, base: str = vocab.DEFAULT_BASE) -> Published:
    """Load the built ``graph`` into the server ``target`` (:func:`server`) as the new current
    build of the published graph ``name`` (default: the graph's file name), replacing the
    previous build atomically, and the ontology and shapes into their own named graph.

    Raises ``KGError`` when the server refuses or loses triples; the previous build then stays current.
    """
    name = name or graph_stem(graph).name
    published = str(vocab.published_graph_iri(base, name))
    created = datetime.datetime.now(datetime.timezone.utc)
    build = str(vocab.build_graph_iri(base, name, created.strftime("%Y%m%dT%H%M%S%fZ")))
    endpoint = SparqlEndpoint(target.query_url)
    with tempfile.TemporaryDirectory(prefix="kg-publish-") as scratch:
        files, triples = graph_files(graph, Path(scratch))
        previous = current_builds(endpoint, name)
        _publish_ontology(target, Path(scratch))
        started = time.perf_counter()
        try:
            target.load(files, build)
            seconds = time.perf_counter() - started
            held = endpoint.graph_size(build)
            if held != triples:
                raise KGError(f"The server holds {held} of the {triples} triples loaded into {build}; "
                              "the previous build stays current.")
            target.update(_point_to(vocab.catalog_graph(base), published, name, build, triples, created))
        except BaseException:
            with contextlib.suppress(KGError):  # the load's own error is the one to report
                target.drop(build)
            raise
    for old in previous:  # read before this build was made: never this build
        target.drop(old)
    return Published(name, published, build, triples, seconds, previous)


def _point_to(catalog, graph: str, name: str, build: str, triples: int, created: datetime.datetime) -> str:
    """The update making ``build`` the current build of ``graph`` (:func:`kg.query.update`
    ``point-to-build``), its parameters bound."""
    bound = {"catalog": ox.NamedNode(str(catalog)), "graph": ox.NamedNode(graph), "name": ox.Literal(name),
             "build": ox.NamedNode(build),
             "created": ox.Literal(created.isoformat().replace("+00:00", "Z"),
                                   datatype=ox.NamedNode(str(vocab.XSD.dateTime))),
             "triples": ox.Literal(str(triples), datatype=ox.NamedNode(str(vocab.XSD.integer)))}
    return with_prologue(update("point-to-build"), PREFIXES, {ox.Variable(k): term for k, term in bound.items()})


def _publish_ontology(target, scratch: Path) -> None:
    """The ontology and its shapes, replacing the previous ones in their own named graph (small:
    dropped and loaded again)."""
    files = []
    for source in (vocab.ONTOLOGY_FILE, vocab.SHAPES_FILE):
        path = scratch / f"kg-{source.name}"
        path.write_bytes(source.read_bytes())
        files.append(path)
    target.drop(str(vocab.ONTOLOGY_GRAPH))
    target.load(files, str(vocab.ONTOLOGY_GRAPH))
