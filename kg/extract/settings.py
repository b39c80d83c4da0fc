"""The setting a score was reached in, where it is not the standard one: "zero-shot", "few labels",
"adversarial", "quantized", "corrupted", "linear probe", or the task it was reached in when the
sentence names one for it ("42.1% AP in instance segmentation").

A leaderboard promises that its rows can be compared. "77.9% zero-shot ImageNet accuracy", "59.0 with
one label per class", "65.3% under AutoAttack" and "41.3% with 1-bit weights" are accuracies on
ImageNet or CIFAR-10, but not comparable with a model trained and tested the standard way: each
ranks only beside scores of its own setting.

A result's setting is read from the words around its value: from the value before it in the same
sentence (or the sentence's start) to the value after it (or the sentence's end), so that "80%
clean accuracy and 50% under PGD" gives the second value alone its setting, and from the phrase
that opens the sentence up to its first comma ("Under 50 IPC, ... 42.5% and 60.8%"), which
qualifies every value after it. The values of one list ("63.2%, 67.8% and 69.3% zero-shot accuracy": one metric,
dataset and subject) share theirs. The families below are the qualifiers the readers wrote for the
scores of 1,820 tuned abstracts (``bench/annotated/papers.jsonl``, "setting") that make scores
incomparable, written as patterns (each linear: alternatives of literal words). A task joins them
where a task mention follows the value "in" or "for" within its words ("46.5% AP in object
detection", "78.2% AP on MS COCO for 2D pose estimation"): one dataset serves several tasks, and
an AP of pose estimation is no AP of detection (the graph keeps a task only where a dataset's
scores of one metric were reached in two tasks or more: :func:`kg.link.graph.tasks_apart`).
"""
from __future__ import annotations

import re

from ..model import PaperExtraction

SETTINGS = {
    "zero-shot": re.compile(r"\bzero[- ]?shot\b|\b0-shot\b", re.IGNORECASE),
    "few labels": re.compile(
        r"\b(?:few|one|two|three|four|five|ten|\d+|k)[- ]shots?\b|\b(?:labels?|images?|examples?|samples?) per class\b"
        r"|\bIPC\b|\bwith (?:only |just )?(?:\d[\d,.]*%?|one|two|a few|few) (?:of (?:the )?)?(?:labels|labeled|labelled|annotated)\b",
        re.IGNORECASE),
    "adversarial": re.compile(r"\b(?:robust|adversarial|attacks?|PGD|AutoAttack|FGSM|white-box|black-box|certified)\b",
                              re.IGNORECASE),
    "quantized": re.compile(r"\b\d+-bits?\b|\bquantiz\w*", re.IGNORECASE),
    "corrupted": re.compile(r"\bcorrupt\w*|\bnoisy labels?\b|\blabel noise\b", re.IGNORECASE),
    "linear probe": re.compile(r"\blinear[- ]prob\w*|\blinear evaluation\b", re.IGNORECASE),
}


def setting_of(text: str) -> str:
    """The settings ``text`` names, in the order of :data:`SETTINGS`, joined by ", " ("" for none).

    >>> setting_of("achieves 77.9% zero-shot ImageNet accuracy"), setting_of("65.3% under AutoAttack")
    ('zero-shot', 'adversarial')
    >>> setting_of("with one, two, or five labels per class"), setting_of("86.2% top-1 accuracy on ImageNet")
    ('few labels', '')
    """
    return ", ".join(name for name, pattern in SETTINGS.items() if pattern.search(text))


def tasks_in(setting: str) -> set[str]:
    """The tasks a setting names (its parts that are no family of :data:`SETTINGS`)."""
    return {part for part in setting.split(", ") if part and part not in SETTINGS}


def without_tasks(setting: str) -> str:
    """``setting`` without its tasks: "zero-shot, object detection" -> "zero-shot"."""
    return ", ".join(part for part in setting.split(", ") if part in SETTINGS)


def settle_settings(extraction: PaperExtraction) -> None:
    """Give each result of ``extraction`` the setting its value's words name (see the module's text)."""
    text, results = extraction.paper.abstract, extraction.results
    if not results:
        return
    sentences = extraction.sentences or [(0, len(text))]
    tasks = [m for m in extraction.mentions if m.label == "Task"]
    in_sentence: dict[int, list] = {}
    for r in sorted(results, key=lambda r: r.start):
        in_sentence.setdefault(r.sentence, []).append(r)
    named: dict[int, set[str]] = {}
    for n, r in enumerate(results):
        s_start, s_end = sentences[min(r.sentence, len(sentences) - 1)]
        same = in_sentence[r.sentence]
        before, after = [x for x in same if x.start < r.start], [x for x in same if x.start > r.start]
        start, end = before[-1].end if before else s_start, after[0].start if after else s_end
        comma = text.find(", ", s_start, r.start)
        opening = text[s_start:comma] if comma >= 0 and comma < start else ""
        named[n] = {name for name in setting_of(opening + " " + text[start:end]).split(", ") if name}
        task = next((m for m in tasks if r.end <= m.start and m.end <= end
                     and text[max(r.end, m.start - 5):m.start].lower().rstrip().endswith((" in", " for"))), None)
        if task is not None:
            named[n].add(task.text)
    lists: dict[tuple, set[str]] = {}
    for n, r in enumerate(results):
        lists.setdefault((r.sentence, r.metric, r.dataset, r.subject, r.kind), set()).update(named[n])
    for r in results:
        shared = lists[(r.sentence, r.metric, r.dataset, r.subject, r.kind)]
        r.setting = ", ".join([name for name in SETTINGS if name in shared] + sorted(shared - set(SETTINGS)))
