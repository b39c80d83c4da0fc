"""kg.extract.settings: which words set a score apart, and which values of a sentence they reach."""
from kg.extract.settings import setting_of, settle_settings
from kg.model import Paper, PaperExtraction, Result


def extraction(text: str, values: list[tuple[str, int | None]]) -> PaperExtraction:
    """``text`` as one sentence whose results are the first occurrence of each value, with its metric index."""
    results = []
    for written, metric in values:
        start = text.index(written)
        results.append(Result(start, start + len(written), float(written.rstrip("%")), "%", 0, metric, 0, None, None,
                              "score", 0.9))
    return PaperExtraction(Paper("p", text), [(0, len(text))], [], {}, results=results)


def test_the_families_of_setting_words_and_a_standard_score_naming_none():
    assert setting_of("under PGD and AutoAttack") == "adversarial"
    assert setting_of("with 4-bit weights, zero-shot") == "zero-shot, quantized"
    assert setting_of("with only 10% labels") == "few labels" and setting_of("5-shot") == "few labels"
    assert setting_of("reaches 86.2% top-1 accuracy on ImageNet after 300 epochs") == ""


def test_a_setting_reaches_only_the_values_between_its_neighbours():
    x = extraction("Our model reaches 80.1% clean accuracy and 50.2% robust accuracy under PGD.", [("80.1%", 1), ("50.2%", 2)])
    settle_settings(x)
    assert [r.setting for r in x.results] == ["", "adversarial"]


def test_the_values_of_one_list_share_their_setting():
    x = extraction("Our models achieve zero-shot accuracies of 63.2%, 67.8% and 69.3% on ImageNet.",
                   [("63.2%", 1), ("67.8%", 1), ("69.3%", 1)])
    settle_settings(x)
    assert [r.setting for r in x.results] == ["zero-shot"] * 3


def test_words_opening_the_sentence_qualify_each_of_its_values():
    x = extraction("Under 50 IPC, our approach achieves 42.5% and 60.8% accuracy on Tiny-ImageNet and ImageNet-1K.",
                   [("42.5%", 1), ("60.8%", 2)])
    settle_settings(x)
    assert [r.setting for r in x.results] == ["few labels", "few labels"]


def test_a_task_the_value_is_reached_in_sets_it_apart_and_a_task_in_a_name_does_not():
    from kg.model import Mention

    text = "FLSL achieves 46.5% AP in object detection and 42.1% AP in instance segmentation, and 88.4% on ImageNet classification."
    x = extraction(text, [("46.5%", 1), ("42.1%", 2), ("88.4%", 3)])
    for task in ("object detection", "instance segmentation", "classification"):
        start = text.index(task)
        x.mentions.append(Mention(start, start + len(task), task, "Task", 0, 0.9, "rules/1"))
    settle_settings(x)
    assert [r.setting for r in x.results] == ["object detection", "instance segmentation", ""]


def test_the_explorer_shows_a_zero_shot_score_on_a_board_of_its_own(browser, tmp_path):
    from support import build

    corpus = tmp_path / "settings.txt"
    corpus.write_text("Setting Workshop 2025 Papers\n\nWe propose FooNet. FooNet reaches a top-1 accuracy of 81.0% on "
                      "ImageNet.\n\nWe propose BarNet. BarNet reaches a zero-shot top-1 accuracy of 77.9% on ImageNet.\n",
                      encoding="utf-8")
    stem = build(corpus, tmp_path)
    page = browser.new_page()
    try:
        page.goto(f"{stem.with_suffix('.html').as_uri()}#focus=dataset/imagenet")
        page.wait_for_selector(".kg-board")
        boards = page.eval_on_selector_all(".kg-board", "boards => boards.map((b) => b.innerText)")
        assert [b.splitlines()[0] for b in boards] == ["accuracy · higher is better",
                                                       "accuracy (zero-shot) · higher is better"]
        assert "FooNet" in boards[0] and "BarNet" not in boards[0] and "77.9%" in boards[1]
        results = page.eval_on_selector_all(".kg-results li", "items => items.map((i) => i.innerText)")
        assert any("77.9%" in r and "(zero-shot)" in r for r in results)
        assert any("81.0%" in r and "zero-shot" not in r for r in results)
    finally:
        page.close()
