"""Resolve: mentions from every paper in, one ``Entity`` per real-world thing out.

Two mentions are the same entity when their resolution keys
(:func:`kg.keys.resolution_key`) are equal (case, plural, hyphens and
evaluative words ignored), or when one is an acronym that a paper defines
as the other: "LLMs", "LLM", "large language models" and "Large Language
Models (LLMs)" become one entity. An acronym is
resolved through the definition in its own paper; in a paper that does not
define it, through the corpus's definition when the corpus agrees on one, so
two papers defining the same acronym differently never merge.
"""
from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence

from .. import lexicon
from ..keys import ACRONYM_PLURAL, is_acronym_like, is_generic_key, resolution_key, singular
from ..model import Entity, PaperExtraction
from ..strings import counted
from ..vocab import ACTOR_TYPES

_QUANTITY = re.compile(r"^~?\d+(?:[.,]\d+)?\s*[a-z%]{0,6}$", re.I)  # "1Gbps", "~3x", "16k"
_FUNCTION_WORDS = frozenset("of for to with and or the a an in on by from as at than that which".split())


def is_junk(form: str) -> bool:
    """Whether a surface form is a broken span rather than a name: unbalanced brackets
    ("Navigation(VLN"), a dangling hyphen ("BLAST-") or function word ("sentiment analysis of"),
    a quantity ("1Gbps", "~3x"), an idiom ("much attention").

    >>> [is_junk(f) for f in ("Navigation(VLN", "BLAST-", "understanding of", "1Gbps", "CIFAR-10", "GPT-4 (0613)")]
    [True, True, True, True, False, False]
    """
    form = form.strip()
    if form.count("(") != form.count(")") or form.count("[") != form.count("]"):
        return True
    if form[:1] in "-–/" or form[-1:] in "-–/" or _QUANTITY.match(form):
        return True
    words = form.split()
    return len(words) > 1 and (words[-1].lower() in _FUNCTION_WORDS or words[0].lower() in _FUNCTION_WORDS - {"a", "an", "the"}
                               or words[0].lower() in lexicon.IDIOM_STARTS)


def spelling_variants(extractions: Iterable[PaperExtraction]) -> dict[str, str]:
    """Keys the corpus writes with or without spaces and hyphens ("variational auto encoder",
    "variational autoencoder") -> the one it writes most: one name, one entity.

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "Auto-encoders, autoencoders and an autoencoder"
    >>> mentions = [Mention(0, 13, "Auto-encoders", "Method", 0, 0.9, "t"), Mention(15, 27, "autoencoders", "Method", 0, 0.9, "t"),
    ...             Mention(35, 46, "autoencoder", "Method", 0, 0.9, "t")]
    >>> spelling_variants([PaperExtraction(Paper("p", text), [(0, 46)], mentions, {})])
    {'auto encoder': 'autoencoder'}
    """
    written: Counter = Counter()
    for ex in extractions:
        written.update(resolution_key(m.text) for m in ex.mentions)
        written.update(resolution_key(long, name=True) for long in ex.acronyms.values())
    by_spelling: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for key, count in written.items():
        by_spelling[key.replace(" ", "")].append((count, key))
    canonical = {}
    for variants in by_spelling.values():
        _, best = max(variants)  # the most written; on a tie, a fixed choice
        canonical.update((key, best) for _, key in variants if key != best)
    return canonical


def acronym_definitions(extractions: Iterable[PaperExtraction],
                        variants: dict[str, str] | None = None) -> dict[str, Counter]:
    """For each acronym key, how many papers define it as each long-form key (spelling
    ``variants`` of a long form counted as one)."""
    variants = variants or {}
    definitions: dict[str, Counter] = defaultdict(Counter)
    for ex in extractions:
        for short, long in ex.acronyms.items():
            key = resolution_key(long, name=True)
            definitions[resolution_key(short)][variants.get(key, key)] += 1
    return definitions


def corpus_meaning(counts: Counter) -> str | None:
    """The long form the corpus agrees on: the only one, or one given by at least 3 in 4 definitions."""
    (best, n), *rest = counts.most_common()
    if not rest or n >= 3 * sum(c for _, c in rest):
        return best
    return None


