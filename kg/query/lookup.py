"""Lookup: which entity of a built graph a name typed by a person stands for, read from the graph's tables.

``kg related GRPO``, ``kg explain E-GRPO GRPO`` and ``kg leaderboard RULER``
name entities by a label or alias; a name matches case-insensitively, and
through the resolution key (hyphens, plurals and evaluative words ignored),
so "group relative policy optimizations" finds GRPO. When several entities
share a name, the one most papers mention wins.
"""
from __future__ import annotations

import difflib
import shlex

from .. import vocab
from ..errors import KGError
from ..keys import resolution_key
from .views import Tables


def find_entity(tables: Tables, name: str, type: str | None = None) -> str:
    """The IRI of the entity of ``tables`` named ``name`` (of ``type`` if given): a label or alias in any
    case (as ``kg:lookupKey`` holds it: :func:`kg.vocab.lookup_key`), else through the resolution key.

    Raises ``KGError`` naming the command for the entity's kind when it is of another type, or close
    matches when none is named so.

    >>> import networkx as nx
    >>> from kg.query.tables import whole_tables
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("method/grpo", kind="Method", label="GRPO", aliases=["Group Relative Policy Optimization"], papers=3)
    >>> tables = Tables(whole_tables(G, base="https://example.org/"))
    >>> find_entity(tables, "group relative policy optimizations")
    'https://example.org/method/grpo'
    >>> find_entity(tables, "group relative policy optimizations", type="Dataset")
    Traceback (most recent call last):
    kg.errors.KGError: 'group relative policy optimizations' is a Method, not a Dataset: try kg related ...
    """
    t = tables.t
    kind = lambda i: t["kinds"][t["kind"][i]]  # noqa: E731
    for keyed in (vocab.lookup_key, resolution_key):
        named = tables.named(keyed(name), keyed)
        matches = [i for i in named if type is None or kind(i) == type]
        if matches:  # the entity most papers mention (its own and its narrower ones')
            return tables.iri(max(matches, key=lambda i: (t["reach"][i] or t["papers"][i], tables.iri(i))))
        check_kind(name, type, {kind(i) for i in named})
    keys = dict.fromkeys(tables.name_keys(vocab.lookup_key) + tables.name_keys(resolution_key))
    close = set(difflib.get_close_matches(name.casefold(), list(keys), n=5, cutoff=0.6))
    labels = sorted({t["label"][i] for keyed in (vocab.lookup_key, resolution_key) for key in close
                     for i in tables.named(key, keyed)})
    hint = f" Did you mean: {', '.join(labels)}?" if labels else ""
    raise KGError(f"No entity named {name!r} in the graph.{hint}")


def kinds_named(tables: Tables, name: str) -> set[str]:
    """The types of the entities of ``tables`` one of whose names is ``name``, in any case."""
    return {tables.t["kinds"][tables.t["kind"][i]] for i in tables.named(vocab.lookup_key(name), vocab.lookup_key)}


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
