"""TaskFlow tasks shared by the citeworth DAGs: thin calls into ``citeworth.orchestration``.

Each task works in the project checkout (``$CITEWORTH_PROJECT_DIR``, else the folder holding
``plugins/``), reads the same ``params.yaml`` section as ``citeworth run`` and ``dvc repro``, and
is idempotent: a stage that DVC reports up to date is skipped, a finished shard is a no-op.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from typing import Any

from airflow.sdk import Asset, Param, get_current_context, task
from airflow.sdk.exceptions import AirflowSkipException

from citeworth_airflow import project

log = logging.getLogger(__name__)

DATASET_ASSET = Asset(name="citeworth_dataset", uri="x-citeworth://dataset/citeworth", group="citeworth")
# Celery queue of the training tasks: "gpu" on the compose deployment's GPU worker.
TRAIN_QUEUE = os.environ.get("CITEWORTH_TRAIN_QUEUE", "default")

DEFAULT_ARGS: dict[str, Any] = {
    "owner": "citeworth",
    "retries": 2,
    "retry_delay": timedelta(seconds=30),
    "retry_exponential_backoff": 2.0,
    "max_retry_delay": timedelta(minutes=15),
    "execution_timeout": timedelta(hours=6),
}


def _optional(default: Any, kind: str, description: str, **schema: Any) -> Param:
    return Param(default, type=["null", kind], description=description, **schema)


def _dvc_remote() -> Param:
    return _optional(os.environ.get("CITEWORTH_DVC_REMOTE"), "string",
                     "DVC remote to push to (e.g. s3); empty: the default remote")


# The trigger form. Empty fields keep the value params.yaml has; a run writes what it used
# into params.yaml, so its dvc.lock entry and a later `dvc repro` agree.
DATASET_PARAMS: dict[str, Param] = {
    "source": _optional(None, "string", "Source corpus (download.source); empty: as in params.yaml",
                        enum=[None, "demo", "s2_api", "s2orc_legacy", "arxiv_s3"]),
    "release": _optional(None, "string", "Source release; empty: the newest release the source "
                         "published by the run's logical date"),
    "sample_size": _optional(None, "integer", "Paragraphs kept per field (assemble.per_field); "
                             "empty: as in params.yaml", minimum=1),
    "workers": _optional(None, "integer", "Worker processes of download/curate", minimum=1),
    "overrides": Param({}, type="object", description='Any other params, e.g. {"curate": {"workers": 2}}'),
    "force": Param(False, type="boolean", description="Rebuild a release that already has a data version"),
    "push": Param(True, type="boolean", description="dvc push the new version to the DVC remote"),
    "dvc_remote": _dvc_remote(),
}
MODELS_PARAMS: dict[str, Param] = {
    "models": _optional(None, "array", "Models to train (train.models); empty: as in params.yaml",
                        items={"type": "string"}),
    "overrides": Param({}, type="object", description='Any other params, e.g. {"train": {"seeds": [1]}}'),
    "push": Param(True, type="boolean", description="dvc push the results to the DVC remote"),
    "dvc_remote": _dvc_remote(),
}


@task(multiple_outputs=True)
def resolve_release() -> dict[str, str]:
    """The source release this run builds; skips the run (this task and so every later one) when
    that release already has a data version."""
    from citeworth.orchestration import versioning, workspace

    context = get_current_context()
    form = context["params"]
    root = project()
    source = form["source"] or workspace.stage_params(root, "download").source
    as_of = context.get("data_interval_end") or context.get("logical_date")
    release = workspace.resolve_release(root, source, form["release"], as_of, api_key=_s2_api_key())
    if release in versioning.versioned_releases(root, source) and not form["force"]:
        raise AirflowSkipException(f"{source} release {release} already has data version "
                                   f"{versioning.data_version_tag(source, release)}: nothing to do")
    return {"source": source, "release": release}


@task
def configure(release: dict[str, str] | None = None) -> dict[str, Any]:
    """Write this run's form values (and the resolved source release) into params.yaml."""
    from citeworth.orchestration import params_file

    updates = params_file.form_updates({**get_current_context()["params"], **(release or {})})
    return params_file.apply_params(project(), updates)


