"""Where a run's results go: the project branch (defaults) or an experiment ``runs/<run>``.

A run whose form only names what to build (source, release, the data version) or how to store it
(push, remote, force) runs on the defaults and moves the project branch. Any other value (models,
seeds, sample size, overrides) changes only that run: its params, dvc.lock and metrics are
committed on the branch ``runs/<run>`` (``git branch --list 'runs/*'``), from the commit the run
started at. ``citeworth promote runs/<run>`` makes one the branch's defaults on purpose.
"""

from __future__ import annotations

import argparse
import functools
import logging
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from citeworth.core.errors import StageFailed
from citeworth.orchestration import git_remote, runs
from citeworth.orchestration.params_file import changed_values, form_updates
from citeworth.orchestration.versioning import (
    branch_release,
    data_version_tag,
    git,
    publish,
    push,
    record_outputs,
    tag_data_version,
)

log = logging.getLogger(__name__)

EXPERIMENT_PREFIX = "runs/"
# Form fields that choose what a run builds or where its results go, not how: a run with only
# these is a run on the defaults.
CHOICES = ("source", "release", "data_version", "force", "push", "dvc_remote")


def is_experiment(form: dict[str, Any]) -> bool:
    """Does this run form change any default (a value other than the CHOICES)?"""
    return any(value not in (None, {}, []) for field, value in form.items() if field not in CHOICES)


def experiment_branch(run_id: str) -> str:
    """``runs/<run id>`` as a valid branch name (``:`` and ``+`` of Airflow run ids replaced)."""
    return EXPERIMENT_PREFIX + re.sub(r"[^A-Za-z0-9._-]+", "_", run_id)


def experiments(project: Path) -> list[str]:
    """The experiment branches, newest first (none outside a git repository)."""
    return git(project, "for-each-ref", "--sort=-committerdate", "--format=%(refname:short)",
               f"refs/heads/{EXPERIMENT_PREFIX}", check=False).splitlines()


def version_run(project: Path, run_id: str, stages: list[str], form: dict[str, Any],
                source: str | None = None, release: str | None = None) -> dict[str, Any]:
    """Record what run ``run_id`` built of ``stages`` in its workspace (``dvc commit``, ``dvc push``
    unless the form says no) and commit it: onto the project's checked-out branch for a run on the
    defaults, tagged as the data version of ``source``'s ``release`` when given; onto its own
    experiment branch otherwise. Call it one run at a time (the DAGs' versioning pool)."""
    workspace = runs.workspace_path(project, run_id)
    record_outputs(workspace, stages)
    if form.get("push", True):
        push(workspace, stages, form.get("dvc_remote"))
    experiment = is_experiment(form)
    url = git_remote.remote_url()
    if url:
        git_remote.sync(project, url)
    if experiment:
        ref, message = f"refs/heads/{experiment_branch(run_id)}", f"Experiment {run_id}"
    else:
        ref = _default_branch(project, url)
        message = (f"Data version {data_version_tag(source, release)} ({run_id})" if source and release
                   else f"Model results ({run_id})")
    choices = {**form, **({"source": source, "release": release} if source and release else {})}
    seen = _tracking(ref) if url else ref  # the ref as this clone knows it
    newer = source and release and not experiment and _holds_newer_release(workspace, seen, source, release)
    publish_onto = functools.partial(publish, workspace, stages, message,
                                     param_updates=form_updates(choices, workspace),
                                     start=runs.run_record(workspace)["start"])
    if url:
        version = _publish_remote(project, url, ref, publish_onto, move=not newer)
    else:
        version = publish_onto(ref=ref, move=not newer)
        if not experiment and version["created"] and not newer:
            runs.refresh_results_view(project, version["commit"])
    version["ref"] = ref
    if source and release and not experiment:
        version.update(tag_data_version(workspace, source, release, version["commit"], stages,
                                        replace=bool(form.get("force"))))
        if url and version["created"]:
            git_remote.push_tag(project, url, version["tag"], force=bool(form.get("force")))
    return version


