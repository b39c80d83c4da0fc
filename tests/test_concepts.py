"""The concept layer: hierarchy links by rule, concepts no paper names alone, corpus-wide names, salience."""
import networkx as nx
import pytest

from kg.link.concepts import build_hierarchy, papers_reached
from kg.model import Entity, Mention, Paper, PaperExtraction
from kg.pwc import load
from kg.vocab import lpwc_iri
from kg.resolve import resolve
from kg.store import open_graph, run_query


def paper(pid: str, text: str, names: list[str], *, label: str = "Method", acronyms=None) -> PaperExtraction:
    mentions, at = [], 0
    for name in names:
        start = text.index(name, at)
        mentions.append(Mention(start, start + len(name), name, label, 0, 0.9, "rules"))
        at = start + len(name)
    return PaperExtraction(Paper(pid, text), [(0, len(text))], mentions, acronyms or {})


def links_of(extractions):
    entities = resolve(extractions)
    hierarchy = build_hierarchy(entities, extractions, load())
    return entities, hierarchy, {(l.source, l.target, l.rule) for l in hierarchy.links}


def test_a_name_is_narrower_than_its_head_and_a_shared_unnamed_head_becomes_a_concept():
    extractions = [paper("a", "We study document summarization.", ["document summarization"], label="Task"),
                   paper("b", "Abstractive summarization is hard.", ["Abstractive summarization"], label="Task"),
                   paper("c", "Latent diffusion models and video diffusion models.",
                         ["Latent diffusion models", "video diffusion models"])]
    entities, hierarchy, links = links_of(extractions)
    assert ("document summarization", "summarization", "head") in links
    assert ("abstractive summarization", "summarization", "head") in links
    # "summarization": no paper names it alone, two reach it. "diffusion model": one paper only.
    assert [(c.key, c.type, c.mentions) for c in hierarchy.concepts] == [("summarization", "Task", [])]
    assert papers_reached(entities + hierarchy.concepts, hierarchy.links)["summarization"] == {"a", "b"}


def test_coordinations_are_split_and_a_head_reaches_through_an_acronym():
    extractions = [
        paper("a", "Diffusion and flow-based models generate images.", ["Diffusion and flow-based models"]),
        paper("b", "Diffusion models are strong.", ["Diffusion models"]),
        paper("c", "Graph neural networks (GNNs) and relational GNNs.", ["Graph neural networks", "GNNs", "relational GNNs"],
              acronyms={"GNNs": "Graph neural networks"}),
    ]
    _, _, links = links_of(extractions)
    assert ("diffusion and flow based model", "diffusion model", "coordination") in links
    assert ("relational gnn", "graph neural network", "head") in links


def test_a_numbered_member_is_narrower_than_its_family_and_pwc_gives_parent_tasks():
    extractions = [paper("a", "Results on CIFAR-10 and CIFAR.", ["CIFAR-10", "CIFAR"], label="Dataset"),
                   paper("b", "Unsupervised machine translation without parallel data.",
                         ["Unsupervised machine translation"], label="Task"),
                   paper("c", "Machine translation of speech.", ["Machine translation"], label="Task")]
    _, _, links = links_of(extractions)
    assert ("cifar10", "cifar", "family") in links
    # The head rule finds it first; PwC's parent agrees, so the link is made once.
    assert ("unsupervised machine translation", "machine translation", "head") in links


def test_sentences_give_links_and_keep_their_evidence():
    text = "We compare regularizers such as dropout, DropConnect and zoneout."
    extractions = [paper("a", text, ["regularizers", "dropout", "DropConnect", "zoneout"])]
    _, hierarchy, links = links_of(extractions)
    assert {(s, t) for s, t, rule in links if rule == "such-as"} == {
        ("dropout", "regularizer"), ("dropconnect", "regularizer"), ("zoneout", "regularizer")}
    link = next(l for l in hierarchy.links if l.source == "dropout")
    assert link.evidence == ("a", 1) and link.sentence == 0


