"""What the orchestrators share beyond the stages: the project folder, run params, DVC versioning.

Airflow tasks, the Airflow UI plugin and scripts call these; there is no Airflow import here.
A run records its parameters in ``params.yaml`` (as ``dvc exp run -S`` does), runs the stage
functions, then records the outputs in ``dvc.lock`` with ``dvc commit`` -- so ``dvc status``
afterwards compares the same hashes ``dvc repro`` would have written -- pushes them to the DVC
remote, commits the lock and tags the data version by source release in git.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from citeworth.errors import StageFailed
from citeworth.io import write_text
from citeworth.params import ParamsError, build
from citeworth.stages import params_class, run_stage, stage_function, stage_params

log = logging.getLogger(__name__)

PROJECT_ENV = "CITEWORTH_PROJECT_DIR"
DATASET_STAGES = ("download", "curate", "curate_baseline", "assemble", "assemble_baseline", "validate")
# "train" names every cell of the dvc.yaml matrix (train@<model>).
MODEL_STAGES = ("train", "report", "domains", "transfer")
TAG_PREFIX = "data"
# Results shown in the UI, each the output path its stage's contract names.
RESULT_FILES = {
    "dataset": "reports/dataset_stats.json",
    "quality": "reports/quality/summary.json",
    "models": "metrics/models.json",
    "domains": "metrics/domains.json",
    "transfer": "metrics/transfer.json",
}
_GIT_IDENTITY = ("-c", "user.name=citeworth", "-c", "user.email=citeworth@localhost")


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


# --- run parameters -------------------------------------------------------------------------------


def form_updates(form: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """params.yaml updates ``{section: {key: value}}`` from an orchestrator's run form.

    Empty (None) fields keep params.yaml's value. ``sample_size`` caps the paragraphs per field of
    both the dataset and its spans-only baseline, so the two stay comparable; ``overrides`` is
    ``{section: {key: value}}`` for everything else.
    """
    fan_out = {
        "source": [("download", "source")],
        "release": [("download", "release")],
        "sample_size": [("assemble", "per_field"), ("assemble_baseline", "per_field")],
        "workers": [("download", "workers"), ("curate", "workers"), ("curate_baseline", "workers")],
        "models": [("train", "models")],
    }
    updates: dict[str, dict[str, Any]] = {}
    for field, targets in fan_out.items():
        if form.get(field) is not None:
            for section, key in targets:
                updates.setdefault(section, {})[key] = form[field]
    for section, values in (form.get("overrides") or {}).items():
        updates.setdefault(section, {}).update(values)
    return updates


def apply_params(project: Path, updates: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Write ``{section: {key: value}}`` (top-level keys of a section) into params.yaml.

    Only the lines of the changed keys are rewritten (as one-line flow YAML, keeping a trailing
    comment and an anchor: values aliased to it change with it), so the file's comments and layout
    survive. The result must parse, hold the intended values and fit every changed section's
    params class -- else nothing is written and the stage's own message is raised. Returns every
    key whose value changed, aliases included ({}: the file is untouched).
    """
    path = project / "params.yaml"
    text = path.read_text()
    current = yaml.safe_load(text) or {}
    for section in updates:
        if section not in current:
            raise ParamsError(f"params.yaml has no section {section!r} to override")
    for section, values in updates.items():
        for key, value in values.items():
            if (current[section] or {}).get(key) != value:
                text = _set_line(text, section, key, value)
    try:
        edited = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ParamsError(f"cannot write {updates} into params.yaml line by line: {exc}") from exc
    for section, values in updates.items():
        if any(edited[section].get(key) != value for key, value in values.items()):
            raise ParamsError(f"cannot write {section}: {values} into params.yaml line by line")
    changed = _changed(current, edited)
    for section in changed:
        build(params_class(stage_function(section)), edited[section] or {}, where=section)
    if changed:
        write_text(path, text)
        log.info("params.yaml updated: %s", changed)
    return changed


