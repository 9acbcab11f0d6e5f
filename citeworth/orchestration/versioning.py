"""Versioning a run's outputs: ``dvc commit`` and ``dvc push``, a git commit of the lock, data tags.

After the stages ran in a run's workspace, the outputs are recorded in ``dvc.lock`` with ``dvc
commit`` -- so ``dvc status`` afterwards compares the same hashes ``dvc repro`` would have written
-- pushed to the DVC remote; the lock is committed onto a branch by ``publish`` (no working tree
is touched) and the data version tagged by source release in git.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from citeworth.core.errors import StageFailed

# dvc.yaml stages; a foreach or matrix name stands for all of its stages (curate: curate@citeworth and
# curate@baseline; train: train@<model> for each model).
DATASET_STAGES = ("download", "pdf2tei", "curate", "assemble", "related_work", "export", "validate")
MODEL_STAGES = ("train", "report", "domains", "transfer", "silver", "scaling", "works")
TAG_PREFIX = "data"
# The Airflow pool of the versioning steps (made by `citeworth airflow setup`): one slot, so one run
# at a time writes the repository's refs.
VERSIONING_POOL = "citeworth_versioning"
VERSIONING_POOL_DESCRIPTION = "citeworth: one run at a time writes the repository"
_GIT_IDENTITY = ("-c", "user.name=citeworth", "-c", "user.email=citeworth@localhost")


def dvc(project: Path, *args: str) -> str:
    """Run the DVC command line of this interpreter's environment in the project; fail clearly."""
    command = [sys.executable, "-m", "dvc", *args]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True)
    if done.returncode != 0:
        raise StageFailed(f"`dvc {' '.join(args)}` failed (exit {done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def is_selected(name: str, wanted: set[str]) -> bool:
    """Is dvc stage ``name`` among ``wanted``, by its own name or its foreach / matrix name?"""
    return name in wanted or name.split("@")[0] in wanted


def dvc_status(project: Path, stages: Iterable[str] = ()) -> dict[str, Any]:
    """``dvc status`` as data: {} when the stages' recorded deps, params and outs match the workspace."""
    return json.loads(dvc(project, "status", "--json", *stages) or "{}")


def record_outputs(project: Path, stages: Iterable[str]) -> None:
    """Record what the stages produced in dvc.lock and the DVC cache (``dvc commit``).

    The lock then holds the same hashes ``dvc repro`` writes for these outputs, so a later
    ``dvc status``/``dvc repro`` sees them as up to date; fails naming what still is not.
    """
    stages = list(stages)
    dvc(project, "commit", "--force", *stages)
    if left := dvc_status(project, stages):
        raise StageFailed(f"after dvc commit these stages are still not up to date: {left}")


def push(project: Path, stages: Iterable[str], remote: str | None = None) -> None:
    dvc(project, "push", *(["--remote", remote] if remote else []), *stages)


def git_tracked_outputs(project: Path, stages: Iterable[str]) -> list[str]:
    """What git keeps of ``stages``' outputs: those with ``cache: false`` (metrics, plots, tables)
    and the .gitignore files DVC writes beside cached ones -- each only if present and not ignored."""
    from dvc.repo import Repo

    wanted = set(stages)
    with Repo(str(project)) as repo:
        outs = [out for stage in repo.index.stages if is_selected(stage.name, wanted)
                for out in stage.outs]
    relative = [(Path(os.path.relpath(out.fs_path, project)), out.use_cache) for out in outs]
    paths = {path.parent / ".gitignore" if cached else path for path, cached in relative}
    # a folder git keeps (e.g. plots with cache: false): every file in it
    files = {file.relative_to(project) for path in paths if (project / path).is_dir()
             for file in (project / path).rglob("*") if file.is_file()}
    present = sorted(str(path) for path in paths | files if (project / path).is_file())
    if not present:
        return []
    ignored = set(git(project, "check-ignore", "--", *present, check=False).splitlines())
    return [path for path in present if path not in ignored]


def git(project: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
        stdin: str | None = None) -> str:
    done = subprocess.run(["git", *_GIT_IDENTITY, *args], cwd=project, capture_output=True, text=True,
                          env=env, input=stdin)
    if check and done.returncode != 0:
        raise StageFailed(f"`git {' '.join(args)}` failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def data_version_tag(source: str, release: str) -> str:
    return f"{TAG_PREFIX}/{source}/{release}"


def versioned_releases(project: Path, source: str) -> list[str]:
    """Releases of ``source`` that already have a data version tag, oldest name first."""
    prefix = f"{data_version_tag(source, '')}"
    tags = git(project, "tag", "--list", f"{prefix}*").splitlines()
    return sorted(tag[len(prefix):] for tag in tags if tag)


def publish(workspace: Path, stages: Iterable[str], message: str, *, ref: str, start: str,
            param_updates: dict[str, dict[str, Any]] | None = None, move: bool = True) -> dict[str, Any]:
    """Commit a run's record of ``stages`` onto ``ref`` (e.g. ``refs/heads/main`` or
    ``refs/heads/runs/<run>``) without touching any working tree; ``{"commit", "created"}``.

    The commit's parent is ``ref``'s tip (``start``, the run's start commit, for a new ref): its
    dvc.lock with the entries of ``stages`` replaced by the workspace's, its params.yaml with the
    run's ``param_updates`` applied, and the git-kept outputs of ``stages`` from the workspace.
    So runs that started from an older commit add their stages to what other runs versioned in
    the meantime, and the ref moves only by compare-and-swap from the tip it was built on (not at
    all when ``move`` is false: the commit is then only reachable by what the caller makes of it).
    """
    from citeworth.orchestration.params_file import updated_params

    stages = list(stages)
    tip = git(workspace, "rev-parse", "--verify", "--quiet", ref, check=False)
    base = tip or start
    files = {
        "dvc.lock": _merged_lock(_show(workspace, base, "dvc.lock"), (workspace / "dvc.lock").read_text(),
                                 stages),
        "params.yaml": updated_params(_show(workspace, base, "params.yaml"), param_updates or {})[0],
    }
    for path in git_tracked_outputs(workspace, stages):
        is_ignore = path.endswith(".gitignore")
        files[path] = (_merged_ignore(_show(workspace, base, path), (workspace / path).read_text())
                       if is_ignore else workspace / path)  # metrics, tables, plots (PNGs too): as is
    commit = _commit_files(workspace, base, files, message)
    if commit is None:
        return {"commit": git(workspace, "rev-parse", f"{base}^{{commit}}"), "created": False}
    if move:
        git(workspace, "update-ref", "-m", message, ref, commit, tip or "0" * 40)
    return {"commit": commit, "created": True}


def branch_release(workspace: Path, ref: str) -> tuple[str, str] | None:
    """(source, release) of the download section at ``ref``'s tip (None: no such ref)."""
    text = _show(workspace, ref, "params.yaml")
    download = (yaml.safe_load(text) or {}).get("download") or {} if text else None
    return (download.get("source"), download.get("release")) if download else None


def _show(workspace: Path, commit: str, path: str) -> str:
    """``path`` as ``commit`` has it ("" when it has no such file)."""
    done = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=workspace, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def _merged_lock(base: str, workspace: str, stages: list[str]) -> str:
    """``base``'s dvc.lock with the entries of ``stages`` taken from the workspace's lock (the
    workspace's text itself when the two agree, as DVC wrote it)."""
    from dvc.utils.serialize import dumps_yaml

    merged = yaml.safe_load(base) or {"schema": "2.0", "stages": {}}
    ours = yaml.safe_load(workspace) or {"stages": {}}
    wanted = set(stages)
    merged.setdefault("stages", {}).update(
        {name: entry for name, entry in ours["stages"].items() if is_selected(name, wanted)})
    return workspace if merged == ours else dumps_yaml(merged)


def _merged_ignore(base: str, workspace: str) -> str:
    """A .gitignore DVC writes beside outputs: the lines of both (outputs of other runs stay ignored)."""
    lines = base.splitlines() + [line for line in workspace.splitlines() if line not in base.splitlines()]
    return "\n".join(lines) + "\n"


def _commit_files(workspace: Path, parent: str, files: dict[str, str | Path], message: str) -> str | None:
    """A commit of ``parent``'s tree with ``files`` replaced, built in a private index (no working
    tree, no branch checked out); None when that tree is ``parent``'s."""
    with tempfile.TemporaryDirectory(prefix="citeworth-index-") as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(workspace, "read-tree", parent, env=env)
        for path, content in sorted(files.items()):
            if isinstance(content, Path):
                blob = git(workspace, "hash-object", "-w", "--", str(content), env=env)
            else:
                blob = git(workspace, "hash-object", "-w", "--stdin", env=env, stdin=content)
            git(workspace, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(workspace, "write-tree", env=env)
    if tree == git(workspace, "rev-parse", f"{parent}^{{tree}}"):
        return None
    return git(workspace, "commit-tree", tree, "-p", parent, "-m", message)


def tag_data_version(workspace: Path, source: str, release: str, commit: str, stages: Iterable[str],
                     replace: bool = False) -> dict[str, Any]:
    """Tag ``commit`` as the data version of ``source``'s ``release``; a rerun with the same
    outputs changes nothing.

    An existing tag whose recorded outputs differ from the commit's means the same source release
    produced different data (other code or params): that fails, unless ``replace`` (a forced
    rebuild) moves the tag to the new version.
    """
    stages = list(stages)
    tag = data_version_tag(source, release)
    if git(workspace, "tag", "--list", tag):
        tagged = _locked_outputs(_show(workspace, tag, "dvc.lock"), stages)
        if tagged == _locked_outputs(_show(workspace, commit, "dvc.lock"), stages):
            return {"tag": tag, "commit": git(workspace, "rev-parse", f"{tag}^{{commit}}"), "created": False}
        if not replace:
            raise StageFailed(f"{tag} already exists with different dataset hashes: the release was "
                              "rebuilt differently (check params and code); run with force to re-version")
    git(workspace, "tag", "--force", "--annotate", tag, "--message",
        f"citeworth dataset from {source} release {release}", commit)
    return {"tag": tag, "commit": commit, "created": True}


def _locked_outputs(lock_text: str, stages: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(path, md5) of the recorded outputs of each dvc.lock stage among ``stages``."""
    locked = (yaml.safe_load(lock_text) or {}).get("stages", {})
    wanted = set(stages)
    return {name: sorted((out["path"], out.get("md5", "")) for out in (entry or {}).get("outs", []))
            for name, entry in locked.items() if is_selected(name, wanted)}
