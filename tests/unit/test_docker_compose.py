"""The deployment files: the image builds on the official Airflow image of the locked version, and the
compose file validates (``docker compose config``, when a compose client is installed; no engine needed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker" / "compose.yaml"
SECRETS = {"POSTGRES_PASSWORD": "pw", "AIRFLOW_JWT_SECRET": "jwt", "CITEWORTH_S3_ACCESS_KEY": "key",
           "CITEWORTH_S3_SECRET_KEY": "secret", "REDIS_PASSWORD": "rpw", "AIRFLOW_API_SECRET_KEY": "api",
           "AIRFLOW_FERNET_KEY": "fernet", "CITEWORTH_GIT_REMOTE": "https://git.example.org/citeworth.git"}
AIRFLOW_SERVICES = ("airflow-init", "airflow-apiserver", "airflow-scheduler", "airflow-dag-processor",
                    "airflow-triggerer", "airflow-worker", "airflow-worker-gpu")


def _compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"],
                                                 capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def _config(env_file: Path) -> subprocess.CompletedProcess:
    command = _compose_command()
    if command is None:
        pytest.skip("no docker compose client installed")
    # Only the env file speaks: secrets set in the caller's environment would mask a missing one.
    env = {key: value for key, value in os.environ.items() if key not in SECRETS}
    return subprocess.run([*command, "--profile", "gpu", "-f", str(COMPOSE), "--env-file", str(env_file),
                           "config"], capture_output=True, text=True, timeout=60, env=env)


def test_image_builds_on_the_official_airflow_image_of_the_locked_version():
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    locked = re.search(r"^apache-airflow==(\S+)$", (ROOT / "requirements.lock").read_text(), re.M).group(1)
    assert f"ARG AIRFLOW_VERSION={locked}" in dockerfile
    assert re.search(r"^FROM apache/airflow:\$\{AIRFLOW_VERSION\}-python", dockerfile, re.M)
    assert "-r requirements.lock" in dockerfile


def test_compose_config_is_valid_with_celery_postgres_redis_gpu_queue_and_s3(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("".join(f"{key}={value}\n" for key, value in SECRETS.items()))
    done = _config(env_file)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    services = config["services"]
    assert {"postgres", "redis", "minio", "airflow-apiserver", "airflow-scheduler", "airflow-dag-processor",
            "airflow-triggerer", "airflow-worker", "airflow-worker-gpu"} <= set(services)
    env = services["airflow-worker"]["environment"]
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == "postgresql+psycopg2://airflow:pw@postgres:5432/airflow"
    assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://:rpw@redis:6379/0"
    assert env["AWS_ENDPOINT_URL_S3"] == "http://minio:9000" and env["CITEWORTH_DVC_REMOTE"] == "s3"
    assert env["CITEWORTH_GIT_REMOTE"] == SECRETS["CITEWORTH_GIT_REMOTE"]
    gpu = services["airflow-worker-gpu"]
    assert gpu["command"][-1] == "gpu" and "citeworth cluster worker" in gpu["command"][-2]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["capabilities"] == ["gpu"]


def test_compose_refuses_to_start_without_secrets(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("")
    done = _config(env_file)
    assert done.returncode != 0
    assert "docker/.env" in done.stderr  # the message says where the secret belongs


def test_grobid_profile_pins_its_image_binds_loopback_and_checks_isalive(mirror):
    """Read without a compose client: the service the pdf2tei stage's default URL expects. Its
    health check runs here against the recorded GROBID (tests/grobid_server.py) on another port."""
    from grobid_server import RecordedGrobid

    from citeworth.pdf.grobid import DEFAULT_URL

    grobid = yaml.safe_load(COMPOSE.read_text())["services"]["grobid"]
    assert grobid["profiles"] == ["grobid"]
    image, _, tag = grobid["image"].partition(":")
    assert image in {"lfoppiano/grobid", "grobid/grobid"} and re.fullmatch(r"\d+\.\d+\.\d+", tag)
    assert grobid["ports"] == ["127.0.0.1:8070:8070"] and DEFAULT_URL == "http://localhost:8070"
    check = grobid["healthcheck"]["test"]
    assert check[:2] == ["CMD", "bash"] and "/api/isalive" in check[-1]
    with RecordedGrobid(mirror) as server:
        command = ["bash", "-c", check[-1].replace("/8070", f"/{server.url.rsplit(':', 1)[1]}")]
        assert subprocess.run(command, timeout=30).returncode == 0
    assert subprocess.run(command, capture_output=True, timeout=30).returncode != 0  # nothing listens now


def test_share_nothing_form_no_checkout_mounted_one_shared_env_file_workers_through_the_jwt_check():
    """Read without a compose client: what makes the compose file the native cluster's topology."""
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    for name in AIRFLOW_SERVICES:
        service = services[name]
        assert service["env_file"] == "cluster.env", name
        mounted = [volume.split(":")[0] for volume in service.get("volumes", [])]
        assert not {"..", "."} & set(mounted), name
    assert (COMPOSE.parent / "cluster.env").is_file()
    for name, queues in (("airflow-worker", "cpu,versioning"), ("airflow-worker-gpu", "gpu")):
        shell, flag, script, queue_arg = services[name]["command"]
        assert (shell, flag, queue_arg) == ("bash", "-c", queues)
        assert 'git clone --quiet "$$CITEWORTH_GIT_REMOTE"' in script
        assert script.endswith('citeworth cluster worker --concurrency 1 --skip-serve-logs --queues "$$0"')
    example_lines = (COMPOSE.parent / ".env.example").read_text().splitlines()
    example = dict(line.split("=", 1) for line in example_lines if line and not line.startswith("#"))
    assert set(SECRETS) <= set(example)
