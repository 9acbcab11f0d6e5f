"""citeworth.orchestration.outputs.fetch_inputs: where each input of a task comes from in the remote
workspace form (by hash from an upstream task, from dvc.lock, or nowhere: git has it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeworth.core.errors import StageFailed
from citeworth.orchestration import outputs

PLAN = {
    "stale": ["train@tfidf_lr", "report", "domains"],
    "outs": {"assemble@citeworth": ["data/citeworth", "reports/assemble_table.md"],
             "train@tfidf_lr": ["models/tfidf_lr", "metrics/models/tfidf_lr.json"],
             "report": ["metrics/models.json"],
             "domains": ["metrics/domains", "reports/table5.md"]},
    "deps": {"train@tfidf_lr": ["citeworth/models", "data/citeworth/train.jsonl", "params.yaml"],
             "report": ["metrics/models/tfidf_lr.json", "reports/assemble_table.md"],
             "domains": ["data/citeworth", "params.yaml"]},
    "uncached": ["metrics/models.json", "metrics/models/tfidf_lr.json", "reports/assemble_table.md"],
}


@pytest.fixture()
def pulls(monkeypatch):
    calls = {}
    monkeypatch.setattr(outputs, "pull_outputs", lambda root, produced, remote: calls.update(hash=produced))
    monkeypatch.setattr(outputs, "pull_locked", lambda root, paths, remote: calls.update(lock=sorted(paths)))
    return calls


def test_what_the_run_did_not_rebuild_comes_from_the_lock_code_and_params_from_git(pulls):
    outputs.fetch_inputs(Path("."), PLAN, ["train@tfidf_lr"], {}, "s3")
    assert pulls == {"hash": {}, "lock": ["data/citeworth/train.jsonl"]}  # a file inside a recorded folder


def test_a_metric_the_run_rebuilt_comes_by_hash_one_it_did_not_rebuild_from_git(pulls):
    sent = {"metrics/models/tfidf_lr.json": ["ab12"], "models/tfidf_lr": ["cd34.dir"]}
    outputs.fetch_inputs(Path("."), PLAN, ["report"], sent, "s3")
    assert pulls == {"hash": {"metrics/models/tfidf_lr.json": ["ab12"]}, "lock": []}


def test_an_output_the_run_rebuilds_that_no_upstream_task_sent_is_an_error_not_old_data(pulls):
    with pytest.raises(StageFailed, match="metrics/models/tfidf_lr.json is rebuilt by this run"):
        outputs.fetch_inputs(Path("."), PLAN, ["report"], {}, "s3")


def test_the_versioning_step_fetches_the_outputs_of_its_stages_and_what_they_read(pulls):
    sent = {"models/tfidf_lr": ["cd34.dir"], "metrics/models/tfidf_lr.json": ["ab12"],
            "metrics/models.json": ["ef56"]}
    outputs.fetch_inputs(Path("."), PLAN, ["train@tfidf_lr", "report"], sent, "s3", outs=True)
    # dvc commit hashes the deps too: the training data comes from the lock
    assert pulls == {"hash": sent, "lock": ["data/citeworth/train.jsonl"]}


def test_the_aggregation_gets_the_parts_of_its_own_outputs_its_mapped_tasks_sent(pulls):
    cells = {"metrics/domains": ["aa.dir", "bb.dir"]}
    outputs.fetch_inputs(Path("."), PLAN, ["domains"], cells, "s3")
    assert pulls == {"hash": cells, "lock": ["data/citeworth"]}