@task
def stage(name: str) -> Any:
    """Run one stage function unless DVC reports its recorded outputs up to date."""
    return _run_unless_current(name)


def _run_unless_current(name: str, overrides: list[str] | None = None, dvc_stage: str | None = None) -> Any:
    """Run stage ``name`` unless the dvc.yaml stage(s) running it are up to date in dvc.lock."""
    from citeworth.orchestration import versioning, workspace

    root = project()
    dvc_stages = [dvc_stage] if dvc_stage else versioning.dvc_stages_running(root, name)
    if dvc_stages and versioning.is_up_to_date(root, dvc_stages):
        log.info("%s up to date in dvc.lock: skipped", ", ".join(dvc_stages))
        return {"skipped": True}
    return workspace.run_stage(root, name, overrides or [])


@task
def download() -> Any:
    """The download stage; a Semantic Scholar API key kept in an Airflow connection reaches it
    through the environment variable the download library reads (never a param or a log)."""
    from citeworth.orchestration import workspace

    root = project()
    params = workspace.stage_params(root, "download")
    if params.source == "s2_api" and (key := _s2_api_key()):
        os.environ[params.s2_api.api_key_env] = key
    return _run_unless_current("download")


def _s2_api_key() -> str | None:
    """The key of connection ``semantic_scholar_default``, if that connection exists."""
    from airflow.sdk.exceptions import AirflowNotFoundException

    from citeworth_airflow.hooks import SemanticScholarHook

    try:
        return SemanticScholarHook().get_conn() or None
    except AirflowNotFoundException:
        return None


@task
def plan_shards(name: str) -> list[str]:
    """The shards of curate stage ``name`` (and the removal of outputs of shards no longer listed)."""
    from citeworth.orchestration import workspace

    return workspace.plan_shards(project(), name)


@task(map_index_template="{{ shard }}")
def curate_shard(name: str, shard: str) -> dict[str, Any]:
    """Curate one shard: a mapped task per shard, so shards spread over workers."""
    from citeworth.orchestration import workspace

    return workspace.curate_shard(project(), name, shard)


@task
def export() -> dict[str, Any]:
    """Every export format, each the same call as the dvc.yaml matrix cell ``export@<format>``."""
    from citeworth.corpora.export.stage import FORMATS

    return {name: _run_unless_current("export", [f"format={name}"], dvc_stage=f"export@{name}")
            for name in FORMATS}


@task
def plan_models() -> list[str]:
    from citeworth.orchestration import workspace

    return list(workspace.stage_params(project(), "train").models)


@task(queue=TRAIN_QUEUE, map_index_template="{{ model }}")
def train_model(model: str) -> Any:
    """Train one model: the same call as the dvc.yaml matrix cell ``train@<model>``."""
    return _run_unless_current("train", [f"models=[{model}]"], dvc_stage=f"train@{model}")


@task
def plan_cells() -> list[list[str]]:
    """The domain study's [train field, test field] cells (slugs), one mapped task each."""
    from citeworth.orchestration import workspace

    return workspace.plan_cells(project())


@task(queue=TRAIN_QUEUE, map_index_template="{{ cell | join(' -> ') }}")
def domain_cell(cell: list[str]) -> Any:
    """Train on one field, test on another; a cell whose fingerprinted result is current is a no-op."""
    from citeworth.orchestration import workspace

    train_field, test_field = cell
    return workspace.run_stage(project(), "domains",
                               [f"cells=[[{train_field}, {test_field}]]", "aggregate=false"])


@task(queue=TRAIN_QUEUE)
def domains_aggregate() -> Any:
    """The matrix, embedding clusters, plots and Table 5 from every cell: the ``domains`` stage's outputs."""
    return _run_unless_current("domains", ["cells=[]", "aggregate=true"])
