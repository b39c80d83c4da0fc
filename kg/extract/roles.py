"""What the paper does with each mention it names: proposes, uses, evaluates on, compares with.

``proposed_tokens`` reads which words of an abstract describe what the paper
itself puts forward ("we propose X", "a method we call X"); ``role_of`` tells
one mention's role from them and from comparison words; ``settle_proposals``
settles the roles across the abstract; ``unnamed_proposals`` finds the new
names no rule of :mod:`.rules` found in those words. One paper, no corpus-wide
state.
"""
from __future__ import annotations

from spacy.tokens import Doc, Span, Token

from .. import lexicon
from ..keys import singular
from ..vocab import ACTOR_TYPES, DEFAULT_ROLE, NEW_ROLE
from .candidate import Candidate
from .abbreviations import find_abbreviations
from .rules import described_as_dataset, looks_like_name, type_of_name


_PROPOSE_FORMS = {form for verb in lexicon.PROPOSE_VERBS
                  for form in (verb, verb + "s", verb + "es", verb + "d", verb + "ed",
                               (verb[:-1] if verb.endswith("e") else verb) + "ing")}  # "introducing"
#: The roles of a paper towards what it puts forward.
_NEW_ROLES = set(NEW_ROLE.values()) | {"proposes"}
# Where the description of a proposed thing ends: a clause, a purpose, a preposition.
_REGION_STOP = {"that", "which", "who", "whose", "where", "to", "for", "with", "by", "in", "on", "via", "between",
                "using", "through", "from", "into", "towards", "toward", "across", "under", "while"}


def _self_claim_verbs(doc: Doc):
    """Proposing verbs whose subject is the paper: "we (further) propose", "this work introduces",
    "we tackle X and present", "by introducing X, we".

    Read from the surface, not the parse: the small English parser often tags
    "present" in "... and present RADAR" as an adjective.
    """
    for token in doc:
        if token.lower_ not in _PROPOSE_FORMS:
            continue
        before = [t for t in doc[max(token.sent.start, token.i - 4) : token.i]
                  if t.pos_ not in ("ADV", "AUX", "PART") and t.lower_ not in ("also", "further", "then", "here")]
        if before and _is_self(before[-1]):
            yield token
        elif before and before[-1].lower_ == "and" and any(_is_self(t) for t in doc[token.sent.start : token.i]):
            yield token
        elif before and before[-1].lower_ == "by" and token.lower_.endswith("ing") \
                and any(t.lower_ == "we" for t in token.sent):
            yield token  # "By introducing X, we prove ...", "we extend IDP by proposing X": what "we" introduce


def _is_self(token: Token) -> bool:
    if token.lower_ == "we":
        return True
    previous = token.doc[token.i - 1] if token.i > 0 else None
    return token.lemma_.lower() in lexicon.SELF_SUBJECTS and previous is not None and previous.lower_ in ("this", "our")


def _object_region(doc: Doc, verb: Token, limit: int = 30) -> set[int]:
    """Token indices of what follows a proposing verb, up to the first clause or preposition."""
    region: set[int] = set()
    i = verb.i + 1
    end = min(verb.sent.end, verb.i + 1 + limit)
    depth = 0
    while i < end:
        token = doc[i]
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            in_compound = doc[i - 1].text == "-" or (i + 1 < len(doc) and doc[i + 1].text == "-")  # "end-to-end"
            if token.lower_ in _REGION_STOP and not in_compound and doc[i - 1].lower_ not in ("together", "along"):
                break
            if token.text in (".", ";") or (token.pos_ == "VERB" and token.tag_ not in ("VBN", "VBG")):
                break
            if token.tag_ == "VBG" and doc[i - 1].text == ",":
                break  # ", comprising ..."
        region.add(i)
        i += 1
    return region


