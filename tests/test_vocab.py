"""kg/vocab.py and ontology/kg.ttl must describe the same terms."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pyoxigraph as ox
import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH, XSD

from kg import vocab
from kg.vocab import KG

KG_TERMS = sorted(KG.__annotations__)
DECLARATIONS = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)


@pytest.fixture(scope="module")
def ontology() -> Graph:
    return Graph().parse(data=vocab.ONTOLOGY_FILE.read_text(encoding="utf-8"), format="turtle")


def test_ontology_parses_with_rdflib_and_pyoxigraph(ontology):
    triples = list(ox.parse(vocab.ONTOLOGY_FILE.read_bytes(), ox.RdfFormat.TURTLE))
    assert len(triples) == len(ontology) > 0
    assert (URIRef("https://w3id.org/kg/ontology"), RDF.type, OWL.Ontology) in ontology


def test_shapes_parse():
    shapes = Graph().parse(data=vocab.SHAPES_FILE.read_text(encoding="utf-8"), format="turtle")
    assert set(shapes.subjects(RDF.type, SH.NodeShape))


@pytest.mark.parametrize("term", KG_TERMS)
def test_every_vocab_term_is_declared_with_english_label_and_comment(ontology, term):
    iri = KG[term]
    assert set(ontology.objects(iri, RDF.type)) & set(DECLARATIONS), f"{iri} is not declared"
    for prop in (RDFS.label, RDFS.comment):
        values = list(ontology.objects(iri, prop))
        assert values and all(isinstance(v, Literal) and v.language == "en" for v in values), (iri, prop)


def test_ontology_uses_no_kg_term_unknown_to_vocab(ontology):
    used = {t for triple in ontology for t in triple if isinstance(t, URIRef) and t.startswith(KG._NS)}
    assert used, "the ontology uses no kg: term at all"
    assert used <= {KG[t] for t in KG_TERMS}, used - {KG[t] for t in KG_TERMS}


def test_properties_have_domain_and_range(ontology):
    for kind in (OWL.ObjectProperty, OWL.DatatypeProperty):
        for prop in ontology.subjects(RDF.type, kind):
            assert ontology.value(prop, RDFS.domain) is not None, prop
            assert ontology.value(prop, RDFS.range) is not None, prop


def test_entity_types_are_the_subclasses_of_entity(ontology):
    assert set(ontology.subjects(RDFS.subClassOf, KG.Entity)) == {KG[t] for t in vocab.ENTITY_TYPES}


def test_roles_are_the_subproperties_of_mentions(ontology):
    assert set(ontology.subjects(RDFS.subPropertyOf, KG.mentions)) == {KG[r] for r in vocab.ROLES}
    for role in vocab.ROLES:
        assert ontology.value(KG[role], RDFS.domain) == KG.Paper
        assert ontology.value(KG[role], RDFS.range) == KG.Entity


def test_numeric_ranges(ontology):
    assert ontology.value(KG.sourceLine, RDFS.range) == XSD.integer
    assert ontology.value(KG.paperCount, RDFS.range) == XSD.integer
    assert ontology.value(KG.confidence, RDFS.range) == XSD.decimal


def test_closed_namespace_rejects_a_misspelt_term():
    with pytest.raises(AttributeError):
        KG.propose  # noqa: B018


def test_role_iri_rejects_unknown_role():
    with pytest.raises(ValueError, match="'likes'"):
        vocab.role_iri("likes")


HOSTILE_KEYS = ['a "quoted" key', "a/b\\c", '"><img onerror=alert(1)>', "line\nbreak", "🚀 émoji", "#?%&", " "]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_minted_iris_are_valid_and_deterministic(key):
    base = "https://example.org/kg/"
    iris = [vocab.entity_iri(base, "Method", key), vocab.paper_iri(base, key),
            vocab.statement_iri(base, key, "uses", key, 3), vocab.extractor_iri(base, key)]
    iris += [vocab.selector_iri(iris[2]), vocab.sentence_iri(base, key, 2), vocab.cooccurrence_iri(iris[0], "task/x")]
    for iri in iris:
        ox.NamedNode(iri)  # raises ValueError on an invalid IRI
        assert iri.startswith(base)
    assert iris[0] == vocab.entity_iri(base, "Method", key)
    assert iris[2] == vocab.statement_iri(base, key, "uses", key, 3)


def test_distinct_keys_get_distinct_iris():
    base = "https://example.org/kg/"
    assert len({vocab.entity_iri(base, "Method", k) for k in HOSTILE_KEYS}) == len(HOSTILE_KEYS)
    assert len({vocab.paper_iri(base, k) for k in HOSTILE_KEYS}) == len(HOSTILE_KEYS)


def test_selector_and_sentence_iris_are_fragments_of_their_statement_and_paper():
    statement = vocab.statement_iri("https://example.org/kg/", "p1", "uses", "bert", 0)
    assert vocab.selector_iri(statement) == URIRef(f"{statement}#pos")
    paper = vocab.paper_iri("https://example.org/kg/", "a/b")
    assert vocab.sentence_iri("https://example.org/kg/", "a/b", 3) == URIRef(f"{paper}#sentence-3")


@pytest.mark.parametrize("relation", vocab.RELATIONS)
def test_the_shapes_allow_the_entity_types_relation_types_names(relation):
    shapes = Graph().parse(data=vocab.SHAPES_FILE.read_text(encoding="utf-8"), format="turtle")
    [shape] = shapes.subjects(SH.targetSubjectsOf, KG[relation])
    subjects, objects = set(), set()
    for prop in shapes.objects(shape, SH.property):
        path = shapes.value(prop, SH.path)
        if path == RDF.type:
            subjects = {str(t).rsplit("#", 1)[1] for t in shapes.items(shapes.value(prop, SH["in"]))}
        elif path == KG[relation]:
            classes = [shapes.value(prop, SH["class"])] if shapes.value(prop, SH["class"]) else [
                shapes.value(member, SH["class"]) for member in shapes.items(shapes.value(prop, SH["or"]))]
            objects = {str(c).rsplit("#", 1)[1] for c in classes}
    assert (subjects, objects) == vocab.RELATION_TYPES[relation]


# ------------------------------------------------- the table of types: every list derives from it

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def shapes() -> Graph:
    return Graph().parse(data=vocab.SHAPES_FILE.read_text(encoding="utf-8"), format="turtle")


def _names(terms) -> set[str]:
    return {str(term).rsplit("#", 1)[1] for term in terms}


def _property(shapes: Graph, shape, path) -> URIRef:
    """The property shape of ``shape`` on ``path`` (a predicate, or an RDF list of them)."""
    for prop in shapes.objects(shape, SH.property):
        found = shapes.value(prop, SH.path)
        if found == path or (isinstance(path, tuple) and tuple(shapes.items(found)) == path):
            return prop
    raise AssertionError(f"{shape} has no property shape on {path}")


def _classes(shapes: Graph, prop) -> set[str]:
    """The classes a property shape allows: its ``sh:in`` list, or its ``sh:or`` of ``sh:class``."""
    if shapes.value(prop, SH["in"]) is not None:
        return _names(shapes.items(shapes.value(prop, SH["in"])))
    return _names(shapes.value(member, SH["class"]) for member in shapes.items(shapes.value(prop, SH["or"])))


def test_the_table_has_one_row_per_type_with_known_roles_and_labels():
    assert len(set(vocab.ENTITY_TYPES)) == len(vocab.TYPES)
    for row in vocab.TYPES:
        assert {row.role, row.new_role} <= set(vocab.ROLES), row
        assert row.scierc in vocab.SCIERC_TYPES, row
        assert re.fullmatch(r"#[0-9A-F]{6}", row.colour), row
        assert hasattr(KG, row.name), f"{row.name} has a row but no class in kg.vocab.KG"
    assert len(set(vocab.COLOURS.values())) == len(vocab.TYPES), "two types share a colour"


def test_the_shapes_name_the_tables_types(shapes):
    kgsh = "https://w3id.org/kg/shapes#"
    entity, role_object, statement = (URIRef(kgsh + name) for name in ("EntityShape", "RoleObjectShape", "StatementShape"))
    every = set(vocab.ENTITY_TYPES)
    assert _names(shapes.objects(entity, SH.targetClass)) == every
    assert _classes(shapes, _property(shapes, entity, URIRef("http://www.w3.org/2004/02/skos/core#broader"))) == every
    assert _classes(shapes, _property(shapes, role_object, RDF.type)) == every
    assert _classes(shapes, _property(shapes, statement, (RDF.object, RDF.type))) == every
    # The actors: what a co-occurrence belongs to and a result is achieved by.
    [cooccurrence] = shapes.subjects(SH.targetObjectsOf, KG.cooccurrence)
    owner = next(p for p in shapes.objects(cooccurrence, SH.property) if shapes.value(shapes.value(p, SH.path), SH.inversePath))
    assert _classes(shapes, owner) == vocab.ACTOR_TYPES
    [result] = shapes.subjects(SH.targetClass, KG.Result)
    assert _classes(shapes, _property(shapes, result, (KG.achievedBy, RDF.type))) == vocab.ACTOR_TYPES


def test_the_shapes_name_the_tables_roles_and_relations(shapes):
    [statement] = shapes.subjects(SH.targetClass, KG.Statement)
    predicates = [shapes.value(prop, SH["in"]) for branch in shapes.items(shapes.value(statement, SH.xone))
                  for prop in shapes.objects(branch, SH.property) if shapes.value(prop, SH.path) == RDF.predicate]
    names = [{str(term).rsplit("#", 1)[-1].rsplit("/", 1)[-1] for term in shapes.items(listed)} for listed in predicates]
    assert names == [set(vocab.ROLES), {*vocab.RELATIONS, vocab.BROADER}]
    assert {shapes.value(shape, SH.targetSubjectsOf) for shape in shapes.subjects(SH.targetSubjectsOf, None)
            } >= {KG[relation] for relation in vocab.RELATIONS}


def test_the_ontologys_relations_are_the_tables(ontology):
    """Every sub-property of skos:related or skos:broader is a relation of the table, its domain and range
    kg:Entity or the one type the table names."""
    skos = "http://www.w3.org/2004/02/skos/core#"
    tops = {URIRef(skos + "related"), URIRef(skos + "broader")}
    relations = {p for p in ontology.subjects(RDF.type, OWL.ObjectProperty)
                 if set(ontology.transitive_objects(p, RDFS.subPropertyOf)) & tops}
    assert relations == {KG[relation] for relation in vocab.RELATIONS}
    for relation, (subjects, objects) in vocab.RELATION_TYPES.items():
        for prop, types in ((RDFS.domain, subjects), (RDFS.range, objects)):
            declared = ontology.value(KG[relation], prop)
            assert declared == KG.Entity or {declared} == {KG[t] for t in types}, (relation, prop, declared)


def test_the_scierc_readers_are_the_tables():
    from kg.evaluate import scierc
    from kg.extract import spans

    assert spans.ENTITY_LABELS == scierc.SCIERC_LABELS == vocab.SCIERC_TYPES
    assert spans.RELATION_LABELS == scierc.SCIERC_RELATIONS == vocab.SCIERC_RELATIONS
    assert spans.SYMMETRIC == scierc.SYMMETRIC == vocab.SCIERC_SYMMETRIC
    assert set(scierc.KG_LABELS) == set(vocab.KG_TO_SCIERC.values())
    # Read back, a SciERC label is a type SciERC calls so; Material is a Dataset, a Method a Method.
    assert all(vocab.KG_TO_SCIERC[kind] == label for label, kind in vocab.SCIERC_TO_KG.items())
    assert vocab.SCIERC_TO_KG == {"Task": "Task", "Method": "Method", "Metric": "Metric", "Material": "Dataset"}
    assert set(vocab.SCIERC_RELATION) < set(vocab.RELATIONS)
    assert {label for label, _ in vocab.SCIERC_RELATION.values()} <= set(vocab.SCIERC_RELATIONS)


def test_the_pages_legend_is_the_tables():
    """The committed sample page (tests/test_readme.py keeps it equal to a fresh build) draws every type."""
    html = (ROOT / "graphs" / "sample.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="kg-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    meta = data["explorer"]["meta"]
    assert [kind["name"] for kind in meta["kinds"]] == [*vocab.ENTITY_TYPES, "Paper"]
    assert data["explorer"]["tables"]["kinds"] == [*vocab.ENTITY_TYPES, "Paper"]
    for name, colour in vocab.COLOURS.items():
        assert meta["colours"][name] == colour
        assert data["options"]["groups"][name]["color"]["background"] == colour
        assert next(kind["colour"] for kind in meta["kinds"] if kind["name"] == name) == colour


def test_the_commands_and_the_query_page_offer_the_tables_types():
    from kg.query.commands import related

    [option] = [p for p in related.params if p.name == "entity_type"]
    assert tuple(option.type.choices) == vocab.ENTITY_TYPES
    assert vocab.NODE_KINDS == ("paper", *(vocab.entity_node(t, "x").split("/")[0] for t in vocab.ENTITY_TYPES))
    assert "view.node_kinds" in (ROOT / "viz" / "query.html").read_text(encoding="utf-8")


def _spelt_out(node: ast.AST) -> set[str] | None:
    """The strings of a literal set, tuple, list or dict (its keys) of strings, else None."""
    items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
    if not isinstance(node, (ast.Set, ast.Tuple, ast.List, ast.Dict)) or not items:
        return None
    if not all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items):
        return None
    return {item.value for item in items}


PYTHON = sorted(path for folder in ("kg", "viz") for path in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", PYTHON, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_but_vocab_spells_out_the_types_or_the_actors(path):
    if path == ROOT / "kg" / "vocab.py":
        return
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = _spelt_out(node)
        if names and (vocab.ACTOR_TYPES <= names or set(vocab.ENTITY_TYPES) <= names):
            raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno} spells out {sorted(names)}: "
                                 "derive it from kg.vocab (ENTITY_TYPES, ACTOR_TYPES, DEFAULT_ROLE, ...)")


def test_no_query_lists_the_types():
    for path in sorted((ROOT / "kg" / "query" / "rq").rglob("*.r[qu]")):
        named = set(re.findall(r"\bkg:(" + "|".join(vocab.ENTITY_TYPES) + r")\b", path.read_text(encoding="utf-8")))
        assert len(named) <= 1, f"{path.relative_to(ROOT)} lists the types {sorted(named)}: read ?type from the class"


def test_no_script_lists_the_types():
    """The pages name the types to their scripts (the explorer's legend and tables, the query page's node kinds)."""
    names = "|".join(t for name in vocab.ENTITY_TYPES for t in (name, name.lower()))
    listed = re.compile(rf"""["'`]({names})["'`]|\b({names})\|({names})\b""")
    for path in sorted((ROOT / "viz").rglob("*.js")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not listed.search(line), f"{path.relative_to(ROOT)}:{number} names an entity type: {line.strip()}"


def test_the_relations_without_a_direction_are_the_ontologys_symmetric_properties(ontology):
    symmetric = {str(p).rsplit("#", 1)[-1] for p in ontology.subjects(RDF.type, OWL.SymmetricProperty)}
    assert symmetric == set(vocab.SYMMETRIC_RELATIONS) == {"listedWith"}
