"""Extraction: ML names stay whole, acronyms are defined, mentions are typed and given the paper's role."""
import pytest

from kg.extract import extract_papers
from kg.extract.abbreviations import best_long_form, find_abbreviations
from kg.extract.pipeline import load_pipeline
from kg.model import Paper


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


@pytest.mark.parametrize("name", [
    "E-GRPO", "LLaMA-3-8B", "Qwen2.5-VL-7B-Instruct", "CIFAR-10", "GPT-4o", "o4-mini",
    "DeepSeek-R1", "SFT-auto", "ResNet-20", "J1-Qwen-32B",
])
def test_ml_names_stay_one_token(nlp, name):
    doc = nlp(f"We compare {name} with others.")
    assert name in [t.text for t in doc]


@pytest.mark.parametrize("text, pieces", [
    ("text-based attacks", ["text", "-", "based"]),
    ("LLM-based agents", ["LLM", "-", "based"]),
    ("state-of-the-art results", ["state", "-", "of"]),
])
def test_ordinary_hyphenated_words_still_split(nlp, text, pieces):
    assert [t.text for t in nlp(text)][: len(pieces)] == pieces


# Schwartz & Hearst: one case per rule.
@pytest.mark.parametrize("short, candidate, expected", [
    ("GRPO", "like Group Relative Policy Optimization", "Group Relative Policy Optimization"),  # initials
    ("LLMs", "Large Language Models", "Large Language Models"),  # plural short form
    ("E-GRPO", "Entity-aware Group Relative Policy Optimization", "Entity-aware Group Relative Policy Optimization"),  # hyphen starts a word
    ("PBR", "Physically-based rendering", "Physically-based rendering"),  # letters inside words
    ("XYZ", "large language models", None),  # no match
    ("GRPO", "GRPO", None),  # the long form must be longer than the short form
    ("MS-COCO", "MPII Human Pose (MHP), and Common Objects in Context", None),  # a list is no long form
])
def test_best_long_form(short, candidate, expected):
    assert best_long_form(short, candidate) == expected


def test_abbreviations_found_in_both_directions(nlp):
    doc = nlp("We present RADAR (Reasoning-Ability and Difficulty-Aware Routing). "
              "Graph Neural Networks (GNNs) are used, with a merging-aware optimizer (abbreviated as MergOPT).")
    pairs = {s.text: l.text for s, l in find_abbreviations(doc)}
    assert pairs["RADAR"] == "Reasoning-Ability and Difficulty-Aware Routing"
    assert pairs["GNNs"] == "Graph Neural Networks"
    assert pairs["MergOPT"] == "merging-aware optimizer"


def _extract(text):
    [ex] = extract_papers([Paper("p", text)])
    return ex


def _roles(ex):
    return {(m.text, m.label, m.role) for m in ex.mentions}


def test_proposed_method_and_acronym_definition():
    ex = _extract("Prevailing methods like Group Relative Policy Optimization (GRPO) ignore entities. "
                  "We introduce Entity-aware Group Relative Policy Optimization (E-GRPO), a novel framework. "
                  "E-GRPO outperforms the GRPO baseline.")
    roles = _roles(ex)
    assert ("E-GRPO", "Method", "proposes") in roles
    assert ("Entity-aware Group Relative Policy Optimization", "Method", "proposes") in roles
    assert ("GRPO", "Method", "comparesWith") in roles
    assert ("GRPO", "Method", "proposes") not in roles
    assert ex.acronyms == {"GRPO": "Group Relative Policy Optimization",
                           "E-GRPO": "Entity-aware Group Relative Policy Optimization"}


def test_multiword_model_family_stays_whole():
    ex = _extract("We fine-tune Stable Diffusion-XL and Stable Diffusion on COCO.")
    labels = {m.text: m.label for m in ex.mentions}
    assert labels["Stable Diffusion-XL"] == "Model" and labels["Stable Diffusion"] == "Model"
    assert "Diffusion-XL" not in labels


