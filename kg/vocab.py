"""Namespaces, classes, properties and IRI minting: the Python mirror of ``ontology/kg.ttl``.

The entity types (:data:`TYPES`) and the relations (:data:`RELATION_TABLE`) are one table each:
every list of types, roles, colours and SciERC labels elsewhere is derived from them.
Every IRI the project writes is minted here. ``tests/test_vocab.py`` checks
that each term below is declared in the ontology with a label and a comment,
and that the ontology declares nothing this module does not know.

>>> entity_iri("https://example.org/kg/", "Method", "group relative policy optimization")
rdflib.term.URIRef('https://example.org/kg/method/group-relative-policy-optimization')
"""
from __future__ import annotations

import hashlib
import re
from importlib.resources import files
from typing import NamedTuple
from urllib.parse import quote

from rdflib import Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, VOID, XSD, DefinedNamespace

ONTOLOGY_FILE = files("kg.ontology") / "kg.ttl"
SHAPES_FILE = files("kg.ontology") / "shapes.ttl"

DEFAULT_BASE = "https://w3id.org/kg/id/"

SCHEMA = Namespace("https://schema.org/")
FABIO = Namespace("http://purl.org/spar/fabio/")
MLS = Namespace("http://www.w3.org/ns/mls#")
OA = Namespace("http://www.w3.org/ns/oa#")


class KG(DefinedNamespace):
    """The kg ontology. A closed namespace: a misspelt term fails at import."""

    _NS = Namespace("https://w3id.org/kg/ontology#")
    _fail = True

    # Classes
    Paper: URIRef  # a research paper known by its abstract
    Entity: URIRef  # anything a paper talks about: superclass of the entity types (TYPES) below
    Task: URIRef  # a problem to be solved ("visual grounding")
    Method: URIRef  # a technique, algorithm or architecture ("GRPO")
    Dataset: URIRef  # a named dataset or benchmark ("RULER")
    Metric: URIRef  # an evaluation measure ("accuracy")
    Model: URIRef  # a named (pre)trained model or family ("LLaMA-3-8B")
    Statement: URIRef  # an extracted edge with its evidence
    Sentence: URIRef  # a sentence of an abstract: the evidence statements and results point to
    Cooccurrence: URIRef  # the papers an entity shares with a task or dataset, counted
    TaskNeighbour: URIRef  # one of the methods sharing the most tasks with a method, and how many
    SimilarPaper: URIRef  # one of the papers most similar to a paper, with its scores
    Evaluation: URIRef  # a method evaluated on a dataset, with the results it reached there
    Result: URIRef  # a score a paper reports, with its metric, dataset and subject
    Extractor: URIRef  # the software that made a statement

    # Paper -> entity roles
    mentions: URIRef  # superproperty of every role
    proposes: URIRef
    introduces: URIRef
    addresses: URIRef
    uses: URIRef
    evaluatesOn: URIRef
    measures: URIRef
    comparesWith: URIRef

    # Entity -> entity relations
    variantOf: URIRef
    usedFor: URIRef
    evaluatedOn: URIRef
    benchmarkFor: URIRef
    trainedOn: URIRef
    evaluates: URIRef
    partOf: URIRef
    hyponymOf: URIRef
    comparedWith: URIRef
    outperforms: URIRef
    listedWith: URIRef

    # Results
    reports: URIRef  # paper -> result
    value: URIRef
    previousValue: URIRef
    unit: URIRef
    resultKind: URIRef
    setting: URIRef
    onDataset: URIRef
    ofMetric: URIRef
    achievedBy: URIRef

    # Data properties
    venue: URIRef
    definitionSource: URIRef
    decision: URIRef
    sourceFile: URIRef
    sourceLine: URIRef
    paperCount: URIRef
    confidence: URIRef
    lookupKey: URIRef
    cooccurrence: URIRef
    cooccursWith: URIRef
    taskNeighbour: URIRef
    neighbour: URIRef
    similarPaper: URIRef
    evaluation: URIRef
    proposerCount: URIRef
    resultCount: URIRef
    evaluationOn: URIRef
    evaluationResult: URIRef
    similarTo: URIRef
    similarity: URIRef
    wordSimilarity: URIRef
    entitySimilarity: URIRef
    meaningSimilarity: URIRef
    sharedTaskCount: URIRef
    version: URIRef
    salience: URIRef
    paperCountWithNarrower: URIRef
    researchArea: URIRef

    # Publishing
    currentBuild: URIRef


