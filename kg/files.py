"""Files written all or nothing: the one way kg replaces an output file.

Each file is written to a temporary file beside its target and moved into
place (``os.replace``) only once every one of them is complete, so a failure
while writing leaves the previous files exactly as they were.
"""
from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def replacing(*paths: str | os.PathLike) -> Iterator[list[BinaryIO]]:
    """Open one binary file for each of ``paths``; on leaving the block without an error, each
    replaces its path, else all are removed and the paths are untouched. Missing folders are made.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder) / "a.txt"
    ...     with replacing(target) as (out,):
    ...         _ = out.write(b"new")
    ...     try:
    ...         with replacing(target) as (out,):
    ...             _ = out.write(b"half")
    ...             raise OSError("disk full")
    ...     except OSError:
    ...         pass
    ...     print(target.read_text(), sorted(p.name for p in Path(folder).iterdir()))
    new ['a.txt']
    """
    targets = [Path(path) for path in paths]
    temps = [target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp") for target in targets]
    files: list[BinaryIO] = []
    try:
        for temp in temps:
            temp.parent.mkdir(parents=True, exist_ok=True)
            # open(..., "xb") rather than mkstemp: the file gets the usual umask permissions, not 0600.
            files.append(open(temp, "xb"))
        yield files
        for file in files:
            file.flush()
            os.fsync(file.fileno())
            file.close()
        for temp, target in zip(temps, targets):
            os.replace(temp, target)
    finally:
        for file in files:
            file.close()
        for temp in temps:
            temp.unlink(missing_ok=True)
