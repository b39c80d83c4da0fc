"""``kg eval``: kg's extractors scored against a gold-annotated corpus. ``kg.cli`` adds it to the
``kg`` command."""
from __future__ import annotations

import click

from ..strings import counted


@click.group(name="eval")
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
    from . import read_scierc
    from .report import entity_table, load_ner, relation_table, span_model

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
    from .report import scier_tables
    from .scier import read_scier

    docs = read_scier(file)
    click.echo(f"{file}: {counted(len(docs), 'document')}, {counted(sum(len(d.words) for d in docs), 'word')}\n")
    click.echo(scier_tables(docs))