#: What a paper calls its own work before naming it: "our approach, calibrated Q-learning (Cal-QL), ...".
_OWN_WORK = {"approach", "method", "framework", "model", "algorithm", "system", "technique", "architecture",
             "benchmark", "dataset"}


def _named_own_work(doc: Doc) -> set[int]:
    """Tokens of the name set off by commas after "our approach," (or method, framework ...), its
    bracketed acronym included: "Our approach, calibrated Q-learning (Cal-QL), accomplishes ...";
    not a phrase of another kind there ("Our model, trained on ImageNet, reaches ...")."""
    tokens: set[int] = set()
    for token in doc[: len(doc) - 3]:
        if token.lower_ != "our" or doc[token.i + 1].lemma_.lower() not in _OWN_WORK or doc[token.i + 2].text != ",":
            continue
        name, depth, closed = [], 0, False
        for t in doc[token.i + 3 : min(token.i + 15, token.sent.end)]:
            depth += (t.text == "(") - (t.text == ")")
            if depth == 0 and t.text == ",":
                closed = True
                break
            name.append(t)
        if closed and name and name[0].pos_ not in ("DET", "PRON", "ADV", "ADP") and name[0].tag_ != "VBN" \
                and not any(t.lower_ in _REGION_STOP or t.tag_ in ("VBZ", "VBP", "MD") or t.text in (";", ".")
                            for t in name):
            tokens |= {t.i for t in name}
    return tokens


def proposed_tokens(doc: Doc) -> set[int]:
    """Tokens of what the paper says it introduces: "we propose X", "this work introduces X", "dubbed X"."""
    tokens: set[int] = set()
    claims = list(_self_claim_verbs(doc))
    for verb in claims:
        region = _object_region(doc, verb)
        tokens |= region
        # "introduces X, a dataset of ..., and Y, a method for ..." or "..., together with a
        # framework, Y": a second named contribution in the same sentence.
        after = max(region, default=verb.i) + 1
        for token in doc[after : verb.sent.end - 1]:
            name = doc[token.i + 1]
            if token.lower_ == "and" and name.text[:1].isupper() and doc[min(name.i + 1, len(doc) - 1)].text in (",", "("):
                tokens |= _object_region(doc, token)
            elif token.lower_ == "with" and doc[token.i - 1].lower_ in ("together", "along"):
                tokens |= _object_region(doc, token)
    foundations = _foundations(doc, tokens)
    # "we propose a version of Adam with warm restarts (AdamWR)": where nothing else in the object
    # is a name, a name it defines under its "of", running on past the object's words, is the new
    # thing, not what it builds on ("a variant of generative adversarial nets (GANs)" stays GANs').
    if not any(looks_like_name(doc[i]) or doc[i].pos_ == "PROPN" for i in tokens - foundations):
        for short, long in find_abbreviations(doc):
            if any(t.i in foundations for t in long) and long.end < short.start and long.end - 1 not in tokens:
                foundations -= {t.i for t in long}
                tokens |= {t.i for t in long} | {t.i for t in short}
    tokens -= foundations
    tokens |= _named_own_work(doc)
    for verb in doc:
        if verb.lemma_.lower() in ("call", "dub", "term", "name", "abbreviate", "refer") and verb.pos_ == "VERB":
            # The name given to what the paper proposes: "an architecture called Hierarchical
            # Attentive Memory (HAM)", "our approach, called adaptive softmax", "we call it X"; not
            # "a method called dropout" at large.
            if not _names_our_work(verb, tokens, claims):
                continue
            # "called X", and "termed as X", "referred to as X": the object of "as".
            # "we call our method SimPO": the name, not the generic word before it ("npadvmod" where
            # the parser reads two objects).
            named = [c for c in verb.children if c.dep_ in ("oprd", "attr", "dobj", "npadvmod")
                     and not (c.dep_ == "dobj" and c.lemma_.lower() in lexicon.GENERIC_HEADS
                              and any(o.dep_ in ("oprd", "npadvmod") for o in verb.children))]
            named += [g for c in verb.children if c.dep_ == "prep" and c.lower_ == "as" for g in c.children
                      if g.dep_ == "pobj"]
            if verb.lemma_.lower() == "refer" and not any(c.lower_ == "as" for c in verb.children):
                continue  # "we refer to prior work"
            for obj in named:
                if obj.pos_ != "PRON":
                    # The name up to its head word, and an acronym bracketed after it.
                    tokens |= {t.i for t in doc[obj.left_edge.i : obj.i + 1] if t.pos_ not in ("DET", "PRON")}
                    if obj.i + 2 < len(doc) and doc[obj.i + 1].text == "(":
                        tokens.add(obj.i + 2)
            if verb.dep_ in ("acl", "relcl"):  # "a simple technique called X", "our GAN, which we termed X"
                tokens -= {t.i for t in doc[verb.head.left_edge.i : verb.head.i + 1]}
    for token in doc:  # "our proposed svdRNN method", "the proposed HexaConv"; not "the proposed GAN"
        following = doc[token.i + 1] if token.i + 1 < len(doc) else token
        if token.lower_ == "proposed" and token.i > 0 and doc[token.i - 1].lower_ in ("our", "the") \
                and looks_like_name(following) and not following.text.isupper():
            head = token.head if token.head.i > token.i else token
            tokens |= {t.i for t in doc[token.i + 1 : head.i + 1]}
    return tokens


