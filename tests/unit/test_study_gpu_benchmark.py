"""benchmarks/study_gpu.py's bookkeeping, without a GPU: the overrides each group's process trains
with (outputs apart from the CPU study's, the profile's params valid with them) and what a group's
end records (done with its figures, stopped at the time limit, failed)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from citeworth.stages import stage_params

ROOT = Path(__file__).resolve().parents[2]
_PATH = ROOT / "benchmarks" / "study_gpu.py"
_SPEC = importlib.util.spec_from_file_location("study_gpu", _PATH)
study_gpu = sys.modules[_SPEC.name] = importlib.util.module_from_spec(_SPEC)  # benchmarks/ is no package
_SPEC.loader.exec_module(study_gpu)


def _args(**given) -> argparse.Namespace:
    return argparse.Namespace(**{"seeds": None, "encoder": None, "extra": [], **given})


def test_a_group_trains_the_paper_budgets_apart_from_the_cpu_study(tmp_path):
    args = _args(seeds=[1], encoder=str(tmp_path), extra=["catalog.pu.optim.epochs=1"])
    values = study_gpu.overrides(args, ["pu", "sentence_noweight"])
    params = stage_params("train", values, ROOT / "params" / "study-gpu.yaml")
    assert params.models == ["pu", "sentence_noweight"] and params.seeds == [1]
    assert {params.models_dir, params.metrics_dir, params.checkpoints_dir} == {
        Path("study-gpu/models"), Path("study-gpu/metrics"), Path("study-gpu/checkpoints")}
    pu, noweight = params.catalog["pu"], params.catalog["sentence_noweight"]
    assert pu.encoder == noweight.encoder == str(tmp_path.resolve())
    assert pu.optim.epochs == 1 and noweight.optim.epochs == 3  # -S wins; the rest is the profile's
    assert pu.optim.device == "cuda" and pu.max_train_sentences is None  # every training sentence
    assert pu.optim.checkpoint_every == study_gpu.NO_MID_EPOCH_CHECKPOINTS


def test_a_group_records_its_figures_or_why_it_has_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "study-gpu" / "metrics").mkdir(parents=True)
    (tmp_path / "study-gpu" / "logs").mkdir()
    mean = lambda value: {"mean": value, "n": 1, "std": 0.0}  # noqa: E731
    metrics = {"label": "MiniLM-Ctx", "dev": {"f1": mean(0.71)}, "runtime_seconds": mean(270.0),
               "test": {**{k: mean(0.7) for k in ("f1", "precision", "recall", "roc_auc", "pr_auc")},
                        "f1_ci": [0.69, 0.71], "sentences": 100},
               "per_collection": {"elife": {k: mean(0.8) for k in ("f1", "roc_auc", "pr_auc")}}}
    (tmp_path / "study-gpu" / "metrics" / "context.json").write_text(json.dumps(metrics))
    study_gpu.cost_file("context").write_text(json.dumps({"wall_s": 280.0, "peak_gpu_mb": 579}))

    done = study_gpu.group_results(("context",), SimpleNamespace(returncode=0))["context"]
    assert done["status"] == "done" and done["f1"] == 0.7 and done["f1_ci"] == [0.69, 0.71]
    assert done["per_collection"] == {"elife": {"f1": 0.8, "roc_auc": 0.8, "pr_auc": 0.8}}
    assert done["wall_s"] == 280.0 and done["peak_gpu_mb"] == 579

    stopped = study_gpu.group_results(("solo",), SimpleNamespace(returncode=-15))["solo"]
    assert stopped == {"status": "stopped at the time limit", "group": "solo"}
    failed = study_gpu.group_results(("pu", "sentence_noweight"), SimpleNamespace(returncode=1))
    assert {r["status"] for r in failed.values()} == {"failed (rc 1)"}
