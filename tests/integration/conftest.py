"""Fixtures of the integration tests: a real S3 API server on loopback (``moto_server`` over HTTP),
with fake credentials and no endpoint or profile of the user's in the environment; an Airflow
metadata DB migrated once for the run."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from dvc_workspace import run, tool_env
from session_builds import built_once


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def aws_env():
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                            "AWS_DEFAULT_REGION": "us-east-1"}.items():
            patch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(scope="module")
def moto(aws_env, tmp_path_factory):
    """A real moto_server on 127.0.0.1, recording requests to a file; stopped after the module."""
    port = free_port()
    recording = tmp_path_factory.mktemp("moto") / "recording.jsonl"
    beside_python = Path(sys.executable).with_name("moto_server")
    executable = beside_python if beside_python.exists() else shutil.which("moto_server")
    process = subprocess.Popen(
        [str(executable), "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, "MOTO_RECORDER_FILEPATH": str(recording)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{endpoint}/moto-api/", timeout=1)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.1)
        yield {"endpoint": endpoint, "port": port, "recording": recording}
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def migrated_db(tmp_path_factory) -> Path:
    """An Airflow metadata DB (SQLite) migrated once for the run; each test copies it into its own
    AIRFLOW_HOME (``test_airflow_dags.airflow_env``)."""
    def migrate(home: Path) -> None:
        run([sys.executable, "-m", "airflow", "db", "migrate"], home,
            env=tool_env(AIRFLOW_HOME=str(home), AIRFLOW__CORE__LOAD_EXAMPLES="False"), timeout=300)

    return built_once(tmp_path_factory, "airflow_template", migrate) / "airflow.db"
