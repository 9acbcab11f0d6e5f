"""The Airflow plugin's pieces that run without a scheduler: the results page and the S2 hook."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins"))

from citeworth_airflow import ui  # noqa: E402  (plugins/ is Airflow's import root, not a package)


@pytest.fixture()
def logged_in():
    """Requests as a user the auth manager lets in (the real check runs in test_airflow_dags.py)."""
    ui.app.dependency_overrides[ui.authorized_reader] = lambda: None
    yield
    ui.app.dependency_overrides.clear()


@pytest.fixture()
def project(tmp_path: Path, monkeypatch, logged_in) -> Path:
    (tmp_path / "params.yaml").write_text("download: {}\n")
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "reports" / "quality").mkdir(parents=True)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "reports" / "dataset_stats.json").write_text(json.dumps(
        {"overall": {"papers": 12, "sentences": 345, "cite_worthy_share": 0.31},
         "splits": {"test": {"papers": 2, "per_field": {"Biology": 1}}}}))
    summary = {"success": True, "warnings": ["raw_records.has_fields_of_study"], "expectations": {"x": {}}}
    (tmp_path / "reports" / "quality" / "summary.json").write_text(json.dumps(summary))
    (tmp_path / "reports" / "quality" / "site").mkdir()
    (tmp_path / "reports" / "quality" / "site" / "index.html").write_text("<h1>Data Docs</h1>")
    (tmp_path / "reports" / "quality" / "secret.txt").write_text("not part of the site")
    models = {"tfidf_lr": {"label": "Logistic Regression", "f1": 0.8, "f1_std": 0.0, "precision": 1.0,
                           "recall": 0.6667}, "<script>x</script>": {"runtime": 1}}
    (tmp_path / "metrics" / "models.json").write_text(json.dumps(models))
    subprocess.run(["git", "init", "--quiet"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty",
                    "-m", "x"], cwd=tmp_path, check=True)
    subprocess.run(["git", "tag", "data/demo/demo-v1"], cwd=tmp_path, check=True)
    monkeypatch.setenv("CITEWORTH_PROJECT_DIR", str(tmp_path))
    monkeypatch.setattr(ui, "find_runs", lambda **query: [])  # no Airflow metadata DB here
    return tmp_path


def test_results_page_shows_versions_dataset_quality_and_models_escaped(project):
    from fastapi.testclient import TestClient

    client = TestClient(ui.app)
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = re.sub(r">\s+<", "><", page.text)
    assert '<option value="data/demo/demo-v1">' in html  # the version picker: a plain GET form
    assert "<th>Sentences</th><td>345</td>" in html and "<th>Papers</th><td>12</td><td>2</td>" in html
    assert 'class="verdict passed">passed' in html and "raw_records.has_fields_of_study" in html
    assert "<th>Logistic Regression <small" in html and "<strong>80.00 <small>± 0.00</small></strong>" in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html
    assert "Table 5" not in html  # the domain study did not run: no section, no placeholder
    assert client.get("/static/results.css").headers["content-type"].startswith("text/css")
    latest = client.get("/api/latest").json()
    assert latest["quality"]["success"] is True and latest["versions"] == ["data/demo/demo-v1"]


def test_results_page_serves_its_plots_and_older_versions_only(project, monkeypatch):
    from fastapi.testclient import TestClient

    (project / "plots" / "models" / "tfidf_lr").mkdir(parents=True)
    (project / "plots" / "models" / "tfidf_lr" / "pr_curve.csv").write_text(
        "threshold,precision,recall\n0.5,1.0,0.5\n")
    client = TestClient(ui.app)
    png = client.get("/files/plots/models/tfidf_lr/pr_curve.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(b"\x89PNG")
    for refused in ("/files/plots/models/tfidf_lr/pr_curve.csv", "/files/reports/dataset_stats.json",
                    "/files/plots/../params.png"):
        assert client.get(refused).status_code == 404, refused
    assert client.get("/", params={"version": "data/demo/demo-v1"}).status_code == 200
    assert client.get("/", params={"version": "HEAD"}).status_code == 404


def test_data_docs_are_served_and_nothing_outside_them(project):
    from fastapi.testclient import TestClient

    client = TestClient(ui.app)
    assert client.get("/quality/index.html").text == "<h1>Data Docs</h1>"
    assert client.get("/quality/../secret.txt").status_code == 404
    assert client.get("/quality/%2e%2e/secret.txt").status_code == 404
    assert client.get("/quality/missing.html").status_code == 404


def test_without_a_login_every_route_answers_401_and_nothing_else_is_served(project):
    from fastapi.testclient import TestClient

    ui.app.dependency_overrides.clear()
    client = TestClient(ui.app)
    for path in ("/", "/api/latest", "/quality/index.html", "/quality/missing.html", "/static/results.css",
                 "/files/plots/domains/heatmap.png"):
        assert client.get(path).status_code == 401, path
    assert client.get("/", cookies={"other": "x"}).status_code == 401
    for path in ("/docs", "/redoc", "/openapi.json"):  # served outside the app's dependencies: off
        assert client.get(path).status_code == 404, path


def test_in_the_remote_form_the_page_shows_the_git_remote_s_latest_results(tmp_path, monkeypatch, logged_in):
    """A cluster's API server host: its clone predates the runs, which version from other hosts."""
    import citeworth_airflow
    from fastapi.testclient import TestClient

    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                       capture_output=True)

    origin, remote, api = tmp_path / "origin", tmp_path / "remote.git", tmp_path / "api"
    origin.mkdir()
    (origin / "params.yaml").write_text("download: {}\n")
    (origin / "dvc.yaml").write_text("stages: {}\n")
    git(origin, "init", "--quiet", "--initial-branch", "main")
    git(origin, "add", "--all")
    git(origin, "commit", "--quiet", "-m", "project")
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(api))
    (origin / "metrics").mkdir()
    (origin / "metrics" / "models.json").write_text(json.dumps({"tfidf_lr": {"label": "LR", "f1": 0.5}}))
    git(origin, "add", "--all")
    git(origin, "commit", "--quiet", "-m", "Data version data/demo/demo-v1")
    git(origin, "tag", "data/demo/demo-v1")
    git(origin, "push", "--quiet", str(remote), "main", "data/demo/demo-v1")
    monkeypatch.setenv("CITEWORTH_PROJECT_DIR", str(api))
    monkeypatch.setenv("CITEWORTH_GIT_REMOTE", str(remote))
    monkeypatch.setattr(citeworth_airflow, "_followed_at", None)
    monkeypatch.setattr(ui, "find_runs", lambda **query: [])

    client = TestClient(ui.app)
    latest = client.get("/api/latest").json()
    assert latest["models"] == {"tfidf_lr": {"label": "LR", "f1": 0.5}}
    assert latest["versions"] == ["data/demo/demo-v1"]
    assert "<th>LR <small" in re.sub(r">\s+<", "><", client.get("/").text)


