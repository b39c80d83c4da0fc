"""Ingest: files, folders and globs in; ``Paper`` records out.

:mod:`.read` reads every format (text, CSV, JSON Lines, OpenReview notes, BibTeX) into papers,
:mod:`.rows` repairs a scraper's CSV rows, :mod:`.fetch` downloads a venue from OpenReview.
"""
from .read import FORMATS, FileSetting, Repaired, detect_format, expand_inputs, ingest_summary, read_papers

__all__ = ["FORMATS", "FileSetting", "Repaired", "detect_format", "expand_inputs", "ingest_summary", "read_papers"]
