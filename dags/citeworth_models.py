"""**citeworth_models**: train, compare and transfer cite-worthiness models on the latest dataset.

Triggered by `citeworth_dataset` once per new data version (form field `data_version`), or by hand
with the form. open_workspace (a git worktree of its own at that data version, else the branch's
tip, the form's values in its params.yaml) -> train, one mapped task per model (the training
queue: "gpu" on a Celery cluster; every other task runs on the default queue) -> report (Table 4);
beside them the domain study, one mapped task per train field x test field cell, then its
aggregation (Table 5), transfer (Table 6), the data-scaling curves, the silver citation-linkage
corpus with its siamese model (Roy & Mercer) and the cited-works index `check --suggest --works`
and the editor suggest from -> version (`dvc commit`, `dvc push`, a git commit of dvc.lock and the
metrics: onto the branch for a run on the defaults, onto `runs/<run id>` for a run with its own
models, seeds, profile or overrides) -> close_workspace. The task graph is dvc.yaml's (a test
checks it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import dag
from citeworth_airflow.operators import DvcVersionOperator
from citeworth_airflow.tasks import (
    DEFAULT_ARGS,
    MODELS_PARAMS,
    close_workspace,
    domain_cell,
    domains_aggregate,
    housekeeping,
    open_workspace,
    plan_cells,
    plan_models,
    stage,
    train_model,
)

from citeworth.orchestration.versioning import MODEL_STAGES


@dag(
    dag_id="citeworth_models",
    schedule=None,
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params=MODELS_PARAMS,
    tags=["citeworth", "models"],
    doc_md=__doc__,
)
def citeworth_models():
    housekeeping()
    opened = open_workspace()
    models = plan_models()
    opened >> models
    trained = train_model.expand(model=models)

    cells = plan_cells()
    opened >> cells
    domains = domain_cell.expand(cell=cells) >> domains_aggregate.override(task_id="domains")()
    transfer = stage.override(task_id="transfer")("transfer")
    opened >> transfer
    silver = stage.override(task_id="silver")("silver")
    opened >> silver
    scaling = stage.override(task_id="scaling")("scaling")
    opened >> scaling
    works = stage.override(task_id="works")("works")  # the cited-works index of the curated papers
    opened >> works

    # Table 4 needs the models only (as in dvc.yaml); it links the studies' tables by path.
    report = stage.override(task_id="report")("report")
    trained >> report
    version = DvcVersionOperator(task_id="version", stages=MODEL_STAGES)
    [report, domains, transfer, silver, scaling, works] >> version >> close_workspace()


citeworth_models()
