"""The env-file reader the native cluster shares with docker/compose.yaml: Compose's syntax and
interpolation rules, and the project's docker/cluster.env read with and without its secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeworth.orchestration.envfile import EnvFileError, interpolate, parse_env, read_env_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "expected"), [
    ("${A}", "a"), ("$A/x", "a/x"), ("${UNSET}", ""), ("$UNSET", ""),
    ("${A:-d}", "a"), ("${UNSET:-d}", "d"), ("${EMPTY:-d}", "d"), ("${EMPTY-d}", ""), ("${UNSET-d}", "d"),
    ("${A:+alt}", "alt"), ("${EMPTY:+alt}", ""), ("${EMPTY+alt}", "alt"), ("${UNSET+alt}", ""),
    ("${UNSET:-${A}}", "a"), ("${UNSET:-${UNSET2:-deep}}/end", "deep/end"),
    ("$$A", "$A"), ("cost: 5$", "cost: 5$"), ("$1", "$1"),
    ('{"url": "${A:-http://h:1}"}', '{"url": "a"}'),
])
def test_interpolation_follows_compose(text, expected):
    assert interpolate(text, {"A": "a", "EMPTY": ""}) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("${UNSET:?set UNSET in docker/.env}", "UNSET: set UNSET in docker/.env"),
    ("${EMPTY:?needed}", "EMPTY: needed"),
    ("${UNSET?}", "UNSET: required variable is not set"),
    ("${A", "unclosed"), ("${UNSET:-x", "unclosed"), ("${-x}", "bad variable name"),
])
def test_required_and_malformed_expressions_fail_naming_the_variable(text, message):
    with pytest.raises(EnvFileError, match=message.replace("$", r"\$").replace("{", r"\{")):
        interpolate(text, {"A": "a", "EMPTY": ""})


def test_empty_but_set_passes_the_plain_required_form():
    assert interpolate("${EMPTY?needed}", {"EMPTY": ""}) == ""


def test_env_file_lines_quotes_comments_and_earlier_keys():
    text = "\n".join([
        "# a comment", "", "PLAIN=v1 # trailing comment", "HASH=v#not-a-comment",
        'DOUBLE="a b # kept\\tand ${PLAIN}" # comment', "SINGLE='${PLAIN} $$ literal'",
        "export EXPORTED=yes", "  SPACED = ${PLAIN}/x", "FROM_ENV=${OUTSIDE:-none}",
        'ESCAPED="say \\"hi\\""', "EARLIER_WINS=${PLAIN}", "EMPTY=",
    ])
    assert parse_env(text, {"OUTSIDE": "out", "PLAIN": "shadowed"}) == {
        "PLAIN": "v1", "HASH": "v#not-a-comment", "DOUBLE": "a b # kept\tand v1",
        "SINGLE": "${PLAIN} $$ literal", "EXPORTED": "yes", "SPACED": "v1/x", "FROM_ENV": "out",
        "ESCAPED": 'say "hi"', "EARLIER_WINS": "v1", "EMPTY": ""}


@pytest.mark.parametrize(("line", "message"), [
    ("no equals sign", "line 1: not KEY=VALUE"), ('A="open', "no closing"), ("A='x' y", "after the closing"),
    ("A=${B:?B is required}", r"line 1 \(A\): B: B is required"),
])
def test_bad_lines_fail_with_their_number(line, message):
    with pytest.raises(EnvFileError, match=message):
        parse_env(line, {})


SECRETS = {name: f"<{name}>" for name in (
    "AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY", "AIRFLOW_FERNET_KEY", "POSTGRES_PASSWORD",
    "REDIS_PASSWORD", "CITEWORTH_S3_ACCESS_KEY", "CITEWORTH_S3_SECRET_KEY", "CITEWORTH_GIT_REMOTE")}


def test_cluster_env_defaults_to_the_compose_services_and_takes_secrets_by_reference():
    import json

    env = read_env_file(ROOT / "docker" / "cluster.env", SECRETS)
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == (
        "postgresql+psycopg2://airflow:<POSTGRES_PASSWORD>@postgres:5432/airflow")
    assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://:<REDIS_PASSWORD>@redis:6379/0"
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-apiserver:8080/execution/"
    assert env["AIRFLOW__API_AUTH__JWT_SECRET"] == "<AIRFLOW_JWT_SECRET>"
    connection = json.loads(env["AIRFLOW_CONN_CITEWORTH_S3"])
    assert connection["extra"]["endpoint_url"] == env["AWS_ENDPOINT_URL_S3"] == "http://minio:9000"
    # Long tasks: the broker waits longer than the longest task (6 h) before redelivering.
    assert int(env["AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT"]) > 6 * 3600
    assert int(env["AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT"]) >= 24 * 3600
    assert env["AIRFLOW__CELERY__WORKER_PREFETCH_MULTIPLIER"] == "1"
    assert env["CITEWORTH_TRAIN_QUEUE"] == "gpu" and env["CITEWORTH_GIT_REMOTE"]  # the remote form
    text = (ROOT / "docker" / "cluster.env").read_text()
    assert not any(value in text for value in SECRETS.values())


@pytest.mark.parametrize("missing", sorted(set(SECRETS) - {"CITEWORTH_GIT_REMOTE"}))
def test_cluster_env_refuses_a_missing_secret_naming_it(missing):
    with pytest.raises(EnvFileError, match=missing):
        read_env_file(ROOT / "docker" / "cluster.env", {k: v for k, v in SECRETS.items() if k != missing})
