"""Queries: every SPARQL text kg runs, as ``.rq`` files, and the two ways Python completes one.

``kg/query/rq/*.rq`` are the example queries users run by name (``kg query
--example NAME``, the server's query page); each says what it answers in its
leading comments and names its parameters in ``# param: NAME (Type) = "example"``
lines (the type of entity the parameter names, and a value from the sample corpus).
A parameter is an entity's name, matched against ``kg:lookupKey`` (the names in
lower case, an index lookup): :meth:`Example.bind` binds it, in lower case, to
``?NAMEKey``, so that the query can answer the entity itself as ``?NAME`` and its
label as ``?NAMELabel``. Every entity or paper an example answers comes so, as
``?X`` with its label beside it as ``?XLabel`` (``skos:prefLabel`` of an entity,
``rdfs:label`` of a paper: its title, or its abstract's opening words), which is how
the query page links a label to the node's page in the explorer.
``kg/query/rq/views/*.rq`` are the queries behind kg's own commands and
pages (:func:`view`), and ``kg/query/rq/updates/*.ru`` the updates of ``kg publish``
(:func:`update`). Python never writes query text: values from users are
bound by substitution (:func:`kg.store.run_query`) or as a ``VALUES`` block of
terms written by pyoxigraph (:func:`with_values`), and lists of kg's own
classes and properties come from :mod:`kg.vocab` the same way.
"""
from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from importlib.resources import files

#: The folder of the SPARQL texts: the example queries, ``views/`` and ``updates/``.
TEXTS = files(__name__).joinpath("rq")


@dataclass
class Example:
    """A shipped example query: its name, what it answers, its parameters (each with an example
    value), the type of entity each parameter names (``param_types``), its text."""

    name: str
    description: str
    params: dict[str, str]
    text: str
    param_types: dict[str, str] = field(default_factory=dict)

    def bind(self, values: dict[str, str]) -> str:
        """The query with each parameter ``NAME`` bound, by a ``VALUES`` block on ``?NAMEKey``, to
        the name given for it in ``values`` (the example's own value for any left out), in lower
        case: parameters name entities, which the queries find through ``kg:lookupKey`` (an index
        lookup).

        >>> print(examples()["relations-of"].bind({"entity": "GRPO"}).splitlines()[4])
          VALUES ?entityKey { "grpo" }
        """
        import pyoxigraph as ox

        from ..vocab import lookup_key

        text = self.text
        for name, default in self.params.items():
            text = with_values(text, name + KEY_SUFFIX, ox.Literal(lookup_key(values.get(name, default))))
        return text

    def values_in(self, store, tries: int = 5, *, or_most_mentioned: bool = False) -> dict[str, str | None]:
        """For each parameter, a name of the graph in ``store`` to give as its example: of the
        ``tries`` entities of the parameter's type that most papers mention, specific names first
        (:func:`says_little`), the first for which the query answers (None where none does, or the
        graph has no entity of that type; with ``or_most_mentioned``, the first of them where none
        answers). A ``concept`` parameter is given a name others are narrower than, where the graph
        has one, so that its example shows the hierarchy at work. Thus ``kg query --list``, its
        errors and the query page cite names of the graph queried, not of the sample.
        """
        return chosen_value(self.choices(store, tries), or_most_mentioned=or_most_mentioned)

    def choices(self, store, tries: int = 5, *, ranked: dict | None = None) -> dict[str, list[str | None]]:
        """For each parameter, ``[the name for which the query answers, the first name tried]`` as
        :meth:`values_in` chooses them (None for none): what the build keeps beside a graph, so that
        ``kg serve`` does not ask the store again as it starts. ``ranked`` holds the names tried for
        each type, for the next example asked of the same store: ranking a type's entities reads
        every one of them, most of the time of asking every example."""
        from ..store import run_query

        ranked = {} if ranked is None else ranked
        chosen: dict[str, list[str | None]] = {}
        for name in self.params:
            chosen[name] = [None, None]
            key = (self.param_types.get(name, "Method"), name == "concept", tries)
            if key not in ranked:
                ranked[key] = _names_to_try(store, *key)
            candidates = ranked[key]
            if candidates:
                chosen[name][1] = candidates[0]
            for label in candidates:
                trial = {**{n: v for n, (v, _) in chosen.items() if v is not None}, name: label}
                if next(iter(run_query(store, self.bind(trial))), None) is not None:
                    chosen[name][0] = label
                    break
        return chosen


def _names_to_try(store, kind: str, concept: bool, tries: int) -> list[str]:
    """The ``tries`` names of ``kind`` an example tries, best first: for a ``concept`` parameter the
    names others are narrower than, where the graph has some; else those most papers mention, specific
    names first (:func:`says_little`)."""
    from ..store import run_query

    classes = kg_terms([kind])
    rows = list(run_query(store, with_values(view("top-concepts"), "class", *classes))) if concept else []
    if not rows:
        top = itertools.islice(run_query(store, with_values(view("top-entities"), "class", *classes)), 10 * tries)
        rows = sorted(top, key=lambda row: says_little(row["label"].value))  # a stable sort
    return [row["label"].value for row in rows[:tries]]


def chosen_value(choices: dict[str, list[str | None]], *, or_most_mentioned: bool = False) -> dict[str, str | None]:
    """Each parameter's example value of :meth:`Example.choices`: the name that answers, else (with
    ``or_most_mentioned``) the first name tried."""
    return {name: answers or (first if or_most_mentioned else None) for name, (answers, first) in choices.items()}


