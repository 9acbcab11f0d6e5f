"""Runtime knobs: how a stage runs, never what it computes.

How many files download fetches at once, PDFs pdf2tei has in flight, shards curate curates in
parallel or models train trains side by side changes no output byte, so it is no param: a param is a
result, versioned with the outputs, and changing one makes the stage stale for ``dvc repro`` and an
Airflow run an experiment. The count comes from ``citeworth run STAGE --workers N``, which sets
``$CITEWORTH_WORKERS`` for the stage; ``dvc repro`` and an Airflow worker pass the variable in their
environment (an Airflow run's parallelism is its pools and its workers' concurrency besides); unset,
each stage has its own default.

What is not a knob: torch's CPU threads and the device, which change the numbers a model computes
(docs/ARCHITECTURE.md, "Params are results").
"""

from __future__ import annotations

import os

from citeworth.core.errors import InvalidSetting

WORKERS_ENV = "CITEWORTH_WORKERS"


def workers(default: int) -> int:
    """How many units of a stage's work run at once: ``$CITEWORTH_WORKERS``, else ``default``;
    InvalidSetting naming the variable when it is not a whole number of at least 1."""
    text = os.environ.get(WORKERS_ENV)
    if not text:
        return default
    try:
        return worker_count(text)
    except ValueError as exc:
        raise InvalidSetting(f"{WORKERS_ENV}: {exc}") from None


def worker_count(text: str) -> int:
    """``"4"`` -> 4; ValueError for anything but a whole number of at least 1."""
    count = int(text) if text.strip().isdigit() else 0
    if count < 1:
        raise ValueError(f"{text!r} is not a number of workers: give a whole number of at least 1")
    return count


def available_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the system has one (a container's
    or taskset's limit), else every CPU."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