def _names_our_work(verb: Token, proposed: set[int], claims: list[Token]) -> bool:
    """Whether a "called" / "named" names the paper's own contribution: it follows "we", qualifies
    "our approach", "this architecture" or "a new policy", or its sentence says the paper proposes."""
    if any(c.dep_ == "nsubj" and c.lower_ == "we" for c in verb.children) or verb.head.i in proposed:
        return True
    named = [verb.head] + [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]  # the parse varies
    if any(c.lower_ in ("our", "this", "these") or c.lower_ in lexicon.PAPER_RELATIVE
           for noun in named for c in noun.children):
        return True
    return any(claim.sent.start == verb.sent.start for claim in claims)


def _foundations(doc: Doc, region: set[int]) -> set[int]:
    """The words of a proposed object that name what the new thing is built on, not the new thing:
    what an "of" governs ("a variant of GANs", "a generalization of dropout", "our understanding of
    GANs"; but "the concept of a ∂NCM" is a ∂NCM) and a description set before or after the name
    ("a novel GAN, PreImageGAN", "IVE-GANs, a novel GAN framework")."""
    found = set()
    for i in region:
        token = doc[i]
        for _ in range(8):  # up the parse to the "of" above the word, or the proposing verb
            head = token.head
            if head is token or head.lemma_.lower() in lexicon.PROPOSE_VERBS:
                break
            if head.dep_ == "prep" and head.lower_ == "of" and head.head.lemma_.lower() not in lexicon.TRANSPARENT_HEADS:
                found.add(i)
                break
            token = head
    for i in sorted(region):
        comma = doc[i]
        if comma.text != "," or i + 1 >= len(doc) or not looks_like_name(doc[i + 1]):
            continue
        start = i - 1
        while start - 1 in region and doc[start - 1].text not in (",", ";", ":") and doc[start].lower_ not in ("a", "an"):
            start -= 1
        if doc[start].lower_ in ("a", "an"):  # "a novel GAN, PreImageGAN"; not "zoneout, a novel method"
            found |= set(range(start, i))
    # And one set after it: "IVE-GANs, a novel GAN framework", "the routing network paradigm, a novel
    # neural network and training algorithm": what the new thing is, not another new thing.
    for i in sorted(region):
        if doc[i].text != "," or i + 1 not in region or doc[i + 1].lower_ not in ("a", "an") or i - 1 not in region:
            continue
        end = i + 1
        while end in region and doc[end].text not in (",", ";", ":"):
            end += 1
        found |= set(range(i + 1, end))
    return found


