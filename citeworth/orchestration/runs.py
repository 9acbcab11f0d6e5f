"""A workspace per orchestrated run, and the atomic claim of a source release.

Each run (schedule, trigger, backfill, asset event) works in a git worktree of the project
repository at the commit it started from, under ``.dvc/tmp/runs/`` (git- and DVC-ignored) or
``$CITEWORTH_WORKSPACES``. Every worktree shares the repository's one DVC cache and links its
files from there (``reflink,hardlink,symlink``: never a copy), and its remotes, so a workspace costs
no disk for data and what a run commits lands where every other run finds it. Runs never see each
other's ``params.yaml``, ``raw/``, ``interim/`` or ``data/``; only the serialized versioning step
writes the repository's refs (``citeworth.orchestration.versioning.publish``).

A release is claimed by creating ``<git common dir>/citeworth/claims/<source>/<release>.json`` with
``link(2)``, which fails if the name exists: of any number of runs racing for one release exactly
one wins, the others learn who holds it.

Two forms, chosen by configuration. The *local* form above is for one host: the tasks of a run
may run in any worker process of that host, all in the one worktree. The *remote* form
(``$CITEWORTH_GIT_REMOTE``, the project's git remote) is for worker hosts that share nothing but
that git remote, the DVC remote (S3) and the broker: each host keeps its own clone
(``$CITEWORTH_PROJECT_DIR``) with its own DVC cache, and a run's workspace on a host is a worktree
of that clone at the run's start commit as the git remote has it. The opening task plans the run
(``dvc pull`` of what dvc.lock records, then ``plan_run``) and hands the plan on; every other task
joins the run on its host from that record (``join_workspace``) and moves outputs by content hash
through the DVC remote (``citeworth.orchestration.outputs``). Claims are refs on the git remote
(``citeworth.orchestration.git_remote``). No Airflow import here.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from citeworth.core.io import write_text
from citeworth.core.workspaces import workspace_path, workspaces_root
from citeworth.orchestration import git_remote
from citeworth.orchestration.versioning import dvc, git

log = logging.getLogger(__name__)

# No copies: a workspace's data are links into the shared cache (DVC tries these in order).
LINK_TYPES = "reflink,hardlink,symlink"
# Written into each workspace when it opens: which run owns it, from which commit.
RUN_FILE = ".citeworth-run.json"
PLAN_FILE = ".dvc/tmp/citeworth-plan.json"


def open_workspace(project: Path, run_id: str, start: str = "HEAD", remote: str | None = None,
                   data: bool = True) -> Path:
    """A git worktree of ``project`` at commit ``start`` for ``run_id``, sharing the project's DVC
    cache and remotes, with (``data``) the outputs its dvc.lock records linked in from the cache
    (the local form) or pulled from DVC remote ``remote`` (the remote form); those missing are left
    for the run to build. A retried call finds the workspace it made."""
    path = workspace_path(project, run_id)
    if not (path / RUN_FILE).is_file():
        url = git_remote.remote_url()
        commit = git_remote.resolve(project, url, start) if url else git(
            project, "rev-parse", "--verify", f"{start}^{{commit}}")
        _add_worktree(project, path, commit)
        if data and (path / "dvc.lock").is_file():  # from this host's cache, or the DVC remote into it
            recorded = ["pull", *(["--remote", remote] if remote else [])] if url else ["checkout"]
            dvc(path, *recorded, "--allow-missing", "--quiet")
        _mark_opened(path, run_id, commit)
    return path


def join_workspace(project: Path, run_id: str, record: dict[str, Any],
                   keep_days: float | None = None) -> Path:
    """The remote form's workspace of ``run_id`` on this host, made as the host that opened it made
    it (``record``: its start commit, the params the run applied, its plan) but with no outputs:
    each task pulls what it reads (``citeworth.orchestration.outputs``). Making it, the host first
    removes its workspaces opened more than ``keep_days`` ago: only the host that closes a run
    removes its own, and a host may never run the housekeeping task (a GPU host runs train tasks)."""
    from citeworth.orchestration.params_file import apply_params

    path = workspace_path(project, run_id)
    if not (path / RUN_FILE).is_file():
        if keep_days is not None:
            remove_stale_workspaces(project, keep_days)
        if git(project, "cat-file", "-t", record["start"], check=False) != "commit":
            git_remote.sync(project, git_remote.remote_url() or "")
        _add_worktree(project, path, record["start"])
        apply_params(path, record["params"])
        write_text(path / PLAN_FILE, json.dumps(record["plan"], sort_keys=True, indent=1) + "\n")
        _mark_opened(path, run_id, record["start"])
    return path


def _add_worktree(project: Path, path: Path, commit: str) -> None:
    # a half-made workspace of a killed attempt, or the record of one whose folder is gone (a disk
    # replaced, a folder removed by hand): git refuses to add a worktree where it still has one
    remove_workspace(project, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    git(project, "worktree", "add", "--detach", str(path), commit)
    _share_dvc(project, path)


def _mark_opened(path: Path, run_id: str, commit: str) -> None:
    write_text(path / RUN_FILE, json.dumps({"run_id": run_id, "start": commit, "opened": time.time()},
                                           sort_keys=True) + "\n")
    log.info("workspace of %s: %s at %s", run_id, path, commit[:12])


def _share_dvc(project: Path, workspace: Path) -> None:
    """Point the worktree's DVC at the project's cache (links, no copies) and remotes.

    ``.dvc/config.local`` is per checkout (git-ignored): it gets the project's own local settings
    (e.g. credentials-free remote overrides) plus the absolute cache folder and the absolute URL
    of each remote that is a local folder (relative ones would resolve inside the worktree).
    """
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        cache_dir = repo.cache.local_cache_dir
        remotes = {name: conf["url"] for name, conf in repo.config["remote"].items()
                   if "://" not in conf["url"]}
    from dvc.config import Config

    local_config = project / ".dvc" / "config.local"
    if local_config.is_file():
        shutil.copy(local_config, workspace / ".dvc" / "config.local")
    with Config(dvc_dir=str(workspace / ".dvc")).edit("local") as config:
        config["cache"]["dir"] = cache_dir
        config["cache"]["type"] = LINK_TYPES
        for name, url in sorted(remotes.items()):
            config["remote"].setdefault(name, {})["url"] = url


# The worktree the results page reads: the branch's latest versioned results, linked from the cache.
RESULTS_VIEW = "results"


def refresh_results_view(project: Path, commit: str, data: bool = True) -> Path:
    """Re-open the results view at ``commit`` (the branch's new tip), with its data or (not
    ``data``) only what git holds; its path."""
    close_workspace(project, RESULTS_VIEW)
    return open_workspace(project, RESULTS_VIEW, start=commit, data=data)


def results_view(project: Path) -> Path | None:
    """The results view if a run on the defaults made one."""
    path = workspace_path(project, RESULTS_VIEW)
    return path if (path / RUN_FILE).is_file() else None


def close_workspace(project: Path, run_id: str) -> None:
    """Remove ``run_id``'s workspace (its outputs are in the shared cache by now)."""
    remove_workspace(project, workspace_path(project, run_id))


