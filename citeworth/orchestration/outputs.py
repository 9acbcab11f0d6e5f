"""A run's outputs carried between hosts by content hash, through the DVC remote.

On a multi-host deployment (the remote workspace form, ``citeworth.orchestration.runs``) a task
never reads a file another task wrote on its own disk. What a task wrote is hashed into its host's
DVC cache and sent to the DVC remote in DVC's own object layout (``files/md5/..``, a ``.dir``
object per folder) before the task ends: ``push_outputs`` returns ``{path: hash}``, the small
record that passes between tasks (an Airflow XCom). A later task on any host fetches exactly those
objects into its host's cache and links them into its workspace (``pull_outputs``); outputs the
run did not rebuild come from what its ``dvc.lock`` records (``pull_locked``, a ``dvc pull`` of
those paths). The versioning step's ``dvc commit`` then finds every object already cached and its
``dvc push`` finds them on the remote: nothing is uploaded twice.

Several tasks may write into one folder (a curate shard each, a domain cell each): the folder a
later task sees is the union of their trees. No Airflow import here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeworth.core.errors import StageFailed

if TYPE_CHECKING:
    from dvc_data.hashfile.db import HashFileDB
    from dvc_data.hashfile.obj import HashFile

log = logging.getLogger(__name__)

HASH_NAME = "md5"  # DVC 3's object names


@contextmanager
def _stores(workspace: Path, remote: str | None):
    """The workspace's DVC cache and the remote's object store (``remote`` None: the default one)."""
    from dvc.repo import Repo

    with Repo(str(workspace)) as repo:
        yield repo.cache.local, repo.cloud.get_remote_odb(remote, "push", hash_name=HASH_NAME)


def fetch_inputs(workspace: Path, plan: dict[str, Any], stages: Iterable[str],
                 produced: Mapping[str, list[str]], remote: str | None = None, *, outs: bool = False) -> None:
    """Bring into ``workspace`` what the dvc.yaml ``stages`` read (and, with ``outs``, their outputs:
    the versioning step records those, and `dvc commit` hashes their deps too): each path an
    upstream task of the run sent (``produced``, path -> hashes) by hash, every other from what
    dvc.lock records. A path the run rebuilds (its stage is in the plan's ``stale``) that no
    upstream task sent is an error, never the old data. Parts of the stages' own outputs that
    upstream tasks sent come too (the domain cells their aggregation reads)."""
    producer = {path: stage for stage, paths in plan["outs"].items() for path in paths}
    by_hash: dict[str, list[str]] = {}
    from_lock = []
    wanted = {path for stage in stages
              for path in plan["deps"][stage] + (plan["outs"][stage] if outs else [])}
    for path in sorted(wanted):
        out = next((out for out in producer if _overlaps(out, path)), None)
        if out is None:
            continue  # code or params: the worktree has them
        if sent := {name: hashes for name, hashes in produced.items() if _overlaps(name, path)}:
            by_hash.update(sent)
        elif producer[out] in plan["stale"]:
            raise StageFailed(f"{path} is rebuilt by this run (stage {producer[out]}) but no upstream "
                              "task sent it")
        elif out not in plan["uncached"]:  # an uncached output (a metric) is in the worktree
            from_lock.append(path)
    # what the run's mapped tasks of these very stages wrote (domain cells, for the aggregation)
    for path in {path for stage in stages for path in plan["outs"][stage]}:
        by_hash.update({name: hashes for name, hashes in produced.items() if _overlaps(name, path)})
    pull_outputs(workspace, by_hash, remote)
    pull_locked(workspace, from_lock, remote)


def _overlaps(path: str, other: str) -> bool:
    """Is one of the two relative paths the other or inside it?"""
    return path == other or path.startswith(f"{other}/") or other.startswith(f"{path}/")


def push_outputs(workspace: Path, paths: Iterable[str], remote: str | None = None,
                 only: Iterable[str] | None = None) -> dict[str, str]:
    """Hash each present path (file or folder, relative to ``workspace``) into its DVC cache and send
    the objects the remote lacks to ``remote``; ``{path: hash}`` of what was sent (absent paths are
    left out: a stage may write only some of its outputs). With ``only`` (the files, relative to
    ``workspace``, that a task writing a part of a folder wrote: a shard, a domain cell) a path is
    sent as the tree of just those of its files: never what else this host's copy holds (results
    pulled here earlier, other tasks' parts, a killed attempt's leftovers), which a later task's
    union of the parts would take for this run's."""
    from dvc_data.hashfile.build import build
    from dvc_data.hashfile.transfer import transfer

    def hashed(path: str) -> tuple[Any, HashFile]:  # (its meta, its object), in the cache
        staging, meta, obj = build(cache, str(workspace / path), cache.fs, HASH_NAME)
        transfer(staging, cache, {obj.hash_info}, hardlink=True, shallow=False)
        return meta, obj

    sent: dict[str, str] = {}
    wanted = None if only is None else {str(Path(file)) for file in only}
    with _stores(workspace, remote) as (cache, odb):
        for path in sorted(set(paths)):
            if not (workspace / path).exists():
                continue
            if wanted is None or path in wanted:
                obj = hashed(path)[1]
            elif parts := sorted(file for file in wanted if file.startswith(f"{path}/")
                                 and (workspace / file).is_file()):
                entries = {}
                for file in parts:
                    meta, part = hashed(file)
                    entries[Path(file).relative_to(path).parts] = (meta, part.hash_info)
                obj = _tree(cache, entries)
            else:
                continue
            _send(cache, odb, obj)
            sent[path] = obj.hash_info.value
    log.info("outputs sent to the DVC remote: %s", sent)
    return sent


