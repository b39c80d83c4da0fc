"""kg.resolve.propagate: a name found in another abstract joins it only where the mention judge keeps it."""
from kg.model import Mention, Paper, PaperExtraction
from kg.resolve import resolve
from kg.resolve import propagate as propagation


def extraction(paper_id: str, text: str, found: list[tuple[str, str]]) -> PaperExtraction:
    words = [word + " " for word in text.split(" ")]
    words[-1] = words[-1].rstrip()
    spans, at = [], 0
    for word in words:
        spans, at = spans + [at, at + len(word.rstrip())], at + len(word)
    tokens, token_spans = PaperExtraction.pack_tokens(words, spans)
    mentions = [Mention(text.index(f), text.index(f) + len(f), f, label, 0, 0.9, "ner", role="uses", role_confidence=0.9)
                for f, label in found]
    return PaperExtraction(Paper(paper_id, text), [(0, len(text))], mentions, {}, tokens=tokens, token_spans=token_spans)


def test_a_name_is_added_where_the_judge_keeps_it_and_left_out_where_it_does_not(monkeypatch):
    known = extraction("a", "We train on ImageNet with a GPU budget .", [("ImageNet", "Dataset"), ("GPU", "Dataset")])
    other = extraction("b", "ImageNet results need a GPU .", [])
    # The judge keeps every mention except the GPU ones: the name it drops is not spread.
    monkeypatch.setattr(propagation, "_kept_by_judge", lambda ex: [m.text != "GPU" for m in ex.mentions])
    grown, entities = propagation.propagate([known, other], resolve([known, other]))
    assert [m.text for m in grown[1].mentions] == ["ImageNet"]
    by_label = {e.label: e.mentions for e in entities}
    assert by_label["ImageNet"] == [("a", 0), ("b", 0)] and by_label["GPU"] == [("a", 1)]
