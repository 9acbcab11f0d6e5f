"""A DAG the cluster test adds to its project: one task per queue, each printing where it ran."""

from __future__ import annotations

import json
import os
from datetime import datetime

from airflow.sdk import DAG, task

PROBED = ("CITEWORTH_HOST", "HOME", "AIRFLOW_HOME", "CITEWORTH_PROJECT_DIR", "CITEWORTH_WORKSPACES",
          "CITEWORTH_GIT_REMOTE", "AWS_ENDPOINT_URL_S3", "CITEWORTH_TRAIN_QUEUE")

with DAG("cluster_probe", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         is_paused_upon_creation=False):
    for queue in ("cpu", "gpu", "versioning"):

        @task(task_id=f"on_{queue}", queue=queue)
        def where() -> None:
            import citeworth

            seen = {name: os.environ.get(name) for name in PROBED}
            seen |= {"cwd": os.getcwd(), "citeworth": citeworth.__file__, "dag_file": __file__}
            print("PROBE " + json.dumps(seen))

        where()