def pull_outputs(workspace: Path, produced: Mapping[str, list[str]], remote: str | None = None) -> None:
    """Lay each path out in ``workspace`` from the objects its producers sent (``{path: [hash,
    ...]}``, several for a folder that several tasks wrote: their union, a file two of them wrote
    differently taken from the last)."""
    from dvc_data.hashfile import load
    from dvc_data.hashfile.checkout import checkout

    with _stores(workspace, remote) as (cache, odb):
        for path, hashes in sorted(produced.items()):
            objects = [_fetch(odb, cache, value) for value in dict.fromkeys(hashes)]
            obj = objects[0] if len(objects) == 1 else _union(cache, path, objects)
            checkout(str(workspace / path), cache.fs, load(cache, obj.hash_info), cache, force=True,
                     relink=True, quiet=True)
    if produced:
        log.info("outputs fetched from the DVC remote: %s", sorted(produced))


def pull_locked(workspace: Path, paths: Iterable[str] = (), remote: str | None = None, *,
                stages: Iterable[str] = (), allow_missing: bool = False) -> None:
    """``dvc pull`` of outputs the workspace's dvc.lock records (``paths``, and all of each of the
    dvc.yaml ``stages``): those the run did not rebuild, or earlier results a stage may find current.
    In this process (a ``dvc`` subprocess costs an interpreter and DVC's import per task); the
    targets are absolute, since DVC resolves relative ones against the process's directory."""
    targets = sorted({str(workspace / path) for path in paths}
                     | {f"{workspace / 'dvc.yaml'}:{stage}" for stage in stages})
    if not targets:
        return
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    try:
        with Repo(str(workspace)) as repo:
            repo.pull(targets=targets, remote=remote, allow_missing=allow_missing)
    except DvcException as exc:
        raise StageFailed(f"dvc pull in {workspace} failed: {exc}") from exc


def _send(cache: HashFileDB, odb: HashFileDB, obj: HashFile) -> None:
    from dvc_data.hashfile.transfer import transfer
    from dvc_data.hashfile.tree import Tree

    ids = {obj.hash_info} | ({entry for _, _, entry in obj} if isinstance(obj, Tree) else set())
    if failed := transfer(cache, odb, ids).failed:
        raise StageFailed(f"could not send {len(failed)} object(s) to the DVC remote {odb.path}")


def _fetch(odb: HashFileDB, cache: HashFileDB, value: str) -> HashFile:
    """Object ``value`` (a file's md5 or a folder's ``<md5>.dir``) from the remote into the cache."""
    from dvc_data.hashfile import load
    from dvc_data.hashfile.hash_info import HashInfo
    from dvc_data.hashfile.transfer import transfer
    from dvc_data.hashfile.tree import Tree

    hash_info = HashInfo(HASH_NAME, value)
    transfer(odb, cache, {hash_info})
    obj = load(cache, hash_info)
    if isinstance(obj, Tree) and (failed := transfer(odb, cache, {entry for _, _, entry in obj}).failed):
        raise StageFailed(f"the DVC remote {odb.path} lacks {len(failed)} object(s) of {value}")
    return obj


def _union(cache: HashFileDB, path: str, trees: list[HashFile]) -> HashFile:
    """One tree holding every file of ``trees`` (a later tree's file wins a name clash)."""
    from dvc_data.hashfile.tree import Tree

    if not all(isinstance(tree, Tree) for tree in trees):
        raise StageFailed(f"{path}: tasks wrote it as a file and as a folder")
    union: dict[tuple[str, ...], tuple] = {}
    for tree in trees:
        for key, meta, hash_info in tree:
            if key in union and union[key][1] != hash_info:
                log.warning("%s/%s: written differently by two tasks, the later is kept", path, "/".join(key))
            union[key] = (meta, hash_info)
    return _tree(cache, union)


def _tree(cache: HashFileDB, entries: Mapping[tuple[str, ...], tuple]) -> HashFile:
    """The tree of ``entries`` (relative key -> (meta, hash_info)), stored in ``cache``."""
    from dvc_data.hashfile.tree import Tree

    tree = Tree()
    for key, (meta, hash_info) in sorted(entries.items()):
        tree.add(key, meta, hash_info)
    tree.digest()
    cache.add(tree.path, tree.fs, tree.oid)
    return tree
