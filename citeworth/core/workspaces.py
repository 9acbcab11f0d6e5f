"""Where a run's workspace lies: a git worktree of the project under ``.dvc/tmp/runs/`` (git- and
DVC-ignored) or ``$CITEWORTH_WORKSPACES``. Orchestrated runs open them (orchestration/runs.py); a
params profile's build (``make study``) has one of its own, found here by ``citeworth check --model``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from citeworth.core.fingerprint import digest

WORKSPACES_ENV = "CITEWORTH_WORKSPACES"
PROFILE_RUN_PREFIX = "profile-"  # a profile's workspace belongs to run id profile-<name>


def workspaces_root(project: Path) -> Path:
    return Path(os.environ.get(WORKSPACES_ENV) or project / ".dvc" / "tmp" / "runs")


def workspace_path(project: Path, run_id: str) -> Path:
    """The folder of ``run_id``'s workspace: a readable name plus a digest, so that two run ids the
    file system would spell alike (``:`` and ``+`` are replaced) never share one."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", run_id)[:80]
    return workspaces_root(project) / f"{readable}-{digest(run_id)[:8]}"


def profile_workspace(project: Path, profile: str) -> Path:
    """The workspace ``make study`` (profile ``study``, i.e. params/study.yaml) builds in."""
    return workspace_path(project, PROFILE_RUN_PREFIX + profile)
