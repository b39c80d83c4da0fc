"""kg.query.leaderboard.board: which results a leaderboard ranks, in which order, and what it leaves out."""
import pytest

from kg.errors import KGError
from kg.query.leaderboard import Entry, board


def entry(value: float, metric: str, *, kind: str = "score", lower: bool | None = None, paper: str = "p") -> Entry:
    return Entry(value, "%", None, kind, metric, "", paper, paper, "", 0, 1, 0.8, lower)


def test_results_of_no_named_metric_are_left_out_and_counted_not_ranked():
    # An error, an accuracy and a parameter increase, none with its metric named: nothing to compare.
    ranked = board("CIFAR-10", [entry(2.89, ""), entry(94.3, ""), entry(0.0003, ""), entry(3.1, "error"),
                                entry(1.2, "", kind="gain")])
    assert (ranked.metric, [e.value for e in ranked.ranked]) == ("error", [3.1])
    assert [e.value for e in ranked.unnamed] == [2.89, 94.3, 0.0003, 1.2]


def test_a_board_ranks_the_metric_with_most_scores_best_first_and_counts_the_others():
    # error has three scores, accuracy two: error is ranked (lower first); accuracy and the gain are left out.
    entries = [entry(3.0, "error"), entry(0.5, "accuracy", kind="gain"), entry(2.0, "error"),
               entry(80.2, "accuracy"), entry(1.5, "error"), entry(91.0, "accuracy")]
    ranked = board("CIFAR-10", entries)
    assert (ranked.metric, ranked.lower_is_better) == ("error", True)
    assert [e.value for e in ranked.ranked] == [1.5, 2.0, 3.0]
    assert ranked.other_metrics == {"accuracy": 2}
    assert [e.value for e in ranked.gains] == [0.5]


def test_a_board_ranks_the_metric_asked_for_higher_accuracy_first():
    entries = [entry(3.0, "error"), entry(80.2, "accuracy"), entry(2.0, "error"), entry(91.0, "accuracy")]
    ranked = board("CIFAR-10", entries, metric="Accuracy")
    assert [e.value for e in ranked.ranked] == [91.0, 80.2] and ranked.other_metrics == {"error": 2}


def test_asking_for_a_metric_no_score_has_names_those_there_are():
    with pytest.raises(KGError, match=r"No result on CIFAR-10 is of the metric 'BLEU'; its metrics: error \(1\)"):
        board("CIFAR-10", [entry(3.0, "error")], metric="BLEU")


def test_the_value_a_result_improved_on_is_shown_beside_it_not_ranked_as_someone_elses_score():
    improved = Entry(94.3, "%", 93.2, "score", "accuracy", "AcmeNet", "p", "p", "", 0, 1, 0.8, False)
    ranked = board("MNIST", [improved, entry(93.8, "accuracy", paper="q")])
    assert [(e.value, e.subject, e.shown()) for e in ranked.ranked] == [
        (94.3, "AcmeNet", "93.2% -> 94.3%"), (93.8, "", "93.8%")]


def test_scores_of_another_setting_are_counted_not_ranked_and_ranked_when_asked_for():
    zero_shot = [Entry(77.9, "%", None, "score", "accuracy", "B", "p", "p", "", 0, 1, 0.8, False, setting="zero-shot")]
    entries = [entry(81.0, "accuracy", lower=False), entry(79.5, "accuracy", lower=False)] + zero_shot
    standard = board("ImageNet", entries)
    assert ([e.value for e in standard.ranked], standard.other_settings) == ([81.0, 79.5], {"zero-shot": 1})
    asked = board("ImageNet", entries, setting="Zero-shot")
    assert ([e.value for e in asked.ranked], asked.setting, asked.other_settings) == ([77.9], "zero-shot", {"": 2})
    assert "2 scores of accuracy in other settings: standard 2" in asked.as_text()
    with pytest.raises(KGError, match=r"in the setting 'adversarial'; its settings: standard \(2\), zero-shot \(1\)"):
        board("ImageNet", entries, setting="adversarial")


def test_a_metric_with_only_scores_of_one_setting_ranks_them():
    only = [Entry(v, "%", None, "score", "accuracy", "B", "p", "p", "", 0, 1, 0.8, False, setting="zero-shot")
            for v in (60.0, 70.0)]
    assert [e.value for e in board("ImageNet", only).ranked] == [70.0, 60.0]
