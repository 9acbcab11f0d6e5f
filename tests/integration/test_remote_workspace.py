"""The remote workspace form: two "hosts" that share nothing but a bare git remote and an S3 API.

Each host is a clone of the bare repository with its own DVC cache; the S3 API is a real
moto_server over HTTP, the project's DVC remote ``s3``. Host A opens a run and builds ``first``;
host B joins the run from A's record, gets A's output by hash, builds ``second`` and versions the
run: the version lands on the git remote and its data on S3, and a clean clone pulls it.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest
from tiny_project import build_tiny_project

from citeworth.core.errors import StageFailed
from citeworth.orchestration import experiments, git_remote, outputs, params_file, runs
from citeworth.orchestration.versioning import dvc, git

BUCKET = "citeworth-remote-form"
RUN = "manual__2024-05-01T00:00:00+00:00"


@pytest.fixture()
def cluster(tmp_path, moto, monkeypatch):
    """The bare remote (built from the tiny project, its data pushed to S3) and two host clones."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto["endpoint"])
    boto3.client("s3", endpoint_url=moto["endpoint"]).create_bucket(Bucket=BUCKET)
    origin = build_tiny_project(tmp_path / "origin")
    dvc(origin, "remote", "add", "s3", f"s3://{BUCKET}/store")
    git(origin, "commit", "--quiet", "-am", "the S3 remote")
    dvc(origin, "push", "--quiet", "--remote", "s3")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(bare))
    monkeypatch.setenv(git_remote.REMOTE_ENV, bare.as_uri())
    hosts = {}
    for name in ("a", "b"):
        git(tmp_path, "clone", "--quiet", bare.as_uri(), str(tmp_path / name))
        hosts[name] = tmp_path / name
    return bare, hosts


def _step(workspace: Path, name: str) -> None:
    subprocess.run(["python", "step.py", name], cwd=workspace, check=True)


def test_a_run_spans_two_hosts_by_hash_and_versions_to_the_remotes(cluster, tmp_path):
    bare, hosts = cluster
    # host A opens the run with its own value and builds `first`
    opened = runs.open_workspace(hosts["a"], RUN, remote="s3")
    updates = params_file.form_updates({"sample_size": 7})
    params_file.apply_params(opened, updates)
    plan = runs.plan_run(opened)
    assert plan["stale"] == ["first", "second"]
    record = {"start": runs.run_record(opened)["start"], "params": updates, "plan": plan}
    _step(opened, "first")
    sent = outputs.push_outputs(opened, plan["outs"]["first"], "s3")
    assert list(sent) == ["out/first.txt"]

    # host B joins from the record alone: the same commit and params, no outputs yet
    joined = runs.join_workspace(hosts["b"], RUN, json.loads(json.dumps(record)))
    assert joined != opened and not str(joined).startswith(str(hosts["a"]))
    assert (joined / "params.yaml").read_text() == (opened / "params.yaml").read_text()
    with pytest.raises(StageFailed, match="out/first.txt is rebuilt by this run"):
        outputs.fetch_inputs(joined, plan, ["second"], {}, "s3")  # never the old data
    outputs.fetch_inputs(joined, plan, ["second"], {path: [value] for path, value in sent.items()}, "s3")
    assert (joined / "out" / "first.txt").read_text() == "7"
    _step(joined, "second")
    sent.update(outputs.push_outputs(joined, plan["outs"]["second"], "s3"))

    # host B versions the run: as a run with its own values, onto runs/<run> on the git remote
    produced = {path: [value] for path, value in sent.items()}
    outputs.fetch_inputs(joined, plan, ["first", "second"], produced, "s3", outs=True)
    form = {"sample_size": 7, "dvc_remote": "s3"}
    version = experiments.version_run(hosts["b"], RUN, ["first", "second"], form)
    assert version["created"] and version["ref"] == f"refs/heads/{experiments.experiment_branch(RUN)}"
    assert git(bare, "rev-parse", version["ref"]) == version["commit"]

    # a clean clone of the remotes has the version, its data from S3
    clean = tmp_path / "clean"
    branch = experiments.experiment_branch(RUN)
    git(tmp_path, "clone", "--quiet", "--branch", branch, bare.as_uri(), str(clean))
    dvc(clean, "pull", "--quiet", "--remote", "s3")
    assert (clean / "out" / "second.txt").read_text() == "77"
    assert dvc(clean, "status", "--json").strip() in ("{}", "")


def test_folders_several_tasks_wrote_are_their_union(cluster):
    _, hosts = cluster
    opened = runs.open_workspace(hosts["a"], RUN, remote="s3")
    other = runs.open_workspace(hosts["b"], RUN, remote="s3")
    for workspace, shard in ((opened, "one"), (other, "two")):
        (workspace / "shards").mkdir()
        (workspace / "shards" / f"{shard}.jsonl").write_text(shard)
    sent = [outputs.push_outputs(workspace, ["shards"], "s3")["shards"] for workspace in (opened, other)]
    runs.close_workspace(hosts["a"], RUN)
    fresh = runs.open_workspace(hosts["a"], RUN, remote="s3")
    outputs.pull_outputs(fresh, {"shards": sent}, "s3")
    assert sorted(path.name for path in (fresh / "shards").iterdir()) == ["one.jsonl", "two.jsonl"]


def test_hosts_racing_for_a_release_on_the_git_remote_one_wins_and_a_failure_hands_it_back(cluster):
    _, hosts = cluster
    racers = [(hosts["a" if n % 2 else "b"], f"backfill__2024-01-{n:02d}") for n in range(1, 9)]
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda racer: runs.claim_release(racer[0], "demo", "demo-v1", racer[1]),
                                racers))
    winners = [run_id for (_, run_id), holder in zip(racers, answers, strict=True) if holder is None]
    assert len(winners) == 1 and set(answers) == {None, winners[0]}
    assert runs.claim_holder(hosts["b"], "demo", "demo-v1") == winners[0]
    assert runs.claim_release(hosts["a"], "demo", "demo-v1", winners[0]) is None  # its retry keeps it
    assert runs.release_claims(hosts["a"], "someone-else") == []
    assert runs.release_claims(hosts["b"], winners[0]) == ["demo/demo-v1"]
    assert runs.claim_release(hosts["a"], "demo", "demo-v1", "run-after") is None


def test_publishing_onto_a_branch_another_host_moved_builds_on_its_tip(cluster):
    bare, hosts = cluster
    for host, run_id in ((hosts["a"], "run-a"), (hosts["b"], "run-b")):  # both start from the same tip
        runs.open_workspace(host, run_id, remote="s3")
    for host, run_id, sample_size in ((hosts["a"], "run-a", 3), (hosts["b"], "run-b", 4)):
        workspace = runs.workspace_path(host, run_id)
        params_file.apply_params(workspace, params_file.form_updates({"sample_size": sample_size}))
        _step(workspace, "first")
        experiments.version_run(host, run_id, ["first"], {"dvc_remote": "s3"})
    assert git(bare, "log", "--format=%s", "-3", "main").splitlines() == [
        "Model results (run-b)", "Model results (run-a)", "the S3 remote"]
