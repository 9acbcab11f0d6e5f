"""TaskFlow tasks shared by the citeworth DAGs: thin calls into ``citeworth.orchestration``.

Each run works in a workspace of its own (``citeworth.orchestration.runs``): a git worktree of the
project repository (``$CITEWORTH_PROJECT_DIR``, else the folder holding ``plugins/``) at the commit
the run starts from, sharing the repository's DVC cache. ``open_workspace`` makes it, applies the
run's form there and, the run's one DVC call besides versioning, plans which stages are stale; every
later task reads the same ``params.yaml`` section as ``citeworth run`` and ``dvc repro`` in that
workspace and is idempotent: a stage the plan finds current is skipped; the mapped tasks (a curated
shard, a trained model, a domain cell) decide by the project's fingerprint of their data, params
and code, never by DVC, so a finished one is a no-op. Only the versioning step, one at a time (pool
``citeworth_versioning``, made by ``citeworth airflow setup``), writes to the repository;
``close_workspace`` removes the workspace of a run that succeeded, ``housekeeping`` those of failed
runs after some days.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from typing import Any

from airflow.sdk import Asset, Param, get_current_context, task
from airflow.sdk.configuration import conf
from airflow.sdk.exceptions import AirflowSkipException

from citeworth_airflow import project

log = logging.getLogger(__name__)

# Workspaces of failed runs are kept for inspection this many days, then removed.
KEEP_FAILED_DAYS = float(os.environ.get("CITEWORTH_KEEP_FAILED_WORKSPACES_DAYS", "7"))

DATASET_ASSET = Asset(name="citeworth_dataset", uri="x-citeworth://dataset/citeworth", group="citeworth")
# Celery queues. Curation, assembly and the studies run on Airflow's default queue ([operators]
# default_queue: "cpu" on a cluster), the training tasks on $CITEWORTH_TRAIN_QUEUE ("gpu": a GPU
# worker host serving only it gets exactly them), the versioning step on
# $CITEWORTH_VERSIONING_QUEUE (the host with push rights).
DEFAULT_QUEUE = conf.get("operators", "default_queue")
TRAIN_QUEUE = os.environ.get("CITEWORTH_TRAIN_QUEUE") or DEFAULT_QUEUE
VERSIONING_QUEUE = os.environ.get("CITEWORTH_VERSIONING_QUEUE") or DEFAULT_QUEUE
# The XCom key under which a task of the remote workspace form names what it sent to the DVC
# remote ({path: hash}); the return value stays the stage's summary.
OUTPUTS_KEY = "citeworth_outputs"

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


def _overrides(example: str) -> Param:
    return Param({}, type="object", description=f"Any other params, e.g. {example}: only the keys named "
                 "change, as with citeworth run -S key.path=value")


# The trigger form. Empty fields keep the value params.yaml has; a run writes what it used into
# its workspace's params.yaml, so its dvc.lock entry and a later `dvc repro` agree. A run with any
# value besides source / release / push / remote / force is an experiment (branch runs/<run id>).
# No field sets how many processes run: that changes no output, so it is no param (it would make the
# run an experiment); the mapped tasks spread over the workers' slots (their concurrency, the
# pools), and $CITEWORTH_WORKERS in a worker's environment sets a stage's own (citeworth.core.knobs).
def _profile() -> Param:
    return _optional(None, "string", "A params profile (params/<name>.yaml, e.g. study: every real paper "
                     "of the mirror, its budgets): its values first, the other fields on top; empty: "
                     "params.yaml's")


DATASET_PARAMS: dict[str, Param] = {
    "profile": _profile(),
    "source": _optional(None, "string", "Source corpus (download.source); empty: as in params.yaml",
                        # citeworth.download.params.SOURCES, spelt out: DAG files parse without the library
                        enum=[None, "demo", "elife", "europepmc", "study", "s2_api", "s2orc_legacy",
                              "arxiv_s3"]),
    "release": _optional(None, "string", "Source release; empty: the newest release the source "
                         "published by the run's logical date"),
    "sample_size": _optional(None, "integer", "Paragraphs kept per field (assemble.per_field); "
                             "empty: as in params.yaml", minimum=1),
    "overrides": _overrides('{"curate_baseline": {"rules": {"min_sentences": 2}}}'),
    "force": Param(False, type="boolean", description="Rebuild a release that already has a data version"),
    "push": Param(True, type="boolean", description="dvc push the new version to the DVC remote"),
    "dvc_remote": _dvc_remote(),
}
MODELS_PARAMS: dict[str, Param] = {
    "profile": _profile(),
    "data_version": _optional(None, "string", "Data version to train on (a tag such as "
                              "data/demo/demo-v2, or a commit); empty: the branch's latest"),
    "models": _optional(None, "array", "Models to train (train.models); empty: as in params.yaml",
                        items={"type": "string"}),
    "overrides": _overrides('{"train": {"seeds": [1]}}'),
    "push": Param(True, type="boolean", description="dvc push the results to the DVC remote"),
    "dvc_remote": _dvc_remote(),
}


def _run_id() -> str:
    return get_current_context()["run_id"]


def _remote_form() -> bool:
    from citeworth.orchestration.git_remote import remote_url

    return remote_url() is not None


def _workspace():
    """This run's workspace on this host: made by ``open_workspace``, or in the remote form joined
    here from the record that task handed on."""
    from citeworth.orchestration import runs

    if not _remote_form():
        return runs.workspace_path(project(), _run_id())
    record = get_current_context()["ti"].xcom_pull(task_ids="open_workspace")
    return runs.join_workspace(project(), _run_id(), record, keep_days=KEEP_FAILED_DAYS)


def _dvc_remote_of_run() -> str | None:
    return get_current_context()["params"].get("dvc_remote") or os.environ.get("CITEWORTH_DVC_REMOTE")


def prepared_workspace(dvc_stages: list[str], *, outs: bool = False):
    """The workspace, holding what ``dvc_stages`` read (their outputs, with ``outs``) in the remote
    form: sent by the upstream tasks of this run, or as dvc.lock records them."""
    from citeworth.orchestration import outputs, runs

    root = _workspace()
    if _remote_form():
        context = get_current_context()
        upstream = sorted(context["task"].get_flat_relative_ids(upstream=True))
        produced: dict[str, list[str]] = {}
        for sent in context["ti"].xcom_pull(task_ids=upstream, key=OUTPUTS_KEY) if upstream else []:
            for path, value in (sent or {}).items():
                produced.setdefault(path, []).append(value)
        outputs.fetch_inputs(root, runs.plan_of(root), dvc_stages, produced, _dvc_remote_of_run(), outs=outs)
    return root


def prepare_versioning(stages: list[str]) -> None:
    """The outputs of ``stages`` (dvc.yaml names; a foreach or matrix name stands for all of its
    stages) in the run's workspace, for the versioning step to record: in the remote form fetched
    as for any task."""
    from citeworth.orchestration import runs
    from citeworth.orchestration.versioning import is_selected

    plan = runs.plan_of(_workspace())
    prepared_workspace([name for name in plan["commands"] if is_selected(name, set(stages))], outs=True)


def _send_outputs(root, dvc_stages: list[str], only: list[str] | None = None) -> None:
    """In the remote form: what ``dvc_stages`` wrote here (just the files ``only`` names, when
    given), to the DVC remote; its hashes to XCom."""
    from citeworth.orchestration import outputs, runs

    if _remote_form():
        plan = runs.plan_of(root)
        sent = outputs.push_outputs(root, [path for stage in dvc_stages for path in plan["outs"][stage]],
                                    _dvc_remote_of_run(), only)
        ti = get_current_context()["ti"]
        # a task running several stages (export: one per format) sends once per stage
        earlier = ti.xcom_pull(task_ids=ti.task_id, key=OUTPUTS_KEY, map_indexes=ti.map_index) or {}
        ti.xcom_push(key=OUTPUTS_KEY, value={**earlier, **sent})


def _in_workspace(name: str, call, dvc_stage: str | None = None, reuse: bool = False, part=None) -> Any:
    """``call(root, phases)``, the work of citeworth stage ``name`` (or just dvc.yaml stage
    ``dvc_stage``), with its inputs fetched before and its outputs sent after (the remote form). With
    ``reuse`` the stage's results dvc.lock records are fetched too, as the local form links them in:
    what their fingerprint finds current (a trained model, a domain cell) is not computed again, on
    whichever host it was computed before. (Curated shards are found in the shard store instead.)
    A task that writes a part of its stage's folders (a shard, a domain cell) names its files with
    ``part(root)``: only they are sent. The log ends with the seconds of each phase."""
    from citeworth.core.errors import disk_full
    from citeworth.orchestration import outputs, runs
    from citeworth.orchestration.phases import Phases

    phases = Phases()
    with phases("join"):
        stages = [dvc_stage] if dvc_stage else runs.running(runs.plan_of(_workspace()), name)
    root = None
    try:
        with phases("fetch"):
            root = prepared_workspace(stages)
            if reuse and _remote_form():
                outputs.pull_locked(root, remote=_dvc_remote_of_run(), stages=stages, allow_missing=True)
        result = call(root, phases)
        with phases("send"):
            _send_outputs(root, stages, part(root) if part else None)
    except Exception as exc:
        if full := disk_full(exc, root or os.getcwd()):  # a full disk named, with the way out
            raise full from exc
        raise
    phases.log()
    return result


@task(multiple_outputs=True)
def resolve_release() -> dict[str, str]:
    """The source release this run builds, claimed for this run; skips the run (this task and so
    every later one) when that release already has a data version or another run claimed it."""
    from citeworth.orchestration import git_remote, params_file, runs, versioning, workspace
    from citeworth.orchestration.experiments import is_experiment

    context = get_current_context()
    form = context["params"]
    root = project()
    profile = params_file.profile_updates(root, form["profile"]) if form.get("profile") else {}
    source = form["source"] or workspace.stage_params(root, "download", profile.get("download", {})).source
    as_of = context.get("data_interval_end") or context.get("logical_date")
    release = workspace.resolve_release(root, source, form["release"], as_of, api_key=_s2_api_key())
    tag = versioning.data_version_tag(source, release)
    if not (form["force"] or is_experiment(form)):
        if url := git_remote.remote_url():
            git_remote.sync(root, url)  # the data versions runs on other hosts tagged
        if release in versioning.versioned_releases(root, source):
            raise AirflowSkipException(f"{source} release {release} already has data version {tag}: "
                                       "nothing to do")
        if holder := runs.claim_release(root, source, release, context["run_id"]):
            raise AirflowSkipException(f"{source} release {release} is claimed by run {holder}, which "
                                       f"builds data version {tag}: nothing to do")
    return {"source": source, "release": release}


def release_claims(context: dict[str, Any]) -> None:
    """A failed task of a dataset run hands back the run's release claim, so a later run builds it."""
    from citeworth.orchestration import runs

    runs.release_claims(project(), context["run_id"])


