"""Concepts: the hierarchy that joins specific names to the concepts papers share.

Resolution gives one entity per name; most names are specific ("document
summarization", "robust GNNs", "Mirror Flow Matching") and occur in one paper.
This stage links each entity to broader concepts (``skos:broader``) so that a
paper on document summarization is found as a paper on summarization:

- ``head``: a name of several words is narrower than the longest of its tails
  that is a concept: "document summarization" -> "summarization", "robust
  GNNs" -> GNN (through the acronym's entity), "Mirror Flow Matching" -> "flow
  matching".
- ``coordination``: "diffusion and flow-based models" -> "diffusion models" and
  "flow-based models".
- ``family``: a numbered member of a named family -> the family: CIFAR-10 -> CIFAR.
- ``pwc``: a task -> its parent task in Papers with Code ("Unsupervised Machine
  Translation" -> "Machine Translation").
- ``such-as``, ``and-other``, ``apposition``, ``class-of``: read from a sentence ("tasks such
  as X", "X and other Y", "X, a Y", "X are a class of Y").

A tail that no paper names on its own becomes a concept (an ``Entity`` without
mentions) when two or more papers reach it. Links join entities of one type
(methods and models count as one) and never close a cycle: the hierarchy is
acyclic by construction, the earlier rules above winning.

Each entity also gets a salience figure (:func:`salience`): how many papers
reach it, whether a paper proposes it, how specific its name is. The explorer
and ``kg related`` hide entities below ``SALIENCE_THRESHOLD``.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from .. import lexicon
from ..model import Entity, PaperExtraction, Relation
from ..pwc import Lexicon
from ..keys import is_acronym_like, is_generic_key, resolution_key
from ..vocab import ACTOR_TYPES

#: Extractor names of the rules (``prov:wasAttributedTo`` of each link's statement).
RULES = ("head", "coordination", "family", "pwc", "such-as", "and-other", "apposition", "class-of")
RULE_CONFIDENCE = {"head": 0.9, "coordination": 0.8, "family": 0.85, "pwc": 0.85,
                   "such-as": 0.7, "and-other": 0.7, "apposition": 0.6, "class-of": 0.7}
#: Papers that must reach a tail nobody names on its own before it becomes a concept.
MIN_CONCEPT_PAPERS = 2
#: Papers whose sentences must state a link that puts a name under one fewer papers mention.
MIN_SENTENCE_SUPPORT = 2
SALIENCE_THRESHOLD = 1.5

# A tail starting with these is the rest of a compound, not a concept: "LLM-based agents" is not
# narrower than "based agents".
_NOT_A_START = frozenset("""
based driven aware free like specific level wise style agnostic conditioned guided oriented augmented
enhanced assisted informed centric scale shot order grained dependent independent invariant
of and or for with to in on by via from the a an as at vs versus
""".split())
# Single words that only make sense with their modifier: "drug discovery" is not a kind of discovery.
_NOT_A_HEAD = frozenset("""
answering understanding modeling modelling design control completion coding process flow matching head
layer mechanism module tuning search discovery planning alignment editing verification routing merging
problem problems test length function machine machines principle scenario scenarios correction
computation transfer identification scaling neighbor
""".split())
# Single words that are concepts on their own when papers share them as a tail, though nobody names
# them alone ("summarization").
_SINGLE_WORD_CONCEPTS = (lexicon.TASK_HEADS | lexicon.METHOD_HEADS) - lexicon.GENERIC_HEADS - _NOT_A_HEAD
# Prefixes written with a hyphen that change what follows: "non-linear", "over-parameterized", "few-bit".
_PREPOSITIONS = frozenset("of for in on by from with to via".split())
_PREFIXES = frozenset("non un in im multi semi over under self cross sub pre post anti co few bi uni de re".split())
# Trailing words that add nothing to the concept before them: "imitation learning domain",
# "reading comprehension setting". ("model", "network" and "learning" are not here: a language
# model is not a language.)
_TRAILING = frozenset("""
task problem domain setting setup application framework method approach system technique strategy scheme
pipeline procedure process variant version module component architecture paradigm performance result
""".split())
_FAMILY = re.compile(r"^(.*[a-z])(?:v?\d+[a-z]?)$")
_PATTERNS = (  # text between two mentions -> (rule, which of the two is narrower)
    (re.compile(r"^\s*,?\s*(?:such as|including|especially|e\.g\.,?|for example,?)\s*$", re.I), "such-as", "second"),
    (re.compile(r"^\s*,?\s*(?:and|or) other\s*$", re.I), "and-other", "first"),
    (re.compile(r"^\s*,\s*(?:a|an)\s*$", re.I), "apposition", "first"),
    # "Diffusion models are a class of generative models", "GNNs are a powerful family of neural networks":
    # at most two words between the article and the word that says it is a kind.
    (re.compile(r"^\s*(?:\([^()]{1,24}\)\s*)?(?:is|are)\s+(?:an?|one)\s+(?:[\w-]+\s+){0,2}"
                r"(?:class|kind|type|family|form|variant|subclass|category)\s+of\s*$", re.I), "class-of", "first"),
)


def _ends_plural(text: str) -> bool:
    """Whether a name ends in a plural ("regularizers", "LLMs", "tasks"): what "such as" lists members of."""
    last = text.split()[-1] if text.split() else ""
    return last[-1:] == "s" and last[-2:].lower() not in ("ss", "us", "is")


_LIST_GOES_ON = re.compile(r"\s*(?:,\s*)?(?:and|or)\b|\s*,\s*(?:a|an|the)\b", re.I)


@dataclass
class Hierarchy:
    """The concepts this stage adds (entities no paper names alone) and every ``broader`` link."""

    concepts: list[Entity]
    links: list[Relation]


def _compatible(a: str, b: str) -> bool:
    # A name is narrower than a concept of its own type; methods and models are one another's.
    return a == b or (a in ACTOR_TYPES and b in ACTOR_TYPES)


def _hyphenated(label: str) -> set[tuple[str, str]]:
    """The pairs of words a label joins with a hyphen: "discrete-space representations" ->
    {("discrete", "space")}; a tail may not open between them."""
    words = re.findall(r"[\w']+|-", label.casefold())
    return {(words[i - 1], words[i + 1]) for i in range(1, len(words) - 1) if words[i] == "-"}


def _is_title_name(label: str) -> bool:
    """A label of two or more words, each capitalised: a name ("Arcade Learning Environment"), whose
    last words ("Learning Environment") are part of it, not a kind it belongs to."""
    words = label.split()
    return len(words) > 1 and all(w[:1].isupper() for w in words if w.isalpha() and len(w) > 3)


def _forms(entity: Entity) -> str:
    """Every form an entity is written in, as one text: a hyphen in any of them counts."""
    return " | ".join([entity.label, *entity.aliases])


def _tails(key: str, names: Collection[str] = (), label: str = "") -> list[str]:
    """The concepts a key could be narrower than, most specific first: the key without a
    trailing generic word ("imitation learning domain" -> "imitation learning"), then that
    core's tails. A tail that cuts through one of ``names`` is none: "descent" is not what
    "stochastic gradient descent" is a kind of where "gradient descent" is a name, nor is "network
    classifier" a concept above "neural network classifier" where "neural network" is one.

    >>> _tails("llm based autonomous agent"), _tails("document summarization"), _tails("imitation learning domain")
    (['autonomous agent', 'agent'], ['summarization'], ['imitation learning'])
    >>> _tails("neural network language model", names={"neural network"})
    ['language model']
    >>> _tails("discrete space representation", label="discrete-space representations"), _tails("convolutional architecture")
    ([], [])
    """
    words = key.split()
    while len(words) > 1 and (words[-1] in _TRAILING or words[-1] in _NOT_A_START):
        words.pop()
    single_ok = len(words) > 1 or not (words[0] in _NOT_A_HEAD or words[0].endswith(lexicon.ADJECTIVE_ENDINGS))
    core = [" ".join(words)] if len(words) < len(key.split()) and single_ok else []  # not "convolutional"
    joined = _hyphenated(label)
    tails = []
    for i in range(1, len(words)):
        before, tail = words[:i], words[i:]
        # "training of deep models" is not a kind of deep model, "non-uniform sampling" not of
        # uniform sampling, "Children's Book Test" not of "Book Test".
        if tail[0] in _NOT_A_START or before[-1] in _PREFIXES or any(w in _PREPOSITIONS or w.endswith("'s") for w in before):
            continue
        if len(tail) == 1 and (tail[0] in _NOT_A_HEAD or tail[0].endswith(lexicon.ADJECTIVE_ENDINGS)):
            continue
        if any(" ".join(words[j : i + 1]) in names for j in range(i) if (j, i + 1) != (0, len(words))):
            continue  # the tail opens inside a name: "(gradient) descent", "(neural) network classifier"
        if before == ["model"]:
            continue  # "model accuracy" is the accuracy of a model, "model PhaseCond" PhaseCond: no kind of it
        if (before[-1], tail[0]) in joined or before[-1].isdigit():
            continue  # or inside a hyphenated word: "discrete-(space representations)", "3-(bit quantization)"
        if not is_generic_key(" ".join(tail)):
            tails.append(" ".join(tail))
    return core + tails


def _conjuncts(key: str) -> list[str]:
    """The concepts a coordinated name joins: "diffusion and flow based model" -> both models.

    >>> _conjuncts("diffusion and flow based model"), _conjuncts("gan and vae")
    (['diffusion model', 'flow based model'], ['gan', 'vae'])
    """
    words = key.split()
    if words.count("and") + words.count("or") != 1 or words[0] in ("and", "or") or words[-1] in ("and", "or"):
        return []
    at = next(i for i, w in enumerate(words) if w in ("and", "or"))
    left, right = words[:at], words[at + 1 :]
    if len(left) == 1 and len(right) > 1 and not is_acronym_like(left[0]):
        left = left + right[-1:]  # "diffusion and flow-based models": the head is shared
    return [" ".join(part) for part in (left, right) if not is_generic_key(" ".join(part))]


def build_hierarchy(entities: list[Entity], extractions: list[PaperExtraction], pwc: Lexicon | None = None) -> Hierarchy:
    """The concepts and ``broader`` links of resolved ``entities`` (see the module's rules).

    Example
    -------
    >>> from kg.model import Paper, Mention
    >>> def paper(pid, name):
    ...     return PaperExtraction(Paper(pid, name), [(0, len(name))], [Mention(0, len(name), name, "Task", 0, 0.9, "t")], {})
    >>> exs = [paper("a", "document summarization"), paper("b", "abstractive summarization"), paper("c", "summarization")]
    >>> ents = [Entity(resolution_key(ex.mentions[0].text), "Task", ex.mentions[0].text, [], [(ex.paper.id, 0)]) for ex in exs]
    >>> [(l.source, l.relation, l.target, l.rule) for l in build_hierarchy(ents, exs).links]
    [('abstractive summarization', 'broader', 'summarization', 'head'), ('document summarization', 'broader', 'summarization', 'head')]
    """
    by_paper = {ex.paper.id: ex for ex in extractions}
    by_key = {e.key: e for e in entities}
    alias_of: dict[str, str] = {}  # an alias's own key -> its entity ("gnn" -> "graph neural network")
    for entity in entities:
        for alias in entity.aliases:
            alias_of.setdefault(resolution_key(alias), entity.key)

    def find(key: str) -> str | None:
        return key if key in by_key else alias_of.get(key)

    papers_of = {e.key: {pid for pid, _ in e.mentions} for e in entities}
    named = set(by_key) | set(alias_of)  # what papers name: a tail may not cut through one
    type_of = {e.key: e.type for e in entities}

    # Tails nobody names alone, and coordinations' conjuncts and PwC parents: concepts when two
    # papers reach them.
    reach: dict[str, set[str]] = defaultdict(set)
    types: dict[str, Counter] = defaultdict(Counter)
    written: dict[str, Counter] = defaultdict(Counter)  # how papers write each new concept
    def acronym_named(key: str) -> bool:
        entity = by_key.get(key)
        return entity is not None and (is_acronym_like(entity.label) or any(is_acronym_like(a) for a in entity.aliases))

    for entity in entities:
        decomposes = not is_acronym_like(entity.label) and not _is_title_name(entity.label)  # a name's tails are its own
        candidates = [(t, _tail_form(entity.label, t)) for t in (_tails(entity.key, named, _forms(entity)) if decomposes else [])]
        candidates += [(c, c) for c in _conjuncts(entity.key)]
        if pwc is not None and entity.type == "Task":
            name = pwc.task(entity.key)
            if name in pwc.parent:
                candidates.append((resolution_key(pwc.parent[name], name=True), pwc.parent[name]))
        for key, form in candidates:
            if find(key) is None and _may_be_concept(key):
                reach[key] |= papers_of[entity.key]
                types[key][entity.type] += 1
                written[key][form] += 1
    concepts = []
    for key, papers in sorted(reach.items()):
        if len(papers) >= MIN_CONCEPT_PAPERS:
            label = max(written[key], key=lambda f: (written[key][f], f == f.lower(), f))
            concept = Entity(key=key, type=types[key].most_common(1)[0][0], label=label, aliases=[], mentions=[])
            concepts.append(concept)
            by_key[key] = concept
            type_of[key] = concept.type

    links: list[Relation] = []
    first_mention = {e.key: e.mentions[0] for e in entities if e.mentions}

    def link(narrower: str, broader: str | None, rule: str, evidence=None, sentence=None) -> None:
        if broader is None or broader == narrower or not _compatible(type_of[narrower], type_of[broader]):
            return
        evidence = evidence or first_mention.get(narrower) or _evidence_below(narrower, links, first_mention)
        if evidence is None:
            return
        links.append(Relation(narrower, "broader", broader, RULE_CONFIDENCE[rule], evidence, sentence, rule))

    # A name is a kind of what its last words name only when those are a name too: Wasserstein GAN is
    # a GAN, DCGAN a generative adversarial network; the Arcade Learning Environment is no "learning
    # environment", nor are Recurrent Highway Networks highway networks.
    for item in [*entities, *concepts]:
        if not is_acronym_like(item.label):
            for tail in _tails(item.key, named, _forms(item)):
                if (broader := find(tail)) is not None:
                    if not _is_title_name(item.label) or acronym_named(broader):
                        link(item.key, broader, "head")
                    break
    for entity in entities:
        for conjunct in _conjuncts(entity.key):
            link(entity.key, find(conjunct), "coordination")
        family = _FAMILY.match(entity.key) if is_acronym_like(entity.label) else None
        if family:
            link(entity.key, find(family.group(1)), "family")
    for item in [*entities, *concepts]:
        if pwc is not None and item.type == "Task":
            name = pwc.task(item.key)
            if name in pwc.parent:
                link(item.key, find(resolution_key(pwc.parent[name], name=True)), "pwc")
    # What sentences state ("X such as Y", "Y, a X") needs support where one sentence could mislead:
    # a pair stated both ways is neither, unless one way has more papers; and a name is made narrower
    # than one fewer papers mention ("backpropagation" under a VAE framework) only by two papers.
    entity_of = {ref: e.key for e in entities for ref in e.mentions}
    stated: dict[tuple[str, str], list] = defaultdict(list)
    for ex in extractions:
        for rule, narrower, broader, sentence in _sentence_patterns(ex):
            a, b = entity_of.get((ex.paper.id, narrower)), entity_of.get((ex.paper.id, broader))
            if a and b and a != b:
                stated[a, b].append((rule, (ex.paper.id, narrower), sentence))
    for (a, b), statements in sorted(stated.items()):
        support = len({evidence[0] for _, evidence, _ in statements})
        against = len({evidence[0] for _, evidence, _ in stated.get((b, a), ())})
        if support <= against:
            continue
        if support < MIN_SENTENCE_SUPPORT and len(papers_of.get(a, ())) > len(papers_of.get(b, ())):
            continue
        for rule, evidence, sentence in statements:
            link(a, b, rule, evidence, sentence)
    return Hierarchy(concepts, _acyclic(links))


def _tail_form(label: str, tail: str) -> str:
    """The tail of a label as written: "Mirror Flow Matching", "flow matching" -> "Flow Matching"."""
    n = len(tail.split())
    words = re.split(r"[\s\-_/]+", label)
    return " ".join(words[-n:]) if len(words) >= n else tail


def _may_be_concept(key: str) -> bool:
    words = key.split()
    return (len(words) >= 2 and words[0] not in _NOT_A_START) or key in _SINGLE_WORD_CONCEPTS


def _evidence_below(concept: str, links: list[Relation], first_mention: dict) -> tuple[str, int] | None:
    """A concept has no mention of its own: its evidence is a mention of a name narrower than it."""
    return next((first_mention[l.source] for l in links if l.target == concept and l.source in first_mention), None)


def _sentence_patterns(ex: PaperExtraction):
    """(rule, narrower mention, broader mention, sentence) for "X such as Y, Z", "Y and other X", "Y, a X"."""
    text = ex.paper.abstract
    mentions = sorted(range(len(ex.mentions)), key=lambda i: ex.mentions[i].start)
    for position, (a, b) in enumerate(zip(mentions, mentions[1:])):
        first, second = ex.mentions[a], ex.mentions[b]
        if first.sentence != second.sentence:
            continue
        between = text[first.end:second.start]
        for pattern, rule, narrower in _PATTERNS:
            if rule == "apposition" and _LIST_GOES_ON.match(text[second.end:]):
                continue  # "a classifier, a discriminator, and a generator": a list, no apposition
            if rule == "such-as" and not _ends_plural(first.text):
                continue  # "regularizers such as dropout"; not "the VAE framework, including backpropagation"
            if pattern.match(between):
                if narrower == "second":
                    yield rule, b, a, first.sentence
                    # "X such as Y, Z and W": the rest of the list too
                    previous = second
                    for c in mentions[position + 2:]:
                        nxt = ex.mentions[c]
                        if nxt.sentence != first.sentence or not re.fullmatch(r"\s*(?:,|,?\s*and|,?\s*or)\s*", text[previous.end:nxt.start]):
                            break
                        yield rule, c, a, first.sentence
                        previous = nxt
                else:
                    yield rule, a, b, first.sentence
                break


def _acyclic(links: list[Relation]) -> list[Relation]:
    """Links in rule order, each kept unless it repeats one or closes a cycle."""
    import networkx as nx  # here, not with the module: kg related reads only its threshold, and networkx takes 80 ms to load

    order = {rule: i for i, rule in enumerate(RULES)}
    graph = nx.DiGraph()
    kept, seen = [], set()
    for relation in sorted(links, key=lambda r: (order[r.rule], r.source, r.target)):
        pair = (relation.source, relation.target)
        if pair in seen:
            if relation.rule in RULES[4:]:  # another sentence stating it: more evidence
                kept.append(relation)
            continue
        if graph.has_node(relation.target) and graph.has_node(relation.source) and nx.has_path(graph, relation.target, relation.source):
            continue
        graph.add_edge(*pair)
        seen.add(pair)
        kept.append(relation)
    return sorted(kept, key=lambda r: (r.source, r.target, r.rule))


def papers_reached(entities: list[Entity], links: list[Relation]) -> dict[str, set[str]]:
    """Each entity's papers with those of every entity narrower than it (``skos:broader*``)."""
    narrower: dict[str, set[str]] = defaultdict(set)
    for l in links:
        narrower[l.target].add(l.source)
    own = {e.key: {pid for pid, _ in e.mentions} for e in entities}
    reached: dict[str, set[str]] = {}

    def visit(key: str, path: frozenset) -> set[str]:
        if key in reached:
            return reached[key]
        papers = set(own.get(key, ()))
        for child in narrower.get(key, ()):
            if child not in path:
                papers |= visit(child, path | {key})
        reached[key] = papers
        return papers

    for key in own:
        visit(key, frozenset())
    return reached


def salience(entity: Entity, reached: int, proposed: bool) -> float:
    """How much an entity matters to a reader: papers that reach it (log scale), plus one if a paper
    proposes or introduces it, plus a half if its name is written as a name (capitals, digits).
    An entity below ``SALIENCE_THRESHOLD`` (one paper, a plain phrase, not proposed) is hidden by default.

    >>> from kg.model import Entity
    >>> salience(Entity("analytical model", "Method", "analytical model", [], []), 1, False)
    1.0
    >>> salience(Entity("grpo", "Method", "GRPO", [], []), 1, True)
    2.5
    """
    named = any(c.isupper() or c.isdigit() for c in entity.label[1:])
    return round(math.log2(1 + reached) + (1.0 if proposed else 0.0) + (0.5 if named else 0.0), 3)


def annotate(entities: list[Entity], links: list[Relation], extractions: list[PaperExtraction],
             pwc: Lexicon | None = None) -> dict[str, dict]:
    """Graph node attributes by entity key: ``reach`` (papers reached, :func:`papers_reached`),
    ``salience`` (:func:`salience`), and for Papers with Code names ``pwc`` and a task's ``area``."""
    reached = papers_reached(entities, links)
    proposed = set()
    entity_of = {ref: e.key for e in entities for ref in e.mentions}
    for ex in extractions:
        for index, mention in enumerate(ex.mentions):
            if mention.role in ("proposes", "introduces") and (ex.paper.id, index) in entity_of:
                proposed.add(entity_of[(ex.paper.id, index)])
    attributes = {}
    for entity in entities:
        reach = len(reached.get(entity.key, ()))
        data = {"reach": reach, "salience": salience(entity, reach, entity.key in proposed)}
        name = pwc.match(entity.type, entity.key) if pwc is not None else None
        if name:
            data["pwc"] = name
            if entity.type == "Task" and name in pwc.area:
                data["area"] = pwc.area[name]
        attributes[entity.key] = data
    return attributes