def test_datasets_models_and_metrics_are_typed_from_context():
    ex = _extract("Experiments with LLaMA-3-8B show that LongFilter yields improvements on benchmarks such as "
                  "HELMET, LongBench, and RULER. The resulting MOBILERL-9B model reaches a success rate of 80.2% "
                  "on AndroidWorld and keeps MMLU accuracy.")
    labels = {m.text: m.label for m in ex.mentions}
    assert labels["LLaMA-3-8B"] == "Model" and labels["MOBILERL-9B"] == "Model"
    for dataset in ("HELMET", "LongBench", "RULER", "AndroidWorld"):
        assert labels[dataset] == "Dataset", dataset
    assert labels["success rate"] == "Metric"
    assert ("RULER", "Dataset", "evaluatesOn") in _roles(ex)


def test_new_benchmark_is_introduced_and_unnamed_frameworks_are_not_nodes():
    ex = _extract("To bridge the gap, we introduce WebDevJudge, a systematic benchmark for assessing judges. "
                  "We propose a unified and comprehensive framework to evaluate robustness.")
    roles = _roles(ex)
    assert ("WebDevJudge", "Dataset", "introduces") in roles
    assert not any("framework" in text for text, _, _ in roles)


def test_proposal_found_when_the_parser_misreads_the_verb():
    # The small parser tags "present" here as an adjective; the surface rule still finds it.
    ex = _extract("In this work, we tackle this tradeoff from the angle of routing, and present RADAR "
                  "(Reasoning-Ability and Difficulty-Aware Routing), a lightweight routing framework.")
    assert ("RADAR", "Method", "proposes") in _roles(ex)


def test_capitalised_new_name_without_name_shape_is_proposed():
    ex = _extract(r"Motivated by this, we propose N\"uwa, a two-stage token pruning framework.")
    [nuwa] = [m for m in ex.mentions if m.text == "Nüwa"]
    assert ex.paper.abstract[nuwa.start:nuwa.end] == r'N\"uwa'
    assert ("Nüwa", "Method", "proposes") in _roles(ex)


def test_every_mention_offset_slices_the_original_abstract():
    text = r"We propose \textbf{FedGEM}: a federated *expectation-maximization* algorithm for $K$ clusters on CIFAR-10."
    ex = _extract(text)
    assert ex.mentions
    for m in ex.mentions:
        original = text[m.start:m.end]
        assert m.text.replace(" ", "") in original.replace("*", "").replace(" ", "").replace("\\textbf{", "")
        start, end = ex.sentences[m.sentence]
        assert start <= m.start and m.end <= end


def _role_by_text(text: str) -> dict[str, str]:
    [ex] = extract_papers([Paper("p", text)])
    return {m.text: m.role for m in ex.mentions}


def test_what_an_of_governs_in_a_proposal_is_what_it_builds_on():
    assert _role_by_text("We construct a variant of GANs employing label conditioning.")["GANs"] == "uses"
    found = _role_by_text("We introduce Information Dropout, a generalization of dropout.")
    assert (found["Information Dropout"], found["dropout"]) == ("proposes", "uses")
    assert _role_by_text("We propose a reparameterization of LSTM for recurrent networks.")["LSTM"] == "uses"


def test_a_description_set_before_the_name_is_not_the_proposal():
    found = _role_by_text("For this attack, we introduce a novel GAN, PreImageGAN.")
    assert (found["PreImageGAN"], found["GAN"]) == ("proposes", "uses")


def test_a_sentence_that_names_its_proposal_proposes_only_the_name():
    found = _role_by_text("We present a novel memory architecture called Hierarchical Attentive Memory (HAM).")
    assert found["HAM"] == found["Hierarchical Attentive Memory"] == "proposes"
    assert found.get("memory architecture", "uses") == "uses"


def test_an_acronym_takes_the_role_of_the_long_form_it_defines():
    found = _role_by_text("We propose Mixture of Experts Networks (MoEN) for translation.")
    assert found["MoEN"] == found["Mixture of Experts Networks"] == "proposes"
    found = _role_by_text("We present OT-Net, a variant of generative adversarial nets (GANs).")
    assert (found["OT-Net"], found["GANs"]) == ("proposes", "uses")


