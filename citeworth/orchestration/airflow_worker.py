"""The entry point of an Airflow worker host: ``citeworth cluster worker ARGS``.

Every worker host of a deployment starts this way (docker/compose.yaml's workers, a real machine,
the native cluster's hosts): it first signs a token with the host's ``[api_auth] jwt_secret`` and
shows it to the API server's execution API, then becomes ``airflow celery worker ARGS``. Airflow
itself would start a worker whose secret differs, and only its served logs would fail later.

This is the one library module that imports Airflow (see docs/ARCHITECTURE.md): it runs in the
process that is about to be Airflow's worker, with Airflow's own JWT code, so the check signs
exactly as the scheduler does. Nothing a stage, a task body or the results page runs imports it.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

from citeworth.orchestration.workspace import STAGE_FORK_ENV

JWT_REFUSAL = "this host's jwt_secret differs from the API server's"
# What the stages import that costs seconds: sentence splitting (spaCy, which imports torch), the
# models (transformers), moving outputs (DVC's S3 remote). Import only, nothing run: a fork of a
# process in which torch has computed can deadlock, one in which it was only imported cannot.
PRELOADED = ("spacy", "transformers", "sklearn", "dvc.repo", "dvc_s3", "s3fs")


class WorkerRefused(RuntimeError):
    """This host must not start a worker; the message says why."""


def check_jwt_secret(execution_api_url: str, timeout_s: float = 120) -> None:
    """Sign a token with this host's ``[api_auth] jwt_secret`` the way the scheduler signs task tokens
    and show it to the execution API: 403 means the API server would refuse every token this host
    signs (and the log requests it checks), so the host's configuration is wrong."""
    import uuid

    import requests
    from airflow.api_fastapi.auth.tokens import JWTGenerator, get_signing_args
    from airflow.configuration import conf

    generator = JWTGenerator(valid_for=60, issuer=conf.get("api_auth", "jwt_issuer", fallback=None),
                             audience=conf.get_mandatory_list_value("execution_api", "jwt_audience")[0],
                             **get_signing_args(make_secret_key_if_needed=False))
    token = generator.generate({"sub": str(uuid.uuid4())})
    url = f"{execution_api_url.rstrip('/')}/variables/citeworth-jwt-secret-check"
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            answer = requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
            break
        except (requests.ConnectionError, requests.Timeout) as exc:  # not up yet, or busy
            if time.monotonic() > deadline:
                raise WorkerRefused(f"the execution API {execution_api_url} does not answer: {exc}") from None
            time.sleep(2)
    if answer.status_code in (401, 403):
        raise WorkerRefused(f"{JWT_REFUSAL}: the execution API {execution_api_url} refused a token signed "
                            f"with it ({answer.status_code} {answer.text.strip()[:200]}); set "
                            "AIRFLOW__API_AUTH__JWT_SECRET to the value all hosts share (docker/cluster.env)")
    if answer.status_code not in (200, 404):
        raise WorkerRefused(f"the execution API {execution_api_url} answered {answer.status_code}: "
                            f"{answer.text[:300]}")


def run_worker(celery_args: list[str]) -> int:
    """``airflow celery worker CELERY_ARGS`` in this process, once the jwt_secret check passed, with
    the stages' heavy libraries imported first: Airflow forks every task process from this one, so
    they start with them, and so does the stage child each task forks (``$CITEWORTH_STAGE_FORK``,
    ``citeworth.orchestration.workspace``) instead of starting a new interpreter that imports them
    again (about 3 s a task on this project's 2-core machine, most of a demo shard task's work)."""
    from airflow.configuration import conf

    try:
        check_jwt_secret(conf.get("core", "execution_api_server_url"))
    except WorkerRefused as exc:
        print(f"citeworth cluster worker: refused: {exc}", file=sys.stderr)
        return 3
    for library in PRELOADED:
        importlib.import_module(library)
    os.environ[STAGE_FORK_ENV] = "1"
    from airflow.__main__ import main as airflow

    sys.argv = ["airflow", "celery", "worker", *celery_args]
    airflow()
    return 0
