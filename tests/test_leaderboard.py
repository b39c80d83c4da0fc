"""kg.leaderboard.rank: which results a leaderboard lists, and in which order."""
from kg.leaderboard import Entry, rank


def entry(value: float, metric: str, *, kind: str = "score", lower: bool | None = None, paper: str = "p") -> Entry:
    return Entry(value, "%", None, kind, metric, "", paper, paper, "", 0, 1, 0.8, lower)


def test_results_of_no_named_metric_are_left_off_not_ranked():
    # An error, an accuracy and a parameter increase, none with its metric named: nothing to compare.
    board = rank([entry(2.89, ""), entry(94.3, ""), entry(0.0003, ""), entry(3.1, "error", lower=True),
                  entry(1.2, "", kind="gain")])
    assert [(e.value, e.metric) for e in board] == [(3.1, "error")]


def test_scores_rank_best_first_within_a_metric_and_gains_follow():
    # error has the most scores, so it comes first; lower error and higher accuracy are better.
    board = rank([entry(3.0, "error", lower=True), entry(0.5, "accuracy", kind="gain"),
                  entry(2.0, "error", lower=True), entry(80.2, "accuracy", lower=False),
                  entry(1.5, "error", lower=True), entry(91.0, "accuracy", lower=False)])
    assert [e.value for e in board] == [1.5, 2.0, 3.0, 91.0, 80.2, 0.5]
