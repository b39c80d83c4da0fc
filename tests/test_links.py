"""Relations between mentions and the results an abstract reports, read sentence by sentence."""
import pytest

from kg.extract import extract_papers
from kg.model import Paper


def extract(text: str):
    [ex] = extract_papers([Paper("p", text)])
    return ex


def links(text: str) -> set[tuple[str, str, str]]:
    ex = extract(text)
    return {(ex.mentions[l.head].text, l.relation, ex.mentions[l.tail].text) for l in ex.links}


def results(text: str) -> list[dict]:
    ex = extract(text)
    name = lambda i: ex.mentions[i].text if i is not None else None
    return [{"text": text[r.start:r.end], "value": r.value, "unit": r.unit, "previous": r.previous, "kind": r.kind,
             "metric": name(r.metric), "dataset": name(r.dataset), "subject": name(r.subject)} for r in ex.results]


def test_a_named_models_result_on_each_bracketed_benchmark():
    text = ("We present TapAgent, an online RL framework for phone control. The resulting TapAgent-7B model "
            "reaches state-of-the-art success rates on both AndroidWorld (71.4%) and Android-Lab (48.9%).")
    found = results(text)
    assert [(r["text"], r["dataset"], r["subject"], r["metric"]) for r in found] == [
        ("71.4%", "AndroidWorld", "TapAgent-7B", "success rates"),
        ("48.9%", "Android-Lab", "TapAgent-7B", "success rates")]
    assert {("TapAgent-7B", "evaluatedOn", "AndroidWorld"), ("TapAgent-7B", "evaluatedOn", "Android-Lab")} <= links(text)


def test_from_x_to_y_keeps_the_value_before_and_the_model_it_is_of():
    text = ("We propose KEdit, a knowledge editing method. KEdit raises the translation accuracy of "
            "CodeLlama-7b-Instruct from 41.5% to 52.0%.")
    [result] = results(text)
    assert (result["value"], result["previous"], result["unit"]) == (52.0, 41.5, "%")
    assert result["subject"] == "CodeLlama-7b-Instruct" and result["metric"] == "translation accuracy"


def test_an_improvement_by_some_amount_is_a_gain_not_a_score():
    [result] = results("On RefCOCO, our method raises accuracy by 4.1 points.")
    assert (result["value"], result["unit"], result["kind"], result["dataset"]) == (4.1, "points", "gain", "RefCOCO")


@pytest.mark.parametrize("text", [
    "We release a benchmark of 2,400 questions over documents of up to 128K tokens on RULER.",
    "We train LLaMA-3-8B for 3 epochs on MMLU in 2024.",
    "The method reduces cost by 40% on average.",  # nothing to measure it on
])
def test_sizes_counts_years_and_unanchored_numbers_are_no_results(text):
    assert results(text) == []


def test_a_bare_value_counts_beside_its_metric_and_for_a_named_baseline():
    text = "We propose CurveFlow. On ImageNet, CurveFlow reaches an FID of 2.9, compared with 5.1 for DDPM."
    found = {(r["value"], r["subject"], r["metric"], r["dataset"]) for r in results(text)}
    assert found == {(2.9, "CurveFlow", "FID", "ImageNet"), (5.1, "DDPM", "FID", "ImageNet")}


def test_respectively_pairs_values_with_datasets_in_order():
    text = "We propose ZipNet. ZipNet reaches accuracies of 91.0% and 78.5% on CIFAR-10 and CIFAR-100, respectively."
    assert [(r["value"], r["dataset"]) for r in results(text)] == [(91.0, "CIFAR-10"), (78.5, "CIFAR-100")]


def test_a_link_names_both_its_ends_in_its_sentence_and_the_roles_say_the_rest():
    text = ("We introduce ChunkSieve, a framework for curating long-context training data. Experiments show "
            "that it yields substantial improvements on benchmarks such as HELMET, LongBench, and RULER.")
    ex = extract(text)
    assert all(ex.mentions[l.head].sentence == ex.mentions[l.tail].sentence == l.sentence for l in ex.links)
    assert not any(ex.mentions[l.head].text == "ChunkSieve" for l in ex.links)
    roles = {m.text: m.role for m in ex.mentions}
    assert roles["ChunkSieve"] == "proposes"
    assert {roles[d] for d in ("HELMET", "LongBench", "RULER")} == {"evaluatesOn"}
    same = links("We evaluate ChunkSieve on HELMET, LongBench and RULER.")
    assert {("ChunkSieve", "evaluatedOn", d) for d in ("HELMET", "LongBench", "RULER")} <= same


def test_outperforms_and_compared_with_name_the_baselines():
    found = links("We propose HeteroMix, a message-passing scheme. HeteroMix outperforms GCN and GAT on node "
                  "classification, and we compare it with GraphSAGE.")
    assert {("HeteroMix", "outperforms", "GCN"), ("HeteroMix", "outperforms", "GAT")} <= found


def test_examples_are_hyponyms_and_components_are_parts():
    found = links("We present DroidRL, an online RL framework. DroidRL consists of the Difficulty-Aware "
                  "Policy Optimization (DAPO) algorithm and a replay buffer. We evaluate LLMs, including GPT-4o and "
                  "Qwen2.5-7B, on AndroidWorld.")
    assert ("DAPO", "partOf", "DroidRL") in found or ("Difficulty-Aware Policy Optimization", "partOf", "DroidRL") in found
    assert {("GPT-4o", "hyponymOf", "LLMs"), ("Qwen2.5-7B", "hyponymOf", "LLMs")} <= found


def test_a_method_is_used_for_the_task_after_for():
    assert ("GazeNet", "usedFor", "visual grounding") in links(
        "We present GazeNet, a lightweight module for visual grounding.")


def test_a_name_nested_in_another_takes_no_part_in_relations():
    found = links("We propose Curriculum-aware GRPO (C-GRPO). Experiments on GSM8K show that C-GRPO works.")
    assert not any("GRPO" == head or "GRPO" == tail for head, _, tail in found)


def test_values_a_metric_is_brought_to_pair_with_the_datasets_in_order_respectively():
    found = results("Dynamic evaluation improves the state-of-the-art word-level perplexities on the Penn Treebank "
                    "and WikiText-2 datasets to 51.1 and 44.3 respectively.")
    assert [(r["value"], r["metric"], r["dataset"]) for r in found] == [
        (51.1, "word-level perplexities", "Penn Treebank"), (44.3, "word-level perplexities", "WikiText-2")]


def test_a_measured_value_takes_the_one_dataset_its_sentence_is_on():
    found = results("On MNIST, our approach produces a network that no attack can push above 35% test error.")
    assert [(r["value"], r["metric"], r["dataset"]) for r in found] == [(35.0, "test error", "MNIST")]
