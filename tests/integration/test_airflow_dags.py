"""The Airflow DAGs for real: ``dag.test()`` of both DAGs and a real ``airflow standalone`` on loopback.

One AIRFLOW_HOME is migrated once for the module (SQLite); every Airflow process runs with its
own environment (AIRFLOW_HOME, DAG and plugin folders of the workspace under test), so no Airflow
state leaks into the test process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml
from dvc_workspace import (
    checked_out,
    dvc,
    git,
    reproduced_workspace,
    run,
    tool_env,
)

from citeworth.orchestration.versioning import DATASET_STAGES, MODEL_STAGES

pytestmark = pytest.mark.slow

TAG = "data/demo/demo-v2"
# The models DAG on a budget: one model, a TF-IDF domain matrix, one transfer variant on a sliver of
# one downstream task. Every value goes through the trigger form into the run's params.yaml: the run
# is an experiment (branch runs/<run id>).
TINY_MODELS = {
    "models": ["tfidf_lr"],
    "push": False,
    "overrides": {
        # merged key by key into params.yaml's sections; a kind reads only its own sections, so the
        # context model's are set to null to switch the domains model to logistic regression
        "domains": {"model": {"kind": "tfidf_lr", "label": "Logistic Regression", "context": None,
                              "optim": None},
                    "embedding": {"sentences_per_field": 16, "max_length": 32, "cluster_dims": 2}},
        "transfer": {
            "variants": ["Cite"],
            "pretrain": {"max_sentences": 32, "max_dev_sentences": 16, "max_length": 32,
                         "optim": {"batch_size": 16, "epochs": 1, "lr": 0.0001, "warmup_steps": 1}},
            "downstream": {"data_root": "raw/demo/demo-v2/github/allenai/scibert/data", "seeds": [1],
                           "tasks": [{"name": "sci-cite", "max_train": 32, "max_dev": 16, "max_test": 32}],
                           "finetune": {"max_length": 32, "optim": {"batch_size": 16, "epochs": 1,
                                                                     "lr": 0.0001, "warmup_steps": 1}}},
        },
        "silver": {"model": {"hidden": 16, "optim": {"batch_size": 32, "epochs": 1, "max_steps": 2}}},
    },
}
# Runs one DAG with dag.test() and prints its task states (retries off: a failure shows at once).
DAG_TEST = """
import json, sys, time
from airflow.dag_processing.dagbag import DagBag
bag = DagBag()
assert not bag.import_errors, bag.import_errors
dag = bag.get_dag(sys.argv[1])
for task in dag.tasks:
    task.retries = 0
start = time.perf_counter()
run = dag.test(run_conf=json.loads(sys.argv[2]))
states = {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in run.get_task_instances()}
seconds = time.perf_counter() - start
print("RESULT" + json.dumps({"state": str(run.state), "seconds": seconds, "tasks": states}))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def airflow_env(home: Path, workspace: Path, migrated_db: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "airflow.db").exists():
        shutil.copy(migrated_db, home / "airflow.db")
    return tool_env(AIRFLOW_HOME=str(home), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                    AIRFLOW__CORE__DAGS_FOLDER=str(workspace / "dags"),
                    AIRFLOW__CORE__PLUGINS_FOLDER=str(workspace / "plugins"), **extra)


