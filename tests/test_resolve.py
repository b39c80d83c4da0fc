"""Resolution merges surface forms of one thing across papers, and nothing else."""
import pytest

from kg.extract import extract_papers
from kg.keys import is_generic_key, resolution_key
from kg.model import Paper
from kg.resolve import resolution_report, resolve


@pytest.mark.parametrize("a, b", [
    ("Large Language Models", "large language model"),
    ("LLMs", "LLM"),
    ("GNNs", "GNN"),
    ("CIFAR-10", "CIFAR10"),
    ("question-answering", "question answering"),
    ("Vision-Language Models", "vision language model"),
])
def test_variants_share_a_key(a, b):
    assert resolution_key(a) == resolution_key(b)


@pytest.mark.parametrize("a, b", [("GRPO", "E-GRPO"), ("LLM", "MLLM"), ("diffusion model", "diffusion policy")])
def test_different_names_keep_different_keys(a, b):
    assert resolution_key(a) != resolution_key(b)


@pytest.mark.parametrize("key", ["method", "our framework", "performance", "experiments", "the proposed approach", "state of the art"])
def test_generic_words_are_never_entities(key):
    assert is_generic_key(resolution_key(key))


def _entities(*abstracts):
    extractions = list(extract_papers([Paper(f"p{i}", text) for i, text in enumerate(abstracts)]))
    return resolve(extractions), extractions


def test_acronym_plural_and_long_form_merge_across_papers():
    entities, _ = _entities(
        "Large Language Models (LLMs) are strong reasoners.",
        "We evaluate LLMs and an LLM judge.",
        "Graph Neural Networks (GNNs) meet large language models.",
    )
    by_label = {e.label: e for e in entities}
    llm = by_label["LLM"]
    assert {"LLMs", "LLM", "Large Language Models", "large language models"} <= set(llm.aliases)
    assert {pid for pid, _ in llm.mentions} == {"p0", "p1", "p2"}
    assert {"GNNs", "Graph Neural Networks"} <= set(by_label["GNNs"].aliases)


def test_same_acronym_defined_differently_never_merges():
    entities, _ = _entities(
        "Training with differential privacy (DP) protects records.",
        "We solve the task with dynamic programming (DP) over trees.",
    )
    clusters = [e for e in entities if "DP" in e.aliases]
    assert len(clusters) == 2
    long_forms = sorted(a for e in clusters for a in e.aliases if a != "DP")
    assert long_forms == ["differential privacy", "dynamic programming"]


def test_acronym_without_definition_uses_the_corpus_meaning_when_unambiguous():
    entities, _ = _entities(
        "Methods like Group Relative Policy Optimization (GRPO) discard entities.",
        "Our agent is trained with GRPO on mobile tasks.",
    )
    [grpo] = [e for e in entities if e.label == "GRPO"]
    assert {pid for pid, _ in grpo.mentions} == {"p0", "p1"}


def test_generic_phrases_do_not_become_entities():
    entities, _ = _entities("We propose a novel method. Our framework improves performance in experiments.")
    assert not [e for e in entities if e.key in {"method", "framework", "performance", "experiment"}]


