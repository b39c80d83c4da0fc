"""variantOf links read from names, exported with evidence, and validated."""
from rdflib import URIRef

from kg.extract import extract_papers
from kg.link.graph import build_graph
from kg.model import Paper
from kg.write.shapes import to_rdf, validate
from kg.link.relations import variant_relations
from kg.resolve import resolve
from kg.vocab import KG

ABSTRACTS = [
    "Prevailing methods like Group Relative Policy Optimization (GRPO) discard entities. "
    "We introduce Entity-aware Group Relative Policy Optimization (E-GRPO), a novel framework.",
    "Its core component is the Difficulty-Adaptive GRPO (ADAGRPO) algorithm. The resulting MOBILERL-9B model "
    "beats MOBILERL baselines. The VLM model and VLMs are compared.",
]


def _build():
    extractions = list(extract_papers([Paper(f"p{i}", t) for i, t in enumerate(ABSTRACTS)]))
    entities = resolve(extractions)
    return extractions, entities, variant_relations(entities, extractions)


def test_names_containing_another_name_are_its_variants():
    _, entities, relations = _build()
    label = {e.key: e.label for e in entities}
    pairs = {(label[r.source], label[r.target]) for r in relations}
    assert {("E-GRPO", "GRPO"), ("ADAGRPO", "GRPO"), ("MOBILERL-9B", "MOBILERL")} <= pairs


def test_a_name_plus_a_generic_word_is_not_a_variant():
    _, entities, relations = _build()
    label = {e.key: e.label for e in entities}
    assert not [r for r in relations if label[r.target] in ("VLM", "VLMs")]


def test_variants_export_with_evidence_and_validate():
    extractions, entities, relations = _build()
    rdf = to_rdf(build_graph(extractions, entities, relations))
    conforms, report = validate(rdf)
    assert conforms, report
    egrpo, grpo = (next(s for s in rdf.subjects(URIRef("http://www.w3.org/2004/02/skos/core#prefLabel"), None)
                        if str(rdf.value(s, URIRef("http://www.w3.org/2004/02/skos/core#prefLabel"))) == name)
                   for name in ("E-GRPO", "GRPO"))
    assert (egrpo, KG.variantOf, grpo) in rdf
    # Breaking it: a variant of something that is no method or model.
    rdf.add((grpo, KG.variantOf, URIRef("https://example.org/not-an-entity")))
    assert not validate(rdf)[0]


LISTING = ("Unlike GANs, VAEs and normalizing flows, our sampler needs no discriminator. "
           "We train with Adam or SGD on CIFAR-10 and ImageNet.")


def test_names_a_sentence_lists_together_are_listed_with_each_other_and_export_valid():
    from kg.link.relations import listed_relations

    extractions = list(extract_papers([Paper("p0", LISTING)]))
    entities = resolve(extractions)
    relations = listed_relations(entities, extractions)
    label = {e.key: e.label for e in entities}
    pairs = {frozenset((label[r.source], label[r.target])) for r in relations}
    assert {frozenset(("GANs", "VAEs")), frozenset(("Adam", "SGD")), frozenset(("CIFAR-10", "ImageNet"))} <= pairs
    assert all(r.relation == "listedWith" and r.source < r.target for r in relations)
    assert not [p for p in pairs if {"Adam", "CIFAR-10"} <= {n for n in p}]  # a method is not listed with a dataset
    conforms, report = validate(to_rdf(build_graph(extractions, entities, relations)))
    assert conforms, report


def test_a_list_of_thousands_of_names_pairs_only_its_first_ones():
    from kg.link.relations import MAX_LISTED, listed_relations
    from kg.model import Entity, Mention, PaperExtraction

    names = [f"Net{i}" for i in range(3000)]
    text = ", ".join(names)
    starts = [text.index(name + ",") if name != names[-1] else text.rindex(name) for name in names]
    mentions = [Mention(s, s + len(n), n, "Method", 0, 0.9, "t") for s, n in zip(starts, names)]
    ex = PaperExtraction(Paper("p", text), [(0, len(text))], mentions, {})
    entities = [Entity(n.lower(), "Method", n, [n], [("p", i)]) for i, n in enumerate(names)]
    assert len(listed_relations(entities, [ex])) == MAX_LISTED * (MAX_LISTED - 1) // 2