@task
def open_workspace(release: dict[str, str] | None = None) -> dict[str, Any]:
    """This run's workspace at the commit it starts from (the data version it trains on, for a
    models run), with the form's values (and the resolved source release) in its params.yaml and
    the plan of stale stages."""
    from citeworth.orchestration import params_file, runs

    form = get_current_context()["params"]
    workspace = runs.open_workspace(project(), _run_id(), start=form.get("data_version") or "HEAD",
                                    remote=_dvc_remote_of_run())
    updates = params_file.form_updates({**form, **(release or {})}, workspace)
    params_file.apply_params(workspace, updates)
    plan = runs.plan_run(workspace)
    log.info("workspace %s; stale stages: %s", workspace, plan["stale"])
    # what a task on another host needs to make the same workspace (the remote form)
    return {"workspace": str(workspace), "start": runs.run_record(workspace)["start"], "params": updates,
            "plan": plan}


@task(trigger_rule="none_failed")
def close_workspace() -> None:
    """Remove the workspace of a run that succeeded (a failed run's is kept for inspection)."""
    from citeworth.orchestration import runs

    runs.close_workspace(project(), _run_id())


@task
def housekeeping() -> list[str]:
    """Remove workspaces of failed runs older than $CITEWORTH_KEEP_FAILED_WORKSPACES_DAYS (7) days."""
    from citeworth.orchestration import runs

    return [str(path) for path in runs.remove_stale_workspaces(project(), KEEP_FAILED_DAYS)]