def test_the_name_a_paper_gives_its_work_is_proposed_and_not_its_description():
    found = _role_by_text("Our approach, called adaptive softmax, circumvents the linear dependency.")
    assert found["adaptive softmax"] == "proposes"
    found = _role_by_text("We propose a simple technique called fraternal dropout that takes advantage of dropout.")
    assert (found["fraternal dropout"], found["dropout"]) == ("proposes", "uses")
    found = _role_by_text("We demonstrate that our proposed GAN, which we termed Spike-GAN, generates spike trains.")
    assert (found["Spike-GAN"], found["GAN"]) == ("proposes", "uses")
    assert _role_by_text("We train a model called ResNet on images.")["ResNet"] == "uses"


def test_what_we_introduce_by_a_gerund_is_proposed():
    found = _role_by_text("By introducing the concept of mixed tensor decompositions, we prove that dilated "
                          "convolutional networks are efficient.")
    assert found["mixed tensor decompositions"] == "proposes"
    found = _role_by_text("We extend dropout by proposing zoneout, a regularizer for recurrent networks.")
    assert (found["zoneout"], found["dropout"]) == ("proposes", "uses")


def test_a_proposal_only_described_is_no_mention_and_a_name_is_proposed():
    # Proposals are named contributions: "a novel framework for generating pop music" names nothing a
    # reader looks for, and "a novel method" after the name is no proposal of its own.
    ex = _extract("We present a novel framework for generating pop music with hierarchical recurrent networks.")
    assert not any(m.role in ("proposes", "introduces") for m in ex.mentions)
    ex = _extract("We propose zoneout, a novel method for regularizing RNNs.")
    assert [(m.text, m.role) for m in ex.mentions if m.role == "proposes"] == [("zoneout", "proposes")]


def test_a_kind_of_thing_claimed_then_named_later_is_the_proposal():
    ex = _extract("We present a novel model for multimodal learning. The Gated Multimodal Unit (GMU) model is "
                  "intended to be used as an internal unit in a neural network.")
    assert {m.text for m in ex.mentions if m.role == "proposes"} >= {"GMU"}


def test_the_name_a_contribution_is_referred_to_as_is_proposed():
    found = _role_by_text("To address this problem, we develop a new technique for collective operations, "
                          "referred to as Linear Pipelining (LP).")
    assert (found["Linear Pipelining"], found["LP"]) == ("proposes", "proposes")
    assert _role_by_text("We refer to prior work on GANs for details.")["GANs"] == "uses"


def test_a_paper_proposing_a_method_does_not_also_merely_use_it():
    from kg.link.graph import build_graph
    from kg.resolve import resolve

    ex = _extract("We propose zoneout, a novel method for regularizing RNNs. Zoneout randomly preserves hidden "
                  "activations, and zoneout improves perplexity.")
    G = build_graph([ex], resolve([ex]))
    roles = {key for _, target, key in G.out_edges("paper/p", keys=True) if G.nodes[target]["label"].lower() == "zoneout"}
    assert roles == {"proposes"}
    assert len(G.edges["paper/p", next(t for _, t, k in G.out_edges("paper/p", keys=True) if k == "proposes"),
                       "proposes"]["evidence"]) == 3


@pytest.mark.xfail(strict=True, reason="resolution keys 'graph coloring algorithm' as 'graph coloring' and merges "
                   "the method into the task of the same words")
def test_a_problem_is_not_the_algorithm_of_the_same_words():
    from kg.resolve import resolve

    papers = list(extract_papers([Paper("a", "We solve the graph coloring problem with a new graph coloring algorithm."),
                                  Paper("b", "The graph coloring problem is NP-hard, and the graph coloring algorithm "
                                             "is fast.")]))
    labels = {e.label: e.type for e in resolve(papers)}
    assert (labels.get("graph coloring"), labels.get("graph coloring algorithm")) == ("Task", "Method")


def test_a_description_set_after_the_name_is_what_the_name_is_not_another_proposal():
    found = _role_by_text("We propose Invariant Encoding Generative Adversarial Networks (IVE-GANs), a novel GAN "
                          "framework that introduces such a mapping.")
    # The span model reads the description's name alone ("GAN"), SciER's span for it.
    assert (found["IVE-GANs"], found["GAN"]) == ("proposes", "uses")


