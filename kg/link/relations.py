"""Relations between entities: read from their names across the corpus, and from the papers' sentences.

The sentence relations (usedFor, evaluatedOn, evaluates, partOf, hyponymOf,
comparedWith, outperforms) are the ``Link`` s each paper's extraction found,
lifted from mentions to the resolved entities; the graph merges those of
different papers into one edge and counts them as its support.

``variantOf``: a method or model whose name contains another's whole name is
a variant of it: "E-GRPO" and "Difficulty-Adaptive GRPO (ADAGRPO)" of GRPO,
"Mirror Flow Matching" of flow matching, "robust GNNs (RGNNs)" of GNNs,
"MOBILERL-9B" of MOBILERL. The evidence is the mention whose surface form
contains the other name.

``listedWith``: names of one type a sentence lists together ("GANs, VAEs and normalizing
flows", "Adam or SGD") are things of one kind, alternatives or companions. On NeurIPS 2023 and
ICLR 2017/18 the pairs a corpus lists most often are such: Adam with SGD, Shampoo and Adafactor;
LSTM with GRU (12 papers); GAN with VAE (10); dropout with batch normalization (4).
"""
from __future__ import annotations

import re
from collections import defaultdict

from .. import lexicon
from ..model import Entity, Mention, PaperExtraction, Relation
from ..keys import resolution_key
from ..vocab import RELATION_TYPES

#: The types a name can be a variant of another's (both sides alike).
VARIANT_TYPES = RELATION_TYPES["variantOf"][0]


def name_parts(form: str) -> tuple[str, ...]:
    """A surface form as lower-case words, split at spaces and hyphens, the last one singular.

    >>> name_parts("Difficulty-Adaptive GRPO"), name_parts("robust GNNs")
    (('difficulty', 'adaptive', 'grpo'), ('robust', 'gnn'))
    """
    words = [w for w in re.split(r"[\s\-–_/]+", form) if w]
    if not words:
        return ()
    words[-1] = resolution_key(words[-1]) if len(words[-1]) > 2 else words[-1]
    return tuple(w.casefold() for w in words)


def _only_generic(words: tuple[str, ...]) -> bool:
    # "VLM model", "RL training", "AU-quality": the same thing with a generic word, not a variant.
    return all(w in lexicon.GENERIC_HEADS or w in lexicon.EVALUATIVE or resolution_key(w) in lexicon.GENERIC_HEADS
               for w in words)


def _is_distinctive(form: str, parts: tuple[str, ...]) -> bool:
    # One plain lower-case word ("attention") is too common to make every name containing it a variant.
    return len(parts) >= 2 or any(c.isupper() or c.isdigit() for c in form)


def variant_relations(entities: list[Entity], extractions: list[PaperExtraction]) -> list[Relation]:
    """``variantOf`` links between methods and models whose names contain one another.

    Example
    -------
    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "We propose E-GRPO, built on GRPO."
    >>> ex = PaperExtraction(Paper("p", text), [(0, len(text))],
    ...     [Mention(11, 17, "E-GRPO", "Method", 0, 0.9, "t"), Mention(28, 32, "GRPO", "Method", 0, 0.9, "t")], {})
    >>> entities = [Entity("egrpo", "Method", "E-GRPO", ["E-GRPO"], [("p", 0)]),
    ...             Entity("grpo", "Method", "GRPO", ["GRPO"], [("p", 1)])]
    >>> [(r.source, r.relation, r.target) for r in variant_relations(entities, [ex])]
    [('egrpo', 'variantOf', 'grpo')]
    """
    by_paper = {ex.paper.id: ex for ex in extractions}
    index: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for entity in entities:
        if entity.type in VARIANT_TYPES:
            for form in {entity.label, *entity.aliases}:
                parts = name_parts(form)
                if parts and _is_distinctive(form, parts):
                    index[parts].add(entity.key)

    relations: dict[tuple[str, str], Relation] = {}
    for entity in entities:
        if entity.type not in VARIANT_TYPES:
            continue
        for paper_id, i in entity.mentions:
            parts = name_parts(by_paper[paper_id].mentions[i].text)
            # The longest name inside wins: "Entity-aware Group Relative Policy Optimization" is a
            # variant of GRPO, not of a "policy optimization" entity too.
            for size in range(len(parts) - 1, 0, -1):
                bases = {b for start in range(len(parts) - size + 1)
                         if not _only_generic(parts[:start] + parts[start + size :])
                         for b in index.get(parts[start : start + size], ()) if b != entity.key}
                for base in sorted(bases):
                    relations.setdefault((entity.key, base), Relation(entity.key, "variantOf", base, 0.8, (paper_id, i)))
                if bases:
                    break
    return sorted(relations.values(), key=lambda r: (r.source, r.target))


#: A list's members paired at most, its first ones: "A, B, C and D" pairs each with each, and a
#: sentence listing hundreds of names (a benchmark suite, or a hostile abstract) must not square them.
MAX_LISTED = 12
#: What may stand between two listed names: a comma, a slash, "and", "or", "as well as", "vs." (after
#: the closing bracket of an abbreviation: "networks (GANs) and VAEs"). Read only where the text
#: between is at most :data:`LIST_GAP` characters, so the check is bounded whatever the abstract.
_LIST_SEPARATOR = re.compile(r"\)?\s*(?:[,;/]\s*)?(?:(?:and/or|and|or|nor|as well as|versus|vs\.?)\s+)?", re.IGNORECASE)
LIST_GAP = 14


