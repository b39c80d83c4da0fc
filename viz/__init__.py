"""The explorer: an offline HTML page to browse the graph (see ``kg.viz.render``)."""
from .render import render_html

__all__ = ["render_html"]
