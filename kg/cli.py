"""The ``kg`` command: one verb per stage users run. It only wires the stages together.

Here are the verbs that make and serve a graph (build, query, stats, serve, fetch); the verbs that
answer from a built graph live beside their stage (:mod:`kg.query.commands`), as do evaluation
(:mod:`kg.evaluate.commands`) and training (:mod:`kg.train.commands`)."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from .errors import KGError
from .ingest import FORMATS
from .strings import counted
from .terminal import Group, Progress, format_option, graph_option, say
from .vocab import DEFAULT_BASE


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kg")
def main():
    """Turn research-paper abstracts into a knowledge graph of tasks, methods,
    datasets, metrics and models, then query it with SPARQL, explore it, and
    find related methods.

    \b
    Examples:
      kg build tests/fixtures/sample.txt -o graphs/sample
      open graphs/sample.html
      kg query -g graphs/sample --example top-datasets
    """


def run() -> None:
    """The ``kg`` program: :func:`main`, in a process that finds no PyTorch unless the command trains.
    spaCy's thinc imports PyTorch wherever it is installed (the ``train`` extra), though no other
    command runs it: a second and half a gigabyte in a build and in each of its extraction workers.
    (Done here, not in :func:`main`, which tests and other programs call within their own process.)"""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    if command not in TRAINING_COMMANDS:
        sys.modules.setdefault("torch", None)  # None: ``import torch`` raises ImportError
    main()


def _formats(value: str) -> tuple[str, ...]:
    from .build import FORMATS

    chosen = tuple(dict.fromkeys(part.strip().lower().lstrip(".") for part in value.split(",") if part.strip()))
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)} is not an output format; choose from {', '.join(FORMATS)}.")
    return chosen


@main.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--output", default="graphs/graph", show_default=True,
              help="Output path without extension: writes OUTPUT.ttl, .nt, .jsonld, .html (see --formats), "
                   "the SPARQL store OUTPUT.oxigraph/, and the files kept for the answers: the graph's tables "
                   "OUTPUT.tables.json, the entity vectors "
                   "OUTPUT.vectors.npz, and their manifest OUTPUT.manifest.json.")
@click.option("--format", "input_format", type=click.Choice(FORMATS),
              help="Input format for every file. Default: chosen by each file's extension.")
@click.option("--base", default=DEFAULT_BASE, show_default=True,
              help="Base IRI under which papers and entities are minted.")
@click.option("--strict", is_flag=True, help="Fail on the first unreadable record instead of skipping it.")
@click.option("--report", is_flag=True,
              help="Also write OUTPUT.report.md: every merged cluster (largest first), ambiguous acronym and poor node left out.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes for extraction. Default: every core.")
@click.option("--no-cache", is_flag=True,
              help="Re-extract every abstract. By default extractions are cached by text and extractor "
                   "version in .kg-cache/ beside the output, so re-runs only parse new abstracts.")
@click.option("--formats", default="nt,ttl,jsonld,html", show_default=True, metavar="LIST",
              callback=lambda ctx, param, value: _formats(value),
              help="The files to write, comma-separated, from nt, ttl, jsonld, html (the explorer). "
                   "The SPARQL store is always written, from the same triples; files of formats left out "
                   "are removed, so none describes an older graph.")
@click.option("--cluster", metavar="ADDRESS",
              help="Extract on a Dask cluster: a scheduler's address (tcp://HOST:8786), or local:N for N worker "
                   "processes on this machine. Needs the cluster extra: pip install 'kg[cluster]'. The rest of "
                   "the build, and the cache, stay on this machine.")
@click.option("--set", "settings", type=(str, str), multiple=True, metavar="FILE KEY=VALUE",
              help="Give every record of the input FILE (a path, a name or a glob; '*' for all) a field, over "
                   "what the record says (repeatable; a later one of the same key wins). KEY is venue, year, "
                   "decision, url (a template with {id}) or decisions (what codes mean: "
                   "'1=Accept (Oral);0=Reject'; codes not named stay as written).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def build(inputs, output, input_format, base, strict, report, jobs, no_cache, formats, cluster, settings, quiet):
    """Build a graph from abstracts in INPUTS (files, folders or globs).

    \b
    Formats: the corpus text format (.txt: a header line naming the collection,
    then one abstract per blank-line-separated block); CSV with an 'abstract'
    column (and optionally title, id, keywords, authors, year, venue, url,
    decision);
    JSON Lines with at least 'abstract' (arXiv metadata snapshot and OpenReview
    notes included); OpenReview API notes JSON (.json, v1 or v2); BibTeX (.bib)
    entries with an 'abstract' field. Unreadable records are skipped and
    listed in the summary (or fail the build with --strict). If the build
    fails, earlier output files are left untouched.

    
    Examples:
      kg build tests/fixtures/sample.txt -o graphs/sample
      kg build corpus/*.txt papers.csv -o graphs/iclr --base https://example.org/kg/
      kg build iclr2026.csv -o graphs/iclr2026 --formats nt
      kg build arxiv-cs.jsonl -o graphs/arxiv --cluster tcp://scheduler:8786
      kg build ICLR17.csv ICLR18.csv -o graphs/iclr --set ICLR17.csv year=2017 \\
        --set ICLR18.csv year=2018 --set '*' venue=ICLR \\
        --set '*' url='https://openreview.net/forum?id={id}'
    """
    from .build import build as run_build
    from .ingest import FileSetting, ingest_summary

    parsed = []
    for pattern, assignment in settings:
        try:
            parsed.append(FileSetting.parse(pattern, assignment))
        except ValueError as error:
            raise click.BadParameter(f"{pattern} {assignment}: {error}", param_hint="--set") from None

    with Progress("Extracting", quiet=quiet) as progress:
        result = run_build(inputs, output, base=base, format=input_format, strict=strict, report=report,
                           processes=jobs, cache=None if no_cache else "default", progress=progress.update,
                           formats=formats, cluster=cluster, settings=parsed, on_stage=progress.stage)
    say("\n".join([result.summary(), *ingest_summary(result.repaired, result.skipped)]))


@main.command()
@graph_option
@click.argument("sparql", required=False)
@click.option("--file", "query_file", type=click.Path(exists=True, dir_okay=False), help="Read the query from a .rq file.")
@click.option("--example", help="Run a shipped example query by name (see --list).")
@click.option("--bind", "bindings", multiple=True, metavar="NAME=VALUE",
              help="Bind a query variable to a literal (repeatable), e.g. --bind benchmark=RULER.")
@format_option("table", "csv", "json")
@click.option("--list", "list_examples", is_flag=True, help="List the example queries and exit.")
@click.option("--timeout", default=10.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds the query may run; a longer one is stopped with an error (as in 'kg serve').")
def query(graph, sparql, query_file, example, bindings, fmt, list_examples, timeout):
    """Run a SPARQL query against a graph (-g GRAPH; by default the only one under graphs/).

    Prefixes kg:, skos:, dcterms:, prov:, oa:, rdfs:, schema: and others are
    predeclared.

    \b
    Examples:
      kg query -g graphs/sample 'SELECT ?m WHERE { ?m a kg:Method } LIMIT 5'
      kg query -g graphs/sample --example methods-on-benchmark --bind benchmark=RULER
    """
    from .serve import query_within
    from .query import examples
    from .store import format_results

    shipped = examples()

    @functools.cache
    def store():  # opened only to cite names of this graph as parameters' examples
        from .store import open_graph

        return open_graph(graph)

    @functools.cache
    def kept():  # the examples' values the build chose, kept in the graph's tables (None: none kept)
        from .query.views import kept_tables

        tables = kept_tables(graph)
        return tables.t.get("examples") if tables is not None else None

    def cited(ex):  # the names cited for the example's parameters: the build's, else the store's
        from .query import kept_values

        found = kept_values(kept(), ex)
        return found if found is not None else ex.values_in(store())

    if list_examples:
        for name, ex in shipped.items():
            found = cited(ex) if ex.params else {}
            params = " ".join(f"--bind {k}=VALUE (a {ex.param_types.get(k, 'name')}"
                              + (f", e.g. {found[k]}" if found[k] else "") + ")" for k in ex.params)
            say(f"{name}\n    {ex.description}\n" + (f"    parameters: {params}\n" if params else ""))
        return
    values = {}
    for binding in bindings:
        name, sep, value = binding.partition("=")
        if not sep:
            raise click.BadParameter(f"{binding!r}: expected NAME=VALUE", param_hint="--bind")
        values[name] = value
    if example:
        if example not in shipped:
            raise KGError(f"No example query {example!r}; choose one of: {', '.join(shipped)}.")
        missing = [name for name in shipped[example].params if name not in values]
        if missing:
            found = cited(shipped[example])
            raise click.UsageError(f"The example {example!r} needs " + " and ".join(
                f"--bind {name}=VALUE" + (f" (for instance --bind {name}={found[name]!r})" if found[name] else "")
                for name in missing) + ".")
        text = shipped[example].bind(values)
        values = {name: value for name, value in values.items() if name not in shipped[example].params}
    elif query_file:
        text = Path(query_file).read_text(encoding="utf-8")
    elif sparql:
        text = sparql
    else:
        raise click.UsageError("Give a query, --file FILE or --example NAME.")
    import pyoxigraph

    result = query_within(graph, text, values, timeout=timeout)
    answer = format_results(result, fmt)
    # A CONSTRUCT's answer is N-Triples whatever --format says: escaped its own way, as JSON is.
    say(answer, escaped_format=fmt == "json" or isinstance(result, (pyoxigraph.QueryTriples, list)))


@main.command()
@graph_option
def stats(graph):
    """Counts of papers, entities per type, results, edges per role and link (relation or broader) in GRAPH, and its top entities.

    GRAPH is the -o path given to 'kg build' (e.g. graphs/sample) or an
    .nt/.ttl/.jsonld file.

    
    Example:
      kg stats -g graphs/sample
    """
    import pyoxigraph as ox

    from . import vocab
    from .query import kg_terms, view_with
    from .store import format_results, open_graph, run_query

    store = open_graph(graph)
    classes = kg_terms(("Paper", *vocab.ENTITY_TYPES, "Statement", "Result"))
    say(format_results(run_query(store, view_with("stats-types", **{"class": classes})), counts=True))
    links = [ox.NamedNode(str(vocab.link_iri(name))) for name in vocab.LINKS]  # broader is SKOS's
    for heading, terms in (("Roles (paper -> entity):", kg_terms(vocab.ROLES)),
                           ("Links (entity -> entity: relations and broader):", links)):
        say(f"\n{heading}")
        say(format_results(run_query(store, view_with("stats-edges", p=terms)), counts=True))
    say("\nEntities most papers mention:")
    say(format_results(run_query(store, view_with("stats-top-entities", **{"class": kg_terms(vocab.ENTITY_TYPES)})),
                        counts=True))




@main.command()
@graph_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The default answers this computer only: the server has no "
                   "login, so 0.0.0.0 lets anyone who can reach your machine read the graph and run queries.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME[:PORT]",
              help="A host name (or address) requests may be addressed to, besides 127.0.0.1, localhost, [::1] "
                   "and --host itself; repeatable. Needed when --host is 0.0.0.0 and others reach this machine "
                   "by a name, or behind a proxy that passes its own Host on (give NAME:80 when it sends no "
                   "port). Requests for any other name are refused, so that a web page cannot reach the "
                   "server through a DNS name rebound to its address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port).")
@click.option("--timeout", default=10.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds a SPARQL query may run; a longer one is stopped and answered with an error (503), "
                   "so one runaway query cannot hold the server.")
@click.option("--max-results", default=10_000, show_default=True, type=click.IntRange(min=1),
              help="The most solutions or triples one query returns; the rest are left out and the "
                   "KG-Results-Truncated header says so.")
@click.option("--worker-memory", default=2048, show_default=True, type=click.IntRange(min=0), metavar="MB",
              help="Memory each query worker may use, in MB (0: no cap); a query that needs more is answered "
                   "with an error (503), so one query cannot take the machine's memory.")
@click.option("--sparql", metavar="URL",
              help="Read the graph from this SPARQL server's query endpoint (e.g. http://127.0.0.1:7878/query "
                   "for Oxigraph, http://127.0.0.1:8890/sparql for Virtuoso), where 'kg publish' loaded it, "
                   "instead of the embedded store. GRAPH then names the published graph.")
@click.option("--get", "get_path", metavar="PATH",
              help="Answer one GET request for PATH in-process, print the body and exit (status 1 unless "
                   "the answer is 2xx). For scripts and tests; nothing listens.")
def serve(graph, host, allow_hosts, port, timeout, max_results, worker_memory, sparql, get_path):
    """Serve GRAPH read-only: a SPARQL endpoint, a query page and the explorer.

    GRAPH is the -o path given to 'kg build' (its .oxigraph store opens in
    milliseconds) or an .nt/.ttl/.jsonld file (loaded first). With --sparql,
    the graph is read from a SPARQL server that 'kg publish' loaded it into.

    \b
    /             the explorer: search, kind filters, neighbourhoods, evidence
    /query        a SPARQL editor with the example queries
    /sparql       SPARQL 1.1 Protocol (GET ?query=, POST); results as JSON,
                  XML, CSV or TSV, graphs as Turtle, N-Triples, JSON-LD or
                  RDF/XML, chosen by the Accept header; updates are refused
    /entity/ID    an entity (ID like method/grpo); /paper/ID a paper
    Every page has a JSON twin: /entity/ID.json, /paper/ID.json, /index.json.

    \b
    Examples:
      kg serve -g graphs/sample
      kg serve -g graphs/sample --get /entity/method/grpo.json
      kg serve -g graphs/sample --sparql http://127.0.0.1:8890/sparql
      kg serve -g graphs/sample --host 0.0.0.0 --allow-host kg.lab.example
      curl -H 'Accept: text/csv' http://127.0.0.1:8000/sparql --data-urlencode 'query=ASK { ?s ?p ?o }'
    """
    import signal
    import time

    from .serve import get, make_app, start

    started = time.perf_counter()
    app = make_app(graph, host=host, allow_hosts=allow_hosts, timeout=timeout, max_results=max_results,
                   worker_memory=worker_memory << 20 if worker_memory else None, sparql=sparql)
    if get_path is not None:
        try:
            status, headers, body = get(app, get_path)
        finally:
            app.close()
        # What the data says reaches the terminal escaped, as every command's answer does; JSON stays JSON.
        text = body.decode("utf-8", errors="replace")
        json_body = "json" in headers.get("Content-Type", "")
        say(text, escaped_format=json_body, nl=not text.endswith("\n"))
        if not 200 <= status < 300:
            click.secho(f"Error: {get_path} answered {status}", fg="red", err=True)
            sys.exit(1)
        return
    running = start(app, host=host, port=port, quiet=False)
    # Stop as cleanly on `kill` as on Ctrl-C, and on Ctrl-C even when started from a shell that
    # ignores it for background jobs (the process inherits that, and Python then installs no handler).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    click.echo(f"Serving {app.title} at {running.url}/ (SPARQL at {running.url}/sparql), "
               f"ready in {time.perf_counter() - started:.2f} s. Ctrl-C stops.")
    try:
        while running.thread.is_alive():
            running.thread.join(0.5)  # a timed join lets Ctrl-C through
    except KeyboardInterrupt:
        click.echo("Stopping.")
    finally:
        running.stop()



@main.group()
def fetch():
    """Download abstracts from a public source into a file 'kg build' reads."""


@fetch.command("openreview")
@click.option("--venue", required=True, help="OpenReview venue id, e.g. ICLR.cc/2026/Conference.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="JSON Lines file to write; an existing one is resumed, not overwritten.")
@click.option("--invitation", help="Invitation to list. Default: VENUE/-/Submission (every submission).")
@click.option("--api", default="https://api2.openreview.net", show_default=True, help="OpenReview API v2 base URL.")
@click.option("--page-size", default=1000, show_default=True, type=click.IntRange(1, 1000), help="Notes per request.")
@click.option("--retries", default=5, show_default=True, help="Retries of a failed request, with exponential backoff.")
def fetch_openreview_command(venue, output, invitation, api, page_size, retries):
    """Download a venue's submissions from the OpenReview API as JSON Lines.

    Pages through the API, retries transient failures with backoff, and
    resumes an interrupted download: run the same command again.

    \b
    Example:
      kg fetch openreview --venue ICLR.cc/2026/Conference -o corpus/iclr2026.jsonl
      kg build corpus/iclr2026.jsonl -o graphs/iclr2026
    """
    from .ingest.fetch import fetch_openreview

    total = fetch_openreview(venue, output, api=api, invitation=invitation, page_size=page_size, retries=retries,
                             log=lambda message: click.echo(message, err=True))
    click.echo(f"{counted(total, 'note')} in {output}")


def _add_commands() -> None:
    """The commands that live beside their stage: answers, evaluation and training."""
    from .evaluate.commands import eval_group
    from .query.commands import COMMANDS as ANSWERS
    from .train.commands import COMMANDS as TRAINING

    for command in (*ANSWERS, eval_group, *TRAINING):
        main.add_command(command)
    TRAINING_COMMANDS.update(command.name for command in TRAINING)


TRAINING_COMMANDS: set[str] = set()  # the commands that run PyTorch


_add_commands()


if __name__ == "__main__":
    run()
