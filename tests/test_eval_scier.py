"""kg eval scier: the span model alone and kg's whole extractor scored on a SciER file, side by side."""
import re
from pathlib import Path

from click.testing import CliRunner

from kg.cli import main
from kg.evaluate.report import _scier_relation, _scier_type

TINY = Path(__file__).parent / "fixtures" / "scier_tiny.jsonl"


def _row(table: str, label: str) -> list[str]:
    [line] = [line for line in table.splitlines() if line.startswith(label + " ")]
    return line.split()


def test_eval_scier_prints_both_extractors_for_entities_and_relations_with_the_gold_support():
    result = CliRunner().invoke(main, ["eval", "scier", str(TINY)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{TINY}: 2 documents, 55 words")
    entities, spans, relations = result.output.split("\n\n")[1:4]
    assert entities.startswith("Entities, exact span and type") and spans.startswith("Entities, span only")
    assert re.search(r"\bmodel\b.*\bkg\b", entities.splitlines()[1])
    # Gold support, per type: GraphMix twice, regularization method, ResNet-50 and CNNs twice are Methods.
    assert [_row(entities, label)[1] for label in ("Method", "Task", "Dataset")] == ["6", "3", "2"]
    assert _row(relations, "micro")[3] == "7"  # the fixture's seven relations
    for table in (entities, spans, relations):
        cells = [float(c) for line in table.splitlines()[3:] for c in line.split()[2:] if re.fullmatch(r"\d\.\d{3}", c)]
        assert cells and all(0 <= c <= 1 for c in cells)


def test_kg_types_and_relations_read_as_sciers():
    assert [_scier_type(t) for t in ("Model", "Method", "Material", "Dataset", "Metric", "Generic")] == \
        ["Method", "Method", "Dataset", "Dataset", None, None]
    assert [_scier_relation(r, h) for r, h in (("hyponymOf", "Task"), ("hyponymOf", "Method"), ("trainedOn", "Model"),
                                                ("benchmarkFor", "Dataset"), ("variantOf", "Method"))] == \
        ["SubTask-Of", "SubClass-Of", "Trained-With", "Benchmark-For", None]
