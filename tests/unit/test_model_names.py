"""What ``--model`` names (check, predict, lsp): a folder, a model of the project, a profile's build."""

from __future__ import annotations

import json

import pytest

from citeworth.core.workspaces import profile_workspace
from citeworth.models.scoring import NoModel, model_folder


def trained(root, names_and_dev_f1: dict[str, float]) -> None:
    for name in names_and_dev_f1:
        (root / "models" / name).mkdir(parents=True)
    (root / "metrics").mkdir(exist_ok=True)
    summary = {name: {"dev_f1": dev_f1} for name, dev_f1 in names_and_dev_f1.items()}
    (root / "metrics/models.json").write_text(json.dumps(summary))


def test_a_folder_a_model_name_a_profile_and_the_default(tmp_path, monkeypatch):
    monkeypatch.delenv("CITEWORTH_WORKSPACES", raising=False)
    trained(tmp_path, {"context": 0.6, "tfidf_lr": 0.5})
    study = profile_workspace(tmp_path.resolve(), "study")
    study.mkdir(parents=True)
    trained(study, {"solo": 0.7, "context": 0.72})

    assert model_folder(None, tmp_path) == tmp_path / "models/context"  # best dev F1 here
    assert model_folder(tmp_path / "models/tfidf_lr", tmp_path) == tmp_path / "models/tfidf_lr"
    assert model_folder("tfidf_lr", tmp_path) == tmp_path / "models/tfidf_lr"
    assert model_folder("study", tmp_path) == study / "models/context"  # the build's best
    assert model_folder("study/solo", tmp_path) == study / "models/solo"
    with pytest.raises(NoModel, match="trained there: context, solo"):
        model_folder("study/pu", tmp_path)
    with pytest.raises(NoModel, match="no profile build of that name"):
        model_folder("paper", tmp_path)
