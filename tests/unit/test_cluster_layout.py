"""The native cluster's layout and host environments, without starting anything: each host's
folders and settings its own, the caller's Airflow / AWS settings kept out, the secrets private."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from citeworth.orchestration.cluster import Cluster, ClusterError, main, up


@pytest.fixture()
def cluster(tmp_path, monkeypatch) -> Cluster:
    for name, value in {"AIRFLOW_HOME": "/callers/airflow", "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                        "AWS_PROFILE": "callers", "CITEWORTH_PROJECT_DIR": "/callers/project",
                        "CITEWORTH_MIRROR": "/mirror", "PYTHONPATH": "/callers/code"}.items():
        monkeypatch.setenv(name, value)
    made = Cluster(tmp_path / "cluster")
    made.create(tmp_path, cpu_workers=2, gpu_workers=1, settings={"EXTRA": "1"})
    return made


def test_hosts_and_their_queues(cluster):
    assert [(host.name, host.queues) for host in cluster.hosts] == [
        ("scheduler", ()), ("cpu1", ("cpu", "versioning")), ("cpu2", ("cpu",)), ("gpu1", ("gpu",))]
    assert cluster.components()[-3:] == ["cpu1/worker", "cpu2/worker", "gpu1/worker"]


def test_each_host_environment_names_only_its_own_folders(cluster):
    envs = {host.name: cluster.host_env(host.name) for host in cluster.hosts}
    own_keys = ("HOME", "AIRFLOW_HOME", "PYTHONPATH", "CITEWORTH_PROJECT_DIR", "CITEWORTH_WORKSPACES",
                "AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__CORE__PLUGINS_FOLDER")
    for name, env in envs.items():
        for key in own_keys:
            assert Path(env[key]).is_relative_to(cluster.host_dir(name)), (name, key)
        for other in set(envs) - {name}:
            elsewhere = f"{cluster.host_dir(other)}/"
            assert not any(elsewhere in value for value in env.values()), (name, other)
        assert env["CITEWORTH_HOST"] == name and env["EXTRA"] == "1"
        assert env["CITEWORTH_MIRROR"] == "/mirror" and "AWS_PROFILE" not in env
        assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
        assert env["CITEWORTH_GIT_REMOTE"] == cluster.bare_repo.as_uri()
        database = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        assert database.endswith(f"@127.0.0.1:{cluster.ports['postgres']}/airflow")
    secrets = cluster.secrets()
    assert {env["AIRFLOW__API_AUTH__JWT_SECRET"] for env in envs.values()} == {secrets["AIRFLOW_JWT_SECRET"]}


def test_secrets_are_private_generated_once_and_the_folder_is_git_ignored(cluster, tmp_path):
    assert stat.S_IMODE(cluster.secrets_file.stat().st_mode) == 0o600
    before = cluster.secrets()
    assert len(before["AIRFLOW_JWT_SECRET"]) >= 64  # PyJWT warns below 64 bytes for HS512
    ports = cluster.ports
    cluster.create(tmp_path, cpu_workers=1, gpu_workers=0, settings={})
    assert cluster.secrets() == before and cluster.ports == ports
    assert [host.name for host in cluster.hosts] == ["scheduler", "cpu1"]
    assert (cluster.root / ".gitignore").read_text() == "*\n"


def test_status_and_down_of_a_stopped_or_missing_cluster(cluster, tmp_path, capsys):
    assert main(["status", "--dir", str(cluster.root)]) == 1
    assert "stopped" in capsys.readouterr().out
    assert main(["down", "--dir", str(cluster.root)]) == 0
    assert main(["down", "--dir", str(tmp_path / "none")]) == 0
    assert main(["status", "--dir", str(tmp_path / "none")]) == 1
    assert "no cluster in" in capsys.readouterr().err


def test_up_on_a_running_cluster_refuses_another_shape_naming_what_it_runs(cluster, tmp_path, capsys):
    """`up` on a running cluster starts only what stopped; asked for another shape it starts nothing."""
    cluster.pid_file("redis").parent.mkdir(parents=True, exist_ok=True)
    cluster.pid_file("redis").write_text(str(os.getpgrp()))  # a process group that runs: this one
    assert main(["up", "--dir", str(cluster.root), "--cpu-workers", "3"]) == 1
    assert "runs with --cpu-workers 2; `citeworth cluster down` first" in capsys.readouterr().err
    with pytest.raises(ClusterError, match=f"runs with --project {tmp_path}, --gpu-workers 1;"):
        up(cluster, project=tmp_path / "elsewhere", gpu_workers=0)
    assert [component for component, pid in cluster.status().items() if pid] == ["redis"]