class EntityType(NamedTuple):
    """One entity type: a row of :data:`TYPES`."""

    name: str  # its class, kg:NAME
    role: str  # a paper's role towards a mention of it that nothing in the sentence marks otherwise
    new_role: str  # a paper's role towards one of its own ("we propose X", "we introduce a benchmark")
    actor: bool  # whether it acts: is applied, varied, compared, evaluated and achieves results
    scierc: str  # SciERC's label for it: what extraction reads and evaluation scores it as
    colour: str  # its colour in the explorer's graph and legend (Okabe-Ito, readable by colour-blind people)


#: The entity types, one row each, in the order every list shows them. Every list of types in
#: kg and viz is derived from here; ``tests/test_vocab.py`` checks the ontology, the shapes, the
#: page and the SciERC readers against it. (A type also needs its class in ``KG`` above, in
#: ``ontology/kg.ttl`` and its shapes in ``ontology/shapes.ttl``.)
TYPES = (
    #          name       role           new role      actor  SciERC      colour
    EntityType("Task",    "addresses",   "proposes",   False, "Task",     "#E69F00"),
    EntityType("Method",  "uses",        "proposes",   True,  "Method",   "#0072B2"),
    EntityType("Dataset", "evaluatesOn", "introduces", False, "Material", "#009E73"),
    EntityType("Metric",  "measures",    "proposes",   False, "Metric",   "#CC79A7"),
    EntityType("Model",   "uses",        "proposes",   True,  "Method",   "#D55E00"),
)

ENTITY_TYPES = tuple(t.name for t in TYPES)
#: The types that act (methods and models): what a paper applies, compares and reports results of.
ACTOR_TYPES = frozenset(t.name for t in TYPES if t.actor)
#: A paper's role towards a mention that no cue marks otherwise, by type.
DEFAULT_ROLE = {t.name: t.role for t in TYPES}
#: A paper's role towards a mention of its own new one, by type.
NEW_ROLE = {t.name: t.new_role for t in TYPES}
#: The colour of each type in the explorer.
COLOURS = {t.name: t.colour for t in TYPES}

#: SciERC's entity types (Luan et al. 2018), in the order the span model's classes follow.
SCIERC_TYPES = ("Task", "Method", "Metric", "Material", "OtherScientificTerm", "Generic")
#: SciERC's relation types, in the order the span model's classes follow.
SCIERC_RELATIONS = ("USED-FOR", "EVALUATE-FOR", "HYPONYM-OF", "PART-OF", "COMPARE", "CONJUNCTION", "FEATURE-OF")
#: SciERC's relation types that go both ways.
SCIERC_SYMMETRIC = frozenset({"COMPARE", "CONJUNCTION"})
#: Our types as SciERC's: a Dataset is a SciERC Material, a Model a Method. Evaluation scores with it.
KG_TO_SCIERC = {t.name: t.scierc for t in TYPES}
#: SciERC's labels as ours: each as the first type of the table with that label (a SciERC Method
#: is a Method, made a Model by its spelling). OtherScientificTerm and Generic ("this method") have none.
#: The command that answers about an entity of each type: where a name of the wrong type is sent
#: ("kg compare ImageNet": a Dataset, whose scores kg leaderboard lists).
COMMAND_OF = {"Task": "kg compare", "Dataset": "kg leaderboard", "Method": "kg related", "Model": "kg related",
              "Metric": "kg explain"}
#: The span model's second layer (kg's annotated abstracts): classes of methods and tasks, as kg's types.
LAYER2_TYPES = {"MethodClass": "Method", "TaskClass": "Task"}
SCIERC_TO_KG = {scierc: next(t.name for t in TYPES if t.scierc == scierc)
                for scierc in SCIERC_TYPES if any(t.scierc == scierc for t in TYPES)}

def role_towards(role: str, label: str, entity_type: str) -> str:
    """The role a paper has towards an entity of ``entity_type``, told by a mention typed ``label``:
    where resolution gave the entity another type than the mention's, a role that only followed
    from the mention's type follows from the entity's (a mention read as a Task "addresses" it; the
    entity is a Method, so the paper "uses" it).

    >>> role_towards("addresses", "Task", "Method"), role_towards("proposes", "Method", "Dataset")
    ('uses', 'introduces')
    >>> role_towards("comparesWith", "Method", "Task"), role_towards("evaluatesOn", "Dataset", "Dataset")
    ('addresses', 'evaluatesOn')
    """
    if label == entity_type or label not in DEFAULT_ROLE or entity_type not in DEFAULT_ROLE:
        return role
    if role == NEW_ROLE[label]:
        return NEW_ROLE[entity_type]
    if role == DEFAULT_ROLE[label] or (role == "comparesWith" and entity_type not in ACTOR_TYPES):
        return DEFAULT_ROLE[entity_type]
    return role