@task.short_circuit
def new_data_version(version: dict[str, Any]) -> str | None:
    """The tag of the data version this run created (None when it created none, or ran as an
    experiment): the models DAG then trains on it, once per new data version."""
    return version["tag"] if version.get("created") and "tag" in version else None


@task
def stage(name: str) -> Any:
    """Run one stage function unless the run's plan finds its recorded outputs current."""
    return _run_unless_current(name)


def _run_unless_current(name: str, overrides: dict[str, Any] | None = None,
                        dvc_stage: str | None = None) -> Any:
    """Run stage ``name`` in the run's workspace unless the dvc.yaml stage(s) running it are current."""
    from citeworth.orchestration import runs, workspace

    if runs.is_current(_workspace(), name, dvc_stage):
        log.info("%s current in the run's plan: skipped", dvc_stage or name)
        return {"skipped": True}
    return _in_workspace(name, lambda root, phases: workspace.run_stage(root, name, overrides or {}, phases),
                         dvc_stage)


@task
def download() -> Any:
    """The download stage; a Semantic Scholar API key kept in an Airflow connection reaches it
    through the environment variable the download library reads (never a param or a log)."""
    from citeworth.orchestration import workspace

    params = workspace.stage_params(_workspace(), "download")
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
    from citeworth.orchestration import runs, workspace

    root = prepared_workspace(runs.running(runs.plan_of(_workspace()), name))
    return workspace.plan_shards(root, name)


