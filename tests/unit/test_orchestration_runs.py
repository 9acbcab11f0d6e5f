"""citeworth.orchestration.runs / experiments: a workspace per run, release claims, where results go.

Real git and DVC on a two-stage project the test writes (the real params.yaml, a tiny dvc.yaml).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from tiny_project import build_tiny_project

from citeworth.orchestration import experiments, params_file, runs, versioning


def _git(root: Path, *args: str) -> str:
    return versioning.git(root, *args)


def _dvc(root: Path, *args: str) -> str:
    return versioning.dvc(root, *args)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A committed project whose pipeline `dvc repro` built once (its lock and metric committed)."""
    return build_tiny_project(tmp_path_factory.mktemp("built") / "project")


@pytest.fixture()
def project(built: Path, tmp_path: Path) -> Path:
    """A copy of the built project for one test (``cp -a`` keeps the mtimes DVC's state relies on)."""
    subprocess.run(["cp", "-a", str(built), str(tmp_path / "project")], check=True)
    return tmp_path / "project"


def _inode(path: Path) -> int:
    return path.stat().st_ino


def test_a_workspace_is_a_worktree_at_the_start_commit_linking_the_shared_cache(project):
    start = _git(project, "rev-parse", "HEAD")
    workspace = runs.open_workspace(project, "scheduled__2024-01-01T00:00:00+00:00")
    assert workspace.parent == project / ".dvc" / "tmp" / "runs"
    assert _git(workspace, "rev-parse", "HEAD") == start
    assert (workspace / "out" / "first.txt").read_text() == "None"  # params.yaml's assemble.per_field
    # the data are links into the project's cache, not copies
    cached = [path for path in (project / ".dvc" / "cache" / "files").rglob("*") if path.is_file()]
    assert _inode(workspace / "out" / "first.txt") in {_inode(path) for path in cached}
    assert not (workspace / ".dvc" / "cache").exists()
    assert _dvc(workspace, "status", "--json").strip() in ("{}", "")  # everything current there
    # the project's own checkout sees nothing of it
    assert _git(project, "status", "--porcelain") == ""
    assert runs.open_workspace(project, "scheduled__2024-01-01T00:00:00+00:00") == workspace  # a retry
    runs.close_workspace(project, "scheduled__2024-01-01T00:00:00+00:00")
    assert not workspace.exists()
    assert _git(project, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_workspace_whose_folder_vanished_is_made_again(project):
    """Its disk replaced, or its folder removed by hand: git still lists the worktree and would
    refuse to add it again, so a retry of the run could never open it."""
    workspace = runs.open_workspace(project, "its-disk-was-replaced")
    subprocess.run(["rm", "-rf", str(workspace)], check=True)
    assert runs.open_workspace(project, "its-disk-was-replaced") == workspace
    assert (workspace / "out" / "first.txt").read_text() == "None"


def test_run_ids_that_differ_only_in_punctuation_get_different_workspaces(tmp_path):
    assert runs.workspace_path(tmp_path, "manual__a:b") != runs.workspace_path(tmp_path, "manual__a+b")


def test_housekeeping_removes_only_workspaces_older_than_its_limit(project):
    old = runs.open_workspace(project, "failed-long-ago")
    new = runs.open_workspace(project, "failed-today")
    record = runs.run_record(old)
    (old / runs.RUN_FILE).write_text(json.dumps({**record, "opened": time.time() - 10 * 86400}))
    assert runs.remove_stale_workspaces(project, older_than_days=7) == [old]
    assert not old.exists() and new.exists()


def test_a_host_joining_a_run_first_removes_its_own_workspaces_older_than_the_limit(project):
    left = runs.open_workspace(project, "closed-on-another-host")
    recent = runs.open_workspace(project, "running")
    record = runs.run_record(left)
    (left / runs.RUN_FILE).write_text(json.dumps({**record, "opened": time.time() - 10 * 86400}))
    joined = runs.join_workspace(project, "joined", {"start": record["start"], "params": {},
                                                     "plan": runs.plan_run(recent)}, keep_days=7)
    assert runs.run_record(joined)["start"] == record["start"]
    assert not left.exists() and recent.exists()


def test_the_plan_marks_changed_stages_and_everything_downstream(project):
    workspace = runs.open_workspace(project, "run")
    plan = runs.plan_run(workspace)
    assert plan["stale"] == []
    params_file.apply_params(workspace, {"assemble": {"per_field": 7}})
    assert runs.plan_run(workspace)["stale"] == ["first", "second"]
    assert not runs.is_current(workspace, "anything", "second")
    assert _git(project, "diff", "--stat") == ""  # the form went into the workspace only


def _build(workspace: Path, seed: int) -> None:
    params_file.apply_params(workspace, {"assemble": {"per_field": seed}})
    _dvc(workspace, "repro", "--quiet", "--no-commit")  # as the DAG's tasks: outputs, no lock yet


def test_runs_from_one_start_commit_version_one_after_another_without_touching_the_checkout(project):
    start = _git(project, "rev-parse", "HEAD")
    one, two = runs.open_workspace(project, "one"), runs.open_workspace(project, "two")
    _build(one, 7)
    _build(two, 8)
    form = {"source": "demo", "release": None}
    first = experiments.version_run(project, "one", ["first", "second"], {**form, "push": True},
                                    "demo", "demo-v1")
    second = experiments.version_run(project, "two", ["first", "second"], {**form, "push": False},
                                     "demo", "demo-v2")
    assert first["created"] and second["created"] and first["tag"] == "data/demo/demo-v1"
    assert _git(project, "rev-parse", "main") == second["commit"]
    assert _git(project, "rev-parse", f"{second['commit']}^") == first["commit"]
    assert _git(project, "rev-parse", f"{first['commit']}^") == start
    for tag, seed in (("data/demo/demo-v1", 7), ("data/demo/demo-v2", 8)):
        assert yaml.safe_load(_git(project, "show", f"{tag}:params.yaml"))["download"]["release"] == tag[-7:]
        assert json.loads(_git(project, "show", f"{tag}:stats.json")) == {"n": len(str(seed))}
        assert _git(project, "show", f"{tag}:plots/curve.csv") == f"x,y\n0,{seed}"  # a folder git keeps
        png = subprocess.run(["git", "show", f"{tag}:plots/curve.png"], cwd=project, capture_output=True)
        assert png.stdout == b"\x89PNG" + str(seed).encode()  # binary files as they are
    # the checkout's files are as they were; only its branch moved
    assert _git(project, "diff", "--quiet", start, "--", ".") == ""
    assert any((project.parent / "storage").rglob("*"))  # pushed into the project's remote
    again = experiments.version_run(project, "two", ["first", "second"], {**form, "push": False},
                                    "demo", "demo-v2")
    assert not again["created"] and again["commit"] == second["commit"]


def test_an_older_release_versioned_after_a_newer_one_is_tagged_beside_the_branch(project):
    newer, older = runs.open_workspace(project, "newer"), runs.open_workspace(project, "older")
    _build(newer, 8)
    _build(older, 7)
    form = {"source": "demo", "push": False}
    v2 = experiments.version_run(project, "newer", ["first", "second"], form, "demo", "demo-v2")
    v1 = experiments.version_run(project, "older", ["first", "second"], form, "demo", "demo-v1")
    assert _git(project, "rev-parse", "main") == v2["commit"]  # the branch keeps the newest data
    assert v1["created"] and _git(project, "rev-parse", f"{v1['commit']}^") == v2["commit"]
    assert _git(project, "rev-parse", "data/demo/demo-v1^{commit}") == v1["commit"]


def test_a_run_with_its_own_values_is_an_experiment_until_promoted(project):
    start = _git(project, "rev-parse", "HEAD")
    workspace = runs.open_workspace(project, "manual__x")
    form = {"models": None, "overrides": {"assemble": {"per_field": 5}}, "push": False}
    assert experiments.is_experiment(form)
    assert not experiments.is_experiment({"source": "demo", "data_version": "data/demo/v1", "push": False})
    params_file.apply_params(workspace, params_file.form_updates(form))
    _dvc(workspace, "repro", "--quiet", "--no-commit")
    result = experiments.version_run(project, "manual__x", ["first", "second"], form)
    assert result["ref"] == "refs/heads/runs/manual__x" and result["created"]
    assert _git(project, "rev-parse", "main") == start  # the defaults did not move
    assert experiments.experiments(project) == ["runs/manual__x"]
    assert yaml.safe_load(_git(project, "show", "runs/manual__x:params.yaml"))["assemble"]["per_field"] == 5
    promoted = experiments.promote(project, "runs/manual__x", "main")
    assert _git(project, "rev-parse", "main") == promoted["commit"]
    assert yaml.safe_load(_git(project, "show", "main:params.yaml"))["assemble"]["per_field"] == 5
    assert _git(project, "show", "main:dvc.lock") == _git(project, "show", "runs/manual__x:dvc.lock")
    assert _git(project, "worktree", "list", "--porcelain").count("worktree ") == 2  # only the run's


def _claim(args: tuple[str, str]) -> str | None:
    project, run_id = args
    return runs.claim_release(Path(project), "demo", "demo-v1", run_id)


def test_of_processes_racing_for_one_release_exactly_one_wins(project):
    racers = [f"backfill__2024-01-{day:02d}" for day in range(1, 13)]
    with multiprocessing.get_context("spawn").Pool(6) as pool:
        answers = pool.map(_claim, [(str(project), run_id) for run_id in racers])
    winners = [run_id for run_id, holder in zip(racers, answers, strict=True) if holder is None]
    assert len(winners) == 1
    assert set(answers) == {None, winners[0]}  # every loser learns who holds it
    assert runs.claim_holder(project, "demo", "demo-v1") == winners[0]
    assert runs.claim_release(project, "demo", "demo-v1", winners[0]) is None  # its retry keeps it


def test_of_threads_racing_one_wins_and_a_failed_run_hands_its_claim_back(project):
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: runs.claim_release(project, "demo", "demo-v2", f"run{n}"),
                                range(32)))
    assert answers.count(None) == 1
    winner = f"run{answers.index(None)}"
    assert not list(runs.claim_path(project, "demo", "demo-v2").parent.glob(".claim-*"))  # no temp left
    assert runs.release_claims(project, "someone-else") == []
    assert runs.release_claims(project, winner) == [runs.claim_path(project, "demo", "demo-v2")]
    assert runs.claim_release(project, "demo", "demo-v2", "run-after") is None


