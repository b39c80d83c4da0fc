"""The commands that answer from a built graph: related methods, the evidence behind a name,
similar papers, a task's comparison, trends, leaderboards, and exports of the graph to other tools.
``kg.cli`` adds them to the ``kg`` command; each only reads its options and calls one function."""
from __future__ import annotations

import sys

import click

from ..strings import counted
from ..terminal import TakesNames, format_option, graph_option, print_answer
from ..vocab import DEFAULT_BASE, ENTITY_TYPES


@click.command(cls=TakesNames)
@click.argument("name")
@graph_option
@click.option("-k", "--top", "--k", "k", default=10, show_default=True, type=click.IntRange(min=1),
              help="How many results (--k, the old spelling, works too).")
@click.option("--type", "entity_type", type=click.Choice(ENTITY_TYPES),
              default="Method", show_default=True, help="Type of the entities to rank.")
@format_option("table", "json")
def related(name, graph, k, entity_type, fmt):
    """Entities related to NAME (a label or alias), each with the items behind its score.

    NAME is matched case-insensitively against labels and aliases, ignoring
    hyphens and plurals; a miss suggests close names. An entity's papers are its
    own and those of every name narrower than it (skos:broader*).

    \b
    Score = the sum of each part times its weight (kg.query.related.WEIGHTS,
    fitted on judged queries by bench/related_fit.py):
      variant       a kind or variant of NAME, or both kinds of one concept
      listed        papers whose sentences list both ("GANs, VAEs and flows")
      compared      papers that propose one and compare with the other
      co-mentioned  papers mentioning both, by how much more often than chance
      tasks, datasets  the tasks and datasets they share, rare ones counting more
      context       how alike the encoder read them and the words around them
      similar       how alike their names' static vectors are
    A candidate sharing only words of its name or its datasets is no answer.
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
    from .graph_index import read_tables
    from .related import RelatedIndex
    from ..similarity import graph_vectors

    index = RelatedIndex(read_tables(graph))
    answer = index.answer(name, k=k, type=entity_type, vectors=graph_vectors(graph))
    print_answer(answer, fmt)



@click.command(cls=TakesNames)
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
    from .explain import explanation
    from .graph_index import read_tables

    bold = lambda text: click.style(text, bold=True, underline=True)  # noqa: E731
    print_answer(explanation(read_tables(graph), name, other), fmt, mark=bold if sys.stdout.isatty() else None)


@click.command()
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
    from .export import FORMATS, export as run_export
    from ..store import graph_stem

    target = output or str(graph_stem(graph)) + (FORMATS[to][0] if to in FORMATS else ".neo4j")
    path, nodes, edges = run_export(graph, target, to)
    click.echo(f"Wrote {path}: {counted(nodes, 'node')}, {counted(edges, 'edge')}.")


@click.command()
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
    from .publish import publish as run_publish, server

    options = {"isql": isql, "user": user, "password": password, "load_dir": load_dir} if engine == "virtuoso" else {}
    target = server(engine, url, **options)
    done = run_publish(graph, target, name=name, base=base)
    click.echo(f"Published {done.name} to {engine} at {url}: {done.triples:,} triples in {done.seconds:.1f} s "
               f"({done.rate:,.0f} triples/s), in the named graph <{done.build}>, now the current build of "
               f"<{done.graph}>" + (f"; dropped {counted(len(done.dropped), 'older build')}." if done.dropped else "."))
    click.echo(f"Query it: kg serve -g {graph} --sparql {target.query_url}")


@click.command(cls=TakesNames)
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
    from .panels import similar as similar_papers

    print_answer(similar_papers(graph, paper), fmt)



@click.command(cls=TakesNames)
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
    from .panels import compare as comparison

    print_answer(comparison(graph, task), fmt)


@click.command()
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
    from .graph_index import graph_index
    from .trends import trends as run_trends

    found = run_trends(graph_index(graph), by=by, types=list(types), earlier=earlier, later=later, top=top)
    print_answer(found, fmt, types=list(types))


@click.command(cls=TakesNames)
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
    from .graph_index import read_tables
    from .leaderboard import leaderboard as run_leaderboard

    print_answer(run_leaderboard(read_tables(graph), dataset, metric, setting), fmt)



#: The commands above, as ``kg.cli`` adds them.
COMMANDS = (related, explain, export, publish, similar, compare, trends, leaderboard)
