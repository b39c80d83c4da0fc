"""The recipe of a training run, checked before torch is loaded: its settings from the command
line, its files, and whether a checkpoint folder holds a run of the same recipe. A typo costs one
line, not a traceback minutes into a run.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError, KGError
from ..evaluate.scier import SCIER_RELATIONS
from ..extract.spans import Labels

#: The recipe; ``kg train-ner`` reads it from the shipped config.json, so a retrain reproduces the shipped model.
#: A setting the shipped config lacks takes its value here, which is what the model shipped before it had.
DEFAULTS = {"seed": 13, "epochs": 15, "batch_size": 4, "encoder_lr": 5e-5, "head_lr": 5e-3, "warmup": 0.1,
            "weight_decay": 0.01, "hidden": 150, "width_dim": 32, "label_dim": 32, "dropout": 0.2,
            "relation_weight": 1.0, "max_pieces": 256, "schema": "scierc", "scierc_docs": "all",
            "adapt_epochs": 0, "readers_weight": 1.0, "silver_weight": 0.0, "silver_threshold": 0.9}
#: Settings that may be 0: ``adapt_epochs`` 0 fine-tunes the shipped encoder as it is.
MAY_BE_ZERO = frozenset({"seed", "adapt_epochs", "readers_weight", "silver_weight"})

#: Each schema's classes: the model's labels, written into its config.json.
SCHEMAS = {"scierc": Labels(),
           "kg": Labels(("Method", "Task", "Dataset", "Metric"), SCIER_RELATIONS, frozenset({"Compare-With"})),
           # kg's types with the second layer of kg's annotated abstracts: classes of methods and tasks.
           "layers": Labels(("Method", "Task", "Dataset", "Metric", "MethodClass", "TaskClass"), SCIER_RELATIONS,
                            frozenset({"Compare-With"}))}

#: Which SciERC training documents the kg schema reads (the recipe's ``scierc_docs``): ``all``, or only
#: the ``metric`` ones, those with a Metric, the one type SciERC alone brings (a third of its
#: abstracts, a quarter of the training time SciERC would take).
SCIERC_DOCS = {"all": lambda doc: True, "metric": lambda doc: any(label == "Metric" for _, _, label in doc.spans)}

#: The settings that take one of a few words, and those words.
CHOICES = {"schema": tuple(SCHEMAS), "scierc_docs": tuple(SCIERC_DOCS)}

#: What a checkpoint folder says of the run that wrote it, beside its ``last.pt``.
RECIPE_FILE = "recipe.json"


def settings_from(recipe: dict, overrides) -> dict:
    """``recipe`` (a config.json's ``training``) over :data:`DEFAULTS`, with each ``KEY=VALUE`` of
    ``overrides`` checked and applied.

    >>> settings_from({}, ["epochs=3", "schema=kg"])["epochs"], settings_from({}, ["schema=kg"])["schema"]
    (3, 'kg')
    >>> settings_from({}, ["epochs=x"])
    Traceback (most recent call last):
    kg.errors.KGError: --set epochs=x: epochs takes a whole number (the recipe's is 15).
    """
    settings = {**DEFAULTS, **recipe}
    for item in overrides:
        key, equals, value = item.partition("=")
        if not equals:
            raise KGError(f"--set {item}: give KEY=VALUE, e.g. --set epochs=5.")
        if key not in DEFAULTS:
            raise KGError(f"--set {item}: no setting {key!r}; the settings are {', '.join(DEFAULTS)}.")
        kind = type(DEFAULTS[key])
        if key in CHOICES:
            if value not in CHOICES[key]:
                raise KGError(f"--set {item}: {key} is one of {', '.join(CHOICES[key])}.")
        else:
            try:
                converted = kind(value)
            except ValueError:
                what = "a whole number" if kind is int else "a number"
                raise KGError(f"--set {item}: {key} takes {what} (the recipe's is {settings[key]}).") from None
            if converted < 0 or (converted == 0 and key not in MAY_BE_ZERO):
                raise KGError(f"--set {item}: {key} must be above 0.")
            value = converted
        settings[key] = value
    return settings


def corpus_of(path: str | Path) -> str:
    """``scier`` for a SciER file (LLM or PLM layout: ``doc_id``), ``scierc`` for SciERC's (``doc_key``),
    ``readers`` for kg's annotated abstracts (:mod:`kg.evaluate.annotated`: ``sha1``), read from its
    first record; any other file is an :class:`~kg.errors.InputError` naming its line."""
    with open(path, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                break
        else:
            raise InputError(str(path), None, "empty: a training or dev file is SciER's or SciERC's JSON Lines.")
    try:
        first = json.loads(line)
    except ValueError:
        first = None
    if isinstance(first, dict) and "doc_id" in first:
        return "scier"
    if isinstance(first, dict) and "doc_key" in first:
        return "scierc"
    if isinstance(first, dict) and "sha1" in first and "entities" in first:
        return "readers"
    raise InputError(str(path), number, "not a SciER record (no doc_id) nor a SciERC one (no doc_key): training "
                     "and dev files are SciER's or SciERC's JSON Lines, such as scier/LLM/train.jsonl.")


def check_files(train: list, dev: list, schema: str) -> None:
    """Every file is SciER's or SciERC's, and the ``scierc`` schema reads SciERC's alone."""
    corpora = {path: corpus_of(path) for path in [*train, *dev]}
    for path in dev:
        if corpora[path] == "readers":
            raise KGError(f"{path} holds kg's annotated abstracts: give it with --train (its held-out part is "
                          "never read there), not --dev.")
    scier = [str(path) for path, corpus in corpora.items() if corpus != "scierc"]
    if schema == "scierc" and scier:
        raise KGError(f"{scier[0]} is SciER's, and the scierc schema trains and scores on SciERC files only: "
                      "add --set schema=kg, or give SciERC's files.")


def check_checkpoints(folder: str | Path, settings: dict) -> None:
    """``folder`` holds no run, or one of ``settings``: a run of another recipe is an error that
    names the settings that differ."""
    recipe = Path(folder) / RECIPE_FILE
    if not recipe.is_file():
        return
    try:
        written = json.loads(recipe.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise KGError(f"{recipe} is not a recipe kg wrote: give another --checkpoints folder.") from None
    # Settings both runs name first: a key the older run lacks differs only because it is newer.
    differ = sorted((key for key in {*written, *settings} if written.get(key) != settings.get(key)),
                    key=lambda key: (written.get(key) is None, key)) if isinstance(written, dict) else ["all"]
    if differ:
        shown = "; ".join(f"{key} {written.get(key)!r} there, {settings.get(key)!r} now" for key in differ[:4])
        raise KGError(f"{folder} holds a run of another recipe ({shown}): give another --checkpoints folder, "
                      "the same --set as that run, or remove the folder.")


def write_recipe(folder: str | Path, settings: dict) -> None:
    """Say in ``folder`` which recipe its checkpoints are of (read by :func:`check_checkpoints`)."""
    path = Path(folder) / RECIPE_FILE
    staging = path.with_name(path.name + ".new")
    staging.write_text(json.dumps(settings, indent=1, sort_keys=True), encoding="utf-8")
    staging.replace(path)