def test_results_page_says_what_is_wrong_outside_a_project(tmp_path, monkeypatch, logged_in):
    from fastapi.testclient import TestClient

    monkeypatch.setenv("CITEWORTH_PROJECT_DIR", str(tmp_path))
    with pytest.raises(Exception, match="is not a citeworth project"):
        TestClient(ui.app).get("/")


HOOK_SCRIPT = """
import json, os, sys
from citeworth_airflow.tasks import _s2_api_key
keys = []
for connection in json.loads(sys.argv[1]):
    os.environ.pop("AIRFLOW_CONN_SEMANTIC_SCHOLAR_DEFAULT", None)
    if connection:
        os.environ["AIRFLOW_CONN_SEMANTIC_SCHOLAR_DEFAULT"] = connection
    keys.append(_s2_api_key())
print("KEYS=" + json.dumps(keys))
"""


def test_the_s2_api_key_comes_from_the_airflow_connection_when_there_is_one(tmp_path):
    connections = ['{"conn_type": "http", "password": "s2-secret"}',
                   '{"conn_type": "generic", "extra": {"api_key": "from-extra"}}', None]
    env = {key: value for key, value in os.environ.items() if not key.startswith("AIRFLOW_CONN_")}
    env.update(AIRFLOW_HOME=str(tmp_path), PYTHONPATH=str(ROOT / "plugins"))
    done = subprocess.run([sys.executable, "-c", HOOK_SCRIPT, json.dumps(connections)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    keys = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("KEYS="))[5:])
    assert keys == ["s2-secret", "from-extra", None]