def test_report_lists_merged_clusters_largest_first_and_ambiguous_acronyms():
    from kg.resolve import resolution_report

    entities, extractions = _entities(
        "Large Language Models (LLMs) are strong. We train with reinforcement learning (RL).",
        "LLMs and large language models, again with RL.",
        "Training with differential privacy (DP) protects records.",
        "We solve it with dynamic programming (DP).",
    )
    report = resolution_report(entities, extractions)
    rows = [line for line in report.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows[0].startswith("| LLMs | Method | 2 |")
    assert "Large Language Models (1)" in rows[0] and "LLMs (2)" in rows[0]
    assert "- `dp`: 'differential privacy' (1 paper); 'dynamic programming' (1 paper) — kept apart in every paper" in report


def test_an_acronym_whose_letters_spell_an_evaluative_word_keeps_it_and_stays_apart():
    # E-N-A-S: "Efficient" is part of the name, so ENAS is not NAS (which "Neural Architecture Search" is).
    text = ("We propose Efficient Neural Architecture Search (ENAS). On CIFAR-10, ENAS reaches a test error of 2.89%, "
            "close to the 2.65% achieved by Neural Architecture Search (NAS).")
    [ex] = extract_papers([Paper("p", text)])
    entities = {e.label: e for e in resolve([ex])}
    assert {"ENAS", "NAS"} <= set(entities) and entities["ENAS"].key != entities["NAS"].key
    by_value = {r.value: ex.mentions[r.subject].text for r in ex.results if r.subject is not None}
    assert by_value[2.89] == "ENAS"


def test_spelling_variants_across_papers_are_one_entity_and_agree_on_an_acronym():
    # "auto-encoder" and "autoencoder" differ only by a hyphen, "Nets" are networks: one name each.
    # The two definitions of VAE then agree, so the bare VAE of the third paper joins them.
    entities, _ = _entities(
        "We train a Variational Autoencoder (VAE) on images.",
        "Variational Auto-Encoders (VAEs) and Generative Adversarial Nets are compared.",
        "A VAE and generative adversarial networks are trained on faces.",
    )
    papers = {e.key: {pid for pid, _ in e.mentions} for e in entities}
    assert papers["variational autoencoder"] == {"p0", "p1", "p2"}
    assert papers["generative adversarial network"] == {"p1", "p2"}
    assert not {"variational auto encoder", "vae", "generative adversarial net"} & set(papers)


def test_reordered_and_respelt_names_are_one_entity_but_not_other_heads_or_modifiers():
    from kg.model import Entity
    from kg.resolve import merge_reorderings

    def entity(label, papers):
        return Entity(resolution_key(label), "Task", label, [label], [(f"{label}{i}", 0) for i in range(papers)])

    merged = merge_reorderings([entity("dialogue modeling", 3), entity("dialogue modelling", 1),
                                entity("neural network training", 2), entity("training of neural networks", 1),
                                entity("attention-based memory model", 2), entity("memory-based attention model", 1),
                                entity("embedding layers", 2), entity("layer embeddings", 1),
                                entity("layer network", 2), entity("four-layer network", 1)])
    assert [(e.label, len(e.mentions)) for e in merged] == [
        ("dialogue modeling", 4), ("neural network training", 3), ("attention-based memory model", 2),
        ("memory-based attention model", 1), ("embedding layers", 2), ("layer embeddings", 1),
        ("layer network", 2), ("four-layer network", 1)]


def _stating_synonyms(pid: str, text: str, first: str, second: str, *, stated: bool = True):
    from kg.model import Mention, PaperExtraction
    mentions = [Mention(text.index(f), text.index(f) + len(f), f, "Method", 0, 0.9, "t") for f in (first, second)]
    return PaperExtraction(Paper(pid, text), [(0, len(text))], mentions, {},
                           synonyms=[(0, 1, 0.9)] if stated else [])


def test_names_two_papers_call_one_thing_become_one_entity_and_the_report_says_so():
    from kg.resolve import resolution_report
    papers = [_stating_synonyms("a", "DenseNet, also called densely connected networks, ...", "DenseNet", "densely connected networks"),
              _stating_synonyms("b", "densely connected networks (DenseNet) ...", "densely connected networks", "DenseNet"),
              _stating_synonyms("c", "DenseNet and densely connected networks", "DenseNet", "densely connected networks", stated=False)]
    [entity] = resolve(papers)
    assert sorted(entity.aliases) == ["DenseNet", "densely connected networks"] and len(entity.mentions) == 6
    assert "- `densely connected network` = `densenet`: 2 papers — joined" in resolution_report([entity], papers)


def test_one_paper_calling_two_names_one_thing_does_not_join_them_corpus_wide():
    from kg.resolve import resolution_report
    papers = [_stating_synonyms("a", "DenseNet, also called densely connected networks, ...", "DenseNet", "densely connected networks"),
              _stating_synonyms("b", "DenseNet and densely connected networks", "DenseNet", "densely connected networks", stated=False)]
    entities = resolve(papers)
    assert sorted(e.label for e in entities) == ["DenseNet", "densely connected networks"]
    assert "- `densely connected network` = `densenet`: 1 paper — kept apart" in resolution_report(entities, papers)


def test_a_known_alias_joins_the_name_it_stands_for_without_any_paper_saying_so():
    # ResNet and residual networks: no spelling, initials or kind word tells they are one.
    papers = [_stating_synonyms("a", "ResNet and VGG", "ResNet", "VGG", stated=False),
              _stating_synonyms("b", "residual networks and VGG", "residual networks", "VGG", stated=False)]
    assert sorted((e.label, e.aliases) for e in resolve(papers)) == [("ResNet", ["ResNet", "residual networks"]),
                                                                     ("VGG", ["VGG"])]


def test_the_names_of_one_metric_are_one_entity_and_accuracy_is_one():
    entities, _ = _entities(
        "FooNet reaches a test error rate of 3.1% on CIFAR-10.",
        "BarNet reaches a classification error of 4.0% on CIFAR-10 and 95% accuracy on MNIST.",
        "BazNet lowers the top-1 error rate to 21% on ImageNet, with top-1 error of 22% for ResNet.")
    metrics = {e.label: e for e in entities if e.type == "Metric"}
    assert set(metrics) == {"error", "accuracy"}  # a classifier's error is its top-1 error
    assert metrics["error"].aliases == ["classification error", "test error rate", "top-1 error",
                                        "top-1 error rate"]


def test_numeric_precision_is_no_metric():
    [ex] = extract_papers([Paper("p", "We train with low precision weights and mixed precision training, "
                                      "and report precision and recall.")])
    assert [m.text for m in ex.mentions if m.label == "Metric"] == ["precision", "recall"]


def _hand_made_extractions(*papers):
    """Extractions with the mentions given, ``(text, type)`` per paper: resolution alone, no parser."""
    from kg.model import Mention, PaperExtraction
    out = []
    for n, mentions in enumerate(papers):
        text = ", ".join(t for t, _ in mentions)
        spans, at = [], 0
        for t, label in mentions:
            spans.append(Mention(at, at + len(t), t, label, 0, 0.9, "t"))
            at += len(t) + 2
        out.append(PaperExtraction(Paper(f"p{n}", text), [(0, len(text))], spans, {}))
    return out


def _hand_made(*papers):
    return resolve(_hand_made_extractions(*papers))


def test_a_name_with_a_word_for_its_kind_is_the_name():
    entities = _hand_made([("Penn Treebank dataset", "Dataset"), ("batch normalization layer", "Method")],
                          [("Penn Treebank", "Dataset"), ("batch normalization", "Method"), ("language", "Task")],
                          [("language model", "Method")])
    assert sorted(sorted(e.aliases) for e in entities) == [
        ["Penn Treebank", "Penn Treebank dataset"], ["batch normalization", "batch normalization layer"],
        ["language"], ["language model"]]


def test_an_acronym_no_paper_defines_is_the_one_name_it_spells():
    entities = _hand_made([("MCMC", "Method"), ("RNN", "Method"), ("KL divergence", "Method")],
                          [("Markov chain Monte Carlo", "Method"), ("recurrent neural network", "Method"),
                           ("Kullback-Leibler divergence", "Method")],
                          [("recursive neural network", "Method")])
    assert sorted(sorted(e.aliases) for e in entities) == [
        ["KL divergence", "Kullback-Leibler divergence"], ["MCMC", "Markov chain Monte Carlo"], ["RNN"],
        ["recurrent neural network"], ["recursive neural network"]]


def test_the_report_says_why_each_name_was_joined():
    from kg.resolve import resolution_report
    extractions = _hand_made_extractions(
        [("Penn Treebank dataset", "Dataset"), ("MCMC", "Method"), ("test error rate", "Metric")],
        [("Penn Treebank", "Dataset"), ("Markov chain Monte Carlo", "Method"), ("auto-encoder", "Method")],
        [("autoencoder", "Method"), ("autoencoder", "Method")])
    report = resolution_report(resolve(extractions), extractions)
    assert "- `penn treebank dataset` → `penn treebank`: kind word" in report
    assert "- `mcmc` → `markov chain monte carlo`: initials" in report
    assert "- `test error rate` → `error`: metric" in report
    assert "- `auto encoder` → `autoencoder`: spelling" in report


def test_an_acronym_with_a_digit_or_a_hyphenated_head_is_spelled_out_by_the_name_it_abbreviates():
    # "A3C" repeats its A three times; "KL-divergence" is KL plus the head word.
    from kg.model import Mention, PaperExtraction

    def paper(pid, text):
        return PaperExtraction(Paper(pid, text), [(0, len(text))], [Mention(0, len(text), text, "Method", 0, 0.9, "t")], {})
    papers = [paper("a", "A3C"), paper("b", "asynchronous advantage actor-critic"), paper("c", "KL-divergence"),
              paper("d", "Kullback-Leibler divergence")]
    assert sorted(sorted(e.aliases) for e in resolve(papers)) == [
        ["A3C", "asynchronous advantage actor-critic"], ["KL-divergence", "Kullback-Leibler divergence"]]


def test_a_dataset_named_with_its_language_is_the_dataset_its_acronym_names():
    from kg.model import Mention, PaperExtraction

    a = "the Penn Treebank (PTB)"
    b = "the English PTB dataset"
    papers = [PaperExtraction(Paper("a", a), [(0, len(a))], [Mention(4, 17, "Penn Treebank", "Dataset", 0, 0.9, "t"),
                                                             Mention(19, 22, "PTB", "Method", 0, 0.9, "t")],
                              {"PTB": "Penn Treebank"}),
              PaperExtraction(Paper("b", b), [(0, len(b))], [Mention(4, 15, "English PTB", "Dataset", 0, 0.9, "t")], {})]
    [entity] = resolve(papers)
    assert entity.aliases == ["English PTB", "PTB", "Penn Treebank"]  # one entity, whichever label it takes


def tokenized(paper_id: str, text: str, found: list[str], label: str = "Method"):
    """An extraction of ``text`` split into tokens at spaces, with a mention of ``label`` at the first
    occurrence of each of ``found``."""
    from kg.model import Mention, Paper, PaperExtraction

    words = [word + " " for word in text.split(" ")]
    words[-1] = words[-1].rstrip()
    spans, at = [], 0
    for word in words:
        spans, at = spans + [at, at + len(word.rstrip())], at + len(word)
    tokens, token_spans = PaperExtraction.pack_tokens(words, spans)
    mentions = [Mention(text.index(f), text.index(f) + len(f), f, label, 0, 0.8, "rules",
                        role="uses", role_confidence=0.8) for f in found]
    return PaperExtraction(Paper(paper_id, text), [(0, len(text))], mentions, {}, tokens=tokens, token_spans=token_spans)


def test_propagate_returns_new_entities_and_leaves_its_inputs_as_they_were():
    from kg.resolve.propagate import propagate

    extractions = [tokenized("a", "We build on flow matching .", ["flow matching"]),
                   tokenized("b", "CurlFlow is compared relative to Flow Matching .", [])]
    entities = resolve(extractions)
    before = [list(e.mentions) for e in entities]
    grown, found = propagate(extractions, entities)
    assert [e.mentions for e in entities] == before and extractions[1].mentions == []
    assert found[0].mentions == [("a", 0), ("b", 0)] and found[0] is not entities[0]
    assert [m.text for m in grown[1].mentions] == ["Flow Matching"]


def test_a_name_is_added_where_the_judge_keeps_it_and_left_out_where_it_does_not(monkeypatch):
    from kg.resolve import propagate as propagation

    known = tokenized("a", "We train on ImageNet with a GPU budget .", ["ImageNet", "GPU"], "Dataset")
    other = tokenized("b", "ImageNet results need a GPU .", [])
    # The judge keeps every mention except the GPU ones: the name it drops is not spread.
    monkeypatch.setattr(propagation, "_kept_by_judge", lambda ex: [m.text != "GPU" for m in ex.mentions])
    grown, entities = propagation.propagate([known, other], resolve([known, other]))
    assert [m.text for m in grown[1].mentions] == ["ImageNet"]
    by_label = {e.label: e.mentions for e in entities}
    assert by_label["ImageNet"] == [("a", 0), ("b", 0)] and by_label["GPU"] == [("a", 1)]


def test_a_name_with_an_acronym_in_it_is_the_name_spelt_out_where_the_corpus_writes_both():
    from kg.resolve import resolution_report

    # RL means reinforcement learning here (p0 defines it); "offline RL" is written spelt out too,
    # "safe RL" never is: it stays itself. "deep GP": no paper says what GP stands for.
    extractions = _hand_made_extractions(
        [("reinforcement learning", "Method"), ("RL", "Method"), ("offline RL", "Method"), ("safe RL", "Method")],
        [("offline reinforcement learning", "Method"), ("deep GP", "Method")],
        [("deep Gaussian process", "Method")])
    extractions[0].acronyms = {"RL": "reinforcement learning"}
    entities = resolve(extractions)
    assert sorted(sorted(e.aliases) for e in entities) == [
        ["RL", "reinforcement learning"], ["deep GP"], ["deep Gaussian process"],
        ["offline RL", "offline reinforcement learning"], ["safe RL"]]
    assert "- `offline rl` → `offline reinforcement learning`: acronym spelt out in a name" in resolution_report(entities, extractions)


def test_a_metric_named_with_its_setting_is_the_metric_and_a_measure_of_its_own_is_not():
    # "zero-shot accuracy" and "certified robust accuracy" are accuracy, reached in a setting (read from
    # the same words, so their scores keep boards of their own); a quantization error and an attack's
    # success rate measure something else.
    entities = _hand_made([("accuracy", "Metric"), ("zero-shot accuracy", "Metric"), ("quantization error", "Metric")],
                          [("certified robust accuracy", "Metric"), ("attack success rate", "Metric"),
                           ("error", "Metric"), ("success rate", "Metric")])
    assert sorted(sorted(e.aliases) for e in entities) == [
        ["accuracy", "certified robust accuracy", "zero-shot accuracy"], ["attack success rate"], ["error"],
        ["quantization error"], ["success rate"]]


# ---------------------------------------------------------------- the judge of useful nodes

def _paper(pid: str, text: str, names: list[tuple[str, str, str | None]]):
    from kg.model import Mention, PaperExtraction
    mentions, at = [], 0
    for name, label, role in names:
        start = text.index(name, at)
        mentions.append(Mention(start, start + len(name), name, label, 0, 0.9, "rules", role=role))
        at = start + len(name)
    return PaperExtraction(Paper(pid, text), [(0, len(text))], mentions, {})


def _weights_against(feature: str) -> dict:
    """A judge that scores an entity with ``feature`` set far below its threshold, and any other above it."""
    from kg.resolve.useful import FEATURES
    coef = [0.0] * len(FEATURES)
    coef[FEATURES.index(feature)] = -20.0
    return {"features": list(FEATURES), "mean": [0.0] * len(FEATURES), "scale": [1.0] * len(FEATURES),
            "coef": coef, "intercept": 5.0, "threshold": 0.5}


def test_an_entity_the_judge_scores_low_leaves_the_graph_unless_a_paper_proposes_it():
    from kg.link.graph import build_graph
    from kg.resolve.useful import keep_useful
    extractions = [_paper("a", "We train on a GPU with the Adam optimizer.", [("GPU", "Dataset", "uses"), ("Adam", "Method", "uses")]),
                   _paper("b", "We propose GPT5, trained on a GPU.", [("GPT5", "Method", "proposes"), ("GPU", "Dataset", "uses")])]
    entities = resolve(extractions)
    kept, dropped = keep_useful(entities, extractions, _weights_against("digit"))
    assert [e.label for e in dropped] == [] and {e.label for e in kept} == {"GPU", "Adam", "GPT5"}  # GPT5 is proposed
    kept, dropped = keep_useful(entities, extractions, _weights_against("acronym"))
    assert [e.label for e in dropped] == ["GPU"]
    graph = build_graph(extractions, kept, [], {})
    assert not [n for n, d in graph.nodes(data=True) if d.get("label") == "GPU"]  # its mentions add nothing
    assert any(d.get("label") == "Adam" for _, d in graph.nodes(data=True))
    report = resolution_report(kept, extractions, dropped)  # the report names what was left out
    assert "## Poor nodes left out" in report and "- `GPU` (Dataset, 2 papers)" in report


def test_the_shipped_judge_reads_vectors_as_wide_as_the_span_models():
    import numpy as np
    from kg.extract.spans import HEADS_FILE
    from kg.resolve.useful import FEATURES, WEIGHTS, model
    weights = model()
    assert weights is not None and weights["features"] == list(FEATURES) and 0 < weights["threshold"] < 1
    with np.load(HEADS_FILE) as heads:  # the entity head reads a span's two ends and its width
        hidden = (heads["entity.0.weight"].shape[1] - heads["width.weight"].shape[1]) // 2
    assert len(weights["coef"]) == len(FEATURES) + hidden == len(weights["mean"]) == len(weights["scale"])
    assert WEIGHTS.stat().st_size < 100_000


def test_the_shipped_judge_was_fitted_on_the_shipped_encoder_and_reads_another_encoders_vectors_as_none():
    """A span model retrained and put in place has states in another space: the judge then scores on the
    names alone, as it would with no vector, rather than reading them as the encoder it was fitted on."""
    import numpy as np
    from kg.extract.spans import encoder_digest
    from kg.resolve.useful import FEATURES, model, scores
    weights = model()
    assert weights["encoder"] == encoder_digest() != ""
    rows = np.random.default_rng(0).normal(size=(20, len(weights["coef"])))
    alone = np.hstack([rows[:, :len(FEATURES)], np.tile(np.asarray(weights["mean"])[len(FEATURES):], (20, 1))])
    other = scores(rows, {**weights, "encoder": "another-one"})
    assert np.allclose(other, scores(alone, weights))
    assert not np.allclose(other, scores(rows, weights))
