"""The native multi-host cluster (``citeworth cluster``), real processes: every component healthy,
each worker host on its queues with folders and an environment of its own, task logs in S3, a
worker with another jwt_secret refused, ``down`` leaving nothing behind. One cluster for the module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cluster_fixture import cluster_command, cluster_dir, native_cluster, require_cluster_programs
from dvc_workspace import fresh_workspace, git

from citeworth.orchestration.cluster import JWT_REFUSAL, Host, worker_command, worker_queues

pytestmark = pytest.mark.slow

PROBE_DAG = Path(__file__).with_name("cluster_dags") / "cluster_probe.py"
WORKER_QUEUES = {"cpu1": ["cpu", "versioning"], "cpu2": ["cpu"], "gpu1": ["gpu"]}
HOSTS = ("scheduler", *WORKER_QUEUES)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_cluster_programs()
    project = fresh_workspace(tmp_path_factory.mktemp("project"))
    shutil.copy(PROBE_DAG, project / "dags" / PROBE_DAG.name)
    git(project, "add", "dags")
    git(project, "commit", "--quiet", "-m", "the cluster test's probe DAG")
    root = cluster_dir()
    try:
        # Only the probe's runs: no scheduled run of the citeworth DAGs (setup unpauses them).
        with native_cluster(project, root / "cluster",
                            settings={"AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False"}) as running:
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
