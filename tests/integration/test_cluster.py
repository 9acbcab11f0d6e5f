"""The native multi-host Celery cluster (``citeworth cluster``), real processes, one cluster for all
of its tests (starting one takes minutes): the docs' backfill on hosts sharing nothing but the git
remote, S3 and the broker.

`citeworth cluster up` over a fresh clone whose committed defaults train one TF-IDF model on a
budget (plus a probe DAG): PostgreSQL, Redis, moto_server (S3), a bare git repository, the
scheduler host (api-server, scheduler, dag-processor, triggerer) and three worker hosts, each with
its own clone, DVC cache, AIRFLOW_HOME and HOME: cpu1 (queues cpu + versioning), cpu2 (cpu), gpu1
(gpu). In order:

- every component healthy, each worker on its queues; a probe task per queue on the right host,
  with only its own folders and environment, its log in S3; a worker with another jwt_secret refused;
- the docs' backfill over the two demo releases plus a trigger: every run green on its first
  try, the tasks of a run on more than one host, the train tasks only on gpu1, each release versioned
  once onto the git remote (tags) and S3 (a clean clone pulls it), each dataset what `dvc repro` of
  its release writes in a clean clone, no task log naming another host's folders;
- the faults: a worker killed with `kill -9` in the middle of a curate shard task and the scheduler
  restarted mid-run: the shard is retried on another host, the run completes, nothing half-written
  is on S3 and the curated data is what a fresh curation writes;
- ``down`` leaves no process behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from cluster_fixture import (
    RunningCluster,
    cluster_command,
    cluster_dir,
    native_cluster,
    require_cluster_programs,
)
from dvc_workspace import DATASET_TARGETS, dvc, fresh_workspace, git, locked_hashes, reproduced_workspace, run
from test_airflow_backfill import BACKFILL, RELEASES, _tiny_defaults
from test_airflow_dags import DATA_DOCS_PAGE, RESULT_PAGES, assert_results_need_a_login

from citeworth.orchestration import cluster as native
from citeworth.orchestration.airflow_worker import JWT_REFUSAL
from citeworth.orchestration.cluster import Host, worker_command, worker_queues
from citeworth.orchestration.versioning import DATASET_STAGES

pytestmark = pytest.mark.slow

PROBE_DAG = Path(__file__).with_name("cluster_dags") / "cluster_probe.py"
WORKER_QUEUES = {"cpu1": ["cpu", "versioning"], "cpu2": ["cpu"], "gpu1": ["gpu"]}
HOSTS = ("scheduler", *WORKER_QUEUES)
# Only the runs the tests ask for (an unpaused weekly DAG would start one at once); a task whose
# worker died is failed (then retried) after a minute, not five.
SETTINGS = {"AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "60"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, mirror):
    require_cluster_programs()
    project = fresh_workspace(tmp_path_factory.mktemp("cluster-project"))
    _tiny_defaults(project)
    shutil.copy(PROBE_DAG, project / "dags" / PROBE_DAG.name)
    git(project, "add", "dags")
    git(project, "commit", "--quiet", "-m", "the cluster test's probe DAG")
    root = cluster_dir()
    try:
        with native_cluster(project, root / "cluster", cpu_workers=2, gpu_workers=1,
                            settings=SETTINGS) as running:
            yield running
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_up_starts_every_component_healthy_and_each_worker_on_its_queues(cluster):
    status = cluster_command("status", "--dir", str(cluster.root))
    assert status.returncode == 0, status.stdout
    assert "stopped" not in status.stdout
    import requests

    health = requests.get(f"{cluster.api_url}/api/v2/monitor/health", timeout=10).json()
    assert {name: entry["status"] for name, entry in health.items()} == {
        "metadatabase": "healthy", "scheduler": "healthy", "triggerer": "healthy", "dag_processor": "healthy"}
    assert worker_queues(cluster.cluster) == WORKER_QUEUES


def _probed(log: str) -> dict[str, str]:
    for line in log.splitlines():
        try:
            line = json.loads(line).get("event", "")
        except (ValueError, AttributeError):
            pass
        if isinstance(line, str) and line.startswith("PROBE "):
            return json.loads(line.removeprefix("PROBE "))
    raise AssertionError(f"no PROBE line in the task log:\n{log[-2000:]}")


def test_tasks_run_on_their_queues_hosts_in_their_own_folders_and_log_to_s3(cluster):
    run_id = "probe-1"
    cluster.airflow("dags", "trigger", "cluster_probe", "--run-id", run_id)
    assert cluster.wait_for_run("cluster_probe", run_id) == "success", cluster.task_instances("cluster_probe")
    ran_on = {task: host for task, _, _, host, _ in cluster.task_instances("cluster_probe", run_id)}
    assert ran_on["on_gpu"] == "gpu1" and ran_on["on_versioning"] == "cpu1"
    assert ran_on["on_cpu"] in {"cpu1", "cpu2"}

    prefix = f"airflow/dag_id=cluster_probe/run_id={run_id}"
    logs = {task: cluster.wait_for_log(f"{prefix}/task_id={task}/attempt=1.log") for task in ran_on}
    others = {host: str(cluster.host_dir(host)) for host in HOSTS}
    for task, log in logs.items():
        host = ran_on[task]
        seen = _probed(log)
        assert seen["CITEWORTH_HOST"] == host
        own = cluster.host_dir(host)
        for name in ("HOME", "AIRFLOW_HOME", "CITEWORTH_PROJECT_DIR", "CITEWORTH_WORKSPACES", "cwd",
                     "citeworth", "dag_file"):
            assert Path(seen[name]).is_relative_to(own), (task, name, seen[name])
        assert seen["CITEWORTH_TRAIN_QUEUE"] == "gpu"
        assert seen["CITEWORTH_GIT_REMOTE"] == cluster.cluster.bare_repo.as_uri()
        assert seen["AWS_ENDPOINT_URL_S3"] == cluster.s3_endpoint
        # No path of another host, nor the project checkout the remote was made from, in its log.
        for other, path in others.items():
            assert other == host or f"{path}/" not in log, (task, other)
        assert str(cluster.project) not in log


def test_a_worker_with_another_jwt_secret_is_refused(cluster):
    """The cluster's own workers passed the same check with the shared secret (they started through
    `citeworth cluster worker`), so the check is not a refusal of everyone."""
    extra = Host("extra", ("probe-only",))  # a queue no task uses: were it to start, it would take no work
    refused = subprocess.run(worker_command(extra),
                             env={**cluster.env("cpu2"), "AIRFLOW__API_AUTH__JWT_SECRET": "x" * 64},
                             cwd=cluster.host_dir("cpu2"), capture_output=True, text=True, timeout=180)
    assert refused.returncode == 3
    assert JWT_REFUSAL in refused.stderr and "403" in refused.stderr
    assert "extra" not in worker_queues(cluster.cluster)


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
def deployment(cluster):
    return Deployment(cluster, cluster.project)


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

    # Every run green on its first try; each release built by exactly one run (every other run found
    # its release versioned or claimed and skipped).
    assert sorted(dag_run["run_type"] for dag_run in dataset_runs) == ["backfill"] * 8 + ["manual"]
    builders = 0
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
                builders += dag_id == "citeworth_dataset"
    assert builders == len(RELEASES)
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
    # The dataset asset announced each version, and each version started one models run on it.
    events = deployment.api("/assets/events")["asset_events"]
    assert sorted(event["extra"]["tag"] for event in events) == tags
    assert sorted(dag_run["conf"]["data_version"] for dag_run in models_runs) == tags
    # The results page on the API server host (whose clone no run touched) shows them, to logged-in
    # users only (its results view holds what git holds: no Data Docs there).
    latest = deployment.get_json("/citeworth/api/latest")
    assert "tfidf_lr" in latest["models"] and sorted(latest["versions"]) == tags
    token = deployment.session.headers["Authorization"].removeprefix("Bearer ")
    pages_of_git = tuple(page for page in RESULT_PAGES if page != DATA_DOCS_PAGE)
    assert_results_need_a_login(cluster.api_url, token, pages=pages_of_git)
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
    # The killed worker brought back as the docs say (e.g. cpu1, the versioning queue's only host):
    # `up` on the running cluster starts just what stopped.
    again = cluster_command("up", "--dir", str(cluster.root))
    assert again.returncode == 0, again.stderr
    assert f"started: {killed}/worker\n" in again.stdout
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


def _processes_under(root: Path) -> list[str]:
    """Command lines of live processes that mention the cluster's folder."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and str(root) in cmdline:
            found.append(f"{proc.name}: {cmdline}")
    return found


def test_down_stops_every_process_and_can_run_again(cluster):
    groups = [int(pid_file.read_text()) for pid_file in (cluster.root / "pids").rglob("*.pid")]
    assert len(groups) == 10  # postgres, redis, s3, 4 scheduler components, 3 workers
    assert _processes_under(cluster.root)
    cluster.stop()
    for group in groups:
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)
    assert _processes_under(cluster.root) == []
    assert cluster_command("status", "--dir", str(cluster.root)).returncode == 1
    cluster.stop()  # nothing left to stop: still exit 0
