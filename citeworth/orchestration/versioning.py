"""Versioning a run's outputs: ``dvc commit`` and ``dvc push``, a git commit of the lock, data tags.

After the stages ran, the outputs are recorded in ``dvc.lock`` with ``dvc commit`` -- so ``dvc
status`` afterwards compares the same hashes ``dvc repro`` would have written -- pushed to the DVC
remote; the lock is committed and the data version tagged by source release in git.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from citeworth.core.errors import StageFailed

# dvc.yaml stages; a foreach or matrix name stands for all of its stages (curate: curate@citeworth and
# curate@baseline; train: train@<model> for each model).
DATASET_STAGES = ("download", "curate", "assemble", "related_work", "export", "validate")
MODEL_STAGES = ("train", "report", "domains", "transfer", "silver")
TAG_PREFIX = "data"
_GIT_IDENTITY = ("-c", "user.name=citeworth", "-c", "user.email=citeworth@localhost")


def dvc(project: Path, *args: str) -> str:
    """Run the DVC command line of this interpreter's environment in the project; fail clearly."""
    command = [sys.executable, "-m", "dvc", *args]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True)
    if done.returncode != 0:
        raise StageFailed(f"`dvc {' '.join(args)}` failed (exit {done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def is_up_to_date(project: Path, stages: Iterable[str]) -> bool:
    """True when dvc.lock records ``stages`` and their deps, params and outs match the workspace."""
    return not dvc_status(project, stages)


def dvc_stages_running(project: Path, stage: str) -> list[str]:
    """The dvc.yaml stages whose command is ``citeworth run STAGE`` (``curate_baseline``:
    ``curate@baseline``; ``train``: every ``train@<model>``)."""
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        return sorted(dvc_stage.name for dvc_stage in repo.index.stages
                      if dvc_stage.cmd.split()[:3] == ["citeworth", "run", stage])


def _selected(name: str, wanted: set[str]) -> bool:
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
        outs = [out for stage in repo.index.stages if _selected(stage.name, wanted)
                for out in stage.outs]
    relative = [(Path(os.path.relpath(out.fs_path, project)), out.use_cache) for out in outs]
    paths = {path.parent / ".gitignore" if cached else path for path, cached in relative}
    present = sorted(str(path) for path in paths if (project / path).is_file())
    if not present:
        return []
    ignored = set(git(project, "check-ignore", "--", *present, check=False).splitlines())
    return [path for path in present if path not in ignored]


def git(project: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *_GIT_IDENTITY, *args], cwd=project, capture_output=True, text=True)
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


def commit_version(project: Path, stages: Iterable[str], message: str) -> str | None:
    """Commit dvc.lock, params.yaml and the git-kept outputs of ``stages``; None if nothing changed."""
    paths = ["dvc.lock", "params.yaml", *git_tracked_outputs(project, stages)]
    git(project, "add", "--", *paths)
    if not git(project, "diff", "--cached", "--name-only", "--", *paths):
        return None
    git(project, "commit", "--quiet", "-m", message, "--", *paths)
    return git(project, "rev-parse", "HEAD")


def tag_data_version(project: Path, source: str, release: str, stages: Iterable[str],
                     replace: bool = False) -> dict[str, Any]:
    """Tag the commit holding this release's dataset; a rerun with the same outputs changes nothing.

    An existing tag whose recorded outputs differ from the workspace's means the same source
    release produced different data (other code or params): that fails, unless ``replace`` (a
    forced rebuild) moves the tag to the new version.
    """
    stages = list(stages)
    tag = data_version_tag(source, release)
    if git(project, "tag", "--list", tag):
        tagged = _locked_outputs(git(project, "show", f"{tag}:dvc.lock"), stages)
        if tagged == _locked_outputs((project / "dvc.lock").read_text(), stages):
            return {"tag": tag, "commit": git(project, "rev-parse", f"{tag}^{{commit}}"), "created": False}
        if not replace:
            raise StageFailed(f"{tag} already exists with different dataset hashes: the release was "
                              "rebuilt differently (check params and code); run with force to re-version")
    commit = commit_version(project, stages, f"Data version {tag}") or git(project, "rev-parse", "HEAD")
    git(project, "tag", "--force", "--annotate", tag, "--message",
        f"citeworth dataset from {source} release {release}", commit)
    return {"tag": tag, "commit": commit, "created": True}


def _locked_outputs(lock_text: str, stages: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(path, md5) of the recorded outputs of each dvc.lock stage among ``stages``."""
    locked = (yaml.safe_load(lock_text) or {}).get("stages", {})
    wanted = set(stages)
    return {name: sorted((out["path"], out.get("md5", "")) for out in (entry or {}).get("outs", []))
            for name, entry in locked.items() if _selected(name, wanted)}
