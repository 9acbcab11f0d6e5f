"""The native multi-host cluster (``citeworth cluster``) for integration tests: real PostgreSQL,
Redis, moto_server, a bare git remote and Airflow's api-server, scheduler, dag-processor, triggerer
and Celery workers, every host a folder of its own.

    with native_cluster(project, root) as cluster:      # project: a git checkout (its commits travel)
        cluster.airflow("dags", "trigger", "citeworth_dataset")
        cluster.task_instances("citeworth_dataset")       # task, state, hostname (the host's name)

Skips (or fails under CI=true) when redis-server or PostgreSQL is not installed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from programs import installed

from citeworth.orchestration.cluster import Cluster

UP_TIMEOUT_S = 420


def require_cluster_programs() -> None:
    installed("redis-server", package="redis-server", needed_for="the native Airflow cluster's broker")
    installed("initdb", *map(str, sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))),
              package="postgresql", needed_for="the native Airflow cluster's metadata DB")


def cluster_command(*args: str, timeout: float = UP_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citeworth.cli", "cluster", *args], capture_output=True,
                          text=True, timeout=timeout)


@dataclass
class RunningCluster:
    cluster: Cluster

    @property
    def root(self) -> Path:
        return self.cluster.root

    @property
    def project(self) -> Path:
        """The checkout whose commits the cluster's git remote got."""
        return Path(self.cluster.state()["project"])

    @property
    def ports(self) -> dict[str, int]:
        return self.cluster.ports

    @property
    def api_url(self) -> str:
        return self.cluster.api_url

    @property
    def s3_endpoint(self) -> str:
        return self.cluster.s3_endpoint

    def host_dir(self, host: str) -> Path:
        return self.cluster.host_dir(host)

    def env(self, host: str) -> dict[str, str]:
        return self.cluster.host_env(host)

    def airflow(self, *args: str, host: str = "scheduler", check: bool = True,
                timeout: float = 300) -> subprocess.CompletedProcess:
        """``airflow ARGS`` on ``host`` (its environment and folder)."""
        done = subprocess.run([sys.executable, "-m", "airflow", *args], env=self.env(host),
                              cwd=self.host_dir(host), capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            pytest.fail(f"airflow {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
        return done

    def query(self, sql: str, *params) -> list[tuple]:
        """Rows of ``sql`` on the metadata DB."""
        import psycopg2

        connection = psycopg2.connect(host="127.0.0.1", port=self.ports["postgres"], dbname="airflow",
                                      user="airflow", password=self.cluster.secrets()["POSTGRES_PASSWORD"])
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()
        finally:
            connection.close()

    def task_instances(self, dag_id: str, run_id: str | None = None) -> list[tuple]:
        """(task_id, map_index, state, hostname, queue) of the DAG's task instances (of one run)."""
        return self.query("SELECT task_id, map_index, state, hostname, queue FROM task_instance "
                          "WHERE dag_id = %s AND (%s IS NULL OR run_id = %s) ORDER BY task_id, map_index",
                          dag_id, run_id, run_id)

    def wait_for_run(self, dag_id: str, run_id: str, timeout_s: float = 300) -> str:
        """The final state of the DAG run (fails the test when it is not final within the time)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            rows = self.query("SELECT state FROM dag_run WHERE dag_id = %s AND run_id = %s", dag_id, run_id)
            if rows and rows[0][0] in ("success", "failed"):
                return rows[0][0]
            time.sleep(2)
        pytest.fail(f"run {run_id} of {dag_id} not finished after {timeout_s} s: "
                    f"{self.task_instances(dag_id, run_id)}")

    def s3(self):
        return self.cluster.s3()

    def wait_for_log(self, key: str, timeout_s: float = 60) -> str:
        """The task log at ``key`` in the logs bucket (a worker uploads it once the task has ended)."""
        s3 = self.s3()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return s3.get_object(Bucket="citeworth-logs", Key=key)["Body"].read().decode()
            except s3.exceptions.NoSuchKey:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def stop(self) -> None:
        # components this process (re)started are its children: stop and reap them here, or `down`
        # (another process) would wait on their zombies for good
        self.cluster.stop(*self.cluster.started)
        done = cluster_command("down", "--dir", str(self.root))
        assert done.returncode == 0, done.stderr


def cluster_dir(prefix: str = "citeworth-cluster-") -> Path:
    """A folder for a cluster that the ``postgres`` user can reach when the tests run as root
    (pytest's own temporary folders are private to root, and PostgreSQL refuses to run as root)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o711)
    return root


@contextlib.contextmanager
def native_cluster(project: Path, root: Path, cpu_workers: int = 2, gpu_workers: int = 1,
                   settings: dict[str, str] | None = None) -> Iterator[RunningCluster]:
    """A cluster in ``root`` whose git remote holds ``project``'s commits, ``settings`` in every host's
    environment; stopped on the way out."""
    require_cluster_programs()
    done = cluster_command("up", "--dir", str(root), "--project", str(project), "--cpu-workers",
                           str(cpu_workers), "--gpu-workers", str(gpu_workers),
                           *(f"--set={name}={value}" for name, value in (settings or {}).items()))
    running = RunningCluster(Cluster(root))
    try:
        assert done.returncode == 0, f"citeworth cluster up failed:\n{done.stderr[-5000:]}"
        yield running
    finally:
        if os.path.exists(root / "cluster.json"):
            running.stop()
