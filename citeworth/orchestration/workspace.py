"""The project folder an orchestrator works in, and the stage calls it makes there.

Stages read and write paths relative to the project root, the folder ``citeworth run`` and
``dvc repro`` run them from, and they record those relative paths in their outputs. An orchestrator
names the root explicitly instead of changing its own working directory (``os.chdir`` is
process-wide: it would move every other thread of an Airflow worker, and a test runner, with it):
each call below that runs stage code runs it in a child process started in the root
(``python -m citeworth.orchestration.workspace``). The child runs the same functions the CLI runs,
from the same folder, with the root's own code (a run's workspace holds the commit it started from),
so all three doors write byte-identical outputs. Reading params needs no child: the root's
``params.yaml`` is named explicitly.

Where ``$CITEWORTH_STAGE_FORK`` is ``1`` (set by a cluster worker that imported the heavy libraries
before Airflow forked its task processes: ``citeworth.orchestration.airflow_worker``) the child is a
fork of this process instead of a new interpreter: it drops the citeworth modules this process
holds and imports the root's, as ``python -m`` in the root would, but keeps spaCy, torch, DVC and the
rest already imported, which is most of a new interpreter's start.

Airflow tasks, the Airflow UI plugin and scripts call these; there is no Airflow import here.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from citeworth.core.errors import StageFailed, disk_full
from citeworth.core.io import write_text
from citeworth.core.params import NO_OVERRIDES, Overrides, ParamsError
from citeworth.core.processes import LOG_FORMAT, die_with_parent
from citeworth.orchestration.phases import Phases
from citeworth.orchestration.versioning import TAG_PREFIX, git
from citeworth.stages import run_stage as run_stage_here
from citeworth.stages import stage_params as stage_params_here

log = logging.getLogger(__name__)

PROJECT_ENV = "CITEWORTH_PROJECT_DIR"
STAGE_FORK_ENV = "CITEWORTH_STAGE_FORK"
PARAMS_FILE = "params.yaml"
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
    if not (root / PARAMS_FILE).is_file() or not (root / "dvc.yaml").is_file():
        raise StageFailed(f"{root} is not a citeworth project (no params.yaml + dvc.yaml); set {PROJECT_ENV}")
    return root


def stage_params(root: Path, stage: str, overrides: Overrides = NO_OVERRIDES) -> Any:
    """The typed params of ``stage`` from ``root``'s params.yaml (their paths are relative to ``root``)
    with ``overrides`` (key paths of the stage's section -> typed values)."""
    return stage_params_here(stage, overrides, root / PARAMS_FILE)


def run_stage(root: Path, stage: str, overrides: Overrides = NO_OVERRIDES,
              phases: Phases | None = None) -> Any:
    """Run one stage exactly as ``citeworth run STAGE -S key=value ...`` does in ``root``; its summary.
    ``overrides`` are typed values by key path (``{"models": ["tfidf_lr"]}``), the structure the
    CLI parses its ``-S`` strings into: they reach the stage as JSON, never as YAML text."""
    return _call(root, "run_stage", stage, dict(overrides), phases=phases)


def plan_shards(root: Path, stage: str) -> list[str]:
    """The shard keys of curate stage ``stage`` (outputs of shards no longer listed are removed)."""
    return _call(root, "plan_shards", stage)


def curate_shard(root: Path, stage: str, shard: str, phases: Phases | None = None) -> dict[str, Any]:
    """Curate one shard of curate stage ``stage`` (a no-op when it is current); its stats."""
    return _call(root, "curate_shard", stage, shard, phases=phases)


def shard_files(root: Path, stage: str, shard: str) -> list[str]:
    """The files (relative to ``root``) that curating ``shard`` of curate stage ``stage`` writes."""
    from citeworth.curate.stage import shard_outputs

    return [str(path) for path in shard_outputs(stage_params(root, stage).out_dir, shard).files()]


def plan_cells(root: Path) -> list[list[str]]:
    """The domain study's [train field, test field] cells (slugs), one mapped task each."""
    return _call(root, "plan_cells")


def cell_files(root: Path, cell: list[str]) -> list[str]:
    """The file (relative to ``root``) that domain cell ``cell`` ([train, test]) writes."""
    from citeworth.studies.domains.splits import cell_path

    return [str(cell_path(stage_params(root, "domains").cells_dir, *cell))]


def resolve_release(root: Path, source: str, requested: str | None, as_of: Any = None,
                    api_key: str | None = None) -> str:
    """The concrete release a run builds: ``requested``, else (or for "latest") the newest release
    ``source`` had published by ``as_of``, so each date of a backfill maps to the release of its
    time. params.yaml's release is what ``dvc repro`` builds; a run names its own in the form."""
    configured = stage_params(root, "download")
    if requested and requested != "latest":
        return requested
    from citeworth.download.releases import latest_release

    return latest_release(source, as_of, params=configured, api_key=api_key)


def latest_results(root: Path) -> dict[str, Any]:
    """The latest dataset stats, quality gate result and model metrics found in ``root``, the data
    versions and the experiment branches (runs with their own values, ``runs/<run id>``)."""
    from citeworth.orchestration.experiments import experiments

    results: dict[str, Any] = {}
    for name, relative in RESULT_FILES.items():
        path = root / relative
        results[name] = json.loads(path.read_text()) if path.is_file() else None
    results["versions"] = git(root, "tag", "--list", f"{TAG_PREFIX}/*", "--sort=-creatordate",
                              check=False).splitlines()
    results["experiments"] = experiments(root)
    return results


# --- the child process ------------------------------------------------------------------------------


def _plan_shards(stage: str) -> list[str]:
    from citeworth.curate.stage import list_shards

    return list_shards(stage_params_here(stage))


def _curate_shard(stage: str, shard: str) -> dict[str, Any]:
    from citeworth.curate.stage import curate_shard as curate

    return curate(stage_params_here(stage), shard)


def _plan_cells() -> list[list[str]]:
    from citeworth.studies.domains.splits import plan_cells as cells_of

    return cells_of(stage_params_here("domains"))


# What a child runs, each in the project root (its working directory).
_CALLS = {"run_stage": run_stage_here, "plan_shards": _plan_shards, "curate_shard": _curate_shard,
          "plan_cells": _plan_cells}
# Errors that cross the process boundary with their type; any other becomes StageFailed.
_ERRORS = {"StageFailed": StageFailed, "ParamsError": ParamsError}


def _call(root: Path, name: str, *args: Any, phases: Phases | None = None) -> Any:
    """``_CALLS[name](*args)`` run in a child process started in ``root``; its JSON result. With
    ``phases``, the child's start (interpreter, imports) and its work are timed apart."""
    with tempfile.TemporaryDirectory(prefix="citeworth-call-") as scratch:
        answer = Path(scratch) / "answer.json"
        argv = [name, json.dumps(args), str(answer), str(os.getpid())]
        start = time.perf_counter()
        if os.environ.get(STAGE_FORK_ENV) == "1":
            returncode = _forked(root, argv)
        else:  # its log goes to ours (stderr)
            returncode = subprocess.run([sys.executable, "-m", __name__, *argv], cwd=root).returncode
        if not answer.is_file():
            raise StageFailed(f"{name}{tuple(args)} in {root} ended (exit {returncode}) without a result")
        reply = json.loads(answer.read_text())
    if phases is not None:
        phases.add("stage process", time.perf_counter() - start - reply["seconds"])
        phases.add("stage work", reply["seconds"])
    if "error" in reply:
        raise _ERRORS.get(reply["error"]["type"], StageFailed)(reply["error"]["message"])
    return reply["result"]


def _forked(root: Path, argv: list[str]) -> int:
    """``main(argv)`` in a fork of this process, in ``root`` with ``root``'s citeworth; its exit code."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):  # a plain process's, not the Airflow task's
            signal.signal(signum, signal.SIG_DFL)
        for module in [name for name in sys.modules if name == "citeworth" or name.startswith("citeworth.")]:
            del sys.modules[module]
        sys.path.insert(0, str(root))
        os.chdir(root)
        from citeworth.orchestration import workspace  # the root's, as `python -m` in the root finds it

        code = workspace.main(argv)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


def main(argv: list[str] | None = None) -> int:
    name, args, answer, parent = argv if argv is not None else sys.argv[1:]
    die_with_parent(int(parent))  # a killed Airflow task leaves no stage running on
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    start = time.perf_counter()
    try:
        reply: dict[str, Any] = {"result": _CALLS[name](*json.loads(args))}
    except Exception as exc:
        exc = disk_full(exc, Path.cwd()) or exc
        if not isinstance(exc, tuple(_ERRORS.values())):
            log.exception("%s failed", name)
        message = str(exc) if isinstance(exc, tuple(_ERRORS.values())) else f"{type(exc).__name__}: {exc}"
        reply = {"error": {"type": type(exc).__name__, "message": message}}
    reply["seconds"] = time.perf_counter() - start
    write_text(Path(answer), json.dumps(reply, sort_keys=True, default=str))
    return 0 if "result" in reply else 1


if __name__ == "__main__":
    sys.exit(main())
