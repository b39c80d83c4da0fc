"""Serve: a read-only SPARQL 1.1 endpoint, a query page and the explorer of one graph, in one process.

``kg serve -g graphs/NAME`` opens the store ``kg build`` wrote (``graphs/NAME.oxigraph``)
read-only and answers:

================================  =====================================================
``/``                             the explorer (:mod:`kg.viz`); its panel and search use the routes below
``/query``                        a SPARQL editor with the example queries and a results table
``/sparql``                       SPARQL 1.1 Protocol: GET ``?query=``, POST a form or ``application/sparql-query``
``/entity/ID``, ``/paper/ID``     a node's page; ``ID`` is a node id (``method/group-relative-policy-optimization``)
                                  or, for people typing URLs, ``TYPE/NAME`` (``method/grpo``)
``/search.json?q=``               entities and papers whose name or alias contains ``q``
``/neighbourhood.json?id=&k=``    the nodes within ``k`` links of a node, laid out for the explorer
``/related.json?id=``             :func:`kg.query.related.related`'s methods for an entity
``/static/NAME``                  the pages' script and style (nothing is fetched from elsewhere)
================================  =====================================================

Every HTML page has a JSON twin built by the same view: ``/index.json``,
``/query.json``, ``/entity/ID.json``, ``/paper/ID.json``.

Its parts, each readable on its own:

- :mod:`.pool`: the worker processes that answer client SPARQL (and kg.query.related)
  within a time limit and a memory cap, with a spare for short queries;
- :mod:`.search`: search over the index and neighbourhoods over its graph (:mod:`kg.query.graph_index`, both made of the graph's tables);
- :mod:`.pages`: the data of each page: a node's panel read by :mod:`kg.query.views` from the graph's tables, as the offline page reads its own;
- :mod:`.protocol`: a ``/sparql`` request read as the SPARQL 1.1 Protocol's query operation;
- :mod:`.app`: the WSGI application and its routes;
- :mod:`.server`: the threads and sockets around it, from :func:`start` to ``stop``.
"""
import importlib

# Where each name lives. Imported on first use (PEP 562), so that a query worker, which imports
# only .pool, starts without the explorer's renderer and templates. No name here is a submodule's
# name: once that submodule is imported, the package attribute is the module, not the function.
_EXPORTS = {
    **dict.fromkeys(["App", "get", "make_app"], ".app"),
    **dict.fromkeys(["Running", "start"], ".server"),
    **dict.fromkeys(["GraphIndex", "read_tables"], "..query.graph_index"),
    **dict.fromkeys(["HTTPError", "QueryPool", "QueryTimeout", "ServerBusy", "oxigraph_engine", "query_within",
                     "result_reply"], ".pool"),
    **dict.fromkeys(["entity_view", "paper_view", "segments"], ".pages"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
