"""DAG integrity: the DAG files import cleanly, are thin, and carry the settings a deployment relies on.

The DAGs are parsed in a fresh interpreter with a throwaway AIRFLOW_HOME, as Airflow's DAG
processor would, so the check sees the real import cost and no state of other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY_MODULES = ["torch", "transformers", "spacy", "scispacy", "dvc.repo", "great_expectations", "pandas",
                 "sklearn", "citeworth.curate", "citeworth.download", "citeworth.models.train"]

PARSE_SCRIPT = """
import json, sys, time
from airflow.dag_processing.dagbag import DagBag
# Airflow's own lazily imported TaskFlow machinery (~0.4 s, libcst among it) is paid once per
# process by any TaskFlow DAG: import it first, so the timing below is what our DAG files cost.
import airflow.sdk.definitions.decorators  # noqa: F401
facts = {"parse_seconds": {}}
for path in sorted(__import__("pathlib").Path(sys.argv[1]).glob("*.py")):
    start = time.perf_counter()
    bag = DagBag(dag_folder=str(path))
    facts["parse_seconds"][path.name] = time.perf_counter() - start
bag = DagBag(dag_folder=sys.argv[1])
facts["import_errors"] = {k: str(v) for k, v in bag.import_errors.items()}
facts["dags"] = {}
for dag_id, dag in bag.dags.items():
    facts["dags"][dag_id] = {
        "tags": sorted(dag.tags),
        "schedule": repr(getattr(dag.timetable, "asset_condition", None) or dag.timetable),
        "max_active_runs": dag.max_active_runs,
        "params": {name: dag.params.get_param(name).schema for name in dag.params},
        "tasks": {t.task_id: {"retries": t.retries, "timeout": t.execution_timeout.total_seconds()
                              if t.execution_timeout else None,
                              "backoff": t.retry_exponential_backoff,
                              "mapped": any(c.__name__ == "MappedOperator" for c in type(t).__mro__),
                              "upstream": sorted(t.upstream_task_ids),
                              "queue": t.queue,
                              "outlets": [getattr(o, "name", None) for o in t.outlets]}
                  for t in dag.tasks},
    }
facts["heavy_loaded"] = [m for m in sys.argv[2].split(",") if m in sys.modules]
print("FACTS" + json.dumps(facts))
"""


@pytest.fixture(scope="module")
def facts(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("airflow_home")
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
           "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
           "CITEWORTH_TRAIN_QUEUE": "gpu"}
    done = subprocess.run([sys.executable, "-c", PARSE_SCRIPT, str(ROOT / "dags"), ",".join(HEAVY_MODULES)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("FACTS"))
    return json.loads(line[len("FACTS"):])


def test_dag_files_import_without_errors(facts):
    assert facts["import_errors"] == {}
    assert sorted(facts["dags"]) == ["citeworth_dataset", "citeworth_models"]


def test_each_dag_file_parses_well_under_a_second(facts):
    assert set(facts["parse_seconds"]) == {"citeworth_dataset.py", "citeworth_models.py"}
    for name, seconds in facts["parse_seconds"].items():
        assert seconds < 0.5, f"{name} took {seconds:.3f}s to parse"


def test_parsing_imports_no_heavy_library(facts):
    assert facts["heavy_loaded"] == []


def test_tags_schedule_and_single_active_run(facts):
    dataset, models = facts["dags"]["citeworth_dataset"], facts["dags"]["citeworth_models"]
    assert dataset["tags"] == ["citeworth", "dataset"]
    assert models["tags"] == ["citeworth", "models"]
    assert "citeworth_dataset" in models["schedule"]  # scheduled on the dataset asset
    assert dataset["max_active_runs"] == models["max_active_runs"] == 1  # one shared workspace


def test_every_task_retries_with_backoff_and_has_a_timeout(facts):
    for dag in facts["dags"].values():
        for task_id, task in dag["tasks"].items():
            assert task["retries"] >= 2, task_id
            assert task["backoff"] > 1, task_id
            assert task["timeout"] and task["timeout"] <= 24 * 3600, task_id


def test_dataset_dag_maps_curation_over_shards_and_versions_last(facts):
    tasks = facts["dags"]["citeworth_dataset"]["tasks"]
    assert tasks["curate_shard"]["mapped"] and tasks["curate_baseline_shard"]["mapped"]
    assert "plan_curate" in tasks["curate_shard"]["upstream"]
    assert "download" in tasks["plan_curate"]["upstream"]  # shards are globbed after the files land
    assert tasks["assemble"]["upstream"] == ["curate_shard"]
    assert tasks["validate"]["upstream"] == ["assemble", "assemble_baseline"]
    assert tasks["related_work"]["upstream"] == ["curate_shard"]
    assert tasks["version"]["upstream"] == ["related_work", "validate"]
    assert tasks["version"]["outlets"] == ["citeworth_dataset"]


def test_models_dag_maps_training_over_models_on_the_training_queue(facts):
    tasks = facts["dags"]["citeworth_models"]["tasks"]
    assert tasks["train_model"]["mapped"]
    assert tasks["train_model"]["queue"] == "gpu"
    assert "plan_models" in tasks["train_model"]["upstream"]
    assert "configure" in tasks["plan_models"]["upstream"]  # models are read after the form is applied
    assert tasks["domain_cell"]["mapped"] and tasks["domain_cell"]["queue"] == "gpu"
    assert tasks["domains"]["upstream"] == ["domain_cell"]
    assert "configure" in tasks["plan_cells"]["upstream"]
    assert tasks["report"]["upstream"] == ["domains", "train_model", "transfer"]
    assert tasks["version"]["upstream"] == ["report"]


def test_trigger_forms_offer_the_run_settings(facts):
    dataset = facts["dags"]["citeworth_dataset"]["params"]
    models = facts["dags"]["citeworth_models"]["params"]
    assert {"source", "release", "sample_size", "workers", "overrides", "force", "push"} <= set(dataset)
    assert {"models", "overrides", "push"} <= set(models)
    assert "demo" in dataset["source"]["enum"]
    assert dataset["sample_size"]["type"] == ["null", "integer"]
    assert models["models"]["items"] == {"type": "string"}
