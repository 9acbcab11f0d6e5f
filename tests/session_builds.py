"""Builds that a whole test run makes once, whatever the number of pytest-xdist workers.

``make test`` runs the suite on several worker processes (pytest-xdist); a session fixture would
then be built once per worker. ``built_once`` builds into a folder all workers of the run share,
under a file lock, so the first worker to ask builds and the others wait for it and reuse it. The
callers hand each test session a copy of it (``copy_tree``), so no worker writes into the shared
build.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this test run shares: under xdist each worker's base temp is a
    subfolder of it (``popen-gw0``...), without xdist it is the base temp itself."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``run_root/name``, made by ``build(folder)`` by the first caller of this run; a build that
    failed half-way is started again from an empty folder by the next caller."""
    root = run_root(tmp_path_factory)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


def copy_tree(source: Path, dest: Path) -> Path:
    """``source``'s contents into ``dest`` (``cp -a`` keeps the mtimes DVC's state cache relies on)."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", f"{source}/.", str(dest)], check=True)
    return dest