def test_the_results_view_of_a_host_no_run_versions_from_follows_the_git_remote(project, tmp_path,
                                                                                monkeypatch):
    remote, api = tmp_path / "remote.git", tmp_path / "api"  # the API server host's clone, made first
    _git(tmp_path, "clone", "--quiet", "--bare", str(project), str(remote))
    _git(tmp_path, "clone", "--quiet", str(remote), str(api))
    monkeypatch.setenv("CITEWORTH_GIT_REMOTE", str(remote))
    # a worker host versions a result onto the remote's branch, and an experiment beside it
    (project / "stats.json").write_text('{"n": 99}')
    _git(project, "commit", "--quiet", "-am", "a new result")
    _git(project, "push", "--quiet", str(remote), "main", "main:refs/heads/runs/manual__x")

    view = experiments.follow_remote(api, str(remote))
    assert view == runs.results_view(api) and json.loads((view / "stats.json").read_text()) == {"n": 99}
    assert experiments.experiments(api) == ["runs/manual__x"]
    assert not (view / "out" / "second.txt").exists()  # git's files only: no data pulled
    (project / "stats.json").write_text('{"n": 100}')
    _git(project, "commit", "--quiet", "-am", "another")
    _git(project, "push", "--quiet", str(remote), "main")
    assert experiments.follow_remote(api, str(remote)) == view
    assert json.loads((view / "stats.json").read_text()) == {"n": 100}
    assert _git(api, "status", "--porcelain", "--untracked-files=no") == ""  # its own checkout: as it was


def test_the_promote_command_lists_experiments(project, capsys):
    assert subprocess.run([sys.executable, "-m", "citeworth.cli", "promote", "--project", str(project)],
                          capture_output=True, text=True, env={**os.environ}).returncode == 0