def test_the_hierarchy_never_closes_a_cycle():
    # Each sentence makes the other's name narrower: only the first rule's link is kept.
    extractions = [paper("a", "Samplers such as annealed samplers.", ["Samplers", "annealed samplers"]),
                   paper("b", "Annealed samplers and other samplers.", ["Annealed samplers", "samplers"]),
                   paper("c", "Langevin samplers, an annealed sampler.", ["Langevin samplers", "annealed sampler"])]
    _, hierarchy, _ = links_of(extractions)
    graph = nx.DiGraph([(l.source, l.target) for l in hierarchy.links])
    assert hierarchy.links and nx.is_directed_acyclic_graph(graph)


def test_the_built_sample_graph_has_an_acyclic_hierarchy_with_evidence(sample):
    store = open_graph(sample)
    pairs = [(r["n"].value, r["b"].value) for r in run_query(store, "SELECT ?n ?b WHERE { ?n skos:broader ?b }")]
    assert pairs and nx.is_directed_acyclic_graph(nx.DiGraph(pairs))
    evidence = list(run_query(store, """SELECT ?s ?rule ?sentence WHERE {
        ?s rdf:predicate skos:broader ; prov:wasAttributedTo/rdfs:label ?rule ;
               prov:wasDerivedFrom/rdf:value ?sentence }"""))
    assert {r["rule"].value.split("-")[0] for r in evidence} == {"hierarchy"}
    assert len({r["s"].value for r in evidence}) >= len(pairs) and all(r["sentence"].value for r in evidence)
    counts = list(run_query(store, "SELECT ?e ?n ?r WHERE { ?e kg:paperCount ?n ; kg:paperCountWithNarrower ?r ; kg:salience ?s }"))
    assert counts and all(int(r["r"].value) >= int(r["n"].value) for r in counts)


def test_acronym_long_forms_spelt_differently_make_one_entity():
    extractions = [paper("a", "Stochastic gradient descent (SGD) trains it.", ["Stochastic gradient descent", "SGD"],
                         acronyms={"SGD": "Stochastic gradient descent"}),
                   paper("b", "Stochastic gradient decent (SGD) again.", ["Stochastic gradient decent", "SGD"],
                         acronyms={"SGD": "Stochastic gradient decent"}),
                   paper("c", "Plain SGD.", ["SGD"])]
    assert [(e.label, len(e.mentions)) for e in resolve(extractions)] == [("SGD", 5)]


def test_two_senses_of_an_acronym_get_two_labels():
    extractions = [paper(p, "Gaussian process (GP) priors.", ["Gaussian process", "GP"], acronyms={"GP": "Gaussian process"})
                   for p in "ab"]
    extractions.append(paper("c", "A general purpose (GP) solver.", ["general purpose", "GP"], acronyms={"GP": "general purpose"}))
    labels = sorted((e.label, e.key) for e in resolve(extractions))
    assert labels == [("GP", "gaussian process"), ("general purpose", "general purpose")]


def test_known_dataset_names_are_datasets_and_junk_spans_are_not_entities():
    extractions = [paper("a", "A language model on Penn Treebank.", ["Penn Treebank"]),
                   paper("b", "Vision-Language Navigation(VLN and 1Gbps links.", ["Navigation(VLN", "1Gbps"])]
    # Papers with Code knows Penn Treebank as a dataset: the build hands its names to resolve.
    assert [(e.label, e.type) for e in resolve(extractions)] == [("Penn Treebank", "Method")]
    known = load().datasets
    assert [(e.label, e.type) for e in resolve(extractions, known_datasets=known)] == [("Penn Treebank", "Dataset")]
    # Organisms are what a paper studies, not methods; an assay's IC50 is a measure.
    studied = [paper("d", "Inhibitors of HIV-1 and SARS-CoV-2 with low IC50.", ["HIV-1", "SARS-CoV-2", "IC50"])]
    assert [(e.label, e.type) for e in resolve(studied)] == [("IC50", "Metric")]
    # PwC lists a dataset ADAM; Adam the optimizer, a method kg knows by name, stays a method.
    adam = [paper("c", "We train with Adam.", ["Adam"])]
    assert [(e.label, e.type) for e in resolve(adam, known_datasets=known)] == [("Adam", "Method")]


@pytest.mark.parametrize("kind,name,iri", [
    ("task", "Visual Question Answering (VQA)", "https://linkedpaperswithcode.com/task/visual-question-answering"),
    ("dataset", "CIFAR-10", "https://linkedpaperswithcode.com/dataset/cifar-10"),
])
def test_pwc_iris_use_pwc_slugs(kind, name, iri):
    assert lpwc_iri(kind, name) == iri