def follow_remote(project: Path, url: str) -> Path:
    """The remote form's results view on a host no run versions from (the API server's): the git
    remote's tags and experiment branches fetched into ``project``, and the view at the remote's
    default branch, moved when that moved. Only what git holds (the metrics, tables and plots):
    the page needs no data pulled."""
    experiments = f"refs/heads/{EXPERIMENT_PREFIX}*"
    git_remote.sync(project, url, f"+{experiments}:{experiments}")
    tip = git(project, "rev-parse", "--verify", _tracking(_default_branch(project, url)))
    with git_remote.locked(project, "citeworth-results"):  # the page's server may run several processes
        view = runs.results_view(project)
        if view is None or runs.run_record(view)["start"] != tip:
            view = runs.refresh_results_view(project, tip, data=False)
    return view


def _default_branch(project: Path, url: str | None) -> str:
    """The ref a run on the defaults moves: the project's checked-out branch, or the git remote's
    default branch in the remote form."""
    if url:
        return f"refs/heads/{git_remote.default_branch(project, url)}"
    if ref := git(project, "symbolic-ref", "--quiet", "HEAD", check=False):
        return ref
    raise StageFailed(f"{project} has no branch checked out: a run on the defaults moves that branch")


def _tracking(ref: str) -> str:
    return f"{git_remote.TRACKING}/{ref.removeprefix('refs/heads/')}"


def _publish_remote(project: Path, url: str, ref: str, publish_onto, move: bool,
                    attempts: int = 3) -> dict[str, Any]:
    """Publish onto the git remote's ``ref`` by compare-and-swap from the tip this clone fetched;
    when another host moved it in between, fetch and build on the new tip again."""
    for _ in range(attempts):
        tip = git(project, "rev-parse", "--verify", "--quiet", _tracking(ref), check=False) or None
        version = publish_onto(ref=_tracking(ref), move=False)
        if not (move and version["created"]):
            return version
        if git_remote.push_ref(project, url, version["commit"], ref, tip):
            return version
        git_remote.sync(project, url)
    raise StageFailed(f"{ref} on {url} moved {attempts} times while this run published onto it")


def _holds_newer_release(workspace: Path, ref: str, source: str, release: str) -> bool:
    """Does ``ref`` already hold a data version of a newer release of ``source``? Then an older
    release that finished late is tagged beside the branch, which keeps the newest data."""
    from citeworth.download.releases import is_newer

    held = branch_release(workspace, ref)
    if not held or held[0] != source or held[1] == release:
        return False
    if is_newer(source, held[1], release) and git(workspace, "tag", "--list", data_version_tag(*held)):
        log.info("%s holds %s release %s, newer than %s: the branch stays", ref, source, held[1], release)
        return True
    return False


def promote(project: Path, experiment: str, branch: str | None = None) -> dict[str, Any]:
    """Make experiment ``experiment`` the defaults of ``branch`` (the checked-out one if None): its
    params changes, dvc.lock entries and git-kept results, onto the branch's tip."""
    branch = branch or git(project, "symbolic-ref", "--short", "HEAD")
    start = git(project, "rev-parse", "--verify", f"{experiment}^{{commit}}")
    parent = git(project, "rev-parse", f"{start}^")
    updates = changed_values(*(yaml.safe_load(git(project, "show", f"{commit}:params.yaml")) or {}
                         for commit in (parent, start)))
    stages = sorted((yaml.safe_load(git(project, "show", f"{start}:dvc.lock")) or {}).get("stages", {}))
    workspace = runs.open_workspace(project, f"promote-{experiment}", start=start)
    try:
        result = publish(workspace, stages, f"Promote {experiment}",
                         ref=f"refs/heads/{branch}", start=start, param_updates=updates)
    finally:
        runs.close_workspace(project, f"promote-{experiment}")
    log.info("promoted %s onto %s: %s", experiment, branch, result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="citeworth promote",
        description="Make a run's experiment (branch runs/<run id>, see `git branch --list 'runs/*'`) "
        "the defaults: its params changes, dvc.lock entries and metrics are committed onto the branch.")
    parser.add_argument("experiment", nargs="?", help="the experiment branch; none: list them")
    parser.add_argument("--branch", help="the branch to promote onto (default: the checked-out one)")
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the project checkout")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    if not args.experiment:
        print("\n".join(experiments(args.project)))
        return 0
    result = promote(args.project.resolve(), args.experiment, args.branch)
    print(f"{args.experiment} -> {args.branch or 'the checked-out branch'}: {result['commit']}"
          + ("" if result["created"] else " (nothing to change)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