#: Paper -> entity roles, strongest claim first: when one mention could take
#: several roles, the first in this order wins.
ROLES = ("proposes", "introduces", "evaluatesOn", "comparesWith", "measures", "addresses", "uses")


class RelationType(NamedTuple):
    """One entity -> entity relation: a row of :data:`RELATION_TABLE`."""

    name: str  # its property, kg:NAME
    subjects: frozenset[str]  # the entity types it goes from
    objects: frozenset[str]  # the entity types it goes to
    scierc: str | None  # SciERC's relation it is read from and scored as (None: SciERC has none)
    swap: bool  # whether SciERC's arguments go the other way round (its EVALUATE-FOR goes from the dataset)
    scier: tuple[str, ...]  # SciER's relations it is read from, head and tail in our order


#: The relations, one row each, in the order lists show them; the shapes say the same. variantOf
#: is read from names across a corpus, not from one sentence; listedWith from how a sentence lists
#: names (:func:`kg.link.relations.listed_relations`); SciERC's CONJUNCTION and FEATURE-OF are not read, and SciER's Synonym-Of is no relation but evidence that two names are one
#: entity (:data:`SCIER_SYNONYM`).
RELATION_TABLE = tuple(RelationType(name, frozenset(subjects), frozenset(objects), scierc, swap, scier)
                       for name, subjects, objects, scierc, swap, scier in (
    #  name            subjects                    objects                     SciERC          swap   SciER
    ("variantOf",      ACTOR_TYPES,                ACTOR_TYPES,                None,           False, ()),
    ("usedFor",        ACTOR_TYPES | {"Dataset"},  {"Task", "Method"},         "USED-FOR",     False, ("Used-For",)),
    ("evaluatedOn",    ACTOR_TYPES,                {"Dataset"},                "EVALUATE-FOR", True,  ("Evaluated-With",)),
    ("benchmarkFor",   {"Dataset"},                {"Task"},                   None,           False, ("Benchmark-For",)),
    ("trainedOn",      ACTOR_TYPES,                {"Dataset"},                None,           False, ("Trained-With",)),
    ("evaluates",      {"Metric"},                 ACTOR_TYPES | {"Task"},     "EVALUATE-FOR", False, ()),
    ("partOf",         ACTOR_TYPES,                ACTOR_TYPES,                "PART-OF",      False, ("Part-Of",)),
    ("hyponymOf",      ENTITY_TYPES,               ENTITY_TYPES,               "HYPONYM-OF",   False, ("SubClass-Of", "SubTask-Of")),
    ("comparedWith",   ACTOR_TYPES,                ACTOR_TYPES,                "COMPARE",      False, ("Compare-With",)),
    ("outperforms",    ACTOR_TYPES,                ACTOR_TYPES,                "COMPARE",      False, ("Compare-With",)),
    ("listedWith",     ENTITY_TYPES,               ENTITY_TYPES,               None,           False, ()),
))

#: SciER's relation types (Zhang et al. 2024), most frequent in train first: the order of the span
#: model's relation classes. Synonym-Of is the one that says two names are one entity.
SCIER_RELATIONS = ("Used-For", "Part-Of", "Synonym-Of", "Compare-With", "Evaluated-With", "SubClass-Of",
                   "Benchmark-For", "Trained-With", "SubTask-Of")
SCIER_SYNONYM = "Synonym-Of"
#: SciER's relations as ours: the first row of the table that reads each (Compare-With is
#: comparedWith; outperforms, a narrower comparison, is scored as one).
SCIER_TO_KG = dict(reversed([(scier, r.name) for r in RELATION_TABLE for scier in r.scier]))

#: Entity -> entity relations.
RELATIONS = tuple(r.name for r in RELATION_TABLE)

#: The relations with no direction: written once per pair (from the smaller key), read both ways
#: (owl:SymmetricProperty in the ontology).
SYMMETRIC_RELATIONS = frozenset({"listedWith"})

#: Which entity types each relation links (subject types, object types).
RELATION_TYPES = {r.name: (r.subjects, r.objects) for r in RELATION_TABLE}

#: Our relations as SciERC's, and whether the arguments swap.
SCIERC_RELATION = {r.name: (r.scierc, r.swap) for r in RELATION_TABLE if r.scierc}

#: The hierarchy: ``skos:broader`` links from a name to a broader concept (see :mod:`kg.link.concepts`),
#: kept beside the relations in the graph under this key.
BROADER = "broader"

#: Every entity -> entity link the graph may hold: the relations and the hierarchy.
LINKS = RELATIONS + (BROADER,)