def test_the_shipped_pwc_lexicon_keeps_names_and_drops_junk():
    lexicon = load()
    assert lexicon.dataset("svhn") == "SVHN" and lexicon.task("semantic segmentation") == "Semantic Segmentation"
    assert lexicon.area["Semantic Segmentation"] == "Computer Vision"
    assert "16k" not in lexicon.tasks and not any(";" in name or "'" in name for name in lexicon.datasets.values())


def test_a_list_is_no_apposition_and_a_singular_name_lists_no_members():
    extractions = [paper("a", "We train a classifier, a discriminator, and a generator.",
                         ["classifier", "discriminator", "generator"]),
                   paper("b", "We use the VAE framework, including backpropagation.", ["VAE framework", "backpropagation"])]
    _, hierarchy, _ = links_of(extractions)
    assert [l for l in hierarchy.links if l.rule in ("apposition", "such-as")] == []


def test_a_name_said_to_be_a_class_of_another_is_narrower_than_it():
    extractions = [paper("a", "Diffusion models (DMs) are a class of generative models that denoise.",
                         ["Diffusion models", "generative models"]),
                   paper("b", "Graph neural networks are a powerful family of neural networks.",
                         ["Graph neural networks", "neural networks"]),
                   paper("c", "The objective is a sum of two losses.", ["objective", "losses"]),
                   paper("d", "We use generative models and neural networks.", ["generative models", "neural networks"])]
    _, _, links = links_of(extractions)
    assert ("diffusion model", "generative model", "class-of") in links
    assert ("graph neural network", "neural network", "class-of") in links
    assert not [link for link in links if link[0] == "objective"]  # "a sum of" says no kind


def test_a_sentence_alone_never_puts_a_name_under_one_fewer_papers_name():
    busy = [paper(f"p{i}", "We use backpropagation.", ["backpropagation"]) for i in range(3)]
    one = [paper("q", "Gradient methods such as backpropagation.", ["Gradient methods", "backpropagation"])]
    _, _, links = links_of(busy + one)
    assert not any(s == "backpropagation" and rule == "such-as" for s, _, rule in links)
    two = one + [paper("r", "Gradient methods, including backpropagation.", ["Gradient methods", "backpropagation"])]
    _, _, links = links_of(busy + two)
    assert ("backpropagation", "gradient method", "such-as") in links


def test_a_pair_stated_both_ways_by_as_many_papers_is_neither():
    extractions = [paper("a", "Encoders such as decoders.", ["Encoders", "decoders"]),
                   paper("b", "Decoders such as encoders.", ["Decoders", "encoders"])]
    _, _, links = links_of(extractions)
    assert not [link for link in links if link[2] == "such-as"]


def test_a_capitalised_name_is_a_kind_only_of_a_name_its_last_words_spell():
    from kg.link.concepts import build_hierarchy
    from kg.model import Entity, Mention, PaperExtraction, Paper
    from kg.keys import resolution_key

    names = ["Arcade Learning Environment", "learning environment", "Wasserstein GAN", "GAN",
             "discrete-space representations", "space representations"]
    exs = [PaperExtraction(Paper(f"p{i}", n), [(0, len(n))], [Mention(0, len(n), n, "Method", 0, 0.9, "t")], {})
           for i, n in enumerate(names)]
    entities = [Entity(resolution_key(n), "Method", n, [n], [(f"p{i}", 0)]) for i, n in enumerate(names)]
    links = {(l.source, l.target) for l in build_hierarchy(entities, exs).links}
    assert ("wasserstein gan", "gan") in links
    assert not any(source in ("arcade learning environment", "discrete space representation") for source, _ in links)


def test_a_hyphen_in_any_form_an_entity_is_written_in_keeps_its_tail_whole():
    from kg.link.concepts import _tails

    # "large real world classifiers" is also written "large real-world classifiers": "world classifiers"
    # is no concept above it, though without the hyphen it would be read as one.
    assert "world classifier" in _tails("large real world classifier", label="large real world classifiers")
    assert _tails("large real world classifier", label="large real world classifiers | large real-world classifiers") == [
        "real world classifier", "classifier"]
