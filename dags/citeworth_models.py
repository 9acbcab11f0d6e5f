"""**citeworth_models**: train, compare and transfer cite-worthiness models on the latest dataset.

Scheduled on the `citeworth_dataset` asset (a new data version) or triggered by hand with the
form. configure -> train, one mapped task per model (the GPU queue on a Celery deployment) ->
report (Table 4); beside them the domain study, one mapped task per train field x test field cell,
then its aggregation (Table 5), transfer (Table 6) and the silver citation-linkage corpus with its
siamese model (Roy & Mercer) -> version (`dvc commit`, `dvc push`, a git commit of dvc.lock and
the metrics). The task graph is dvc.yaml's (a test checks it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import dag
from citeworth_airflow.operators import DvcVersionOperator
from citeworth_airflow.tasks import (
    DATASET_ASSET,
    DEFAULT_ARGS,
    MODELS_PARAMS,
    TRAIN_QUEUE,
    configure,
    domain_cell,
    domains_aggregate,
    plan_cells,
    plan_models,
    stage,
    train_model,
)

from citeworth.orchestration.versioning import MODEL_STAGES


@dag(
    dag_id="citeworth_models",
    schedule=[DATASET_ASSET],
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params=MODELS_PARAMS,
    tags=["citeworth", "models"],
    doc_md=__doc__,
)
def citeworth_models():
    configured = configure()
    models = plan_models()
    configured >> models
    trained = train_model.expand(model=models)

    cells = plan_cells()
    configured >> cells
    domains = domain_cell.expand(cell=cells) >> domains_aggregate.override(task_id="domains")()
    transfer = stage.override(task_id="transfer", queue=TRAIN_QUEUE)("transfer")
    configured >> transfer
    silver = stage.override(task_id="silver", queue=TRAIN_QUEUE)("silver")
    configured >> silver

    # Table 4 needs the models only (as in dvc.yaml); it links the studies' tables by path.
    report = stage.override(task_id="report")("report")
    trained >> report
    [report, domains, transfer, silver] >> DvcVersionOperator(task_id="version", stages=MODEL_STAGES)


citeworth_models()
