"""Errors kg reports to its users: each says what happened, where, and how to fix it."""
from __future__ import annotations


class KGError(Exception):
    """An error with a message meant for the person running kg (no traceback needed)."""


class InputError(KGError):
    """A problem with an input file, located by file and line (or record number)."""

    def __init__(self, file: str, line: int | None, message: str, *, kind: str | None = None):
        self.file = file
        self.line = line
        self.message = message
        #: The reason in a few words, the same for every record it costs ("abstract is a URL"), by which
        #: a summary counts them; None where no one has named it.
        self.kind = kind
        where = f"{file}:{line}" if line is not None else str(file)
        super().__init__(f"{where}: {message}")


class GraphNotFound(KGError):
    def __init__(self, path: str):
        super().__init__(
            f"No graph at {path}: expected {path}.nt (or .ttl) as written by "
            f"'kg build ... -o {path}'. Build it first, or pass the path given to -o."
        )
