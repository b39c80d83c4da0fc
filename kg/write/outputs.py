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
from ..store import INDEX_SUFFIX, STORE_SUFFIX, VECTORS_SUFFIX

#: The endings of every file or folder a build may write beside ``graphs/NAME``.
OUTPUT_SUFFIXES = (".ttl", ".nt", ".jsonld", INDEX_SUFFIX, STORE_SUFFIX, ".html", VECTORS_SUFFIX, ".report.md")

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


def make_current(staging: Path, stem: Path) -> dict[str, Path]:
    """Make the outputs in ``staging`` the graph ``stem``'s in one step; return each output's path,
    ``graphs/NAME`` + its ending, by that ending without its dot (``"ttl"``, ``"index.nt"``, ...).

    The staging folder is used up: it becomes the new build folder, or is removed when the graph
    already reads as its files. Older build folders of the graph are removed.
    """
    parent, name = stem.parent, stem.name
    pointer = parent / f".{name}.current"
    written = sorted(path.name for path in staging.iterdir())
    paths = {file: parent / file for file in written}
    by_ending = {file[len(name) + 1:]: path for file, path in paths.items()}
    store = parent / f"{name}{STORE_SUFFIX}"
    if _reads_as(stem, staging) and (store.exists() or store.resolve().parent.is_dir()):
        # The graph already holds these bytes (a rebuild of the same corpus, or graphs/sample.* as git checks
        # them out): it is kept as it is, links or plain files, and only a missing store is added.
        if not store.exists() and (staging / store.name).exists():
            os.rename(staging / store.name, store.resolve())
        shutil.rmtree(staging, ignore_errors=True)
        return by_ending
    build = parent / f".{name}.build-{secrets.token_hex(4)}"
    os.rename(staging, build)
    # Paths new to this build link through the pointer before it moves: until then they show what the
    # current build has there, which is nothing. Paths an older kg wrote as plain files are replaced after.
    plain = [path for path in paths.values() if path.exists() and not path.is_symlink()]
    for file, path in paths.items():
        if path not in plain:
            _link(path, f"{pointer.name}/{file}")
    _link(pointer, build.name)  # the switch
    for path in plain:
        _replace_with_link(path, f"{pointer.name}/{path.name}", name)
    for suffix in OUTPUT_SUFFIXES:  # an output this build did not write describes no graph now
        path = parent / f"{name}{suffix}"
        if path.name not in paths and (path.is_symlink() or path.is_file()):
            path.unlink()
    for folder in parent.glob(f".{glob.escape(name)}.build-*"):
        if folder != build and _BUILD.fullmatch(folder.name[len(name) + 2:]):
            shutil.rmtree(folder, ignore_errors=True)
    return by_ending


def remove_stale(stem: Path) -> list[Path]:
    """Remove the staging folders that killed builds of ``stem`` left beside it; return them.

    A build stages its outputs in ``.NAME.staging-PID-<8 random characters>`` (:func:`stage`)
    and uses the folder up when done, unless it is killed. Only folders of this ``NAME`` whose
    build process is gone are removed: another graph's, or a build of the same name still running,
    are left alone. Folders named ``.NAME.<8 random characters>`` are staging folders of earlier kg versions.
    """
    removed = []
    for folder in stem.parent.glob(f".{glob.escape(stem.name)}.*"):
        staged = _STAGING.fullmatch(folder.name[len(stem.name) + 2:])
        if folder.is_dir() and not folder.is_symlink() and staged and not (staged.group(1) and _running(int(staged.group(1)))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


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


def _replace_with_link(path: Path, target: str, name: str) -> None:
    """Replace a plain file or folder an older kg wrote at ``path`` by a symlink to ``target``."""
    if path.is_dir():  # a folder cannot be replaced in one step: it is moved aside (as graph NAME's staging), then removed
        aside = _new_folder(path.parent, f".{name}.staging-{os.getpid()}-")
        os.rename(path, aside / path.name)
        _link(path, target)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        _link(path, target)


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