NAMESPACES = {
    "kg": KG._NS,
    "dcterms": DCTERMS,
    "skos": SKOS,
    "prov": PROV,
    "oa": OA,
    "schema": SCHEMA,
    "fabio": FABIO,
    "mls": MLS,
    "owl": OWL,
    "rdf": RDF,
    "rdfs": RDFS,
    "xsd": XSD,
    "void": VOID,
}


def class_iri(type_name: str) -> URIRef:
    """The ontology class of an entity type or of ``Paper``."""
    return KG[type_name]


def role_iri(role: str) -> URIRef:
    """The property of a paper -> entity role such as ``"proposes"``."""
    if role not in ROLES:
        raise ValueError(f"Unknown role {role!r}; expected one of {', '.join(ROLES)}.")
    return KG[role]


def relation_iri(relation: str) -> URIRef:
    """The property of an entity -> entity relation such as ``"variantOf"``."""
    if relation not in RELATIONS:
        raise ValueError(f"Unknown relation {relation!r}; expected one of {', '.join(RELATIONS)}.")
    return KG[relation]


def link_iri(link: str) -> URIRef:
    """The property of an entity -> entity link: a relation (:func:`relation_iri`) or ``skos:broader``."""
    return SKOS.broader if link == BROADER else relation_iri(link)


def _slug(key: str) -> str:
    # Keys use single spaces between words; hyphens read better in IRIs, and
    # quote() makes anything else (quotes, slashes, unicode) IRI-safe.
    return quote(key.replace(" ", "-"), safe="-._~")


def entity_node(type_name: str, key: str) -> str:
    """The id of a resolved entity, from its type and resolution key: the graph's node, the
    explorer's and the server's URLs all name it so, and its IRI is the base followed by it.

    >>> entity_node("Method", "group relative policy optimization")
    'method/group-relative-policy-optimization'
    """
    return f"{type_name.lower()}/{_slug(key)}"


def paper_node(paper_id: str) -> str:
    """The id of a paper, from its stable id (see :func:`entity_node`).

    >>> paper_node('a "quoted"/id')
    'paper/a%20%22quoted%22%2Fid'
    """
    return f"paper/{quote(paper_id, safe='-._~')}"


#: What a node id starts with, before its slash: ``paper`` or an entity type in lower case.
NODE_KINDS = ("paper", *(type_name.lower() for type_name in ENTITY_TYPES))


def node_of_iri(iri: str) -> str:
    """The node id an IRI minted here ends with: its last two segments (an id's second part
    never holds a slash).

    >>> node_of_iri(str(entity_iri("https://example.org/kg/", "Task", "visual grounding")))
    'task/visual-grounding'
    """
    return "/".join(iri.rsplit("/", 2)[-2:])


def entity_iri(base: str, type_name: str, key: str) -> URIRef:
    """The IRI of a resolved entity, from its type and resolution key."""
    return URIRef(base + entity_node(type_name, key))


def paper_iri(base: str, paper_id: str) -> URIRef:
    """The IRI of a paper, from its stable id.

    >>> paper_iri("https://example.org/kg/", 'a "quoted"/id')
    rdflib.term.URIRef('https://example.org/kg/paper/a%20%22quoted%22%2Fid')
    """
    return URIRef(base + paper_node(paper_id))


def statement_iri(base: str, paper_id: str, role: str, key: str, start: int) -> URIRef:
    """The IRI of the evidence node behind one paper -> entity edge."""
    digest = hashlib.sha1(f"{paper_id}\x1f{role}\x1f{key}\x1f{start}".encode()).hexdigest()[:16]
    return URIRef(f"{base}statement/{digest}")


def result_iri(base: str, paper_id: str, start: int) -> URIRef:
    """The IRI of the result a paper reports with its value at character ``start`` of the abstract."""
    digest = hashlib.sha1(f"{paper_id}\x1fresult\x1f{start}".encode()).hexdigest()[:16]
    return URIRef(f"{base}result/{digest}")


#: Linked Papers With Code: the Papers with Code tasks, datasets and metrics as IRIs (skos:exactMatch targets).
LPWC = "https://linkedpaperswithcode.com/"
_PARENTHESES = re.compile(r"\s*\([^)]*\)")


