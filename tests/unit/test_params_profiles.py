"""Profiles: a params file that ``extends`` another. ``params/paper.yaml`` (the paper's settings) must
build every stage and every model it names, so it cannot rot into a comment nothing checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeworth.core.params import ParamsError, apply_overrides, load_document
from citeworth.models.fitting import model_spec
from citeworth.stages import STAGES, stage_params

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "params" / "paper.yaml"
PROFILES = sorted((ROOT / "params").glob("*.yaml"))


def test_a_profile_merges_mappings_and_replaces_everything_else():
    base = {"train": {"seeds": [1], "catalog": {"a": {"lr": 1, "steps": 5}}, "threads": 1}, "other": 3}
    changes = {"train": {"seeds": [1, 2], "catalog": {"a": {"steps": None}}, "threads": None}}
    assert apply_overrides(base, changes) == {
        "train": {"seeds": [1, 2], "catalog": {"a": {"lr": 1, "steps": None}}, "threads": None}, "other": 3}


def test_a_profile_extends_its_base_relative_to_itself(tmp_path):
    (tmp_path / "params.yaml").write_text("assemble: {seed: 1, per_field: null}\n")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles/p.yaml").write_text("extends: ../params.yaml\nassemble: {per_field: smallest}\n")
    assert load_document(tmp_path / "profiles/p.yaml") == {"assemble": {"seed": 1, "per_field": "smallest"}}


@pytest.mark.parametrize(("text", "message"), [
    ("extends: missing.yaml\n", "missing.yaml not found"),
    ("extends: p.yaml\n", "makes a cycle"),
    ("- a list\n", "expected a mapping of sections"),
])
def test_a_broken_profile_is_a_params_error(tmp_path, text, message):
    (tmp_path / "p.yaml").write_text(text)
    with pytest.raises(ParamsError, match=message):
        load_document(tmp_path / "p.yaml")


@pytest.mark.parametrize("profile", PROFILES, ids=lambda path: path.stem)
@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_profile_builds_every_stage(stage, profile):
    assert stage_params(stage, path=profile) is not None


@pytest.mark.parametrize("profile", ["study", "study-gpu"])
def test_the_study_trains_every_encoder_model_on_one_budget_and_its_largest_solo_point_is_train_solo(profile):
    path = ROOT / "params" / f"{profile}.yaml"
    train = stage_params("train", path=path)
    specs = {name: model_spec(name, train.catalog[name]) for name in train.models}
    encoders = [s for s in specs.values() if s.kind in ("sentence", "context")]
    assert len({(s.max_train_sentences, s.max_dev_sentences) for s in encoders}) == 1
    solo = model_spec("solo", stage_params("scaling", path=path).curves["solo"].model)
    assert solo == specs["solo"]  # the same fit: loaded from checkpoints/finished/, not trained twice
    inputs = stage_params("curate", path=path).inputs
    assert {spec.collection for spec in inputs} >= {"elife", "europepmc", "plos", "unarxive"}
    assert stage_params("download", path=path).source == "study"
    # no budget left over from the demo's params: every encoder model and Table 5's see a whole epoch
    domains = stage_params("domains", path=path).model
    assert all(s.optim.max_steps is None for s in [*encoders, domains])


def test_the_paper_profile_has_the_papers_settings():
    assemble = stage_params("assemble", path=PAPER)
    assert (assemble.per_field, list(assemble.split)) == ("smallest", [0.8, 0.1, 0.1])
    train = stage_params("train", path=PAPER)
    assert train.seeds == [1, 2, 3, 4, 5]
    specs = {name: model_spec(name, train.catalog[name]) for name in train.models}
    assert {n: s.encoder for n, s in specs.items() if s.kind in ("sentence", "context")} == {
        "bert": "bert-base-uncased", "sentence": "allenai/scibert_scivocab_uncased",
        "sentence_noweight": "allenai/scibert_scivocab_uncased", "pu": "allenai/scibert_scivocab_uncased",
        "solo": "allenai/longformer-base-4096", "context": "allenai/longformer-base-4096"}
    # Appendix C.6, and no demo step cap left over from params.yaml
    assert (specs["sentence"].optim.lr, specs["sentence"].optim.batch_size, specs["sentence"].optim.epochs) \
        == (1.351e-06, 4, 3)
    assert (specs["context"].optim.lr, specs["context"].optim.weight_decay) == (1.112e-05, 0.0)
    assert (specs["bert"].optim.lr, specs["bert"].optim.batch_size) == (8.075e-06, 8)
    assert (specs["transformer"].optim.epochs, specs["transformer"].scratch.layers) == (33, 5)
    encoder_models = [s for s in specs.values() if s.kind in ("sentence", "context")]
    assert all((s.optim.max_steps, s.optim.eval_every) == (None, 0) for s in encoder_models)
    assert specs["pu"].pu and not specs["pu"].weighted_loss and not specs["sentence_noweight"].weighted_loss
    assert specs["solo"].context.solo and specs["context"].context.window is None
    assert stage_params("curate", path=PAPER).inputs[0].glob == "raw/s2orc_legacy/20200705/**/*.jsonl.gz"
