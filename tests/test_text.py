"""Markup cleaning keeps a map from every clean character back to the original abstract."""
import pytest

from kg.text import clean, normalize_for_id


@pytest.mark.parametrize(
    "original, expected",
    [
        (r"number of clusters $K$ is unknown", "number of clusters K is unknown"),
        (r"\textit{attribution strength} measures", "attribution strength measures"),
        (r"we propose N\"uwa, a", "we propose Nüwa, a"),
        (r"\"{u}ber", "über"),
        (r"models, \ie the", "models, i.e. the"),
        ("**natural identifiers (NIDs)** as", "natural identifiers (NIDs) as"),
        ("auditing *differential privacy* require", "auditing differential privacy require"),
        ("a * b stays", "a * b stays"),
        ("costs 5\\% less", "costs 5% less"),
        ("line\n\n  break", "line break"),
    ],
)
def test_clean_removes_markup(original, expected):
    assert clean(original).text == expected


@pytest.mark.parametrize("original, word", [
    (r"we propose N\"uwa, a two-stage", "Nüwa"),
    (r"the **E-GRPO** method", "E-GRPO"),
    (r"$\pi_0$ and \textbf{LLaMA-3-8B} on", "LLaMA-3-8B"),
])
def test_offsets_map_clean_spans_into_the_original(original, word):
    c = clean(original)
    start = c.text.index(word)
    o_start, o_end = c.original_span(start, start + len(word))
    # The original span holds the word, markup included, and nothing around it.
    assert clean(original[o_start:o_end]).text == word


def test_ids_ignore_case_markup_and_spacing():
    assert normalize_for_id("We **propose**  X.") == normalize_for_id("we propose x.")
    assert normalize_for_id("We propose X.") != normalize_for_id("We propose Y.")
