"""kg explain shows the sentences behind an entity or a link, the mention marked at its offsets."""

from click.testing import CliRunner

from kg.cli import main
from kg.query.explain import explain
from kg.ingest import read_papers
from kg.query.graph_index import read_tables
from kg.vocab import RELATIONS

from support import FIXTURES


def test_every_evidence_offset_slices_the_abstract_to_the_mention(sample):
    labels, evidence = explain(read_tables(sample), "GRPO")
    assert {e.relation for e in evidence} >= {"uses", "comparesWith", "variantOf"}
    abstracts = {p.id: p.abstract for p in read_papers([FIXTURES / "sample.txt"])}
    for e in evidence:
        abstract = abstracts[e.paper.rsplit("/", 1)[1]]
        assert abstract[e.start:e.end] == e.mention
        # A paper's mention of GRPO, the name of a variant that contains it (C-GRPO's long form),
        # or the object of a relation GRPO is the subject of ("GRPO usedFor mathematical reasoning").
        grpo = "GRPO" in e.mention or "Group Relative Policy Optimization" in e.mention
        assert grpo or (e.subject.endswith("/group-relative-policy-optimization") and e.relation in RELATIONS)
        assert (e.before + e.mention + e.after) in abstract


def test_two_entities_show_the_papers_linking_them(sample):
    labels, evidence = explain(read_tables(sample), "C-GRPO", "GRPO")
    mentions = {e.mention for e in evidence}
    assert {"C-GRPO", "GRPO"} <= mentions
    # Only the paper that mentions both (the C-GRPO paper), not the PhoneRL paper that uses GRPO alone.
    assert len({e.paper for e in evidence}) == 1 and all("PhoneRL" not in e.before + e.after for e in evidence)


def test_cli_marks_the_mention(sample):
    result = CliRunner().invoke(main, ["explain", "group relative policy optimization", "-g", str(sample)])
    assert result.exit_code == 0, result.output
    assert "built on «GRPO»." in result.output and "paper comparesWith GRPO" in result.output
