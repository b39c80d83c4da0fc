"""Outputs: a built graph's files, made current all at once.

A build writes every output into a staging folder beside the graph. The
finished folder becomes ``graphs/.NAME.build-ID/``, and one atomic rename of
the symlink ``graphs/.NAME.current`` makes it the graph. The paths people and
kg read, ``graphs/NAME.ttl``, ``NAME.oxigraph`` and the rest, are symlinks
through that pointer, so a reader sees the previous graph whole or the new one
whole, wherever a build stops::

    graphs/sample.ttl        -> .sample.current/sample.ttl
    graphs/.sample.current   -> .sample.build-3f9c2a1b
    graphs/.sample.build-3f9c2a1b/   sample.ttl  sample.nt  ...  sample.oxigraph/

A build whose files equal the current ones changes nothing (but for adding the
store where it is missing), so rebuilding an unchanged corpus leaves the
folder, and a graph checked into git, as they were.

A graph whose outputs are plain files (``graphs/sample.*`` as git checks them
out, or a graph an older kg wrote) is first made such a graph of links, path by
path, each reading the same bytes before and after (:func:`_adopt`); the switch
to the new build is then the same one rename.
"""
from __future__ import annotations

import filecmp
import glob
import os
import re
import secrets
import shutil
from pathlib import Path

from ..errors import KGError
from ..store import (INDEX_SUFFIX, MANIFEST_SUFFIX, PANELS_SUFFIX, RELATED_SUFFIX, STORE_SUFFIX, TABLES_SUFFIX,
                     VECTORS_SUFFIX)

#: The endings of every file or folder a build may write beside ``graphs/NAME``, and last, those older kg
#: versions wrote (a rebuild removes them).
OUTPUT_SUFFIXES = (".ttl", ".nt", ".jsonld", INDEX_SUFFIX, STORE_SUFFIX, ".html", VECTORS_SUFFIX,
                   TABLES_SUFFIX, MANIFEST_SUFFIX, ".report.md", PANELS_SUFFIX, RELATED_SUFFIX)

_BUILD = re.compile(r"build-[0-9a-f]{8}")  # what follows ".NAME." in a build folder's name
_STAGING = re.compile(r"staging-(\d+)-\w{8}|\w{8}")  # ... in a staging folder's (the second: older kg versions')