def kept_values(kept, example: Example, *, or_most_mentioned: bool = False) -> dict[str, str | None] | None:
    """``example``'s values (as :meth:`Example.values_in` gives them) from the choices a build kept in
    a graph's tables (``kept``: :func:`kg.query.tables.store_answers`'s ``examples``), or None where
    they are not there as a build writes them.

    >>> ex = examples()["methods-on-benchmark"]
    >>> kept_values({"methods-on-benchmark": {"benchmark": [None, "ImageNet"]}}, ex, or_most_mentioned=True)
    {'benchmark': 'ImageNet'}
    >>> kept_values({"methods-on-benchmark": {"benchmark": "ImageNet"}}, ex) is None
    True
    """
    choices = kept.get(example.name) if isinstance(kept, dict) else None
    if not (isinstance(choices, dict) and set(choices) == set(example.params) and all(
            isinstance(pair, list) and len(pair) == 2 and all(v is None or isinstance(v, str) for v in pair)
            for pair in choices.values())):
        return None
    return chosen_value(choices, or_most_mentioned=or_most_mentioned)


def says_little(label: str) -> bool:
    """Whether a name makes a poor example of a parameter's value: a class of things rather than
    one (:func:`kg.keys.is_category`: "neural networks", "classification"), or an acronym in the
    plural ("LLMs"). An example that every paper could be about shows nothing.

    >>> [says_little(label) for label in ("neural networks", "classification", "LLMs", "GRPO", "image classification")]
    [True, True, True, False, False]
    """
    from ..keys import ACRONYM_PLURAL, is_category

    return is_category(label) or ACRONYM_PLURAL.match(label) is not None


#: What a parameter's variable is called: ``?entityKey`` for the parameter ``entity``.
KEY_SUFFIX = "Key"


def examples() -> dict[str, Example]:
    """The example queries in ``kg/query/rq``, by name.

    >>> examples()["relations-of"].params
    {'entity': 'GRPO'}
    """
    found = {}
    for resource in sorted(TEXTS.iterdir(), key=lambda r: r.name):
        if not resource.name.endswith(".rq"):
            continue
        text = resource.read_text(encoding="utf-8")
        description = " ".join(m.group(1).strip() for m in re.finditer(r"^# (?!param:)(.*)$", text, re.M))
        declared = list(re.finditer(r"^# param: (\w+)(?: \((\w+)\))?\s*=\s*(.*)$", text, re.M))
        params = {m.group(1): m.group(3).strip().strip('"') for m in declared}
        types = {m.group(1): m.group(2) for m in declared if m.group(2)}
        name = resource.name[:-3]
        found[name] = Example(name, description, params, text, types)
    return found


@functools.cache
def view(name: str) -> str:
    """The text of ``kg/query/rq/views/NAME.rq``.

    >>> "SELECT" in view("paper-mentions")
    True
    """
    return TEXTS.joinpath("views", f"{name}.rq").read_text(encoding="utf-8")


@functools.cache
def update(name: str) -> str:
    """The text of the SPARQL Update ``kg/query/rq/updates/NAME.ru``, its comment lines left out.

    >>> update("point-to-build").split()[:2]
    ['DELETE', '{']
    """
    text = TEXTS.joinpath("updates", f"{name}.ru").read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def with_values(query: str, variable: str, *terms) -> str:
    """``query`` with ``VALUES ?variable { terms }`` opening its WHERE clause.

    This is how a query is made standalone (the example queries and a panel's
    query, shown to users with their values in place) and how lists of kg's
    own classes and properties reach a query: each term is written by
    pyoxigraph in N-Triples syntax, escapes included, never pasted in from text.

    >>> import pyoxigraph as ox
    >>> print(with_values("SELECT ?x WHERE { ?x ?p ?name }", "name", ox.Literal('a "b"')))
    SELECT ?x WHERE {
      VALUES ?name { "a \\"b\\"" }
     ?x ?p ?name }
    """
    # Comment lines may hold any text, braces and "where" included: look past them.
    masked = re.sub(r"(?m)^[ \t]*#[^\n]*", lambda comment: " " * len(comment.group()), query)
    match = re.search(r"\bWHERE\s*\{", masked, re.I) or re.search(r"\{", masked)
    if match is None:
        raise ValueError("The query has no WHERE clause to bind a value in.")
    values = " ".join(str(term) for term in terms)
    return f"{query[:match.end()]}\n  VALUES ?{variable} {{ {values} }}\n{query[match.end():]}"


def kg_terms(names) -> list:
    """kg's classes or properties named ``names`` (``"Method"``, ``"proposes"``), as terms for :func:`with_values`.

    >>> kg_terms(["Method"])
    [<NamedNode value=https://w3id.org/kg/ontology#Method>]
    """
    import pyoxigraph as ox

    from ..vocab import KG

    return [ox.NamedNode(str(KG[name])) for name in names]


def view_with(name: str, **values) -> str:
    """:func:`view` ``name`` with, for each keyword, a ``VALUES`` block of its terms.

    >>> print(view_with("index-roles", property=kg_terms(["proposes"])).splitlines()[4])
      VALUES ?property { <https://w3id.org/kg/ontology#proposes> }
    """
    text = view(name)
    for variable, terms in values.items():
        text = with_values(text, variable, *terms)
    return text
