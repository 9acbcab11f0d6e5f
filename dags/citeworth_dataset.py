"""**citeworth_dataset**: a source release in, a validated, DVC-versioned CiteWorth dataset out.

resolve_release (claim the release; skip the run if it already has a data version or another run
claims it) -> open_workspace (a git worktree of its own at the commit the run starts from, the
form's values into its params.yaml) -> download, and beside it pdf2tei (the project's PDFs as
GROBID TEI, read when the inputs list raw/pdf2tei) -> curate, one mapped task per shard, and the
same for the spans-only baseline -> assemble (+ baseline) -> validate (Great Expectations gate),
and beside curate the related-work dataset (Kobayashi et al.'s format) and the exports (unarXive
JSONL, GrabCite files) -> version (`dvc commit`, `dvc push`, git tag `data/<source>/<release>`;
one run at a time, pool `citeworth_versioning`, made by `citeworth airflow setup`) -> emits the
`citeworth_dataset` asset and triggers one `citeworth_models` run on the new data version ->
close_workspace. A backfill over a date range builds each release once; a failed run keeps its
workspace (housekeeping removes it after some days) and hands its release claim back.
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import dag
from citeworth_airflow.operators import DvcVersionOperator
from citeworth_airflow.tasks import (
    DATASET_ASSET,
    DATASET_PARAMS,
    DEFAULT_ARGS,
    close_workspace,
    curate_shard,
    download,
    export,
    housekeeping,
    new_data_version,
    open_workspace,
    plan_shards,
    release_claims,
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
    default_args={**DEFAULT_ARGS, "on_failure_callback": release_claims},
    params=DATASET_PARAMS,
    tags=["citeworth", "dataset"],
    doc_md=__doc__,
)
def citeworth_dataset():
    housekeeping()
    release = resolve_release()
    downloaded = download()
    # pdfs/ -> raw/pdf2tei: GROBID runs only for new or changed PDFs (as in dvc.yaml).
    teis = stage.override(task_id="pdf2tei")("pdf2tei")
    open_workspace(release) >> [downloaded, teis]
    raw = [downloaded, teis]  # what every stage reading the inputs waits for

    shards = plan_shards.override(task_id="plan_curate")("curate")
    baseline_shards = plan_shards.override(task_id="plan_curate_baseline")("curate_baseline")
    raw >> shards
    raw >> baseline_shards
    curated = curate_shard.partial(name="curate").expand(shard=shards)
    baseline = curate_shard.override(task_id="curate_baseline_shard").partial(name="curate_baseline").expand(
        shard=baseline_shards)

    assembled = stage.override(task_id="assemble")("assemble")
    assembled_baseline = stage.override(task_id="assemble_baseline")("assemble_baseline")
    curated >> assembled
    baseline >> assembled_baseline

    # The related-work dataset reads the same raw papers as curate (as in dvc.yaml).
    related_work = stage.override(task_id="related_work")("related_work")
    raw >> related_work
    exported = export()  # the raw papers as unarXive JSONL and GrabCite files
    raw >> exported

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
    # One models run per new data version, training on it (asset events arriving together would
    # make one run of several versions).
    version >> TriggerDagRunOperator(task_id="train_models", trigger_dag_id="citeworth_models",
                                     conf={"data_version": new_data_version(version.output)})
    version >> close_workspace()


citeworth_dataset()