def _changed(before: dict, after: dict) -> dict[str, dict[str, Any]]:
    changed: dict[str, dict[str, Any]] = {}
    for section, values in after.items():
        old = before.get(section) or {}
        diff = {key: value for key, value in (values or {}).items() if old.get(key) != value}
        if diff:
            changed[section] = diff
    return changed


def _set_line(text: str, section: str, key: str, value: Any) -> str:
    """``text`` with ``section.key`` set to ``value``: its (possibly multi-line) value becomes one line."""
    lines = text.splitlines(keepends=True)
    header = re.compile(rf"{re.escape(section)}:\s*(#.*)?$")
    head = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if head is None:
        raise ParamsError(f"params.yaml: section {section!r} is not a block mapping")
    end = next((i for i in range(head + 1, len(lines)) if re.match(r"\S", lines[i])), len(lines))
    flow = yaml.safe_dump(value, default_flow_style=True, width=1 << 20).removesuffix("\n...\n").strip()
    at = next((i for i in range(head + 1, end) if re.match(rf"  {re.escape(key)}:", lines[i])), None)
    if at is None:  # a key the file leaves at its default: add it at the end of the section
        last = max(i for i in range(head, end) if lines[i].strip())
        return "".join(lines[:last + 1] + [f"  {key}: {flow}\n"] + lines[last + 1:])
    stop = next((i for i in range(at + 1, end) if re.match(r" {0,2}\S", lines[i])), end)
    while stop > at + 1 and not lines[stop - 1].strip():
        stop -= 1  # keep the blank lines between sections
    old = lines[at].rstrip("\n")
    comment = re.search(r"\s+#.*$", old) if stop == at + 1 else None
    anchor = re.match(rf"  {re.escape(key)}:\s*(&\S+)", old)
    new = f"  {key}: {anchor.group(1) + ' ' if anchor else ''}{flow}"
    if comment:
        column = comment.start() + len(comment.group()) - len(comment.group().lstrip())
        new = new.ljust(column - 1) + " " + comment.group().lstrip()
    return "".join(lines[:at] + [new + "\n"] + lines[stop:])


# --- DVC ------------------------------------------------------------------------------------------


