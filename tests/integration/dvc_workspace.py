"""Project workspaces for the orchestration tests (imported by test_dvc_* and test_airflow_*).

A workspace is what a user gets from ``git clone``: the project's source files (tracked, or new and
not ignored) in a fresh git repository, with no pipeline outputs. ``reproduced_workspace`` builds
one with ``dvc repro`` once per test session and hands out copies, so several test modules compare
against the same independent DVC build without paying for it twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_builds import built_once, copy_tree

ROOT = Path(__file__).resolve().parents[2]
# Folders that only pipeline runs fill: a fresh clone has none of them.
OUTPUT_DIRS = ("raw", "interim", "interim_baseline", "data", "models", "metrics", "plots", "reports",
               "checkpoints", "dvclive")
# The last stages of the dataset part: `dvc repro validate related_work export` builds all of it.
DATASET_TARGETS = ("validate", "related_work", "export")


def tool_env(**extra: str) -> dict[str, str]:
    """The environment of a user who activated the project's venv (citeworth, dvc, airflow on PATH)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "GIT_AUTHOR_NAME": "citeworth-test", "GIT_AUTHOR_EMAIL": "test@localhost",
           "GIT_COMMITTER_NAME": "citeworth-test", "GIT_COMMITTER_EMAIL": "test@localhost"}
    env.pop("CITEWORTH_PROJECT_DIR", None)
    return {**env, **extra}


def run(command: list[str], cwd: Path, timeout: float = 600, env: dict | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env or tool_env(), capture_output=True, text=True,
                          timeout=timeout)
    if check and done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {done.returncode} in {cwd}:\n"
                    f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done


def dvc(workspace: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "dvc", *args], workspace, **kwargs)


def git(workspace: Path, *args: str) -> str:
    return run(["git", *args], workspace).stdout.strip()


def fresh_workspace(dest: Path) -> Path:
    """Copy the project's source files (no outputs, no caches) into ``dest`` as a new git repo."""
    def listed(*which: str) -> list[str]:
        out = subprocess.run(["git", "ls-files", "-z", *which], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        return [name for name in out.split("\0") if name]

    # Work in progress counts as source, but a dvc.lock left by someone's local `dvc repro` does not.
    untracked = [name for name in listed("--others", "--exclude-standard") if name != "dvc.lock"]
    for name in listed("--cached") + untracked:
        source = ROOT / name
        if name.split("/")[0] in OUTPUT_DIRS or not source.is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / name)
    git(dest, "init", "--quiet")
    git(dest, "add", "--all")
    git(dest, "commit", "--quiet", "-m", "fresh clone")
    return dest


def reproduced_workspace(tmp_path_factory, dest: Path) -> tuple[Path, float]:
    """A copy (at ``dest``) of a workspace where ``dvc repro`` of the dataset targets ran; the
    build's wall time. The run builds it once (the first caller, whichever xdist worker it is on);
    the copy keeps the mtimes DVC's state cache relies on."""
    def build(workspace: Path) -> None:
        fresh_workspace(workspace)
        start = time.perf_counter()
        dvc(workspace, "repro", *DATASET_TARGETS, timeout=900)
        (workspace / ".git" / "info" / "exclude").write_text(".repro-seconds\n")
        (workspace / ".repro-seconds").write_text(f"{time.perf_counter() - start:.1f}")

    built = built_once(tmp_path_factory, "dvc-reproduced", build)
    copy_tree(built, dest)
    return dest, float((built / ".repro-seconds").read_text())


def checked_out(project: Path, ref: str, name: str) -> Path:
    """A worktree of ``project`` at ``ref`` with its DVC outputs linked in from the shared cache: how
    a test reads what a run versioned (the run's own workspace is gone once it succeeded)."""
    from citeworth.orchestration.runs import open_workspace

    return open_workspace(project, f"inspect-{name}", start=ref)


def locked_stages(workspace: Path, stages: list[str]) -> list[str]:
    """The dvc.lock entries of ``stages``, a foreach / matrix name standing for each of its stages."""
    import yaml

    locked = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    return sorted(name for name in locked if name in stages or name.split("@")[0] in stages)


def locked_hashes(workspace: Path, stages: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(path, md5) of each stage's recorded outputs in dvc.lock."""
    import yaml

    locked = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    return {stage: sorted((out["path"], out["md5"]) for out in locked[stage].get("outs", []))
            for stage in locked_stages(workspace, stages)}
