"""``citeworth airflow setup`` against a real Airflow metadata DB (SQLite, a fresh AIRFLOW_HOME):
without the pool it makes, every version task of the DAGs would stay ``scheduled`` for good."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from dvc_workspace import ROOT, run, tool_env

from citeworth.orchestration.versioning import VERSIONING_POOL

pytestmark = pytest.mark.slow


@pytest.fixture()
def env(tmp_path) -> dict[str, str]:
    return tool_env(AIRFLOW_HOME=str(tmp_path / "airflow_home"), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                    AIRFLOW__CORE__DAGS_FOLDER=str(ROOT / "dags"),
                    AIRFLOW__CORE__PLUGINS_FOLDER=str(ROOT / "plugins"))


def airflow_json(env: dict, *args: str) -> list[dict]:
    stdout = run([sys.executable, "-m", "airflow", *args, "-o", "json"], ROOT, env=env).stdout
    return json.loads(stdout.splitlines()[-1])


def setup(env: dict, check: bool = True):
    return run([sys.executable, "-m", "citeworth.cli", "airflow", "setup"], ROOT, env=env, check=check)


def state(env: dict) -> tuple[str, dict[str, str]]:
    """The pool's slots and each citeworth DAG's is_paused."""
    [pool] = airflow_json(env, "pools", "get", VERSIONING_POOL)
    return pool["slots"], {dag["dag_id"]: dag["is_paused"] for dag in airflow_json(env, "dags", "list")}


def test_setup_makes_the_versioning_pool_and_unpauses_the_dags_and_can_run_again(env):
    setup(env)  # a fresh AIRFLOW_HOME: it migrates the DB first
    wanted = ("1", {"citeworth_dataset": "False", "citeworth_models": "False"})
    assert state(env) == wanted
    run([sys.executable, "-m", "airflow", "pools", "set", VERSIONING_POOL, "4", "edited"], ROOT, env=env)
    run([sys.executable, "-m", "airflow", "dags", "pause", "citeworth_models"], ROOT, env=env)
    setup(env)
    assert state(env) == wanted


def test_setup_names_the_dags_folder_that_lacks_the_dags(env, tmp_path):
    empty = tmp_path / "dags"
    empty.mkdir()
    done = setup({**env, "AIRFLOW__CORE__DAGS_FOLDER": str(empty)}, check=False)
    assert done.returncode == 1
    assert str(empty) in done.stderr and "AIRFLOW__CORE__DAGS_FOLDER" in done.stderr
    assert Path(env["AIRFLOW_HOME"], "airflow.db").is_file()