@task(map_index_template="{{ shard }}")
def curate_shard(name: str, shard: str) -> dict[str, Any]:
    """Curate one shard: a mapped task per shard, so shards spread over workers."""
    from citeworth.orchestration import workspace

    return _in_workspace(name, lambda root, phases: workspace.curate_shard(root, name, shard, phases),
                         part=lambda root: workspace.shard_files(root, name, shard))


@task
def export() -> dict[str, Any]:
    """Every export format, each the same call as the dvc.yaml matrix cell ``export@<format>``."""
    from citeworth.corpora.export.stage import FORMATS

    return {name: _run_unless_current("export", {"format": name}, dvc_stage=f"export@{name}")
            for name in FORMATS}


@task
def plan_models() -> list[str]:
    from citeworth.orchestration import workspace

    return list(workspace.stage_params(_workspace(), "train").models)


@task(queue=TRAIN_QUEUE, map_index_template="{{ model }}")
def train_model(model: str) -> Any:
    """Train one model: the same call as the dvc.yaml matrix cell ``train@<model>``; a model whose
    outputs carry the fingerprint of this data, its params and the code is a no-op (the stage's own
    check, as for a domain cell: parallel tasks never consult DVC)."""
    from citeworth.orchestration import workspace

    overrides = {"models": [model]}
    return _in_workspace("train", lambda root, phases: workspace.run_stage(root, "train", overrides, phases),
                         dvc_stage=f"train@{model}", reuse=True)


@task
def plan_cells() -> list[list[str]]:
    """The domain study's [train field, test field] cells (slugs), one mapped task each."""
    from citeworth.orchestration import workspace

    return workspace.plan_cells(prepared_workspace(["domains"]))


@task(map_index_template="{{ cell | join(' -> ') }}")
def domain_cell(cell: list[str]) -> Any:
    """Train on one field, test on another; a cell whose fingerprinted result is current is a no-op."""
    from citeworth.orchestration import workspace

    overrides = {"cells": [cell], "aggregate": False}
    return _in_workspace("domains",
                         lambda root, phases: workspace.run_stage(root, "domains", overrides, phases),
                         reuse=True, part=lambda root: workspace.cell_files(root, cell))


@task
def domains_aggregate() -> Any:
    """The matrix, embedding clusters, plots and Table 5 from every cell: the ``domains`` stage's outputs."""
    return _run_unless_current("domains", {"cells": [], "aggregate": True})