def remove_workspace(project: Path, path: Path) -> None:
    if path.exists():
        # the worktree's data are read-only links: git may refuse, so remove the folder itself
        git(project, "worktree", "remove", "--force", "--force", str(path), check=False)
        shutil.rmtree(path, ignore_errors=True)
        log.info("removed workspace %s", path)
    git(project, "worktree", "prune")


def remove_stale_workspaces(project: Path, older_than_days: float, now: float | None = None) -> list[Path]:
    """Remove workspaces opened more than ``older_than_days`` ago (those of failed runs, kept for
    inspection); the removed folders."""
    root = workspaces_root(project)
    cutoff = (now or time.time()) - older_than_days * 86400
    keep = workspace_path(project, RESULTS_VIEW)
    stale = [path for path in sorted(root.iterdir()) if path.is_dir() and path != keep
             and _opened(path) < cutoff] if root.is_dir() else []
    for path in stale:
        remove_workspace(project, path)
    return stale


def _opened(workspace: Path) -> float:
    try:
        return float(json.loads((workspace / RUN_FILE).read_text())["opened"])
    except (OSError, ValueError, KeyError):
        return workspace.stat().st_mtime  # no run file: a half-made workspace


def run_record(workspace: Path) -> dict[str, Any]:
    """What ``open_workspace`` wrote: run id, start commit, time."""
    return json.loads((workspace / RUN_FILE).read_text())


