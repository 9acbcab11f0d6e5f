"""Where an orchestrated task's time goes: named phases, summed, logged as one line.

A task on a cluster host spends its time joining the run's workspace, fetching its inputs, running
the stage and sending its outputs; ``Phases`` times each and logs them together, so a task log
(and ``benchmarks/cluster_throughput.py``, which reads the logs) shows the task's overhead beside
its work. No Airflow import here.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

PREFIX = "task phases (s):"


class Phases:
    """Seconds per named phase, in the order the phases first ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def line(self) -> str:
        return f"{PREFIX} " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in self.seconds.items())

    def log(self) -> None:
        log.info("%s", self.line())


def parse(log_text: str) -> dict[str, float] | None:
    """The phases of the last ``Phases.line`` in a task log (plain lines, or Airflow's JSON lines
    with the message under ``event``); None when it has none."""
    found = None
    for line in log_text.splitlines():
        try:
            line = json.loads(line).get("event", "")
        except (ValueError, AttributeError):
            pass
        if isinstance(line, str) and PREFIX in line:
            found = line.split(PREFIX, 1)[1]
    if found is None:
        return None
    pairs = (entry.strip().rsplit(" ", 1) for entry in found.split(","))
    return {name: float(value) for name, value in pairs}