def stage(stem: Path) -> Path:
    """A new, empty staging folder beside ``stem`` (``graphs/NAME``), once every path the build will
    write has been checked: raises ``KGError`` naming the path and the fix, before any work is done.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     (Path(folder) / "g.html").mkdir()
    ...     stage(Path(folder) / "g")
    Traceback (most recent call last):
    kg.errors.KGError: .../g.html is a folder, where kg build writes a file: move it away or choose another -o.
    """
    parent = stem.parent
    for ancestor in (parent, *parent.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise KGError(f"{ancestor} is a file, not a folder" + (f", so {parent} cannot be made" if ancestor != parent
                                                                       else "") + ": choose another -o.")
            break
    for suffix in OUTPUT_SUFFIXES:
        target = parent / f"{stem.name}{suffix}"
        if target.is_dir() and not target.is_symlink() and suffix != STORE_SUFFIX:
            raise KGError(f"{target} is a folder, where kg build writes a file: move it away or choose another -o.")
    store = parent / f"{stem.name}{STORE_SUFFIX}"
    if os.path.lexists(store) and not store.is_symlink() and not (store / "CURRENT").is_file():
        # The build would replace it: what kg did not make, kg does not delete.
        raise KGError(f"{store} is not a store kg wrote, where kg build writes its store: "
                      "move it away or choose another -o.")
    remove_stale(stem)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = _new_folder(parent, f".{stem.name}.staging-{os.getpid()}-")
    except OSError as error:
        raise KGError(f"Cannot write into {parent} ({error.strerror}): choose a writable -o.") from None
    try:  # the pointer and the paths are symlinks: a file system without them is found now, not at the end
        (staging / "link").symlink_to(".")
        (staging / "link").unlink()
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise KGError(f"Cannot make symbolic links in {parent} ({error.strerror}): choose another -o.") from None
    return staging


def make_current(staging: Path, stem: Path, *, keep_store: bool = True) -> dict[str, Path]:
    """Make the outputs in ``staging`` the graph ``stem``'s in one step; return each output's path,
    ``graphs/NAME`` + its ending, by that ending without its dot (``"ttl"``, ``"index.nt"``, ...).

    The staging folder is used up: it becomes the new build folder, or is removed when the graph
    already reads as its files and, with ``keep_store``, its store may be kept (without, the store
    there is not known to hold the graph). Older build folders of the graph are removed.
    """
    parent, name = stem.parent, stem.name
    pointer = parent / f".{name}.current"
    written = sorted(path.name for path in staging.iterdir())
    paths = {file: parent / file for file in written}
    by_ending = {file[len(name) + 1:]: path for file, path in paths.items()}
    store = parent / f"{name}{STORE_SUFFIX}"
    if _reads_as(stem, staging) and (keep_store if store.exists() else store.resolve().parent.is_dir()):
        # The graph already holds these bytes (a rebuild of the same corpus, or graphs/sample.* as git checks
        # them out): it is kept as it is, links or plain files, and only a missing store is added.
        if not store.exists() and (staging / store.name).exists():
            os.rename(staging / store.name, store.resolve())
        shutil.rmtree(staging, ignore_errors=True)
        return by_ending
    _adopt(stem)
    build = parent / f".{name}.build-{secrets.token_hex(4)}"
    os.rename(staging, build)
    # Paths new to this build link through the pointer before it moves: until then they show what the
    # current build has there, which is nothing.
    for file, path in paths.items():
        _link(path, f"{pointer.name}/{file}")
    _link(pointer, build.name)  # the switch
    for suffix in OUTPUT_SUFFIXES:  # an output this build did not write describes no graph now
        path = parent / f"{name}{suffix}"
        if path.name not in paths and (path.is_symlink() or path.is_file()):
            path.unlink()
    _remove_builds(stem, keep=build)
    return by_ending


def remove_stale(stem: Path) -> list[Path]:
    """Remove the staging and build folders that killed builds of ``stem`` left beside it; return them.

    A build stages its outputs in ``.NAME.staging-PID-<8 random characters>`` (:func:`stage`)
    and uses the folder up when done, unless it is killed. Only folders of this ``NAME`` whose
    build process is gone are removed: another graph's, or a build of the same name still running,
    are left alone. Folders named ``.NAME.<8 random characters>`` are staging folders of earlier kg versions.
    A build folder no path of the graph leads to (one a build killed before or right after its switch
    left) is removed too.
    """
    removed = []
    for folder in stem.parent.glob(f".{glob.escape(stem.name)}.*"):
        staged = _STAGING.fullmatch(folder.name[len(stem.name) + 2:])
        if folder.is_dir() and not folder.is_symlink() and staged and not (staged.group(1) and _running(int(staged.group(1)))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    current = {path.resolve().parent for path in _paths(stem) if path.is_symlink()}
    current.add(stem.with_name(f".{stem.name}.current").resolve())
    return removed + _remove_builds(stem, keep=current)


def _remove_builds(stem: Path, *, keep: Path | set[Path]) -> list[Path]:
    """Remove the build folders of ``stem`` but ``keep``; return them."""
    keep = {path.resolve() for path in ({keep} if isinstance(keep, Path) else keep)}
    removed = []
    for folder in stem.parent.glob(f".{glob.escape(stem.name)}.build-*"):
        if folder.resolve() not in keep and folder.is_dir() and _BUILD.fullmatch(folder.name[len(stem.name) + 2:]):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _paths(stem: Path) -> list[Path]:
    """The outputs a build may have written at ``stem`` that are there (links, even broken, included)."""
    return [path for suffix in OUTPUT_SUFFIXES if os.path.lexists(path := stem.with_name(f"{stem.name}{suffix}"))]


def _adopt(stem: Path) -> None:
    """Make the plain files (and plain store folder) of the graph ``stem`` links into the build folder the
    pointer leads to, made for them where there is none, so that the switch to a new build is one rename.

    Every path reads the same bytes at every step, so a build killed here leaves the old graph, and
    the next one carries on: each plain file is hard-linked (or copied) into the folder, then replaced by
    a link to its twin there, one ``os.replace`` a path, once the pointer leads there. A folder cannot
    be replaced by a link in one step: a plain store is moved into the build folder, then linked; for
    that instant the path is missing, and readers load the old graph from its files
    (:func:`kg.store.open_graph`).
    """
    plain = [path for path in _paths(stem) if not path.is_symlink()]
    if not plain:
        return
    pointer = stem.with_name(f".{stem.name}.current")
    folder = pointer.resolve() if pointer.is_symlink() and pointer.resolve().is_dir() else None
    if folder is None:
        folder = _new_folder(stem.parent, f".{stem.name}.build-")
    for path in plain:
        if path.is_file():
            _twin(path, folder / path.name)
    _link(pointer, folder.name)
    for path in plain:
        if path.is_dir():
            shutil.rmtree(folder / path.name, ignore_errors=True)  # what the folder held there no path read
            os.rename(path, folder / path.name)
        _link(path, f"{pointer.name}/{path.name}")


def _reads_as(stem: Path, staging: Path) -> bool:
    """Whether the graph ``stem`` reads as the files in ``staging``: the same outputs, byte for byte (the
    store aside: it is filled from the same triples, but its database files differ from run to run)."""
    store = f"{stem.name}{STORE_SUFFIX}"
    files = sorted(path.name for path in staging.iterdir() if path.name != store)
    there = sorted(f"{stem.name}{suffix}" for suffix in OUTPUT_SUFFIXES
                   if suffix != STORE_SUFFIX and stem.with_name(f"{stem.name}{suffix}").exists())
    return files == there and all(filecmp.cmp(staging / file, stem.with_name(file), shallow=False) for file in files)


def _link(path: Path, target: str) -> None:
    """Point the symlink ``path`` at ``target`` in one step (``os.replace`` of a new link): a reader
    finds the old link or the new one, never none."""
    if path.is_symlink() and os.readlink(path) == target:
        return
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    temporary.symlink_to(target)
    os.replace(temporary, path)


def _twin(path: Path, target: Path) -> None:
    """Put the bytes of the file ``path`` at ``target`` in one step: a hard link (a copy where the file
    system has none), made beside it and renamed into place."""
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        os.link(path, temporary)
    except OSError:
        shutil.copy2(path, temporary)
    os.replace(temporary, target)


def _new_folder(parent: Path, prefix: str) -> Path:
    """A new folder ``prefix`` + 8 random hex digits in ``parent``, with the usual permissions (the
    build folder is published as it is: ``tempfile.mkdtemp`` would make it private to its owner)."""
    while True:
        folder = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
