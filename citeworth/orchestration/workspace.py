"""The project folder an orchestrator works in, and the stage calls it makes there.

Airflow tasks, the Airflow UI plugin and scripts call these; there is no Airflow import here.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from citeworth.core.errors import StageFailed
from citeworth.orchestration.versioning import TAG_PREFIX, git
from citeworth.stages import run_stage, stage_params

PROJECT_ENV = "CITEWORTH_PROJECT_DIR"
# Results shown in the UI, each the output path its stage's contract names.
RESULT_FILES = {
    "dataset": "reports/dataset_stats.json",
    "quality": "reports/quality/summary.json",
    "models": "metrics/models.json",
    "domains": "metrics/domains.json",
    "transfer": "metrics/transfer.json",
}


def project_dir(default: Path | None = None) -> Path:
    """The project checkout the orchestrator works in: $CITEWORTH_PROJECT_DIR, else ``default``/cwd."""
    root = Path(os.environ.get(PROJECT_ENV) or default or Path.cwd()).resolve()
    if not (root / "params.yaml").is_file() or not (root / "dvc.yaml").is_file():
        raise StageFailed(f"{root} is not a citeworth project (no params.yaml + dvc.yaml); set {PROJECT_ENV}")
    return root


@contextlib.contextmanager
def in_project(project: Path) -> Iterator[Path]:
    """Run the block with the project as working directory (stage paths are project-relative)."""
    previous = Path.cwd()
    os.chdir(project)
    try:
        yield project
    finally:
        os.chdir(previous)


def run_stage_in(project: Path, stage: str, overrides: Iterable[str] = ()) -> Any:
    """Run one stage exactly as ``citeworth run STAGE [-S key=value ...]`` does, from the project folder."""
    with in_project(project):
        return run_stage(stage, list(overrides))


def stage_params_in(project: Path, stage: str) -> Any:
    with in_project(project):
        return stage_params(stage)


def plan_shards(project: Path, stage: str) -> list[str]:
    """The shard keys of curate stage ``stage`` (outputs of shards no longer listed are removed)."""
    from citeworth.curate.stage import list_shards

    params = stage_params_in(project, stage)
    with in_project(project):
        return list_shards(params)


def curate_one_shard(project: Path, stage: str, shard: str) -> dict[str, Any]:
    from citeworth.curate.stage import curate_shard

    params = stage_params_in(project, stage)
    with in_project(project):
        return curate_shard(params, shard)


def resolve_release(project: Path, source: str, requested: str | None, as_of: Any = None,
                    api_key: str | None = None) -> str:
    """The concrete release a run builds: ``requested``, else params.yaml's, where "latest" means the
    newest release ``source`` had published by ``as_of`` (so a backfill date maps to one release)."""
    configured = stage_params_in(project, "download")
    wanted = requested or (configured.release if configured.source == source else "latest")
    if wanted != "latest":
        return wanted
    from citeworth.download.releases import latest_release

    with in_project(project):
        return latest_release(source, as_of, params=configured, api_key=api_key)


def latest_results(project: Path) -> dict[str, Any]:
    """The latest dataset stats, quality gate result and model metrics found in the project."""
    results: dict[str, Any] = {}
    for name, relative in RESULT_FILES.items():
        path = project / relative
        results[name] = json.loads(path.read_text()) if path.is_file() else None
    results["versions"] = git(project, "tag", "--list", f"{TAG_PREFIX}/*", "--sort=-creatordate",
                              check=False).splitlines()
    return results


def plan_cells(project: Path) -> list[list[str]]:
    """The domain study's [train field, test field] cells (slugs), one mapped task each."""
    from citeworth.studies.domains.splits import plan_cells as cells_of

    params = stage_params_in(project, "domains")
    with in_project(project):
        return cells_of(params)