def test_the_name_given_later_to_the_kind_of_thing_proposed_is_the_proposal():
    found = _role_by_text("This paper presents a novel model for multimodal learning based on gated neural networks. "
                          "The Gated Multimodal Unit (GMU) model is intended to be used as an internal unit.")
    assert (found["Gated Multimodal Unit"], found["GMU"]) == ("proposes", "proposes")
    assert "model for multimodal learning" not in found


def test_a_name_defined_under_of_that_runs_past_the_description_is_the_new_thing():
    found = _role_by_text("Finally, we propose a version of Adam with warm restarts (AdamWR) that has strong "
                          "anytime performance.")
    assert (found["Adam with warm restarts"], found["AdamWR"]) == ("proposes", "proposes")
    found = _role_by_text("We propose a variant of generative adversarial networks (GANs) for text.")
    assert (found["generative adversarial networks"], found["GANs"]) == ("uses", "uses")


def test_a_quoted_name_the_paper_gives_its_method_is_proposed():
    found = _role_by_text('In this work, we develop a new method termed as "WAGE" to discretize training and inference.')
    assert found["WAGE"] == "proposes"


def test_a_name_given_in_short_joins_its_long_form_and_the_plural_joins_the_name():
    from kg.resolve import resolve

    extractions = list(extract_papers([
        Paper("a", "We propose focal modulation networks (FocalNets in short), where self-attention is "
                   "completely replaced by a focal modulation module."),
        Paper("b", "FocalNet outperforms Swin on ImageNet.")]))
    assert {(m.text, m.role) for m in extractions[0].mentions} >= {
        ("focal modulation networks", "proposes"), ("FocalNets", "proposes")}
    [focal] = [e for e in resolve(extractions) if "FocalNet" in e.aliases]
    assert {"FocalNets", "focal modulation networks"} <= set(focal.aliases)


def test_the_name_we_call_our_method_is_the_proposal_not_the_word_method():
    [ex] = extract_papers([Paper("p", "We call our method SimPO and show it beats DPO.")])
    assert {(m.text, m.role) for m in ex.mentions} == {("SimPO", "proposes"), ("DPO", "comparesWith")}


def test_an_acronym_of_a_prefixed_long_form_stands_for_the_whole_word_not_the_shorter_sense():
    # "Self-supervised learning (SSL)": the parse reads "supervised learning" as the long form; grown
    # back to the whole word, SSL must follow it, or SSL (and self-supervised learning with it)
    # would join supervised learning across papers.
    from kg.resolve import resolve

    extractions = list(extract_papers([
        Paper("a", "Self-supervised learning (SSL) has emerged as a powerful paradigm for representation learning."),
        Paper("b", "We compare supervised learning with our approach on ImageNet.")]))
    aliases = {e.label: set(e.aliases) for e in resolve(extractions)}
    [ssl] = [names for names in aliases.values() if "SSL" in names]
    assert "Self-supervised learning" in ssl and "supervised learning" not in ssl
    assert aliases["supervised learning"] == {"supervised learning"}


@pytest.mark.parametrize("text, proposed", [
    ("We propose a new sampling method for diffusion models.", set()),  # what kind of thing, not a name
    ("We propose representation augmentation, a simple way to improve SSL.", {"representation augmentation"}),
    ("We propose IVE-GANs, a novel GAN framework.", {"IVE-GANs"}),
])
def test_a_phrase_that_only_says_what_kind_of_contribution_is_no_proposal(text, proposed):
    [ex] = extract_papers([Paper("p", text)])
    assert {m.text for m in ex.mentions if m.role == "proposes"} == proposed


def test_a_value_before_a_gain_noun_is_a_gain_not_a_score():
    text = ("The proposed GLA achieves 1.5 pp accuracy gains on ImageNet and 2.4 pp gains on long-tailed classification. "
            "GLA reaches 80.1% accuracy on ImageNet.")
    (x,) = extract_papers([Paper("p", text)])
    assert {text[r.start:r.end]: r.kind for r in x.results} == {"1.5 pp": "gain", "2.4 pp": "gain", "80.1%": "score"}