def plan_run(workspace: Path) -> dict[str, Any]:
    """Which dvc.yaml stages this run must build: those ``dvc status`` reports changed in the
    workspace and every stage downstream of them. Written to the workspace once, in a serialized
    step, so the run's parallel tasks decide skip-or-run from the file, never by calling DVC."""
    import networkx as nx
    from dvc.repo import Repo

    from citeworth.orchestration.versioning import dvc_status

    changed = set(dvc_status(workspace))
    with Repo(str(workspace)) as repo:
        graph = repo.index.graph  # edges run from a stage to the stages it depends on
        stale = {stage.name for stage in graph.nodes if stage.name in changed}
        for stage in list(graph.nodes):
            if stage.name in changed:
                stale.update(downstream.name for downstream in nx.ancestors(graph, stage))
        commands = {stage.name: stage.cmd for stage in graph.nodes}
        outs = {stage.name: sorted(_relative(out.fs_path, workspace) for out in stage.outs)
                for stage in graph.nodes}
        deps = {stage.name: sorted(_relative(dep.fs_path, workspace) for dep in stage.deps)
                for stage in graph.nodes}
        uncached = sorted(_relative(out.fs_path, workspace) for stage in graph.nodes for out in stage.outs
                          if not out.use_cache)  # kept by git: every worktree has them
    plan = {"stale": sorted(stale), "commands": commands, "outs": outs, "deps": deps, "uncached": uncached}
    write_text(workspace / PLAN_FILE, json.dumps(plan, sort_keys=True, indent=1) + "\n")
    return plan


def _relative(path: str, workspace: Path) -> str:
    return os.path.relpath(path, workspace)


def plan_of(workspace: Path) -> dict[str, Any]:
    """The plan ``plan_run`` wrote."""
    return json.loads((workspace / PLAN_FILE).read_text())


def running(plan: dict[str, Any], stage: str) -> list[str]:
    """The dvc.yaml stages whose command runs citeworth stage ``stage``."""
    return [name for name, cmd in plan["commands"].items() if cmd.split()[:3] == ["citeworth", "run", stage]]


def is_current(workspace: Path, stage: str, dvc_stage: str | None = None) -> bool:
    """Does the run's plan find every dvc.yaml stage running citeworth stage ``stage`` (or just
    ``dvc_stage``) current? False for a stage no dvc.yaml stage runs (nothing vouches for it)."""
    plan = plan_of(workspace)
    stages = [dvc_stage] if dvc_stage else running(plan, stage)
    return bool(stages) and not set(stages) & set(plan["stale"])


# --- release claims ---------------------------------------------------------------------------------


def claim_path(project: Path, source: str, release: str) -> Path:
    common = Path(git(project, "rev-parse", "--git-common-dir"))
    root = common if common.is_absolute() else project / common
    return root / "citeworth" / "claims" / source / f"{release}.json"


def claim_release(project: Path, source: str, release: str, run_id: str) -> str | None:
    """Claim ``source``'s ``release`` for ``run_id``: None if this run holds it now (also when it
    already did: a retry), else the id of the run that holds it.

    The claim file is written under a temporary name and hard-linked to its final name: link(2)
    fails when that name exists, so one racer wins, and no reader ever sees a half-written claim.
    In the remote form the claim is a ref on the git remote (``git_remote.claim``).
    """
    if url := git_remote.remote_url():
        return git_remote.claim(project, url, source, release, run_id)
    path = claim_path(project, source, release)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = json.dumps({"run_id": run_id, "source": source, "release": release,
                         "claimed": time.time()}, sort_keys=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".claim-", delete=False) as handle:
        handle.write(record)
    try:
        os.link(handle.name, path)
        return None
    except FileExistsError:
        holder = claim_holder(project, source, release)
        return None if holder == run_id else holder or "an unknown run"
    finally:
        os.unlink(handle.name)


def claim_holder(project: Path, source: str, release: str) -> str | None:
    """The run that holds the claim of ``release`` (None: unclaimed)."""
    if url := git_remote.remote_url():
        return git_remote.claims(project, url).get((source, release))
    try:
        return json.loads(claim_path(project, source, release).read_text())["run_id"]
    except FileNotFoundError:
        return None


def release_claims(project: Path, run_id: str) -> list[Path] | list[str]:
    """Drop the claims ``run_id`` holds (its run failed), so a later run can build those releases:
    the claim files (local form), or ``<source>/<release>`` of the refs deleted on the git remote."""
    if url := git_remote.remote_url():
        return git_remote.drop_claims(project, url, run_id)
    root = claim_path(project, "_", "_").parents[1]
    dropped = []
    for path in sorted(root.glob("*/*.json")) if root.is_dir() else []:
        if json.loads(path.read_text()).get("run_id") == run_id:
            path.unlink(missing_ok=True)
            dropped.append(path)
            log.info("released the claim %s of failed run %s", path.relative_to(root), run_id)
    return dropped