def same_sense(a: str, b: str) -> bool:
    """Whether two long-form keys of one acronym name one thing: equal once a generic last word
    is dropped, one the other's first words, or spelt alike ("temporal difference" and "temporal
    differencing"). "distance metric learning" and "deep metric learning" are two senses of DML.

    >>> same_sense("long short term memory", "long short term memory network"), same_sense("stochastic gradient decent", "stochastic gradient descent")
    (True, True)
    >>> same_sense("distance metric learning", "deep metric learning"), same_sense("gaussian process", "general purpose")
    (False, False)
    """
    def core(key: str) -> list[str]:
        words = key.split()
        while len(words) > 1 and (words[-1] in lexicon.GENERIC_HEADS or words[-1] in lexicon.NAME_DESCRIPTORS):
            words.pop()
        return words
    x, y = core(a), core(b)
    shorter, longer = sorted((x, y), key=len)
    if longer[: len(shorter)] == shorter and len(shorter) >= 2:
        return True
    return len(x) == len(y) and difflib.SequenceMatcher(None, " ".join(x), " ".join(y)).ratio() >= 0.9


def acronym_senses(definitions: dict[str, Counter]) -> dict[str, str]:
    """Each long-form key -> the key of its sense: the most used of the long forms of one
    acronym that :func:`same_sense` joins, so that a few papers spelling a long form their own
    way do not split the acronym's entity."""
    canonical: dict[str, str] = {}
    for counts in definitions.values():
        senses: list[list[str]] = []
        for key, _ in counts.most_common():
            sense = next((s for s in senses if same_sense(s[0], key)), None)
            if sense is None:
                senses.append([key])
            else:
                sense.append(key)
        for first, *others in senses:
            canonical.update((other, first) for other in others if canonical.get(other, first) == first)
    return canonical


#: Single words that name a method or task on their own ("attention", "dropout", "classifier"),
#: so that "attention mechanism" is attention; an acronym counts through the long form it resolves to.
_ONE_WORD_NAMES = (lexicon.METHOD_HEADS | lexicon.TASK_HEADS) - lexicon.GENERIC_HEADS \
    | {resolution_key(name) for name in lexicon.METHOD_NAMES}


#: Languages a dataset's name may open with and still be that dataset ("English PTB").
_LANGUAGES = frozenset("english chinese german french spanish japanese arabic russian".split())