def lpwc_iri(kind: str, name: str) -> str:
    """The Linked Papers With Code IRI of a ``kind`` ("task", "dataset", "metric", "area") named ``name``,
    derived from the name as Papers with Code derives it.

    >>> lpwc_iri("task", "Visual Question Answering (VQA)")
    'https://linkedpaperswithcode.com/task/visual-question-answering'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", _PARENTHESES.sub("", name).lower()).strip("-")
    return f"{LPWC}{kind}/{slug}"


def extractor_iri(base: str, name: str) -> URIRef:
    """The IRI of an extractor, e.g. ``rules/1``."""
    return URIRef(f"{base}extractor/{quote(name, safe='-._~')}")


def selector_iri(statement: URIRef | str) -> URIRef:
    """The IRI of the oa:TextPositionSelector of a statement or result: a fragment of its IRI
    rather than a blank node, so exports compare and round-trip triple for triple.

    >>> selector_iri("https://example.org/kg/statement/3827a9d4cae9c1c7")
    rdflib.term.URIRef('https://example.org/kg/statement/3827a9d4cae9c1c7#pos')
    """
    return URIRef(f"{statement}#pos")


def sentence_iri(base: str, paper_id: str, index: int) -> URIRef:
    """The IRI of sentence ``index`` (from 0) of a paper's abstract: a fragment of the paper's IRI.

    >>> sentence_iri("https://example.org/kg/", "p1", 2)
    rdflib.term.URIRef('https://example.org/kg/paper/p1#sentence-2')
    """
    return URIRef(f"{paper_iri(base, paper_id)}#sentence-{index}")


def evaluation_iri(entity: URIRef | str, dataset_node: str) -> URIRef:
    """The IRI of the node that links ``entity``, evaluated on the dataset whose node id is
    ``dataset_node``, to the results it reached there: a fragment of the entity's IRI.

    >>> evaluation_iri("https://example.org/kg/method/grpo", "dataset/gsm8k")
    rdflib.term.URIRef('https://example.org/kg/method/grpo#e-462d6a9d74')
    """
    return URIRef(f"{entity}#e-{hashlib.sha1(dataset_node.encode()).hexdigest()[:10]}")


def cooccurrence_iri(entity: URIRef | str, other_node: str) -> URIRef:
    """The IRI of the node counting the papers ``entity`` shares with the task or dataset whose
    node id is ``other_node``: a fragment of the entity's IRI, short (one per pair adds up).

    >>> cooccurrence_iri("https://example.org/kg/method/grpo", "task/reasoning")
    rdflib.term.URIRef('https://example.org/kg/method/grpo#c-813305e0b7')
    """
    return URIRef(f"{entity}#c-{hashlib.sha1(other_node.encode()).hexdigest()[:10]}")


def similar_iri(paper: URIRef | str, rank: int) -> URIRef:
    """The IRI of the ``rank``-th (from 0) of the papers most similar to ``paper``: a fragment of its IRI.

    >>> similar_iri("https://example.org/kg/paper/p1", 0)
    rdflib.term.URIRef('https://example.org/kg/paper/p1#s0')
    """
    return URIRef(f"{paper}#s{rank}")


def neighbour_iri(method: URIRef | str, rank: int) -> URIRef:
    """The IRI of the ``rank``-th (from 0) of the methods sharing the most tasks with ``method``:
    a fragment of the method's IRI.

    >>> neighbour_iri("https://example.org/kg/method/grpo", 0)
    rdflib.term.URIRef('https://example.org/kg/method/grpo#n0')
    """
    return URIRef(f"{method}#n{rank}")


#: The named graph kg publish loads the ontology and its SHACL shapes into: the ontology's own IRI.
ONTOLOGY_GRAPH = URIRef(str(KG._NS).rstrip("#"))


def catalog_graph(base: str) -> URIRef:
    """The named graph recording, for each published graph, its current build."""
    return URIRef(f"{base}graph/")


def published_graph_iri(base: str, name: str) -> URIRef:
    """The IRI of the graph ``name`` as published (kg publish), whatever its build.

    >>> published_graph_iri("https://example.org/kg/", "iclr")
    rdflib.term.URIRef('https://example.org/kg/graph/iclr')
    """
    return URIRef(f"{base}graph/{quote(name, safe='-._~')}")


def build_graph_iri(base: str, name: str, stamp: str) -> URIRef:
    """The named graph holding one build of the published graph ``name``, ``stamp`` telling builds apart.

    >>> build_graph_iri("https://example.org/kg/", "iclr", "20261201T101500Z")
    rdflib.term.URIRef('https://example.org/kg/graph/iclr/build/20261201T101500Z')
    """
    return URIRef(f"{published_graph_iri(base, name)}/build/{stamp}")


def lookup_key(name: str) -> str:
    """A name as ``kg:lookupKey`` holds it: what SPARQL's ``LCASE`` makes of it, so that a query
    finds ``GAN`` from ``gan`` with an index lookup.

    >>> lookup_key("Group Relative Policy Optimization")
    'group relative policy optimization'
    """
    return name.lower()