def dvc(project: Path, *args: str) -> str:
    """Run the DVC command line of this interpreter's environment in the project; fail clearly."""
    command = [sys.executable, "-m", "dvc", *args]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True)
    if done.returncode != 0:
        raise StageFailed(f"`dvc {' '.join(args)}` failed (exit {done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def is_up_to_date(project: Path, stage: str) -> bool:
    """True when dvc.lock records ``stage`` and its deps, params and outs match the workspace."""
    return not dvc_status(project, [stage])


def dvc_status(project: Path, stages: Iterable[str] = ()) -> dict[str, Any]:
    """``dvc status`` as data: {} when the stages' recorded deps, params and outs match the workspace."""
    return json.loads(dvc(project, "status", "--json", *stages) or "{}")


def record_outputs(project: Path, stages: Iterable[str]) -> dict[str, Any]:
    """Record what the stages produced in dvc.lock and the DVC cache (``dvc commit``).

    The lock then holds the same hashes ``dvc repro`` writes for these outputs, so a later
    ``dvc status``/``dvc repro`` sees them as up to date. Returns the stages' remaining status.
    """
    stages = list(stages)
    dvc(project, "commit", "--force", *stages)
    return dvc_status(project, stages)


def push(project: Path, stages: Iterable[str], remote: str | None = None) -> None:
    dvc(project, "push", *(["--remote", remote] if remote else []), *stages)


def git_tracked_outputs(project: Path, stages: Iterable[str]) -> list[str]:
    """What git keeps of ``stages``' outputs: those with ``cache: false`` (metrics, plots, tables)
    and the .gitignore files DVC writes beside cached ones -- each only if present and not ignored."""
    from dvc.repo import Repo

    wanted = set(stages)
    with Repo(str(project)) as repo:
        outs = [out for stage in repo.index.stages
                if stage.addressing in wanted or stage.name.split("@")[0] in wanted
                for out in stage.outs]
    relative = [(Path(os.path.relpath(out.fs_path, project)), out.use_cache) for out in outs]
    paths = {path.parent / ".gitignore" if cached else path for path, cached in relative}
    present = sorted(str(path) for path in paths if (project / path).is_file())
    if not present:
        return []
    ignored = set(git(project, "check-ignore", "--", *present, check=False).splitlines())
    return [path for path in present if path not in ignored]


# --- git: data versions -----------------------------------------------------------------------------


def git(project: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *_GIT_IDENTITY, *args], cwd=project, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise StageFailed(f"`git {' '.join(args)}` failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def data_version_tag(source: str, release: str) -> str:
    return f"{TAG_PREFIX}/{source}/{release}"


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


def versioned_releases(project: Path, source: str) -> list[str]:
    """Releases of ``source`` that already have a data version tag, oldest name first."""
    prefix = f"{data_version_tag(source, '')}"
    tags = git(project, "tag", "--list", f"{prefix}*").splitlines()
    return sorted(tag[len(prefix):] for tag in tags if tag)


def commit_version(project: Path, stages: Iterable[str], message: str) -> str | None:
    """Commit dvc.lock, params.yaml and the git-kept outputs of ``stages``; None if nothing changed."""
    paths = ["dvc.lock", "params.yaml", *git_tracked_outputs(project, stages)]
    git(project, "add", "--", *paths)
    if not git(project, "diff", "--cached", "--name-only", "--", *paths):
        return None
    git(project, "commit", "--quiet", "-m", message, "--", *paths)
    return git(project, "rev-parse", "HEAD")


def tag_data_version(project: Path, source: str, release: str, stages: Iterable[str],
                     replace: bool = False) -> dict[str, Any]:
    """Tag the commit holding this release's dataset; a rerun with the same outputs changes nothing.

    An existing tag whose recorded outputs differ from the workspace's means the same source
    release produced different data (other code or params): that fails, unless ``replace`` (a
    forced rebuild) moves the tag to the new version.
    """
    stages = list(stages)
    tag = data_version_tag(source, release)
    if git(project, "tag", "--list", tag):
        tagged = _locked_outputs(git(project, "show", f"{tag}:dvc.lock"), stages)
        if tagged == _locked_outputs((project / "dvc.lock").read_text(), stages):
            return {"tag": tag, "commit": git(project, "rev-parse", f"{tag}^{{commit}}"), "created": False}
        if not replace:
            raise StageFailed(f"{tag} already exists with different dataset hashes: the release was "
                              "rebuilt differently (check params and code); run with force to re-version")
    commit = commit_version(project, stages, f"Data version {tag}") or git(project, "rev-parse", "HEAD")
    git(project, "tag", "--force", "--annotate", tag, "--message",
        f"citeworth dataset from {source} release {release}", commit)
    return {"tag": tag, "commit": commit, "created": True}


def _locked_outputs(lock_text: str, stages: list[str]) -> dict[str, list[tuple[str, str]]]:
    locked = (yaml.safe_load(lock_text) or {}).get("stages", {})
    outs = {name: (locked.get(name) or {}).get("outs", []) for name in stages}
    return {name: sorted((out["path"], out.get("md5", "")) for out in entries)
            for name, entries in outs.items()}


# --- latest results for the UI ------------------------------------------------------------------------


def latest_results(project: Path) -> dict[str, Any]:
    """The latest dataset stats, quality gate result and model metrics found in the project."""
    results: dict[str, Any] = {}
    for name, relative in RESULT_FILES.items():
        path = project / relative
        results[name] = json.loads(path.read_text()) if path.is_file() else None
    results["versions"] = git(project, "tag", "--list", f"{TAG_PREFIX}/*", "--sort=-creatordate",
                              check=False).splitlines()
    return results