def head_variants(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> dict[str, str]:
    """Keys that are another key of the corpus followed by a word saying what kind of thing it is,
    -> that key: "penn treebank dataset" is Penn Treebank, "batch normalization layer" batch
    normalization, "attention mechanism" attention; only where the shorter name is a name of the
    corpus and most often of the same type ("language model" is no "language").

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "attention, an attention mechanism and a language model of language"
    >>> ms = [Mention(0, 9, "attention", "Method", 0, 0.9, "t"), Mention(14, 33, "attention mechanism", "Method", 0, 0.9, "t"),
    ...       Mention(40, 54, "language model", "Method", 0, 0.9, "t"), Mention(58, 66, "language", "Task", 0, 0.9, "t")]
    >>> head_variants([PaperExtraction(Paper("p", text), [(0, 66)], ms, {})], {})
    {'attention mechanism': 'attention'}
    """
    types, written = _key_types(extractions, names)
    acronyms = {key for key, forms in written.items() if any(is_acronym_like(f) for f in forms)}  # "GAN models" is GAN
    found = {}
    for key, counts in types.items():
        words = key.split()
        if len(words) < 2 or words[-1] not in lexicon.KIND_WORDS:
            continue
        rest = words[:-1]
        if rest[-1].endswith(lexicon.ADJECTIVE_ENDINGS):
            continue  # "convolutional system", "goal oriented setting": what is left describes, names nothing
        shorter = names.get(" ".join(rest), " ".join(rest))
        if len(rest) == 1 and rest[0] not in _ONE_WORD_NAMES and rest[0] not in acronyms:
            continue  # "linear layer", "order optimizer": one plain word is rarely the thing itself
        if shorter in types and not is_generic_key(shorter) \
                and types[shorter].most_common(1)[0][0] == counts.most_common(1)[0][0]:
            found[key] = shorter
    return found


def language_variants(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> dict[str, str]:
    """Keys of datasets named with their language -> the dataset: "english ptb" is PTB, "english
    wikipedia" Wikipedia; only where the rest is a dataset of the corpus.

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "PTB and the English PTB"
    >>> ms = [Mention(0, 3, "PTB", "Dataset", 0, 0.9, "t"), Mention(12, 23, "English PTB", "Dataset", 0, 0.9, "t")]
    >>> language_variants([PaperExtraction(Paper("p", text), [(0, 23)], ms, {})], {})
    {'english ptb': 'ptb'}
    """
    types, _ = _key_types(extractions, names)
    found = {}
    for key, counts in types.items():
        words = key.split()
        rest = names.get(" ".join(words[1:]), " ".join(words[1:]))
        if len(words) > 1 and words[0] in _LANGUAGES and counts.most_common(1)[0][0] == "Dataset" \
                and rest in types and types[rest].most_common(1)[0][0] == "Dataset":
            found[key] = rest
    return found


#: Each name of a metric -> its canonical metric's key (:data:`kg.lexicon.METRIC_VARIANTS`).
METRIC_NAMES = {resolution_key(name): resolution_key(metric) for metric, names in lexicon.METRIC_VARIANTS.items()
                for name in names if resolution_key(name) != resolution_key(metric)}


METRIC_LABELS = {resolution_key(metric): metric for metric in lexicon.METRIC_VARIANTS}

#: Each known alias's key -> the key of the name it stands for (:data:`kg.lexicon.KNOWN_ALIASES`).
ALIAS_NAMES = {resolution_key(alias): resolution_key(name) for alias, name in lexicon.KNOWN_ALIASES.items()
               if resolution_key(alias) != resolution_key(name)}


def corpus_names(extractions: list[PaperExtraction], *, synonyms: bool = True,
                 reasons: dict[str, str] | None = None) -> dict[str, str]:
    """Each key -> the key of the entity the corpus means by it: a spelling variant its most
    written spelling (:func:`spelling_variants`), a metric's name its canonical metric, a name
    with a word for its kind the name (:func:`head_variants`), a dataset named with its language
    the dataset (:func:`language_variants`), a long form of an acronym the most
    used long form of its sense (:func:`acronym_senses`), an acronym the long form the corpus
    agrees on (none when papers disagree) or, where no paper defines it, the one name it spells
    (:func:`spelled_out`), a name with an acronym in it the name spelt out (:func:`acronyms_in_names`),
    and, with ``synonyms``, names enough papers call one thing
    (:func:`join_synonyms`). ``reasons``, when given, receives each joined key's reason."""
    reasons = {} if reasons is None else reasons

    def add(found: dict[str, str], reason: str, *, keep: bool = False) -> None:
        for key, target in found.items():
            if keep and key in names:
                continue
            names[key] = target
            reasons[key] = reason

    names: dict[str, str] = {}
    add(spelling_variants(extractions), "spelling")
    add(METRIC_NAMES, "metric")
    for key in METRIC_LABELS:  # a canonical metric is itself, however the corpus spells it most
        names.pop(key, None)
    add(ALIAS_NAMES, "known alias", keep=True)
    add(head_variants(extractions, names), "kind word")
    definitions = acronym_definitions(extractions, names)
    senses = acronym_senses(definitions)
    add(senses, "acronym sense")
    for short, counts in definitions.items():
        merged: Counter = Counter()
        for key, n in counts.items():
            merged[senses.get(key, key)] += n
        meaning = corpus_meaning(merged)
        if meaning is not None:
            add({short: meaning}, "acronym defined")
    add(spelled_out(extractions, names), "initials", keep=True)
    add(acronyms_in_names(extractions, _followed(names)), "acronym spelt out in a name", keep=True)
    add(metrics_in_settings(extractions, _followed(names)), "metric in a setting", keep=True)
    add(language_variants(extractions, _followed(names)), "language", keep=True)  # after acronyms: "English PTB"
    names = _followed(names)  # "gan model" -> "gan" -> "generative adversarial network"
    if not synonyms:
        return names
    joined = join_synonyms(extractions, names)
    for key in joined.keys() - names.keys():
        reasons[key] = "stated synonym"
    return joined


def _followed(names: dict[str, str]) -> dict[str, str]:
    """``names`` with each chain of keys followed to its end (a cycle stops where it closes)."""
    out = {}
    for key in names:
        seen, target = {key}, names[key]
        while target in names and target not in seen:
            seen.add(target)
            target = names[target]
        if target != key:
            out[key] = target
    return out


def _key_types(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> tuple[dict[str, Counter], dict[str, set[str]]]:
    """For each key, as ``names`` maps it, how often its mentions have each type; and for each key of a
    mention, the forms it is written in."""
    types: dict[str, Counter] = defaultdict(Counter)
    written: dict[str, set[str]] = defaultdict(set)
    for ex in extractions:
        for mention in ex.mentions:
            key = resolution_key(mention.text)
            types[names.get(key, key)][mention.label] += 1
            written[key].add(mention.text)
    return types, written


def _spelt_in_capitals(text: str) -> bool:
    """Whether a name opens with a word of capitals: "NMT", "KL divergence", "KL-divergence", "A3C"
    (a digit after a letter repeats it: Asynchronous Advantage Actor-Critic); not "CIFAR-10"."""
    first = (text.split() or [""])[0]
    if "-" in first and first.split("-", 1)[1].islower():
        first = first.split("-", 1)[0]  # "KL-divergence"
    return is_acronym_like(first) and first.isupper() and re.fullmatch(r"(?:[A-Z][2-9]?)+", first) is not None


def _initials(words: list[str]) -> str:
    return "".join(word[0] for word in words)


def _spelling_of(acronym_key: str) -> str:
    """The initials an acronym's key spells: "a3c" -> "aaac", "kl divergence" -> itself."""
    return re.sub(r"([a-z])([2-9])", lambda m: m.group(1) * int(m.group(2)), acronym_key)


def spelled_out(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> dict[str, str]:
    """Acronyms no paper of the corpus defines -> the one name of the corpus whose initials they are,
    of the same type: "NMT" is neural machine translation, "KL divergence" Kullback-Leibler
    divergence, "POS tagging" part-of-speech tagging; "RNN" stays itself where the corpus writes both
    recurrent and recursive neural networks.

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "NMT, neural machine translation, RNN, recurrent neural network, recursive neural network"
    >>> ms = [Mention(text.index(t), text.index(t) + len(t), t, "Method", 0, 0.9, "t")
    ...       for t in ("NMT", "neural machine translation", "RNN", "recurrent neural network", "recursive neural network")]
    >>> spelled_out([PaperExtraction(Paper("p", text), [(0, len(text))], ms, {})], {})
    {'nmt': 'neural machine translation'}
    """
    types, written = _key_types(extractions, names)
    acronyms = {key for key, forms in written.items() if key and any(_spelt_in_capitals(f) for f in forms)}
    spelling: dict[str, set[str]] = defaultdict(set)  # what a name's initials spell, with its last word or not
    for key in types:
        words = key.split()
        if len(words) < 2 or key in acronyms:
            continue
        spelling[_initials(words)].add(key)
        spelling[f"{_initials(words[:-1])} {words[-1]}"].add(key)  # "kl divergence"
        spelling[f"{_initials(words[:-1])}{words[-1]}"].add(key)  # "KL-divergence", keyed "kldivergence"
        if words[-1] in lexicon.KIND_WORDS and len(words) > 2:
            spelling[_initials(words[:-1])].add(key)  # "SNLI" for the Stanford ... inference dataset
    found = {}
    for short in acronyms - set(names):
        longs = {names.get(k, k) for k in spelling.get(_spelling_of(short), ())}
        if len(longs) == 1:
            [long] = longs
            if types[long].most_common(1)[0][0] == types[short].most_common(1)[0][0]:
                found[short] = long
    return found


def acronyms_in_names(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> dict[str, str]:
    """Names with an acronym among their words -> the same name with the acronym spelt out, where the
    corpus agrees on what the acronym means (``names`` maps it to its long form) and writes the spelt-out
    name too: "offline RL" is offline reinforcement learning, "multi-agent RL" multi-agent
    reinforcement learning, "equivariant GNNs" equivariant graph neural networks. A name the corpus
    never spells out is left as it is: this joins names, it never makes one.

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "offline RL, offline reinforcement learning, safe RL"
    >>> ms = [Mention(text.index(t), text.index(t) + len(t), t, "Method", 0, 0.9, "t")
    ...       for t in ("offline RL", "offline reinforcement learning", "safe RL")]
    >>> acronyms_in_names([PaperExtraction(Paper("p", text), [(0, len(text))], ms, {})], {"rl": "reinforcement learning"})
    {'offline rl': 'offline reinforcement learning'}
    """
    written = {resolution_key(m.text) for ex in extractions for m in ex.mentions}
    found = {}
    for key in written:
        words = key.split()
        if len(words) < 2 or key in names:
            continue
        for i, word in enumerate(words):
            long = names.get(word)
            if long is None or " " not in long:
                continue
            spelt = " ".join(words[:i] + [long] + words[i + 1:])
            target = names.get(spelt, spelt)
            if target in written and target != key:
                found[key] = target
                break
    return found


#: Settings whose words, before a metric, name a measure of their own: a quantization error, a
#: corruption error; and a thing whose own measure it is: an attack's success rate.
_OWN_MEASURES = {"quantized", "corrupted"}
_MEASURED_THING = {"attack", "attacks"}


def metrics_in_settings(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> dict[str, str]:
    """Metrics named with the setting they were measured in -> the metric: "zero-shot accuracy",
    "robust accuracy" and "linear probing accuracy" are accuracy, reached in a setting
    (:mod:`kg.extract.settings`, which reads it from the same words and keeps such a score on a board of
    its own). Only where what is left is a metric kg knows (:data:`kg.lexicon.METRIC_VARIANTS`).

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "zero-shot accuracy, robust training"
    >>> ms = [Mention(0, 18, "zero-shot accuracy", "Metric", 0, 0.9, "t"), Mention(20, 35, "robust training", "Method", 0, 0.9, "t")]
    >>> metrics_in_settings([PaperExtraction(Paper("p", text), [(0, len(text))], ms, {})], {})
    {'zero shot accuracy': 'accuracy'}
    """
    from ..extract.settings import setting_of

    types, _ = _key_types(extractions, names)
    found = {}
    for key, counts in types.items():
        words = key.split()
        if counts.most_common(1)[0][0] != "Metric" or len(words) < 2:
            continue
        for cut in range(1, min(len(words), 4)):
            rest = " ".join(words[cut:])
            rest = names.get(rest, rest)
            settings = set(setting_of(" ".join(words[:cut])).split(", ")) - {""}
            if rest in METRIC_LABELS and settings and not settings & _OWN_MEASURES and not _MEASURED_THING & set(words[:cut]):
                found[key] = rest
                break
    return found



#: How many papers must state that two names are one thing (``PaperExtraction.synonyms``) before
#: they become one entity: one sentence of one paper is not enough to join two names corpus-wide.
SYNONYM_PAPERS = 2


def stated_synonyms(extractions: Iterable[PaperExtraction], names: dict[str, str]) -> dict[tuple[str, str], set[str]]:
    """Pairs of entity keys (in order) -> the papers whose sentences state them one thing, between
    mentions of one type; ``names`` as :func:`corpus_names` gives them.

    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> text = "ResNet, also called residual networks"
    >>> ms = [Mention(0, 6, "ResNet", "Method", 0, 0.9, "t"), Mention(20, 37, "residual networks", "Method", 0, 0.9, "t")]
    >>> stated_synonyms([PaperExtraction(Paper("p", text), [(0, 37)], ms, {}, synonyms=[(0, 1, 0.9)])], {})
    {('residual network', 'resnet'): {'p'}}
    """
    stated: dict[tuple[str, str], set[str]] = defaultdict(set)
    for ex in extractions:
        for a, b, _ in ex.synonyms:
            first, second = ex.mentions[a], ex.mentions[b]
            keys = sorted({cluster_key(first.text, ex, names), cluster_key(second.text, ex, names)})
            if first.label == second.label and len(keys) == 2 and not any(is_generic_key(k) for k in keys):
                stated[tuple(keys)].add(ex.paper.id)
    return dict(stated)


def join_synonyms(extractions: list[PaperExtraction], names: dict[str, str]) -> dict[str, str]:
    """``names`` with the names that at least :data:`SYNONYM_PAPERS` papers state are one thing joined:
    each group of joined keys becomes the one of them with the most mentions."""
    stated = {pair: papers for pair, papers in stated_synonyms(extractions, names).items()
              if len(papers) >= SYNONYM_PAPERS}
    if not stated:
        return names
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for a, b in stated:
        parent.setdefault(a, a), parent.setdefault(b, b)
        parent[root(a)] = root(b)
    size = Counter(cluster_key(m.text, ex, names) for ex in extractions for m in ex.mentions)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in parent:
        groups[root(key)].append(key)
    into = {key: max(group, key=lambda k: (size[k], k)) for group in groups.values() for key in group}
    joined = {key: into.get(target, target) for key, target in names.items()}
    joined.update((key, target) for key, target in into.items() if key != target)
    return joined


def cluster_key(text: str, extraction: PaperExtraction, names: dict[str, str]) -> str:
    """The key of the entity a mention ``text`` of ``extraction``'s paper belongs to: an acronym
    resolves through its own paper's definition, else the corpus's (``names``, see
    :func:`corpus_names`), else its own key, written as the corpus writes it most."""
    if text in extraction.acronyms.values():  # the long form of an acronym this paper defines: a name
        key = resolution_key(text, name=True)
        return names.get(key, key)
    local = {resolution_key(short): resolution_key(long, name=True) for short, long in extraction.acronyms.items()}
    key = resolution_key(text)
    key = local.get(key) or key
    return names.get(key, key)


_KNOWN_METHODS = frozenset(resolution_key(name) for name in lexicon.METHOD_NAMES)  # Adam is no dataset ADAM


def resolve(extractions: list[PaperExtraction], *, known_datasets: Collection[str] = (),
            names: dict[str, str] | None = None) -> list[Entity]:
    """Group every mention of ``extractions`` into entities, largest first.

    ``known_datasets`` holds the keys of names known to be datasets (the build hands on
    :func:`kg.pwc.load`'s): a capitalised one is a dataset, whatever its sentences suggest.

    Example
    -------
    >>> from kg.model import Paper, Mention, PaperExtraction
    >>> def ex(pid, text, spans, acronyms=None):
    ...     ms = [Mention(text.index(s), text.index(s) + len(s), s, "Method", 0, 0.9, "t") for s in spans]
    ...     return PaperExtraction(Paper(pid, text), [(0, len(text))], ms, acronyms or {})
    >>> a = ex("a", "Large Language Models (LLMs) ...", ["Large Language Models", "LLMs"], {"LLMs": "Large Language Models"})
    >>> b = ex("b", "An LLM and large language models", ["LLM", "large language models"])
    >>> [(e.label, sorted(e.aliases), len(e.mentions)) for e in resolve([a, b])]
    [('LLM', ['LLM', 'LLMs', 'Large Language Models', 'large language models'], 4)]
    """
    names = corpus_names(extractions) if names is None else names
    clusters: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for ex in extractions:
        for index, mention in enumerate(ex.mentions):
            clusters[cluster_key(mention.text, ex, names)].append((ex.paper.id, index))

    by_paper = {ex.paper.id: ex for ex in extractions}
    entities = []
    for key, refs in clusters.items():
        if is_generic_key(key):
            continue
        refs = [(pid, i) for pid, i in refs if not is_junk(by_paper[pid].mentions[i].text)]
        if not refs:
            continue
        mentions = [by_paper[pid].mentions[i] for pid, i in refs]
        types: Counter = Counter()
        for m in mentions:
            types[m.label] += m.confidence
        forms = Counter(m.text for m in mentions)
        label = _preferred_label(forms)
        if lexicon.ORGANISMS.match(label):  # what the paper studies, not a method it uses
            continue
        type_ = "Metric" if lexicon.ASSAY_MEASURES.match(label) else types.most_common(1)[0][0]
        if type_ == "Metric" and key in METRIC_LABELS:
            label = METRIC_LABELS[key]  # "error", whether its papers write "test error rate" or "error rate"
        if (type_ in ACTOR_TYPES and key in known_datasets and key not in _KNOWN_METHODS
                and any(not f.islower() for f in forms)):
            type_ = "Dataset"  # Penn Treebank and SVHN are datasets, whatever a sentence suggests
        entities.append(Entity(key=key, type=type_, label=label,
                               aliases=sorted(forms), mentions=refs))
    entities.sort(key=lambda e: (-len({pid for pid, _ in e.mentions}), e.key))
    entities = merge_reorderings(entities)
    _distinct_labels(entities, by_paper)
    return entities


def merge_reorderings(entities: list[Entity]) -> list[Entity]:
    """Entities of one type whose labels have the same words and head in another order or spelling
    merged into the one in most papers (``entities`` is largest first): "benchmark image datasets" and
    "image benchmark datasets", "dialogue modelling" and "dialogue modeling", "training of neural
    networks" and "neural network training". "embedding layers" and "layer embeddings" have different
    heads; "attention-based memory model" and "memory-based attention model" different modifiers.

    >>> def entity(key, label, n):
    ...     return Entity(key, "Method", label, [label], [(f"p{i}", 0) for i in range(n)])
    >>> merged = merge_reorderings([entity("a", "benchmark image datasets", 3), entity("b", "image benchmark datasets", 1),
    ...                             entity("c", "embedding layers", 2), entity("d", "layer embeddings", 1)])
    >>> [(e.label, e.aliases, len(e.mentions)) for e in merged]
    [('benchmark image datasets', ['benchmark image datasets', 'image benchmark datasets'], 4), ('embedding layers', ['embedding layers'], 2), ('layer embeddings', ['layer embeddings'], 1)]
    """
    first: dict[tuple, Entity] = {}
    kept = []
    for entity in entities:
        bag = _word_bag(entity.label)
        into = first.get((entity.type, bag)) if bag else None
        # Labels with one key were kept apart on purpose (two senses of an acronym).
        if into is not None and resolution_key(into.label) != resolution_key(entity.label):
            into.aliases = sorted(set(into.aliases) | set(entity.aliases))
            into.mentions += entity.mentions
            continue
        if bag:
            first.setdefault((entity.type, bag), entity)
        kept.append(entity)
    return kept


def _word_bag(label: str) -> tuple | None:
    """A name's words in order-free form with its head (the word before "of", else the last), or
    None for fewer than two content words. "X-based" stays one word: it says which is the modifier."""
    words = [_spelling(w) for w in re.findall(r"[a-z0-9]+(?:-based)?", label.casefold())]
    head_at = words.index("of") - 1 if "of" in words[1:] else len(words) - 1
    content = sorted(w for w in words if w not in _FUNCTION_WORDS)
    return (words[head_at], *content) if len(content) >= 2 else None


def _spelling(word: str) -> str:
    """One spelling and number of a word: "modelling" and "modeling", "networks" and "network"."""
    word = singular(word)
    for british, american in (("lling", "ling"), ("isation", "ization"), ("ise", "ize"), ("our", "or")):
        if word.endswith(british) and len(word) > 5:  # not "four", "hour", "noise"
            return word[: -len(british)] + american
    return word


def _distinct_labels(entities: list[Entity], by_paper: dict[str, PaperExtraction]) -> None:
    """One label, one entity of a type: where two senses of an acronym share it ("GP" for
    Gaussian process and for general purpose), the entity in most papers keeps it and the others
    are labelled by their long form. Entities with no long form keep the label (the report lists them)."""
    by_label: dict[tuple[str, str], list[Entity]] = defaultdict(list)
    for entity in entities:  # largest first
        by_label[(entity.label.casefold(), entity.type)].append(entity)
    for (shared, _), (_, *others) in by_label.items():
        for entity in others:
            long_forms = Counter(text for text in (by_paper[pid].mentions[i].text for pid, i in entity.mentions)
                                 if not is_acronym_like(text) and text.casefold() != shared)
            if long_forms:
                entity.label = _preferred_label(long_forms)
            elif not is_acronym_like(entity.label):  # forms that all read as the other's name
                entity.label = entity.key


def shared_labels(entities: list[Entity]) -> dict[tuple[str, str], list[Entity]]:
    """Entities of one type that still share a label (see :func:`_distinct_labels`), by (label, type)."""
    by_label: dict[tuple[str, str], list[Entity]] = defaultdict(list)
    for entity in entities:
        by_label[(entity.label, entity.type)].append(entity)
    return {k: v for k, v in by_label.items() if len(v) > 1}


def _preferred_label(forms: Counter) -> str:
    """The most used name: acronyms counted with their plurals ("LLM" + "LLMs"), other forms
    ignoring case; an acronym wins a tie, since that is what users search for."""
    groups: Counter = Counter()
    spelling: dict[str, Counter] = {}
    for form, n in forms.items():
        if is_acronym_like(form):
            plural = ACRONYM_PLURAL.match(form)
            group = plural.group(1) if plural and plural.group(1) in forms else form
            shown = group
        else:
            group, shown = resolution_key(form), form
        groups[group] += n
        spelling.setdefault(group, Counter())[shown] += n
    best = max(groups, key=lambda g: (groups[g], is_acronym_like(g), -len(g)))
    # Ties go to the lower-case spelling: "Success Rate" is capitalised by a title or sentence start.
    # A form without an evaluative first word ("attention", not "much attention") names the thing.
    label = max(spelling[best], key=lambda f: (f.split()[0].casefold() not in lexicon.EVALUATIVE, spelling[best][f],
                                              f == f.lower() or is_acronym_like(f), -len(f)))
    first, _, rest = label.partition(" ")
    if rest and first[:1].isupper() and first[1:].islower() and rest == rest.lower():
        label = first.lower() + " " + rest  # "Diffusion models" opened a sentence
    return label


def resolution_report(entities: list[Entity], extractions: list[PaperExtraction], poor: Sequence[Entity] = ()) -> str:
    """A Markdown report of every merge, so wrong ones can be seen: clusters with more than one
    surface form, largest first, then acronyms the corpus defines in more than one way, and the
    ``poor`` nodes the judge of useful nodes left out (:func:`kg.resolve.useful.keep_useful`)."""
    by_paper = {ex.paper.id: ex for ex in extractions}
    lines = ["# Resolution report", "",
             f"{counted(len(entities), 'entity', 'entities')} from {counted(sum(len(e.mentions) for e in entities), 'mention')} "
             f"in {counted(len(extractions), 'paper')}.", "",
             "## Merged clusters (largest first)", "",
             "| entity | type | papers | mentions | surface forms (mentions) |", "|---|---|---|---|---|"]
    merged = [e for e in entities if len(e.aliases) > 1]
    for entity in merged:
        forms = Counter(by_paper[pid].mentions[i].text for pid, i in entity.mentions)
        papers = len({pid for pid, _ in entity.mentions})
        shown = ", ".join(f"{_md(f)} ({n})" for f, n in forms.most_common())
        lines.append(f"| {_md(entity.label)} | {entity.type} | {papers} | {len(entity.mentions)} | {shown} |")
    if not merged:
        lines.append("| (no merges) | | | | |")
    lines += ["", "## Names joined, and why", "",
              "Each key of a name resolution joined to another's: `spelling` (written with or without "
              "spaces and hyphens), `metric` (a name of a canonical metric), `kind word` (the name with a "
              "word for its kind), `acronym sense`, `acronym defined` (by the corpus's papers), `initials` "
              "(an acronym no paper defines, spelling the corpus's one name), `known alias` "
              "(`kg.lexicon.KNOWN_ALIASES`), `language` (a dataset named with its language), `stated synonym`.", ""]
    reasons: dict[str, str] = {}
    names = corpus_names(extractions, reasons=reasons)
    for key in sorted(reasons, key=lambda k: (names.get(k, k), k)):
        if key in names:
            lines.append(f"- `{_md(key)}` → `{_md(names[key])}`: {reasons[key]}")
    if not reasons:
        lines.append("(none)")
    lines += ["", "## Names stated to be one thing", "",
              f"Pairs a sentence calls one thing (the span model's Synonym-Of), joined where at least "
              f"{SYNONYM_PAPERS} papers say so.", ""]
    stated = stated_synonyms(extractions, corpus_names(extractions, synonyms=False))
    for (a, b), papers in sorted(stated.items(), key=lambda item: (-len(item[1]), item[0])):
        verdict = "joined" if len(papers) >= SYNONYM_PAPERS else "kept apart"
        lines.append(f"- `{_md(a)}` = `{_md(b)}`: {counted(len(papers), 'paper')} — {verdict}")
    if not stated:
        lines.append("(none)")
    lines += ["", "## Acronyms defined in more than one way", ""]
    conflicts = {short: counts for short, counts in acronym_definitions(extractions).items() if len(counts) > 1}
    for short, counts in sorted(conflicts.items()):
        meaning = corpus_meaning(counts)
        verdict = f"resolved to '{meaning}' where undefined" if meaning else "kept apart in every paper"
        lines.append(f"- `{short}`: " + "; ".join(f"'{_md(l)}' ({counted(n, 'paper')})" for l, n in counts.most_common()) + f" — {verdict}")
    if not conflicts:
        lines.append("(none)")
    lines += ["", "## Labels naming more than one entity of a type", "",
              "Bare uses of an acronym in papers that do not define it, where the corpus defines it in "
              "more than one way, stay apart from every definition.", ""]
    shared = shared_labels(entities)
    for (label, type_), same in sorted(shared.items()):
        lines.append(f"- `{_md(label)}` ({type_}): " + "; ".join(
            f"{e.key} ({len({pid for pid, _ in e.mentions})} papers)" for e in same))
    if not shared:
        lines.append("(none)")
    lines += ["", "## Poor nodes left out", "",
              "Entities the judge of useful nodes (`kg/resolve/useful.py`) scored below its threshold, that no "
              "paper proposes and no result names: their mentions add nothing to the graph.", ""]
    papers_of = {e.key: len({pid for pid, _ in e.mentions}) for e in poor}
    for entity in sorted(poor, key=lambda e: (-papers_of[e.key], e.label)):
        lines.append(f"- `{_md(entity.label)}` ({entity.type}, {counted(papers_of[entity.key], 'paper')})")
    if not poor:
        lines.append("(none)")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