def test_the_mapped_train_task_asks_the_stage_s_fingerprint_not_the_run_s_plan(tmp_path, monkeypatch):
    """Even where DVC's plan calls a model current, the task runs the stage, which skips the model
    only if its outputs carry the fingerprint of this data, params and code (test_train_fingerprint)."""
    from citeworth_airflow import tasks

    from citeworth.orchestration import runs, workspace
    from citeworth.orchestration.phases import Phases

    plan = tmp_path / runs.PLAN_FILE
    plan.parent.mkdir(parents=True)
    plan.write_text(json.dumps({"stale": [], "commands": {"train@tfidf_lr": "citeworth run train"}}))
    calls = []
    monkeypatch.setattr(tasks, "_workspace", lambda: tmp_path)
    monkeypatch.setattr(workspace, "run_stage", lambda *call: calls.append(call) or {"tfidf_lr": {"f1": 0.5}})
    assert tasks.train_model.function("tfidf_lr") == {"tfidf_lr": {"f1": 0.5}}
    [(root, stage, overrides, phases)] = calls
    assert (root, stage, overrides) == (tmp_path, "train", {"models": ["tfidf_lr"]})
    assert isinstance(phases, Phases)  # the task log's timing of the stage's child process


def test_the_tasks_typed_overrides_build_the_params_of_the_dvc_yaml_commands(tmp_path, monkeypatch):
    """A mapped task passes its overrides as values, never as YAML text; they build the params the
    dvc.yaml stage's `citeworth run ... -S` command builds (a model or field named like a YAML
    boolean or number, or holding a comma, stays the string it is)."""
    from citeworth_airflow import tasks

    from citeworth.core.params import parse_assignments
    from citeworth.orchestration import runs, workspace
    from citeworth.stages import stage_params

    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    (tmp_path / runs.PLAN_FILE).parent.mkdir(parents=True)
    (tmp_path / runs.PLAN_FILE).write_text(json.dumps({"stale": ["export@unarxive", "export@grabcite"],
                                                       "commands": {}}))
    calls = []
    monkeypatch.setattr(tasks, "_workspace", lambda: tmp_path)
    monkeypatch.setattr(workspace, "run_stage",
                        lambda _, stage, overrides, phases: calls.append((stage, overrides)))
    tasks.train_model.function("tfidf_lr")
    tasks.export.function()
    tasks.domain_cell.function(["biology", "no"])
    tasks.domains_aggregate.function()
    # each dvc.yaml command (or, for a domain cell, the -S a user types), item values filled in
    commands = [("train", ["models=[tfidf_lr]"]),
                ("export", ["format=unarxive"]), ("export", ["format=grabcite"]),
                ("domains", ["cells=[[biology, 'no']]", "aggregate=false"]),
                ("domains", ["cells=[]", "aggregate=true"])]
    assert [stage for stage, _ in calls] == [stage for stage, _ in commands]
    for (stage, overrides), (_, args) in zip(calls, commands, strict=True):
        assert workspace.stage_params(tmp_path, stage, overrides) == \
            stage_params(stage, parse_assignments(args), tmp_path / "params.yaml")
