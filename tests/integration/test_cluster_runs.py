"""The README's backfill on the native Celery cluster: one run's tasks on several hosts sharing
nothing but the git remote, S3 and the broker.

`citeworth cluster up` over a fresh clone whose committed defaults train one TF-IDF model on a
budget: PostgreSQL, Redis, moto_server (S3), a bare git repository, the scheduler host (api-server,
scheduler, dag-processor, triggerer) and three worker hosts, each with its own clone, DVC cache,
AIRFLOW_HOME and HOME: cpu1 (queues cpu + versioning), cpu2 (cpu), gpu1 (gpu). Then the README's
backfill over the two demo releases plus a trigger. Every run is green on its first try, the tasks
of a run ran on more than one host, the train tasks only on gpu1, each release was versioned once
onto the git remote (tags) and S3 (a clean clone pulls it), each dataset is what `dvc repro` of its
release writes in a clean clone, and no task log names another host's folders. Then the faults: a
worker killed with `kill -9` in the middle of a curate shard task and the scheduler restarted
mid-run: the shard is retried on another host, the run completes, nothing half-written is on S3 and
the curated data is what a fresh curation writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from cluster_fixture import RunningCluster, cluster_dir, native_cluster, require_cluster_programs
from dvc_workspace import DATASET_TARGETS, dvc, fresh_workspace, git, locked_hashes, reproduced_workspace, run
from test_airflow_backfill import BACKFILL, RELEASES, _tiny_defaults

from citeworth.orchestration import cluster as native
from citeworth.orchestration.versioning import DATASET_STAGES

pytestmark = pytest.mark.slow


# Only the runs this test asks for (an unpaused weekly DAG would start one at once); a task whose
# worker died is failed (then retried) after a minute, not five.
SETTINGS = {"AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "60"}


class Deployment:
    """The running cluster with a token of its API's simple auth manager."""

    def __init__(self, running: RunningCluster, project: Path):
        self.running, self.cluster, self.project = running, running.cluster, project
        self.session = running.cluster.api_session()

    def airflow(self, *args: str) -> str:
        return self.running.airflow(*args).stdout

    def api(self, path: str) -> dict:
        return self.get_json(f"/api/v2{path}")

    def get_json(self, path: str) -> dict:
        response = self.session.get(f"{self.running.api_url}{path}", timeout=60)
        assert response.ok, f"{path}: {response.status_code} {response.text}"
        return response.json()

    def wait_for_runs(self, dag_id: str, count: int, timeout: float) -> list[dict]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            runs = self.api(f"/dags/{dag_id}/dagRuns")["dag_runs"]
            if len(runs) >= count and all(r["state"] in ("success", "failed") for r in runs):
                return runs
            time.sleep(5)
        pytest.fail(f"{dag_id}: runs not finished after {timeout}s: {runs}")

    def task_instances(self, dag_id: str, run_id: str) -> list[dict]:
        return self.api(f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances?limit=500")["task_instances"]

    def s3_objects(self, bucket: str) -> dict[str, bytes]:
        s3 = self.running.s3()
        keys = [item["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                for item in page.get("Contents", [])]
        return {key: s3.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, mirror):
    require_cluster_programs()
    project = fresh_workspace(tmp_path_factory.mktemp("cluster-project"))
    _tiny_defaults(project)
    root = cluster_dir()
    try:
        with native_cluster(project, root, cpu_workers=2, gpu_workers=1, settings=SETTINGS) as running:
            yield Deployment(running, project)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _s3_env(cluster: native.Cluster) -> dict[str, str]:
    """This test's environment with the cluster's S3 API and keys (as a user with access has them)."""
    shared = cluster.shared_env()
    return {**os.environ, **{key: value for key, value in shared.items() if key.startswith("AWS_")}}


def _ran(tasks: list[dict]) -> list[dict]:
    """Task instances that ran their work (not skipped)."""
    return [task for task in tasks if task["state"] == "success" and task["hostname"]]


def test_the_backfill_spreads_each_run_over_hosts_and_versions_to_the_remotes(deployment, tmp_path,
                                                                               tmp_path_factory):
    cluster = deployment.cluster
    began = time.perf_counter()
    deployment.airflow("backfill", "create", *BACKFILL)
    deployment.airflow("dags", "trigger", "citeworth_dataset")  # the newest release, on the defaults
    dataset_runs = deployment.wait_for_runs("citeworth_dataset", 9, timeout=2400)
    models_runs = deployment.wait_for_runs("citeworth_models", 2, timeout=1200)
    print(f"cluster: backfill of 8 runs + 1 trigger and 2 models runs in {time.perf_counter() - began:.0f} s")

    # Every run green on its first try.
    hosts_by_task: Counter = Counter()
    for dag_id, dag_runs in (("citeworth_dataset", dataset_runs), ("citeworth_models", models_runs)):
        for dag_run in dag_runs:
            assert dag_run["state"] == "success", dag_run
            tasks = deployment.task_instances(dag_id, dag_run["dag_run_id"])
            assert max(t["try_number"] for t in tasks) == 1, dag_run["dag_run_id"]
            ran = _ran(tasks)
            hosts_by_task.update((task["task_id"], task["hostname"]) for task in ran)
            if any(task["task_id"] == "version" for task in ran):  # a run that built something
                assert len({task["hostname"] for task in ran}) > 1, (dag_run["dag_run_id"], ran)
    print("tasks per (task, host):", dict(sorted(hosts_by_task.items())))
    trained_on = {host for (task, host) in hosts_by_task if task == "train_model"}
    assert trained_on == {"gpu1"}
    assert {task for (task, host) in hosts_by_task if host == "gpu1"} == {"train_model"}
    assert {host for (task, host) in hosts_by_task if task == "version"} == {"cpu1"}
    assert {"cpu1", "cpu2"} <= {host for (_, host) in hosts_by_task}

    # Two data versions on the git remote, the branch at the newest; their data on S3.
    bare = cluster.bare_repo
    tags = git(bare, "tag", "--list", "data/*").splitlines()
    assert tags == [f"data/demo/{release}" for release in RELEASES]
    assert yaml.safe_load(git(bare, "show", "HEAD:params.yaml"))["download"]["release"] == "demo-v2"
    assert "tfidf_lr" in json.loads(git(bare, "show", "HEAD:metrics/models.json"))
    # The results page on the API server host (whose clone no run touched) shows them.
    latest = deployment.get_json("/citeworth/api/latest")
    assert "tfidf_lr" in latest["models"] and sorted(latest["versions"]) == tags
    clones = {}
    for tag in tags:
        clone = clones[tag] = tmp_path / tag.replace("/", "-")
        run(["git", "clone", "--quiet", "--branch", tag, bare.as_uri(), str(clone)], tmp_path)
        dvc(clone, "pull", "--quiet", "--remote", "s3", *DATASET_TARGETS, env=_s3_env(cluster))

    # Each version's dataset is byte for byte what `dvc repro` of its release writes in a clean clone.
    repro = {"data/demo/demo-v1": tmp_path / "repro-demo-v1",
             "data/demo/demo-v2": reproduced_workspace(tmp_path_factory, tmp_path / "repro-demo-v2")[0]}
    run(["git", "clone", "--quiet", "--branch", tags[0], str(clones[tags[0]]), str(repro[tags[0]])], tmp_path)
    dvc(repro[tags[0]], "repro", *DATASET_TARGETS, timeout=900)
    for tag in tags:
        versioned = locked_hashes(clones[tag], list(DATASET_STAGES))
        assert locked_hashes(repro[tag], list(DATASET_STAGES)) == versioned, tag
        # what S3 gave the clean clone is what the version records (its upstream deps were not pulled)
        status = json.loads(dvc(clones[tag], "status", "--json", *DATASET_TARGETS).stdout or "{}")
        assert not [entry for entries in status.values() for entry in entries
                    if isinstance(entry, dict) and "changed outs" in entry], status

    # No task read another host's disk: no task log (in S3, as the UI shows them) names the
    # scheduler host's folders or the checkout the cluster was made from, nor two hosts' folders.
    hosts = {host.name: f"{cluster.host_dir(host.name)}/" for host in cluster.hosts}
    logs = deployment.s3_objects("citeworth-logs")
    assert len(logs) > 50
    for key, body in logs.items():
        text = body.decode(errors="replace")
        assert f"{deployment.project}/" not in text and hosts[native.SCHEDULER_HOST] not in text, key
        assert len([name for name, folder in hosts.items() if folder in text]) <= 1, key


def _wait_for_running(deployment: Deployment, run_id: str, task_id: str, timeout: float = 900) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for task in deployment.task_instances("citeworth_dataset", run_id):
            if task["task_id"] == task_id and task["state"] == "running" and task["hostname"]:
                return task
        time.sleep(0.5)
    pytest.fail(f"no {task_id} of {run_id} ran within {timeout}s")


def test_a_worker_killed_mid_shard_and_a_restarted_scheduler_lose_nothing(deployment, tmp_path):
    cluster = deployment.cluster
    # new baseline rules: every baseline shard is curated again (its fingerprint changed)
    conf = {"overrides": {"curate_baseline": {"rules": {"min_sentences": 2}}}}
    deployment.airflow("dags", "trigger", "citeworth_dataset", "--conf", json.dumps(conf))
    run_id = next(r["dag_run_id"] for r in deployment.api("/dags/citeworth_dataset/dagRuns")["dag_runs"]
                  if r["conf"] == conf)
    victim = _wait_for_running(deployment, run_id, "curate_baseline_shard")
    killed = victim["hostname"]
    os.killpg(cluster.pid(f"{killed}/worker"), signal.SIGKILL)  # the worker, its task and the stage child
    native.restart(cluster, f"{native.SCHEDULER_HOST}/scheduler")  # mid-run

    deadline = time.time() + 1200
    while (retried := next(t for t in deployment.task_instances("citeworth_dataset", run_id)
                           if t["task_id"] == victim["task_id"] and t["map_index"] == victim["map_index"])
           )["state"] != "success":
        assert time.time() < deadline and retried["state"] != "failed", retried
        time.sleep(3)
    assert retried["try_number"] == 2 and retried["hostname"] != killed  # redelivered to another host
    native.restart(cluster, f"{killed}/worker")  # back, e.g. for the versioning queue on cpu1
    deadline = time.time() + 1500
    while (state := deployment.api(f"/dags/citeworth_dataset/dagRuns/{run_id}")["state"]) == "running":
        assert time.time() < deadline, deployment.task_instances("citeworth_dataset", run_id)
        time.sleep(5)
    assert state == "success"

    # Nothing half-written reached S3: every DVC object holds the bytes its name (their md5) says.
    for key, body in deployment.s3_objects("citeworth-dvc").items():
        if key.startswith("store/files/md5/"):
            assert hashlib.md5(body).hexdigest() == "".join(key.split("/")[-2:]).removesuffix(".dir"), key
    # What the run versioned (an experiment: its own branch) is what a fresh curation writes.
    clone = tmp_path / "experiment"
    branch = f"runs/{re.sub(r'[^A-Za-z0-9._-]+', '_', run_id)}"
    run(["git", "clone", "--quiet", "--branch", branch, cluster.bare_repo.as_uri(), str(clone)], tmp_path)
    dvc(clone, "pull", "--quiet", "--remote", "s3", env=_s3_env(cluster))
    locked = locked_hashes(clone, ["curate"])
    dvc(clone, "repro", "--force", "--single-item", "curate@baseline", timeout=900)
    assert locked_hashes(clone, ["curate"]) == locked