def _listed_next(abstract: str, left: Mention, right: Mention) -> bool:
    """Whether ``right`` follows ``left`` in a list: in one sentence, only a separator between."""
    gap = abstract[left.end:right.start]
    return (left.sentence == right.sentence and left.end <= right.start and len(gap) <= LIST_GAP
            and bool(gap.strip()) and _LIST_SEPARATOR.fullmatch(gap) is not None)


def listed_relations(entities: list[Entity], extractions: list[PaperExtraction]) -> list[Relation]:
    """``listedWith`` links between entities of one type that a sentence lists together, one
    ``Relation`` per paper and pair (its source the smaller key: the relation has no direction).

    Every name of one list is listed with every other ("A, B and C": three pairs), of its first
    :data:`MAX_LISTED`; the evidence is the later mention of the pair.

    Example
    -------
    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "Unlike GANs, VAEs and flows, CelebA (faces) is used."
    >>> ex = PaperExtraction(Paper("p", text), [(0, len(text))],
    ...     [Mention(7, 11, "GANs", "Method", 0, 0.9, "t"), Mention(13, 17, "VAEs", "Method", 0, 0.9, "t"),
    ...      Mention(22, 27, "flows", "Method", 0, 0.9, "t"), Mention(29, 35, "CelebA", "Dataset", 0, 0.9, "t")], {})
    >>> entities = [Entity("gan", "Method", "GAN", [], [("p", 0)]), Entity("vae", "Method", "VAE", [], [("p", 1)]),
    ...             Entity("flow", "Method", "flow", [], [("p", 2)]), Entity("celeba", "Dataset", "CelebA", [], [("p", 3)])]
    >>> [(r.source, r.target) for r in listed_relations(entities, [ex])]
    [('flow', 'gan'), ('flow', 'vae'), ('gan', 'vae')]
    """
    entity_of = {ref: entity for entity in entities for ref in entity.mentions}
    found: dict[tuple[str, str, str], Relation] = {}
    for ex in extractions:
        paper, order = ex.paper.id, sorted(range(len(ex.mentions)), key=lambda i: (ex.mentions[i].start, ex.mentions[i].end))
        lists: list[list[int]] = []
        for previous, current in zip([None, *order], order):
            if previous is not None and _listed_next(ex.paper.abstract, ex.mentions[previous], ex.mentions[current]):
                lists[-1].append(current)
            else:
                lists.append([current])
        for members in lists:
            named = [(entity_of[(paper, i)], i) for i in members if (paper, i) in entity_of][:MAX_LISTED]
            for a, (first, _) in enumerate(named):
                for second, evidence in named[a + 1:]:
                    if first.key == second.key or first.type != second.type:
                        continue
                    source, target = sorted((first.key, second.key))
                    found.setdefault((paper, source, target), Relation(
                        source, "listedWith", target, 0.8, (paper, evidence), ex.mentions[evidence].sentence))
    return sorted(found.values(), key=lambda r: (r.source, r.target, r.evidence))


def sentence_relations(entities: list[Entity], extractions: list[PaperExtraction]) -> list[Relation]:
    """The links of every paper between resolved entities, one ``Relation`` per paper and link.

    The evidence is the link's object mention, in the sentence that states
    the link. Links whose ends resolve to one entity, or to no entity (a
    generic phrase), or to types the relation does not join, are dropped.

    Example
    -------
    >>> from kg.model import Paper, Mention, PaperExtraction, Link
    >>> text = "LongFilter gains on RULER."
    >>> ex = PaperExtraction(Paper("p", text), [(0, len(text))],
    ...     [Mention(0, 10, "LongFilter", "Method", 0, 0.9, "t"), Mention(20, 25, "RULER", "Dataset", 0, 0.9, "t")],
    ...     {}, links=[Link(0, "evaluatedOn", 1, 0, 0.7)])
    >>> entities = [Entity("longfilter", "Method", "LongFilter", [], [("p", 0)]),
    ...             Entity("ruler", "Dataset", "RULER", [], [("p", 1)])]
    >>> [(r.source, r.relation, r.target, r.evidence) for r in sentence_relations(entities, [ex])]
    [('longfilter', 'evaluatedOn', 'ruler', ('p', 1))]
    """
    entity_of = {ref: entity for entity in entities for ref in entity.mentions}
    found: dict[tuple[str, str, str, str], Relation] = {}
    for ex in extractions:
        paper = ex.paper.id
        for link in ex.links:
            head, tail = entity_of.get((paper, link.head)), entity_of.get((paper, link.tail))
            if head is None or tail is None or head.key == tail.key:
                continue
            heads, tails = RELATION_TYPES[link.relation]
            if head.type not in heads or tail.type not in tails:
                continue
            key = (paper, head.key, link.relation, tail.key)
            if key not in found or found[key].confidence < link.confidence:
                found[key] = Relation(head.key, link.relation, tail.key, link.confidence, (paper, link.tail),
                                      link.sentence)
    return sorted(found.values(), key=lambda r: (r.source, r.relation, r.target, r.evidence))
