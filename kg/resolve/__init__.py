"""Resolve: mentions from every paper in, one ``Entity`` per real-world thing out.

:mod:`.entities` resolves names into entities across the corpus (keys, acronyms, reordered names,
head variants) and reports what it merged; :mod:`.propagate` then finds the names it resolved in
every abstract that did not mark them.
"""
from .entities import cluster_key, corpus_names, head_variants, merge_reorderings, resolution_report, resolve

__all__ = ["cluster_key", "corpus_names", "head_variants", "merge_reorderings", "resolution_report", "resolve"]
