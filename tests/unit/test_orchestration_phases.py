"""A task's phase timings: one log line, read back from a plain or an Airflow (JSON) task log."""

from __future__ import annotations

import json
import logging

from citeworth.orchestration.phases import Phases, parse


def test_phases_sum_per_name_in_first_run_order_and_read_back_from_a_json_task_log(caplog):
    phases = Phases()
    with phases("join"):
        pass
    phases.add("stage work", 1.25)
    with phases("join"):
        pass
    phases.add("stage work", 0.5)
    assert list(phases.seconds) == ["join", "stage work"]
    assert phases.seconds["stage work"] == 1.75
    with caplog.at_level(logging.INFO):
        phases.log()
    [line] = [record.getMessage() for record in caplog.records]
    airflow_log = "\n".join([json.dumps({"event": "starting", "level": "info"}),
                             json.dumps({"event": line, "level": "info", "logger": "x"}), "not json"])
    read = parse(airflow_log)
    assert list(read) == ["join", "stage work"] and read["stage work"] == 1.75
    assert parse(f"2026-01-01 INFO {line}") == read


def test_a_log_without_a_phase_line_has_none():
    assert parse('{"event": "task phases"}\nplain text') is None
