"""Keys: the resolution key two surface forms of one thing share, and the tests on keys and forms.

The ground floor of resolution: :mod:`kg.resolve` groups mentions by these keys, and the stages
that look names up (:mod:`kg.pwc`, :mod:`kg.link.concepts`, :mod:`kg.link.relations`, :mod:`kg.query.lookup`)
key their names the same way, without importing the resolve stage.
"""
from __future__ import annotations

import functools
import re
import unicodedata

from . import lexicon

#: An acronym's plural: "LLMs" is the plural of "LLM".
ACRONYM_PLURAL = re.compile(r"^(.*[A-Z0-9])s$")
#: Words joined by hyphens around a small word, none an acronym: "Mixture-of-Experts" and
#: "Chain-of-Thought" are words (mixture of experts), where "E-GRPO", "Bi-LSTM" and "Android-World"
#: are one name each.
_WORDS_HYPHENATED = re.compile(r"[A-Z]?[a-z]{2,}(?:-[A-Z]?[a-z]+)*-(?:of|for|to|and|in|on|with|the|a|by|from)"
                               r"-[A-Z]?[a-z]+(?:-[A-Z]?[a-z]+)*")
#: The plural of a name whose last part is a word for a kind of network: "FocalNets", "ResNets".
NAME_PLURAL = re.compile(r"^(.*[a-z0-9](?:Net|Former|Mixer|Bert))s$")
_ADJECTIVE_ENDINGS = ("al", "ic", "ive", "ous", "ary", "ed", "ing", "ent", "ant", "ful", "less", "able", "ible")


def singular(word: str) -> str:
    """The singular of an English plural, by its ending; short words and "-ss", "-us", "-is", "-ics" are left.

    >>> [singular(w) for w in ("networks", "policies", "patches", "loss", "corpus", "gas")]
    ['network', 'policy', 'patch', 'loss', 'corpus', 'gas']
    """
    if len(word) <= 3 or word.endswith(("ss", "us", "is", "ics")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def is_acronym_like(text: str) -> bool:
    """A single word written with capitals or digits past its first letter: "GRPO", "E-GRPO", "CIFAR-10"."""
    return " " not in text and any(c.isupper() or c.isdigit() for c in text[1:])


@functools.lru_cache(maxsize=1 << 17)  # a corpus writes the same few forms over and over, and every stage keys them
def resolution_key(text: str, *, name: bool = False) -> str:
    """The key two surface forms share when they name the same thing.

    Leading evaluative words are dropped ("our efficient sampler" is "sampler"),
    unless the text is a ``name``, such as the long form an acronym stands for:
    "Efficient Neural Architecture Search (ENAS)" is not NAS.

    >>> resolution_key("Large Language Models") == resolution_key("large language model")
    True
    >>> resolution_key("LLMs"), resolution_key("E-GRPO"), resolution_key("CIFAR-10") == resolution_key("CIFAR10")
    ('llm', 'egrpo', True)
    >>> resolution_key("FocalNets") == resolution_key("FocalNet"), resolution_key("ResNets")
    (True, 'resnet')
    >>> resolution_key("question-answering"), resolution_key("Generative Adversarial Nets")
    ('question answering', 'generative adversarial network')
    >>> resolution_key("Mixture-of-Experts") == resolution_key("mixture of experts"), resolution_key("DALL·E 2") == resolution_key("DALL-E 2")
    (True, True)
    >>> resolution_key("Efficient Neural Architecture Search"), resolution_key("Efficient Neural Architecture Search", name=True)
    ('neural architecture search', 'efficient neural architecture search')
    """
    text = unicodedata.normalize("NFKC", text).replace("–", "-").replace("—", "-").replace("·", "-").strip()
    if is_acronym_like(text) and not _WORDS_HYPHENATED.fullmatch(text):
        plural = ACRONYM_PLURAL.match(text) or NAME_PLURAL.match(text)
        if plural and any(c.isupper() for c in plural.group(1)):
            text = plural.group(1)
        return re.sub(r"[-_.\s]", "", text).casefold() or text.casefold()
    words = re.sub(r"[-_/]", " ", text).casefold().split()
    while not name and len(words) > 1 and words[0] in lexicon.EVALUATIVE:
        words.pop(0)
    words = [re.sub(r"^[^\w]+|[^\w]+$", "", w) for w in words]
    words = [w for w in words if w]
    if words:
        words[-1] = singular(words[-1])
    # "the dropout algorithm" is dropout; "spectral method" and "learning algorithm" name no more than their head.
    if (not name and len(words) > 1 and words[-1] in lexicon.NAME_DESCRIPTORS
            and not (len(words) == 2 and words[0].endswith(_ADJECTIVE_ENDINGS))):
        words.pop()
    if len(words) > 1:  # "Generative Adversarial Nets" are networks
        words[-1] = lexicon.HEAD_SYNONYMS.get(words[-1], words[-1])
    return " ".join(words)


def is_generic_key(key: str) -> bool:
    """Whether a key names nothing in particular ("method", "our framework", "performance")."""
    # spaCy's stop words, imported where a build needs them: kg related, explain and serve use
    # resolution_key and must not pay spaCy's seconds of start-up.
    from spacy.lang.en.stop_words import STOP_WORDS

    return len(key) < 2 or all(w in lexicon.GENERIC_HEADS or w in lexicon.EVALUATIVE or w in STOP_WORDS
                               or singular(w) in lexicon.GENERIC_HEADS for w in key.split())


#: Last words of a class of methods rather than one: "model-free algorithms", "deep reinforcement
#: learning agent", "value functions". A plain phrase ending in one is a category, not a method one
#: can compare with (on the judged ICLR 2017/18 lists, 4 of 57 such answers were genuine).
_CLASS_HEADS = lexicon.KIND_WORDS | {"network", "net", "agent", "function", "learning"}


_KNOWN_METHODS = {name.casefold() for name in lexicon.METHOD_NAMES}


def is_category(label: str) -> bool:
    """Whether a label names a class of methods or a part of one rather than a method: a plain
    phrase (no capital or digit past its first letter) whose last word says what kind of thing it
    is, or one plain word that is no known method ("discriminator", "sampler"; not "dropout").

    >>> is_category("model-free algorithms"), is_category("deep reinforcement learning agent"), is_category("weight decay")
    (True, True, False)
    >>> is_category("actor-critic methods"), is_category("DQN agent"), is_category("Prototypical Networks")
    (True, False, False)
    >>> is_category("discriminator"), is_category("dropout")
    (True, False)
    """
    named = any(c.isupper() or c.isdigit() for c in label[1:]) or label.isupper()  # "GAN", "B"
    words = re.split(r"[\s\-/]+", label.casefold().strip())
    if named or not words:
        return False
    return singular(words[-1]) in _CLASS_HEADS or (len(words) == 1 and label.casefold() not in _KNOWN_METHODS)
