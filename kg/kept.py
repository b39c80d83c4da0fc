"""Kept files: what ``kg build`` writes beside a graph for its answers to read fast, and the one way
they are read back.

The kept files are the graph's tables (``NAME.tables.json``: what the answers read) and the
entities' vectors (``NAME.vectors.npz``). Each is as hostile
as any input: swapped in from another graph, edited, or made to lie in its headers. So the build
records each one's size, SHA-256 and, for an archive (npz is a zip of arrays), its members' sizes
in the graph's manifest (``NAME.manifest.json``), and writes the manifest's own digest, the build's
mark, in the store's folder (:data:`kg.store.STORE_MARK`).

:func:`read_kept` opens a kept file only where the store there carries the manifest's mark and the
file has the size and digest the manifest records; an archive's members are then read no larger
than recorded, and an array no larger than its member, before anything is allocated. Anything else
is named in one line on standard error, and the answer comes from the store (the vectors' answer
from the rest), as for a graph built without the file.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     stem = Path(folder) / "g"
...     _ = np.savez(f"{stem}.vectors.npz", papers=np.arange(3))
...     mark = write_manifest(stem, [".vectors.npz"])
...     read_kept(stem, ".vectors.npz", lambda kept: kept.arrays()["papers"].tolist())
[0, 1, 2]
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import sys
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from .errors import KGError
from .store import MANIFEST_SUFFIX, STORE_MARK, beside, store_dir, store_mark

T = TypeVar("T")
_MANIFEST_BYTES = 1 << 20  # a manifest lists a handful of files: a larger one is not read
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Kept:
    """A kept file as its manifest records it: its size and, for an archive, its members' sizes."""

    path: Path
    size: int
    members: dict[str, int]

    @classmethod
    def of(cls, path: Path) -> Kept:
        """``path`` as it is now, recorded as a build records it (:func:`fingerprint`)."""
        found = fingerprint(path)
        return cls(path, found["bytes"], found["members"])

    def read(self) -> bytes:
        """The whole file, no more than its recorded size."""
        with open(self.path, "rb") as file:
            data = file.read(self.size + 1)
        if len(data) != self.size:
            raise ValueError(f"{len(data):,} bytes where the build wrote {self.size:,}")
        return data

    def member(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
        """A member of the archive, decompressed no further than its recorded size."""
        recorded = self.members.get(info.filename)
        if recorded is None:
            raise ValueError(f"member {info.filename!r} is none the build wrote")
        if info.file_size != recorded:
            raise ValueError(f"member {info.filename!r} says {info.file_size:,} bytes where the build wrote {recorded:,}")
        with archive.open(info) as file:
            data = file.read(recorded + 1)
        if len(data) != recorded:
            raise ValueError(f"member {info.filename!r} holds other than the {recorded:,} bytes it says")
        return data

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of an ``.npz`` file, by name; each array's header is checked against its member's
        size before the array is made (no pickled objects)."""
        found = {}
        with zipfile.ZipFile(self.path) as archive:
            for info in archive.infolist():
                name = info.filename.removesuffix(".npy")
                found[name] = _array(name, self.member(archive, info))
        return found


def _array(name: str, data: bytes) -> np.ndarray:
    """The array an ``.npy`` member holds, if its header says no more than the member holds."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(f"array {name!r} has format version {version}")
    if dtype.hasobject:
        raise ValueError(f"array {name!r} holds Python objects")
    count = math.prod(shape)
    if count * dtype.itemsize != len(data) - stream.tell():
        raise ValueError(f"array {name!r} says {count:,} elements of {dtype.itemsize} bytes; "
                         f"its member holds {len(data) - stream.tell():,} bytes")
    array = np.frombuffer(data, dtype=dtype, count=count, offset=stream.tell())
    return array.reshape(shape, order="F" if fortran else "C")


def fingerprint(path: Path) -> dict:
    """What the manifest records of the file at ``path``: its bytes, SHA-256 and members' sizes
    (empty for a file that is no zip)."""
    members = {}
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = {info.filename: info.file_size for info in archive.infolist()}
    return {"bytes": Path(path).stat().st_size, "sha256": sha256(path), "members": members}


def sha256(path: Path) -> str:
    """The SHA-256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_manifest(stem: Path, suffixes: Iterable[str]) -> str:
    """Write ``stem`` + :data:`kg.store.MANIFEST_SUFFIX`, recording the files ``stem`` + each of
    ``suffixes``, and return its mark (its SHA-256), for the store's folder. The same files make the
    same manifest, byte for byte."""
    files = {suffix: fingerprint(Path(f"{stem}{suffix}")) for suffix in sorted(suffixes)}
    text = json.dumps({"files": files}, sort_keys=True, indent=1) + "\n"
    Path(f"{stem}{MANIFEST_SUFFIX}").write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sign_store(folder: Path, mark: str) -> None:
    """Write the manifest's ``mark`` in the store's ``folder``: kept files are read beside this store only."""
    (folder / STORE_MARK).write_text(mark, encoding="utf-8")


def read_kept(graph: str | Path, suffix: str, load: Callable[[Kept], T], *,
              instead: str = "Reading the store instead.") -> T | None:
    """What ``load`` reads of the file ``kg build`` kept beside the graph at ``graph`` with ``suffix``,
    checked against the graph's manifest; None when there is no such file (a graph given as an RDF
    file, or built by an older kg) or it is not the one the build wrote: then one line on standard
    error names it, what is wrong, and ``instead``."""
    file = beside(graph, suffix)
    if file is None:
        return None
    try:
        return load(_checked(graph, suffix, file))
    except KGError as error:
        print(f"{error} {instead}", file=sys.stderr)
    except (OSError, ValueError, KeyError, IndexError, TypeError, zipfile.BadZipFile, RuntimeError,
            NotImplementedError) as error:
        print(f"{file}: not what kg build kept there ({error}); rebuild the graph. {instead}", file=sys.stderr)
    return None


def _checked(graph: str | Path, suffix: str, file: Path) -> Kept:
    """``file`` as the manifest records it, once its size and digest are the recorded ones."""
    manifest = beside(graph, MANIFEST_SUFFIX)

    def refuse(why: str) -> KGError:
        return KGError(f"{file}: {why}; rebuild the graph.")

    if manifest is None:
        raise refuse("no manifest records it (a file of another kg, or copied without its graph)")
    try:
        with open(manifest, "rb") as source:
            text = source.read(_MANIFEST_BYTES + 1)
        if len(text) > _MANIFEST_BYTES:
            raise ValueError("larger than any manifest kg writes")
        record = json.loads(text)["files"][suffix]
        size, digest, members = record["bytes"], record["sha256"], record["members"]
        if not (type(size) is int and isinstance(digest, str) and isinstance(members, dict)
                and all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in members.items())):
            raise ValueError("its record of the file has the wrong shape")
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as error:
        raise refuse(f"its manifest {manifest.name} does not record it ({error})") from None
    store = store_dir(graph)
    if store is not None and store_mark(store) != hashlib.sha256(text).hexdigest():
        raise refuse(f"the store {store.name} is not the one built with it (another build's files)")
    actual = file.stat().st_size
    if actual != size:
        raise refuse(f"{actual:,} bytes where the build wrote {size:,}")
    if sha256(file) != digest:
        raise refuse("changed since the build wrote it")
    return Kept(file, size, members)
