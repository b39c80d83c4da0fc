"""Lookup: which entity of a built graph a name typed by a person stands for.

``kg related GRPO``, ``kg explain E-GRPO GRPO`` and ``kg leaderboard RULER``
name entities by a label or alias; a name matches case-insensitively, and
through the resolution key (hyphens, plurals and evaluative words ignored),
so "group relative policy optimizations" finds GRPO. When several entities
share a name, the one most papers mention wins.
"""
from __future__ import annotations

import shlex

import difflib
from collections import defaultdict
from dataclasses import dataclass, field

import pyoxigraph as ox

from .. import vocab
from ..errors import KGError
from . import kg_terms, view, view_with, with_values
from ..keys import resolution_key
from ..store import run_query


@dataclass
class Entities:
    """Every entity of a graph by IRI: its label, type and paper count, and the names it goes by."""

    label: dict[str, str] = field(default_factory=dict)
    type: dict[str, str] = field(default_factory=dict)
    papers: dict[str, int] = field(default_factory=dict)  # papers on it: its own and its narrower entities'
    named: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # folded name or key -> IRIs
    salience: dict[str, float] = field(default_factory=dict)

    def find(self, name: str, type: str | None = None) -> str:
        """The IRI of the entity named ``name``, of ``type`` if given.

        Raises ``KGError`` naming close matches when none is named so.

        >>> entities = Entities({"e:1": "GRPO"}, {"e:1": "Method"}, {"e:1": 3})
        >>> entities.add_name("e:1", "Group Relative Policy Optimization")
        >>> entities.find("group relative policy optimizations")
        'e:1'
        >>> entities.find("group relative policy optimizations", type="Dataset")
        Traceback (most recent call last):
        kg.errors.KGError: 'group relative policy optimizations' is a Method, not a Dataset: try kg related ...
        """
        keys = (name.casefold(), resolution_key(name))
        for key in keys:
            matches = {e for e in self.named.get(key, ()) if type is None or self.type.get(e) == type}
            if matches:
                return max(matches, key=lambda e: (self.papers.get(e, 0), e))
        check_kind(name, type, {self.type.get(e) for key in keys for e in self.named.get(key, ())})
        close = difflib.get_close_matches(name.casefold(), list(self.named), n=5, cutoff=0.6)
        labels = sorted({self.label[iri] for key in close for iri in self.named[key] if iri in self.label})
        hint = f" Did you mean: {', '.join(labels)}?" if labels else ""
        raise KGError(f"No entity named {name!r} in the graph.{hint}")

    def add_name(self, iri: str, name: str) -> None:
        self.named[name.casefold()].add(iri)
        self.named[resolution_key(name)].add(iri)


def find_entity(store: ox.Store, name: str, type: str | None = None) -> str:
    """The IRI of the entity of ``store`` named ``name`` (of ``type`` if given), as
    :meth:`Entities.find` finds it, from one index lookup (``kg:lookupKey``) when a name matches
    in any case; only otherwise are every name read, to match the resolution key or suggest names.

    >>> import pyoxigraph as ox
    >>> store, grpo = ox.Store(), ox.NamedNode("https://example.org/method/grpo")
    >>> store.add(ox.Quad(grpo, ox.NamedNode(str(vocab.KG.lookupKey)), ox.Literal("grpo")))
    >>> store.add(ox.Quad(grpo, ox.NamedNode(str(vocab.RDF.type)), ox.NamedNode(str(vocab.KG.Method))))
    >>> find_entity(store, "GRPO")
    'https://example.org/method/grpo'
    """
    query = with_values(view("entity-by-key"), "key", ox.Literal(vocab.lookup_key(name)))
    best, elsewhere = None, set()
    for row in run_query(store, query):
        kind = row["class"].value.rsplit("#", 1)[-1]
        if kind not in vocab.ENTITY_TYPES or (type is not None and kind != type):
            elsewhere.add(kind)
            continue
        count = row["reach"] or row["papers"]
        rank = (int(count.value) if count else 0, row["e"].value)
        best = max(best or rank, rank)
    if best is not None:
        return best[1]
    check_kind(name, type, elsewhere)
    return read_entities(store).find(name, type)


def kinds_named(store: ox.Store, name: str) -> set[str]:
    """The types of the entities of ``store`` one of whose names is ``name``, in any case."""
    query = with_values(view("entity-by-key"), "key", ox.Literal(vocab.lookup_key(name)))
    return {row["class"].value.rsplit("#", 1)[-1] for row in run_query(store, query)}


def check_kind(name: str, type: str | None, kinds) -> None:
    """Raise ``KGError`` pointing to the command for a kind in ``kinds``, the types of the entities
    named ``name``, when a command that wants a ``type`` was given one of another kind ("kg compare
    ImageNet": a Dataset, whose command is kg leaderboard).

    >>> check_kind("ImageNet", "Task", {"Dataset"})
    Traceback (most recent call last):
    kg.errors.KGError: 'ImageNet' is a Dataset, not a Task: try kg leaderboard ImageNet.
    """
    kinds = sorted(set(kinds) & set(vocab.COMMAND_OF))
    if type is not None and kinds:
        raise KGError(f"{name!r} is a {kinds[0]}, not a {type}: try {vocab.COMMAND_OF[kinds[0]]} {shlex.quote(name)}.")


def read_entities(store: ox.Store) -> Entities:
    """The entities of the graph in ``store`` with their names."""
    entities = Entities()
    for row in run_query(store, view_with("index-entities", **{"class": kg_terms(vocab.ENTITY_TYPES)})):
        iri = row["e"].value
        entities.label[iri] = row["label"].value
        entities.type[iri] = row["class"].value.rsplit("#", 1)[-1]
        count = row["reach"] or row["papers"]
        entities.papers[iri] = int(count.value) if count else 0
        entities.salience[iri] = float(row["salience"].value) if row["salience"] else 0.0
    for row in run_query(store, view("entity-names")):
        entities.add_name(row["entity"].value, row["name"].value)
    return entities