def unnamed_proposals(doc: Doc, proposed: set[int], taken: set[int]) -> list[Candidate]:
    """Capitalised words in a proposed object that no rule found ("we propose Nüwa, a ... framework").

    The tagger often calls a new name an adjective ("Earth-Agent") or a noun ('termed as "WAGE"'),
    so a capitalised word right before a comma, colon, bracket or closing quote counts too.
    """
    found = []
    for i in sorted(proposed):
        token = doc[i]
        following = doc[i + 1].text if i + 1 < len(doc) else ""
        if (i in taken or not token.text[:1].isupper() or token.i == token.sent.start
                or token.dep_ == "compound" or token.lower_ in lexicon.EVALUATIVE
                or not (token.pos_ == "PROPN" or following in (",", ":", "(", "\"", "''"))):
            continue
        start = i
        while start - 1 in proposed and doc[start - 1].pos_ == "PROPN" and doc[start - 1].dep_ == "compound" \
                and start - 1 not in taken:
            start -= 1
        span = doc[start : i + 1]
        found.append(Candidate(span, _proposed_label(span), 0.75, "proposed-name"))
    return found


#: The kinds of thing a paper puts forward before naming it ("a novel framework ... The X framework");
#: "a toy problem", "a fast way", "generalization bounds" or "an alternate view" are none.
_CLAIMED_KINDS = set("""method approach framework algorithm model architecture technique network system loss
    objective regularizer regularization metric measure procedure scheme strategy mechanism module layer
    game estimator optimizer attack defense policy agent encoder decoder classifier generator parser
    representation embedding kernel unit cell operator criterion function approximation formulation
    extension modification variant generalization initialization parameterization heuristic pipeline
    dataset benchmark corpus environment suite testbed task""".split())


def name_later_proposals(doc: Doc, mentions: list[Candidate]) -> None:
    """Where an abstract proposes nothing by name where it claims it, the name it gives that kind of
    thing later is proposed: "We present a novel model for ... The Gated Multimodal Unit (GMU) model
    is ..." -> GMU. A description alone ("a novel framework for generating pop music") is no
    proposal: a reader looks for names."""
    if any(m.role in _NEW_ROLES for m in mentions):
        return
    for verb in _self_claim_verbs(doc):
        head = next((c for c in verb.children if c.dep_ in ("dobj", "attr") and c.pos_ in ("NOUN", "PROPN")), None)
        if head is None or singular(head.lower_) not in _CLAIMED_KINDS:
            continue
        named = _named_later(doc, mentions, head)
        if named:
            for mention in named:
                mention.role = NEW_ROLE.get(mention.label, "proposes")
            return


def _named_later(doc: Doc, mentions: list[Candidate], kind: Token) -> list[Candidate]:
    """The defined name an abstract gives the kind of thing it says it proposes, written with that
    kind word: "a novel model ..." then "The Gated Multimodal Unit (GMU) model" -> the name and its
    acronym; nothing when no such name follows the claim."""
    for long in (m for m in mentions if m.rule == "abbreviation-long" and m.span.start > kind.i):
        end = long.span.end
        if end + 3 < len(doc) and doc[end].text == "(" and doc[end + 2].text == ")" \
                and doc[end + 3].lemma_.lower() == kind.lemma_.lower():
            return [long] + [m for m in mentions if m.rule == "abbreviation-short" and m.span.start == end + 1]
    return []


def _proposed_label(span: Span) -> str:
    """Dataset when the name is described as "a benchmark"/"dataset", else what its spelling says, else Method."""
    if described_as_dataset(span):
        return "Dataset"
    return type_of_name(span.text) or "Method"


#: Rules whose spans are names: a name nested in one ("GRPO" in "Difficulty-Adaptive GRPO") is used, not proposed.
NAMED_RULES = {"abbreviation-long", "family", "name", "name-shape", "proposed-name"}


