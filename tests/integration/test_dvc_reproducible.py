"""Same inputs, same version: two fresh clones that build the same pipeline record the same hashes.

Clone A is the session's shared ``dvc repro validate`` build (dvc_workspace.reproduced_workspace),
clone B a new clone in another folder, built minutes later. Both then train one fast model
(``train@tfidf_lr``). Every output hash in the two ``dvc.lock`` files must agree -- the downloaded
release (its MANIFEST.json), the curated shards, the dataset, the quality summary and Data Docs, the
model and its plots -- except the model's metrics file, which holds the declared wall-clock training
times (``RUNTIME_METRICS``) and must agree once those are taken out. The torch models are left out
here to keep the suite's cost down: test_training_stage.py trains every model kind (tiny encoders
and the embedded one) in a copy of its project, in a fresh process, and finds the same bytes; the
domains and transfer studies train through that same loop but are not rebuilt twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from dvc_workspace import DATASET_TARGETS, dvc, fresh_workspace, reproduced_workspace

from citeworth.models.train import RUNTIME_METRICS, without_runtimes

pytestmark = pytest.mark.slow

MODEL = "tfidf_lr"
RUNTIME_FILES = {f"metrics/models/{MODEL}.json"}  # the outputs of this build that hold RUNTIME_METRICS


def _locked_outs(workspace: Path) -> dict[str, dict[str, dict]]:
    """stage -> output path -> its recorded hash and size (from dvc.lock)."""
    stages = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    return {stage: {out.pop("path"): out for out in entry.get("outs", [])} for stage, entry in stages.items()}


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


@pytest.fixture(scope="module")
def two_clones(tmp_path_factory, mirror) -> tuple[Path, Path]:
    first, _ = reproduced_workspace(tmp_path_factory, tmp_path_factory.mktemp("clone_a"))
    second = fresh_workspace(tmp_path_factory.mktemp("clone_b_elsewhere"))
    dvc(second, "repro", *DATASET_TARGETS, timeout=900)
    for clone in (first, second):
        dvc(clone, "repro", f"train@{MODEL}", timeout=600)
    return first, second


def test_two_clones_lock_the_same_hash_for_every_output_but_the_runtime_metrics(two_clones):
    first, second = (_locked_outs(clone) for clone in two_clones)
    assert set(first) == set(second) and f"train@{MODEL}" in first and "download" in first
    differing = sorted(path for stage in first for path, out in first[stage].items()
                       if second[stage].get(path) != out)
    assert set(differing) <= RUNTIME_FILES, f"outputs that differ between two builds: {differing}"


def test_the_runtime_metrics_are_the_only_difference_in_the_metrics_file(two_clones):
    first, second = (json.loads((clone / f"metrics/models/{MODEL}.json").read_text()) for clone in two_clones)
    assert set(RUNTIME_METRICS) <= _keys(first)  # declared and really there, so the exclusion is not vacuous
    assert without_runtimes(first) == without_runtimes(second)
