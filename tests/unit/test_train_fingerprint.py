"""A trained model is reused while its data, params and code are unchanged: the train stage (and so
the Airflow task mapped over the models) decides skip-or-run by the project's fingerprint."""

from __future__ import annotations

import json

import pytest
from test_domains_study import records, tiny_encoder  # noqa: F401 (a fixture)

from citeworth.core import knobs
from citeworth.core.io import write_jsonl
from citeworth.models import loop
from citeworth.models import train as train_stage

pytestmark = pytest.mark.usefixtures("torch_one_thread")

CATALOG = {"tfidf_lr": {"kind": "tfidf_lr", "label": "Logistic Regression"},
           "tfidf_strong": {"kind": "tfidf_lr", "tfidf": {"C": 10.0}}}


# What params.yaml gives the train stage (no defaults: dvc.yaml names them).
SETTINGS = {"seeds": [1], "saliency_examples": 0, "threads": None, "data_dir": "data/citeworth",
            "models_dir": "models", "metrics_dir": "metrics/models", "plots_dir": "plots/models"}

@pytest.fixture
def fits(monkeypatch) -> list[str]:
    """The name of each model actually fitted."""
    fitted: list[str] = []
    real = train_stage.fit_model
    monkeypatch.setattr(train_stage, "fit_model", lambda spec, *args, **kw: fitted.append(spec.name)
                        or real(spec, *args, **kw))
    return fitted


@pytest.fixture
def params(tmp_path, monkeypatch) -> train_stage.TrainParams:
    monkeypatch.chdir(tmp_path)
    rows = records()
    for i, split in enumerate(("train", "dev", "test")):
        write_jsonl(tmp_path / f"data/citeworth/{split}.jsonl", rows[i::3])
    return train_stage.TrainParams(models=["tfidf_lr", "tfidf_strong"], catalog=CATALOG, **SETTINGS)


def test_an_unchanged_model_is_skipped_and_a_change_of_data_params_or_code_retrains(params, fits, edit_code,
                                                                                    tmp_path):
    first = train_stage.train(params)
    assert fits == ["tfidf_lr", "tfidf_strong"]
    metrics = tmp_path / "metrics/models/tfidf_lr.json"
    before = metrics.read_bytes()
    assert train_stage.train(params) == first and len(fits) == 2  # nothing changed: both skipped
    assert metrics.read_bytes() == before

    train_stage.train(params.model_copy(update={"seeds": [2]}))  # a param of every model
    assert fits[2:] == ["tfidf_lr", "tfidf_strong"]
    changed = {**CATALOG, "tfidf_strong": {"kind": "tfidf_lr", "tfidf": {"C": 1.0}}}
    edited = train_stage.TrainParams(models=params.models, catalog=changed, **{**SETTINGS, "seeds": [2]})
    train_stage.train(edited)  # one model's entry
    assert fits[4:] == ["tfidf_strong"]

    edit_code("models/tfidf.py")
    train_stage.train(params)
    assert fits[5:] == ["tfidf_lr", "tfidf_strong"]

    test_split = tmp_path / "data/citeworth/test.jsonl"
    test_split.write_text(test_split.read_text().replace("sample 1.", "sample one."))  # a new data version
    train_stage.train(params)
    assert fits[7:] == ["tfidf_lr", "tfidf_strong"]
    assert json.loads(metrics.read_text())["fingerprint"] != json.loads(before)["fingerprint"]


def test_an_edit_to_the_reports_or_the_studies_does_not_retrain(params, fits, edit_code):
    train_stage.train(params)
    for elsewhere in ("report/stage.py", "studies/domains/tables.py", "corpora/silver/siamese.py"):
        edit_code(elsewhere)  # Table 4's formatting, Table 5's, the silver model
        train_stage.train(params)
    assert fits == ["tfidf_lr", "tfidf_strong"]


def test_a_model_whose_outputs_are_gone_is_trained_again(params, fits, tmp_path):
    train_stage.train(params)
    (tmp_path / "metrics/models/tfidf_lr.json").unlink()  # as `dvc repro` removes a stage's outputs
    train_stage.train(params)
    assert fits == ["tfidf_lr", "tfidf_strong", "tfidf_lr"]


def _outputs(root) -> dict[str, object]:
    """Every file the train stage wrote under ``root``, metrics without their runtimes."""
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "data" not in p.relative_to(root).parts):
        relative = str(path.relative_to(root))
        files[relative] = (train_stage.without_runtimes(json.loads(path.read_text()))
                           if relative.startswith("metrics/") else path.read_bytes())
    return files


def test_models_trained_side_by_side_write_the_bytes_of_one_after_another(params, tmp_path, monkeypatch):
    catalog = {**CATALOG, "crnn": {"kind": "crnn", "max_length": 16, "crnn": {"oversample": True},
                                   "optim": {"batch_size": 8, "epochs": 1, "max_steps": 6}}}
    params = train_stage.TrainParams(models=["tfidf_lr", "crnn"], catalog=catalog,
                                     **{**SETTINGS, "threads": 1, "saliency_examples": 2})
    built = {}
    for workers in (1, 2):
        root = tmp_path / f"workers{workers}"
        root.mkdir()
        (root / "data").symlink_to(tmp_path / "data")
        monkeypatch.chdir(root)
        monkeypatch.setenv(knobs.WORKERS_ENV, str(workers))  # as `citeworth run train --workers N`
        summary = train_stage.train(params)
        assert list(summary) == params.models
        built[workers] = (summary, _outputs(root))
    assert built[2] == built[1]
    assert {"models/crnn/citeworth_model.json", "metrics/models/crnn.json"} <= set(built[2][1])


def test_pus_first_classifier_is_the_no_weight_models_fit_trained_once(params, tmp_path, monkeypatch,
                                                                        request):
    encoder = request.getfixturevalue("tiny_encoder")  # a 2-layer BERT: seconds
    plain = {"kind": "sentence", "encoder": encoder, "max_length": 16, "weighted_loss": False,
             "optim": {"batch_size": 8, "epochs": 1, "max_steps": 4, "eval_batch_size": 16}}
    catalog = {"pu": {**plain, "pu": True}, "noweight": plain}
    settings = {**SETTINGS, "threads": 1}
    runs = []
    real_run = loop._Trainer.run
    monkeypatch.setattr(loop._Trainer, "run", lambda self: runs.append(self.desc) or real_run(self))
    built = {}
    for models in (["pu", "noweight"], ["noweight"]):
        root = tmp_path / "_".join(models)
        root.mkdir()
        (root / "data").symlink_to(tmp_path / "data")
        monkeypatch.chdir(root)
        train_stage.train(train_stage.TrainParams(models=models, catalog=catalog, **settings))
        built[len(models)] = {k: v for k, v in _outputs(root).items() if "noweight" in k}
    assert runs == ["pu/g", "pu", "noweight"]  # beside PU the no-weight model was loaded, not trained
    assert built[2] == built[1] and "models/noweight/citeworth_model.json" in built[2]