def dag_test(dag_id: str, conf: dict, workspace: Path, env: dict) -> dict:
    done = run([sys.executable, "-c", DAG_TEST, dag_id, json.dumps(conf)], workspace, env=env, timeout=900)
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    result = json.loads(line[len("RESULT"):])
    print(f"dag.test({dag_id}): {result['seconds']:.1f} s")
    assert result["state"] == "success", (result, done.stdout[-3000:], done.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def versioned(tmp_path_factory, migrated_db, mirror):
    """A project `dvc repro` built and committed, then run through the dataset DAG with dag.test()."""
    workspace, _ = reproduced_workspace(tmp_path_factory, tmp_path_factory.mktemp("dagtest_ws"))
    git(workspace, "add", "--all")
    git(workspace, "commit", "--quiet", "-m", "dvc repro")
    lock = (workspace / "dvc.lock").read_bytes()
    env = airflow_env(tmp_path_factory.mktemp("dagtest_home"), workspace, migrated_db)
    result = dag_test("citeworth_dataset", {}, workspace, env)
    return workspace, env, lock, result


def _workspaces(project: Path) -> list[Path]:
    root = project / ".dvc" / "tmp" / "runs"
    return sorted(root.iterdir()) if root.is_dir() else []


def test_dataset_dag_over_a_dvc_build_reruns_nothing_and_records_the_same_lock(versioned):
    workspace, _, lock_written_by_dvc, result = versioned
    assert all(state == "success" for state in result["tasks"].values())
    assert sum(task.startswith("curate_shard[") for task in result["tasks"]) >= 2  # mapped over shards
    # dvc commit of what the DAG saw changed nothing: the same hashes `dvc repro` wrote.
    assert git(workspace, "show", f"{TAG}:dvc.lock").encode() == lock_written_by_dvc.strip()
    assert git(workspace, "rev-parse", f"{TAG}^{{commit}}") == git(workspace, "rev-parse", "HEAD")
    assert json.loads(dvc(workspace, "status", "--json", *DATASET_STAGES).stdout or "{}") == {}
    assert any((workspace / ".dvc" / "storage").rglob("*")), "dvc push to the default remote"
    assert _workspaces(workspace) == []  # the run's workspace went with its success


def test_models_dag_with_its_own_values_is_an_experiment_that_leaves_the_defaults(versioned):
    workspace, env, _, _ = versioned
    head = git(workspace, "rev-parse", "HEAD")
    result = dag_test("citeworth_models", TINY_MODELS, workspace, env)
    assert set(result["tasks"].values()) == {"success"}
    assert git(workspace, "rev-parse", "HEAD") == head  # neither params.yaml nor metrics changed
    [experiment] = git(workspace, "branch", "--list", "runs/*", "--format=%(refname:short)").splitlines()
    used = yaml.safe_load(git(workspace, "show", f"{experiment}:params.yaml"))
    assert used["train"]["models"] == ["tfidf_lr"]
    assert "tfidf_lr" in json.loads(git(workspace, "show", f"{experiment}:metrics/models.json"))
    results = checked_out(workspace, experiment, "models")
    metrics = json.loads((results / "metrics" / "models" / "tfidf_lr.json").read_text())
    assert 0 <= metrics["test"]["f1"]["mean"] <= 1
    assert json.loads((results / "metrics" / "domains.json").read_text())
    assert json.loads((results / "metrics" / "transfer.json").read_text())
    silver = json.loads((results / "reports" / "silver" / "metrics.json").read_text())
    # demo-v2's links inside the corpus: SciPy 1.0 -> SymPy and two PLOS articles citing PLOS articles
    assert silver["counts"]["citing_sentences_linked"] == 3
    assert json.loads(dvc(results, "status", "--json", *MODEL_STAGES).stdout or "{}") == {}


# --- a real deployment -------------------------------------------------------------------------


class Airflow:
    """``airflow standalone`` on 127.0.0.1 with a token from its simple auth manager."""

    def __init__(self, home: Path, env: dict, port: int):
        self.base = f"http://127.0.0.1:{port}"
        self.home = home
        self.log = open(home / "standalone.log", "w")  # noqa: SIM115 -- closed in stop()
        self.process = subprocess.Popen([sys.executable, "-m", "airflow", "standalone"], env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.session = requests.Session()

    def wait_until_healthy(self, timeout: float = 240) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            assert self.process.poll() is None, self.tail()
            try:
                health = requests.get(f"{self.base}/api/v2/monitor/health", timeout=5).json()
                if all(health[part]["status"] == "healthy" for part in ("scheduler", "dag_processor")):
                    break
            except (requests.RequestException, KeyError, ValueError):
                pass
            time.sleep(2)
        else:
            pytest.fail(f"airflow standalone not healthy after {timeout}s:\n{self.tail()}")
        self.session.headers["Authorization"] = f"Bearer {self.login()}"

    def login(self) -> str:
        """A JWT from the simple auth manager's ``POST /auth/token`` (what its login page posts too)."""
        passwords = self.home / "simple_auth_manager_passwords.json.generated"
        password = json.loads(passwords.read_text())["admin"]
        response = requests.post(f"{self.base}/auth/token", json={"username": "admin", "password": password},
                                 timeout=10)
        assert response.status_code == 201, response.text
        return response.json()["access_token"]

    def api(self, method: str, path: str, **kwargs) -> dict:
        response = self.session.request(method, f"{self.base}/api/v2{path}", timeout=30, **kwargs)
        assert response.ok, f"{method} {path}: {response.status_code} {response.text}"
        return response.json()

    def wait_for_runs(self, dag_id: str, count: int, timeout: float) -> list[dict]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            runs = self.api("GET", f"/dags/{dag_id}/dagRuns")["dag_runs"]
            if len(runs) >= count and all(r["state"] in ("success", "failed") for r in runs):
                return runs
            time.sleep(3)
        pytest.fail(f"{dag_id}: runs not finished after {timeout}s: {runs}\n{self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.home / "standalone.log").read_text()[-4000:]

    def stop(self) -> None:
        """Stop every process of this deployment (its own process group), forcibly if need be."""
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        except ProcessLookupError:
            return
        finally:
            self.log.close()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def standalone_env(home: Path, workspace: Path, migrated_db: Path, port: int) -> dict[str, str]:
    """The environment of an ``airflow standalone`` on 127.0.0.1:``port`` over ``workspace``."""
    return airflow_env(
        home, workspace, migrated_db,
        AIRFLOW__API__HOST="127.0.0.1", AIRFLOW__API__PORT=str(port),
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{port}/execution/",
        AIRFLOW__CORE__EXECUTOR="LocalExecutor", AIRFLOW__CORE__PARALLELISM="3",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin",
        # Only runs this test asks for: no automatic run of the latest weekly interval.
        AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE="False",
        AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT=str(_free_port()),
        AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT=str(_free_port()),
    )


DATA_DOCS_PAGE = "/citeworth/quality/index.html"
RESULT_PAGES = ("/citeworth/", "/citeworth/api/latest", DATA_DOCS_PAGE)


def assert_results_need_a_login(base: str, token: str, pages: tuple[str, ...] = RESULT_PAGES) -> None:
    """The plugin's pages (of the API server at ``base``) answer as the core API does: 401 to
    anonymous callers, the core API's status to a forged token, 200 to a bearer ``token`` and to a
    browser logged in to the UI (the login page stores the token from /auth/token as the ``_token``
    cookie, which the UI sends)."""
    anonymous, forged, bearer, browser = (requests.Session() for _ in range(4))
    forged.headers["Authorization"] = "Bearer not.a.token"
    bearer.headers["Authorization"] = f"Bearer {token}"
    browser.cookies.set("_token", token, path="/")
    core_forged = forged.get(f"{base}/api/v2/dags", timeout=10).status_code
    assert requests.get(f"{base}/api/v2/dags", timeout=10).status_code == 401
    for path in pages:
        url = f"{base}{path}"
        assert anonymous.get(url, timeout=10).status_code == 401, path
        assert forged.get(url, timeout=10).status_code == core_forged, path
        assert bearer.get(url, timeout=10).status_code == 200, path
        assert browser.get(url, timeout=10).status_code == 200, path
    if DATA_DOCS_PAGE in pages:
        assert "Data Docs" in browser.get(f"{base}/citeworth/", timeout=10).text
    assert anonymous.get(f"{base}/citeworth/openapi.json", timeout=10).status_code == 404
