"""**citeworth_dataset**: a source release in, a validated, DVC-versioned CiteWorth dataset out.

resolve_release (skip the run if that release already has a data version) -> configure (the
form's values into params.yaml) -> download -> curate, one mapped task per shard, and the same for
the spans-only baseline -> assemble (+ baseline) -> validate (Great Expectations gate), and beside
curate the related-work dataset (Kobayashi et al.'s format) and the exports (unarXive JSONL,
GrabCite files) -> version
(`dvc commit`, `dvc push`, git tag `data/<source>/<release>`) -> emits the `citeworth_dataset`
asset, which schedules `citeworth_models`. A backfill over a date range builds each release once.
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import dag
from citeworth_airflow.operators import DvcVersionOperator
from citeworth_airflow.tasks import (
    DATASET_ASSET,
    DATASET_PARAMS,
    DEFAULT_ARGS,
    configure,
    curate_shard,
    download,
    export,
    plan_shards,
    resolve_release,
    stage,
)

from citeworth.orchestration.versioning import DATASET_STAGES


@dag(
    dag_id="citeworth_dataset",
    schedule="@weekly",
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params=DATASET_PARAMS,
    tags=["citeworth", "dataset"],
    doc_md=__doc__,
)
def citeworth_dataset():
    release = resolve_release()
    downloaded = download()
    configure(release) >> downloaded

    shards = plan_shards.override(task_id="plan_curate")("curate")
    baseline_shards = plan_shards.override(task_id="plan_curate_baseline")("curate_baseline")
    downloaded >> [shards, baseline_shards]
    curated = curate_shard.partial(name="curate").expand(shard=shards)
    baseline = curate_shard.override(task_id="curate_baseline_shard").partial(name="curate_baseline").expand(
        shard=baseline_shards)

    assembled = stage.override(task_id="assemble")("assemble")
    assembled_baseline = stage.override(task_id="assemble_baseline")("assemble_baseline")
    curated >> assembled
    baseline >> assembled_baseline

    # The related-work dataset reads the same raw papers as curate (as in dvc.yaml).
    related_work = stage.override(task_id="related_work")("related_work")
    downloaded >> related_work
    exported = export()  # the raw papers as unarXive JSONL and GrabCite files
    downloaded >> exported

    validated = stage.override(task_id="validate")("validate")
    version = DvcVersionOperator(
        task_id="version",
        stages=DATASET_STAGES,
        source=release["source"],
        release=release["release"],
        outlets=[DATASET_ASSET],
    )
    [assembled, assembled_baseline] >> validated >> version
    [related_work, exported] >> version


citeworth_dataset()