def is_name(mention: Candidate) -> bool:
    """Whether a mention is written as a name: by a naming rule, an acronym, a word spelt like a name
    ("PreImageGAN"), or capitalised words inside a sentence ("Neural Map", "Boundary Attack")."""
    span = mention.span
    if mention.rule in NAMED_RULES or mention.rule == "abbreviation-short" or any(looks_like_name(t) for t in span):
        return True
    words = [t for t in span if t.is_alpha and not t.is_stop]
    return span.start != span.sent.start and bool(words) and all(t.text[:1].isupper() for t in words)


#: Head words that say only what kind of thing a contribution is: "a sampling method".
_KIND_HEADS = set("""method approach framework algorithm model technique network scheme strategy system
    procedure mechanism module pipeline architecture""".split())


def _only_a_kind(mention: Candidate) -> bool:
    """Whether a phrase ends in a word for a kind of contribution ("kernel correction method")."""
    return singular(mention.span[-1].lower_) in _KIND_HEADS


def settle_proposals(mentions: list[Candidate]) -> None:
    """The roles of an abstract's mentions, each given by :func:`role_of`, settled across them.

    In an abstract that names what it proposes, only the names are proposed: the phrases describing
    them ("We propose IVE-GANs, a novel GAN framework", "We introduce a memory system ... called
    Neural Map") take their type's default role. An abstract proposing nothing by name keeps a
    phrase that may be the name it gives its work ("representation augmentation"), but not one
    that only says what kind of thing the work is ("a sampling method", "a heuristic algorithm",
    "an ODE-based recurrent model"): a description, not a name. And an acronym takes the role of
    the long form it defines: "Mixture of Experts Networks (MoEN)".
    """
    named = any(m.role in _NEW_ROLES and is_name(m) for m in mentions)
    for mention in mentions:
        if mention.role in _NEW_ROLES and not is_name(mention) and (named or _only_a_kind(mention)):
            mention.role = DEFAULT_ROLE.get(mention.label, "uses")
    long_forms = {m.span.end + 1: m for m in mentions if m.rule == "abbreviation-long"}  # "X (" -> X
    for mention in mentions:
        if mention.rule == "abbreviation-short" and mention.span.start in long_forms:
            mention.role = long_forms[mention.span.start].role


def is_compared(token: Token) -> bool:
    """Whether a mention is what something is compared with ("outperforms X", "the X baseline")."""
    current = token
    for _ in range(4):
        if current.lemma_.lower() in lexicon.COMPARE_WORDS and current is not token:
            return True
        if current.dep_ in ("prep",) and current.lower_ in ("than", "against", "versus", "over"):
            return True
        if current.head is current or current.dep_ in ("nsubj", "nsubjpass", "ROOT"):
            return False
        current = current.head
    return current.lemma_.lower() in lexicon.COMPARE_WORDS


def role_of(mention: Candidate, proposed: set[int], *, nested: bool = False) -> tuple[str, float]:
    """The paper's role for one mention, with a confidence.

    A name ``nested`` inside a longer proposed name ("GRPO" in "Difficulty-Adaptive
    GRPO") is what the new thing builds on, not the new thing. The roles of each type are
    ``kg.vocab.NEW_ROLE`` and ``DEFAULT_ROLE``; a label that is none of kg's types (SciERC's
    OtherScientificTerm, when ``kg eval scierc`` reads gold entities) is proposed or used.
    """
    span = mention.span
    if any(t.i in proposed for t in span) and not nested:
        return NEW_ROLE.get(mention.label, "proposes"), min(0.9, mention.confidence + 0.1)
    if mention.label in ACTOR_TYPES and is_compared(span.root):
        return "comparesWith", mention.confidence * 0.9
    return DEFAULT_ROLE.get(mention.label, "uses"), mention.confidence
