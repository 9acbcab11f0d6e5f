"""Fixtures of the unit tests: the DAGs as Airflow's DAG processor parses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Libraries a DAG file must not import at parse time (they belong inside task bodies).
HEAVY_MODULES = ["torch", "transformers", "spacy", "scispacy", "dvc.repo", "great_expectations", "pandas",
                 "sklearn", "citeworth.curate", "citeworth.text", "citeworth.download",
                 "citeworth.models.train"]

PARSE_SCRIPT = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
facts = {"import_errors": {k: str(v) for k, v in bag.import_errors.items()}, "dags": {}}
for dag_id, dag in bag.dags.items():
    facts["dags"][dag_id] = {
        "tags": sorted(dag.tags),
        "schedule": repr(getattr(dag.timetable, "asset_condition", None) or dag.timetable),
        "start_date_tz": str(dag.start_date.tzinfo) if dag.start_date else None,
        "max_active_runs": dag.max_active_runs,
        "params": {name: dag.params.get_param(name).schema for name in dag.params},
        "tasks": {t.task_id: {"retries": t.retries, "timeout": t.execution_timeout.total_seconds()
                              if t.execution_timeout else None,
                              "backoff": t.retry_exponential_backoff,
                              "mapped": any(c.__name__ == "MappedOperator" for c in type(t).__mro__),
                              "upstream": sorted(t.upstream_task_ids),
                              "queue": t.queue,
                              "pool": t.pool,
                              "trigger_rule": getattr(t.trigger_rule, "value", t.trigger_rule),
                              "templated": {f: repr(getattr(t, f, None)) for f in t.template_fields},
                              "outlets": [getattr(o, "name", None) for o in t.outlets]}
                  for t in dag.tasks},
    }
facts["heavy_loaded"] = [m for m in sys.argv[2].split(",") if m in sys.modules]
print("FACTS" + json.dumps(facts))
"""


@pytest.fixture(scope="session")
def dag_facts(tmp_path_factory) -> dict:
    """What the DAG files define, parsed in a fresh interpreter with a throwaway AIRFLOW_HOME (as
    Airflow's DAG processor does it), so no state of other tests leaks in."""
    home = tmp_path_factory.mktemp("airflow_home")
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
           "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
           "CITEWORTH_TRAIN_QUEUE": "gpu", "CITEWORTH_VERSIONING_QUEUE": "versioning",
           "AIRFLOW__OPERATORS__DEFAULT_QUEUE": "cpu"}
    done = subprocess.run([sys.executable, "-c", PARSE_SCRIPT, str(ROOT / "dags"), ",".join(HEAVY_MODULES)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("FACTS"))
    return json.loads(line[len("FACTS"):])
