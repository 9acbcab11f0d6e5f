"""Runtime knobs: how many units of a stage's work run at once comes from ``--workers`` or
``$CITEWORTH_WORKERS`` (else the stage's default), never from the params; a bad value is a setting
error naming where it came from."""

from __future__ import annotations

import os

import pytest

from citeworth import cli, stages
from citeworth.core import knobs
from citeworth.core.errors import InvalidSetting


def test_the_variable_else_the_stage_default(monkeypatch):
    monkeypatch.delenv(knobs.WORKERS_ENV, raising=False)
    assert knobs.workers(default=4) == 4
    monkeypatch.setenv(knobs.WORKERS_ENV, " 3 ")
    assert knobs.workers(default=4) == 3


@pytest.mark.parametrize("text", ["0", "-2", "two", "1.5", "3 cores"])
def test_a_variable_that_is_not_a_count_is_refused_naming_it(monkeypatch, text):
    monkeypatch.setenv(knobs.WORKERS_ENV, text)
    with pytest.raises(InvalidSetting, match=rf"^{knobs.WORKERS_ENV}: '{text}' is not a number of workers"):
        knobs.workers(default=1)


def test_the_cli_option_sets_the_variable_for_the_stage_and_no_param(monkeypatch):
    monkeypatch.setenv(knobs.WORKERS_ENV, "7")  # the option wins over the environment
    seen = []
    monkeypatch.setattr(stages, "run_stage", lambda stage, overrides, path: seen.append(
        (stage, overrides, os.environ[knobs.WORKERS_ENV])))
    assert cli.main(["run", "curate", "--workers", "2", "-S", "rules.min_sentences=2"]) == 0
    assert seen == [("curate", {"rules.min_sentences": 2}, "2")]


def test_the_cli_refuses_a_count_below_one(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["run", "curate", "--workers", "0"])
    assert done.value.code == 2
    assert "--workers: '0' is not a number of workers" in capsys.readouterr().err
