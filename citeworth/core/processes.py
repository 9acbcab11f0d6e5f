"""Child processes that die with the process that started them: pool workers, and the stage
child an orchestrator starts (``citeworth.orchestration.workspace``).

A ``kill -9`` of a stage gives its pool no chance to stop its workers: re-parented to init, they
go on curating shards and then block forever on a result pipe nobody reads. So each worker,
first thing, asks the kernel to kill it when its parent dies (Linux ``PR_SET_PDEATHSIG``), and
a watchdog thread polls its parent's pid and exits when that changes (the portable fallback,
e.g. on macOS). Workers are forked on Linux (its default in Python 3.11: a spawned worker spends
~5 s re-importing spaCy) and spawned elsewhere (macOS's default); either way their parent is this
process, which the pid check relies on (a forkserver would be their parent instead). A pool of
``fresh`` workers spawns a new interpreter for every task instead: nothing of this process or of
an earlier task carries over, so a task computes exactly what it would in a process of its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_SECONDS = 0.5
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"
# The log lines of the stage processes (the CLI, an orchestrator's stage child, fresh workers).
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def worker_pool(max_workers: int, fresh: bool = False) -> ProcessPoolExecutor:
    """A process pool whose workers exit as soon as this process is gone, however it ends;
    ``fresh``: each task in a newly spawned interpreter, logging at this process's level."""
    if fresh:
        return ProcessPoolExecutor(max_workers=max_workers, mp_context=multiprocessing.get_context("spawn"),
                                   max_tasks_per_child=1, initializer=_fresh_worker,
                                   initargs=(os.getpid(), logging.getLogger().getEffectiveLevel()))
    return ProcessPoolExecutor(max_workers=max_workers, mp_context=multiprocessing.get_context(START_METHOD),
                               initializer=die_with_parent, initargs=(os.getpid(),))


def _fresh_worker(parent: int, log_level: int) -> None:
    die_with_parent(parent)
    logging.basicConfig(level=log_level, format=LOG_FORMAT)


def die_with_parent(parent: int) -> None:
    """Make this process end when ``parent`` (its parent's pid) does; run first in a worker."""
    if sys.platform.startswith("linux"):
        _parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="die-with-parent", daemon=True).start()


def _parent_death_signal(sig: int) -> None:
    """Ask Linux to send ``sig`` when the parent exits; the watchdog covers a failure here."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)
