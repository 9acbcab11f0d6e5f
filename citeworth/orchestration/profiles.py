"""A params profile's own build: ``make study`` runs params/study.yaml in a workspace of its own and
versions it on a branch, never touching the checkout's (the demo's) outputs.

    citeworth profile open study      # the workspace at HEAD with the profile in its params.yaml
    citeworth profile version study   # its dvc.lock, params.yaml and git-kept outputs onto runs/study
    citeworth profile path study      # where it is

The workspace is a git worktree of the project (``core.workspaces.profile_workspace``) sharing the
project's DVC cache, like an orchestrated run's. Opened again at a newer commit it moves there and
keeps what it built: its dvc.lock and the git-kept outputs it wrote (metrics, tables) stay, and its
params.yaml is the new commit's with the profile laid over it, so ``dvc repro`` redoes only the
stages whose code or params changed. Its branch ``runs/<profile>`` (an experiment: the results page
shows it, ``citeworth promote`` could make it the defaults) holds one commit on top of the code it
ran: dvc.lock, params.yaml, metrics, tables and plots. ``citeworth check --model study`` scores with
its best model.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

import yaml

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_text
from citeworth.core.params import ParamsError, load_document
from citeworth.core.workspaces import PROFILE_RUN_PREFIX, profile_workspace
from citeworth.orchestration import runs
from citeworth.orchestration.experiments import EXPERIMENT_PREFIX
from citeworth.orchestration.params_file import apply_params, changed_values, profile_file, profile_updates
from citeworth.orchestration.versioning import git, publish

log = logging.getLogger(__name__)


def open_profile(project: Path, name: str) -> Path:
    """The profile's workspace at the project's HEAD, its params.yaml the profile's (see the module)."""
    profile_file(project, name)  # fail before making anything
    workspace = profile_workspace(project, name)
    head = git(project, "rev-parse", "HEAD")
    if not (workspace / runs.RUN_FILE).is_file():
        runs.open_workspace(project, PROFILE_RUN_PREFIX + name, start=head, data=False)
    elif runs.run_record(workspace)["start"] != head:
        _move(workspace, head)
    apply_params(workspace, profile_updates(workspace, name))
    return workspace


def _move(workspace: Path, commit: str) -> None:
    """Check ``commit`` out in the workspace, keeping the files the build changed (dvc.lock, git-kept
    outputs) but params.yaml, which the caller writes from the new commit's."""
    changed = [path for path in git(workspace, "diff", "--name-only", "HEAD").splitlines()
               if path != "params.yaml"]
    kept = {path: (workspace / path).read_bytes() for path in changed if (workspace / path).is_file()}
    git(workspace, "checkout", "--quiet", "--force", "--detach", commit)
    for path, content in kept.items():
        (workspace / path).write_bytes(content)
    record = runs.run_record(workspace)
    write_text(workspace / runs.RUN_FILE, json.dumps({**record, "start": commit}, sort_keys=True) + "\n")
    log.info("workspace %s moved to %s (kept: %s)", workspace, commit[:12],
             ", ".join(sorted(kept)) or "nothing")


def version_profile(project: Path, name: str) -> dict[str, Any]:
    """Commit the profile's build onto ``runs/<name>``: one commit on top of the code it ran (the
    branch is moved there when that code changed)."""
    workspace = profile_workspace(project, name)
    if not (workspace / "dvc.lock").is_file():
        raise StageFailed(f"{workspace} holds no build of profile {name!r}: run `make {name}` first")
    start = runs.run_record(workspace)["start"]
    ref = f"refs/heads/{EXPERIMENT_PREFIX}{name}"
    tip = git(project, "rev-parse", "--verify", "--quiet", ref, check=False)
    if tip and git(project, "rev-parse", f"{tip}^") != start:
        git(project, "update-ref", "-d", ref, tip)  # built on other code: start again from this one
    stages = sorted((yaml.safe_load((workspace / "dvc.lock").read_text()) or {}).get("stages", {}))
    code_params = yaml.safe_load(git(workspace, "show", f"{start}:params.yaml")) or {}
    updates = changed_values(code_params, load_document(profile_file(workspace, name)))
    version = publish(workspace, stages, f"Profile {name} at {start[:12]}", ref=ref, start=start,
                      param_updates=updates)
    return {**version, "ref": ref, "workspace": str(workspace)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="citeworth profile",
        description="A params profile's own build (params/<name>.yaml, e.g. study): its workspace, a git "
        "worktree of the project at HEAD sharing its DVC cache, and its results on branch runs/<name>. "
        "`make study` runs `open`, the pipeline in the workspace, then `version`.")
    parser.add_argument("action", choices=("open", "version", "path"),
                        help="open: make or move the workspace and print its path; version: commit the "
                        "build onto runs/<name>; path: print the workspace's path")
    parser.add_argument("name", help="the profile: params/<name>.yaml (e.g. study)")
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the project checkout")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s", stream=sys.stderr)
    project = args.project.resolve()
    try:
        if args.action == "open":
            print(open_profile(project, args.name))
        elif args.action == "path":
            print(profile_workspace(project, args.name))
        else:
            version = version_profile(project, args.name)
            print(f"{version['ref']}: {version['commit']}" + ("" if version["created"] else " (unchanged)"))
    except (ParamsError, StageFailed) as exc:
        print(f"citeworth profile: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
