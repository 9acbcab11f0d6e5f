"""The train and report stages through the CLI on a written dataset: every model kind trains and
evaluates, writes its own outputs, reloads (AutoModel…), and ``citeworth predict`` scores text."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from transformers import AutoModel, AutoModelForSequenceClassification, BertConfig, BertModel

from citeworth import cli
from citeworth.core.fingerprint import data_version
from citeworth.core.io import write_jsonl
from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY, SPLITS
from citeworth.models import data, encoders
from citeworth.models.base import load_trained
from citeworth.models.exported import SETTINGS_FILE
from citeworth.models.scoring import load_model
from citeworth.models.train import FINISHED_FITS, without_runtimes

FIELDS = ["Biology", "Medicine", "Physics"]
CITING = ["Previous work has shown that {a} improves {b}.",
          "It has been reported that {a} relates to {b}.",
          "Several studies have examined {a} in the context of {b}."]
PLAIN = ["We measured {a} in our own experiments with {b}.",
         "Table two lists the values of {a} for each {b}.",
         "In this section we describe {a} and {b} in detail."]
TOPICS = ["protein folding", "gene expression", "dark matter", "cell growth", "heat transfer", "drug"]
TINY_OPTIM = {"batch_size": 8, "epochs": 1, "lr": 0.0005, "warmup_steps": 1, "eval_batch_size": 32}


def read(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def paragraph(rng: random.Random, paper: int, index: int, split: str) -> dict:
    samples = []
    for _ in range(rng.randint(1, 5)):
        cite = rng.random() < 0.35
        text = rng.choice(CITING if cite else PLAIN).format(a=rng.choice(TOPICS), b=rng.choice(TOPICS))
        label = CITE_WORTHY if cite else NOT_CITE_WORTHY
        samples.append({"text": text, "original_text": text, "label": label,
                        "ref_ids": [["b1"]] if cite else None, "citation_text": ["[1]"] if cite else None})
    return {"paper_id": f"{split}-{paper}", "section_idx": index, "section_title": "Introduction",
            "mag_field_of_study": [FIELDS[paper % 3]], "original_text": " ".join(s["text"] for s in samples),
            "samples": samples, "source": "fixture", "release": "test", "shard": "s0"}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project directory: the dataset, a tiny local encoder, params.yaml for every model kind."""
    root = tmp_path_factory.mktemp("project")
    rng = random.Random(7)
    for split, n in (("train", 36), ("dev", 10), ("test", 10)):
        write_jsonl(root / "data/citeworth" / f"{split}.jsonl",
                    [paragraph(rng, i // 2, i % 2, split) for i in range(n)])
    tokenizer = encoders.load_tokenizer(encoders.EMBEDDED)
    torch.manual_seed(0)
    tiny = BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1,
                                num_attention_heads=2, intermediate_size=64, max_position_embeddings=128))
    tiny.save_pretrained(root / "tiny_encoder")
    tokenizer.save_pretrained(root / "tiny_encoder")
    tiny_sentence = {"kind": "sentence", "encoder": str(root / "tiny_encoder"), "max_length": 32,
                     "optim": TINY_OPTIM}
    catalog = {
        "tfidf_lr": {"kind": "tfidf_lr", "label": "Logistic Regression"},
        "crnn": {"kind": "crnn", "max_length": 32, "optim": {**TINY_OPTIM, "epochs": 2},
                 "crnn": {"vocab_size": 300, "embedding_dim": 16, "filters": 8, "hidden": 8}},
        "transformer": {"kind": "transformer", "max_length": 32, "optim": TINY_OPTIM,
                        "scratch": {"vocab_size": 300, "d_model": 24, "layers": 1, "heads": 3, "ff_dim": 32}},
        "sentence": tiny_sentence,
        "sentence_noweight": {**tiny_sentence, "weighted_loss": False},
        "pu": {**tiny_sentence, "weighted_loss": False, "pu": True},
        "solo": {"kind": "context", "encoder": str(root / "tiny_encoder"), "optim": TINY_OPTIM,
                 "context": {"solo": True, "window": 48}},
        # The embedded encoder, with a window small enough that long paragraphs are split.
        "context": {"kind": "context", "encoder": "embedded", "context": {"window": 40, "pooling": "mean"},
                    "optim": {**TINY_OPTIM, "lr": 0.00005, "batch_size": 4}},
    }
    # One thread: the models are tiny, and a second thread only adds overhead (and contention).
    params = {"train": {"models": list(catalog), "catalog": catalog, "seeds": [1], "saliency_examples": 2,
                        "threads": 1, "data_dir": "data/citeworth", "models_dir": "models",
                        "metrics_dir": "metrics/models", "plots_dir": "plots/models"},
              "report": {"metrics_dir": "metrics/models", "metrics_path": "metrics/models.json",
                         "table_path": "reports/table4.md",
                         "findings": {"plots_dir": "plots/models", "path": "metrics/findings.json",
                                      "table_path": "reports/findings.md"}}}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return root


FIRST_BUILD: dict[str, str] = {}  # what `trained` wrote, digested before later tests retrain models


def built_outputs(root) -> dict[str, str]:
    """Every saved model file (digest) and every model's metrics without the wall-clock runtimes."""
    outputs = {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
               for f in sorted((root / "models").rglob("*")) if f.is_file()}
    for f in sorted((root / "metrics/models").glob("*.json")):
        metrics = without_runtimes(json.loads(f.read_text()))
        outputs[str(f.relative_to(root))] = json.dumps(metrics, sort_keys=True)
    return outputs


@pytest.fixture(scope="module")
def trained(project):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        assert cli.main(["run", "train"]) == 0
        assert cli.main(["run", "report"]) == 0
    FIRST_BUILD.update(built_outputs(project))
    return project


def test_every_model_writes_metrics_plots_and_a_reloadable_model(trained):
    test_records = read(trained / "data/citeworth/test.jsonl")
    n_test = len(data.sentences(test_records))
    version = data_version(trained / "data/citeworth" / f"{s}.jsonl" for s in SPLITS)
    names = yaml.safe_load((trained / "params.yaml").read_text())["train"]["models"]
    for name in names:
        metrics = json.loads((trained / "metrics/models" / f"{name}.json").read_text())
        assert 0.0 <= metrics["test"]["f1"]["mean"] <= 1.0 and metrics["test"]["f1"]["n"] == 1
        assert set(metrics["per_field"]) == {data.field_of(r) for r in test_records}
        assert metrics["data_version"] == version
        assert metrics["per_seed"][0]["test"]["n"] == n_test
        plots = trained / "plots/models" / name
        confusion = (plots / "confusion.csv").read_text().splitlines()
        assert confusion[0] == "actual,predicted" and len(confusion) == n_test + 1
        assert (plots / "pr_curve.csv").read_text().startswith("threshold,precision,recall")
        curve = (plots / "learning_curve.csv").read_text().splitlines()
        assert curve[0] == "seed,step,dev_f1,dev_pr_auc,train_loss"
        assert len(curve) == (1 if name == "tfidf_lr" else len(metrics["per_seed"][0]["history"]) + 1)
        assert version in (trained / "models" / name / "README.md").read_text()
        assert load_trained(trained / "models" / name).predict_proba(test_records).shape == (n_test,)
        if name != "tfidf_lr":
            assert any((plots / "dvclive/seed1").rglob("metrics.json"))  # PU: in g/ and pu/
    # Templated fixture sentences are easy for TF-IDF: a flipped label or a wrong class would show here.
    assert json.loads((trained / "metrics/models/tfidf_lr.json").read_text())["test"]["f1"]["mean"] > 0.8
    pu_stats = json.loads((trained / "metrics/models/pu.json").read_text())["per_seed"][0]["stats"]
    assert 0.0 < pu_stats["pu_c"] <= 1.0
    ctx_stats = json.loads((trained / "metrics/models/context.json").read_text())["per_seed"][0]["stats"]
    assert ctx_stats["window"] == 40 and ctx_stats["train_paragraphs_split"] > 0
    assert (trained / "reports/models/context/saliency.md").read_text().count("P(cite-worthy)") == 4
    # A fit's resumable checkpoints go once it completes; what it finished is kept for reuse.
    checkpoints = trained / "checkpoints"
    assert not [p for p in checkpoints.rglob("*.pt") if p.parent != checkpoints / FINISHED_FITS]
    assert list((checkpoints / FINISHED_FITS).glob("*.pt"))


def test_transformer_models_reload_with_auto_classes(trained):
    records = read(trained / "data/citeworth/dev.jsonl")
    ours = load_trained(trained / "models/sentence")
    auto = AutoModelForSequenceClassification.from_pretrained(trained / "models/sentence").eval()
    ids = ours.tokenizer(data.sentences(records)[:4], padding=True, return_tensors="pt")
    with torch.no_grad():
        probs = torch.softmax(auto(**ids).logits, dim=-1)[:, 1].numpy()
    assert ours.predict_proba(records)[:4] == pytest.approx(probs, abs=1e-5)
    assert auto.config.id2label == {0: NOT_CITE_WORTHY, 1: CITE_WORTHY}
    encoder = AutoModel.from_pretrained(trained / "models/context")
    assert encoder.config.model_type == "bert"
    scratch = AutoModelForSequenceClassification.from_pretrained(trained / "models/transformer")
    assert scratch.config.num_hidden_layers == 1


def test_report_aggregates_every_model_into_table4(trained):
    summary = json.loads((trained / "metrics/models.json").read_text())
    assert set(summary) == set(yaml.safe_load((trained / "params.yaml").read_text())["train"]["models"])
    assert {"precision", "recall", "f1", "f1_std", "runtime_seconds", "roc_auc", "pr_auc", "f1_ci",
            "test_sentences", "dev_f1"} <= set(summary["context"])
    n_test = len(data.sentences(read(trained / "data/citeworth/test.jsonl")))
    for row in summary.values():
        assert row["test_sentences"] == n_test
        low, high = row["f1_ci"]
        assert low <= row["f1"] <= high and 0.0 <= row["roc_auc"] <= 1.0 and 0.0 <= row["pr_auc"] <= 1.0
    dev = json.loads((trained / "metrics/models/context.json").read_text())["dev"]["f1"]["mean"]
    assert summary["context"]["dev_f1"] == round(dev, 4)
    table = (trained / "reports/table4.md").read_text()
    assert "| Logistic Regression |" in table and table.count("\n| ") == len(summary) + 1
    assert "models/context/saliency.md" in table
    # The studies' tables are linked by path: the report neither waits for them nor changes when
    # they appear (so its bytes do not depend on which stage ran first).
    assert "[reports/table5.md](table5.md), [reports/table6.md](table6.md)" in table
    findings = json.loads((trained / "metrics/findings.json").read_text())
    assert {f["verdict"] for f in findings["findings"]} <= {"shown", "not shown", "reversed"}
    assert (trained / "reports/findings.md").is_file()
    (trained / "reports/table5.md").write_text("# Table 5: cross-domain F1\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(trained)
        assert cli.main(["run", "report"]) == 0
    assert (trained / "reports/table4.md").read_text() == table


def test_predict_scores_each_sentence_with_the_context_model(trained, capsys, monkeypatch):
    monkeypatch.chdir(trained)
    (trained / "draft.txt").write_text("Previous work has shown that dark matter improves cell growth. "
                                       "We measured heat transfer in our own experiments.\n\n"
                                       "In this section we describe gene expression in detail.\n")
    assert cli.main(["predict", "draft.txt", "--model", "models/context", "--batch-size", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(x["paragraph"], x["sentence"]) for x in lines] == [(0, 0), (0, 1), (1, 0)]
    assert all(0.0 <= x["score"] <= 1.0 and x["cite_worthy"] == (x["score"] >= 0.5) for x in lines)
    assert cli.main(["predict", "--model", "models/nope", "--text", "Some text here."]) == 1
    assert "--model models/nope: no such folder" in capsys.readouterr().err  # as check and lsp say it
    (trained / "nested.jsonl").write_bytes(b"[" * 200_000 + b"\n")  # a RecursionError traceback before
    assert cli.main(["predict", "nested.jsonl"]) == 1
    assert "nested.jsonl:1: too_deeply_nested" in capsys.readouterr().err


def test_check_lints_a_draft_with_the_best_model_by_dev_f1_and_with_the_context_model(trained, capsys,
                                                                                      monkeypatch):
    monkeypatch.chdir(trained)
    summary = json.loads((trained / "metrics/models.json").read_text())
    best = max(sorted(summary), key=lambda name: summary[name]["dev_f1"])
    (trained / "draft.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\section{Introduction}\n"
        "Previous work has shown that dark matter improves cell growth.\n"
        "It has been reported that heat transfer relates to drug \\citep{a}.\n"
        "We measured heat transfer in our own experiments.\n\n"
        "In this section we describe gene expression $x^2$ in detail.\n\\end{document}\n")
    for model in ([], ["--model", "models/context"]):
        assert cli.main(["check", "draft.tex", "--format", "jsonl", "--fail-on", "10", *model]) == 0
        out, err = capsys.readouterr()
        rows = [json.loads(line) for line in out.splitlines()]
        cited = [(r["line"], r["status"] == "cited") for r in rows]
        assert cited == [(4, False), (5, True), (6, False), (8, False)]
        assert all(0.0 <= r["score"] <= 1.0 for r in rows)
        assert f"model {model[1] if model else f'models/{best}'}," in err


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory) -> dict[str, Path]:
    """Every model exported with `citeworth model export` (fp32; the embedded-encoder context model
    also int8), as an author would get it."""
    out = tmp_path_factory.mktemp("exported")
    folders = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(trained)
        names = yaml.safe_load((trained / "params.yaml").read_text())["train"]["models"]
        for name, precision in [*((name, "fp32") for name in names), ("context", "int8")]:
            folders[f"{name}-{precision}"] = out / f"{name}-{precision}"
            assert cli.main(["model", "export", name, "--out", str(out / f"{name}-{precision}"),
                             "--precision", precision]) == 0
    return folders


def test_every_kind_exports_and_scores_the_test_split_as_torch_does(trained, exported):
    test_records = read(trained / "data/citeworth/test.jsonl")
    for key, folder in exported.items():
        name, precision = key.rsplit("-", 1)
        expected = load_trained(trained / "models" / name).predict_proba(test_records)
        scores = load_model(folder).predict_proba(test_records)  # ONNX Runtime, or numpy for TF-IDF
        settings = json.loads((folder / SETTINGS_FILE).read_text())
        metrics = json.loads((trained / "metrics/models" / f"{name}.json").read_text())
        assert settings["kind"] == metrics["kind"]
        assert np.abs(scores - expected).max() < (1e-4 if precision == "fp32" else 0.1), key
        assert settings["precision"] == ("fp64" if name == "tfidf_lr" else precision)
        files = {path.name for path in folder.iterdir()}
        assert set(settings["files"]) == files - {SETTINGS_FILE}
        if name != "tfidf_lr":  # the trained weights and tokenizer as saved (Hugging Face layout) too
            assert {"tokenizer.json", "model.safetensors", settings["graph"]} <= files


def test_the_card_has_a_hugging_face_header_and_the_train_stage_s_figures(trained, exported):
    card = (exported["context-int8"] / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    test = json.loads((trained / "metrics/models/context.json").read_text())["test"]
    assert header["language"] == ["en"] and header["license"]
    assert header["base_model"].endswith("MiniLM-L6-v2")
    figures = {m["type"]: m["value"] for m in header["model-index"][0]["results"][0]["metrics"]}
    assert figures["f1"] == round(test["f1"]["mean"], 4)
    assert figures["roc_auc"] == round(test["roc_auc"]["mean"], 4)
    for section in ("## Training data", "## Test metrics", "## Where it is weak", "## How it was made"):
        assert section in card
    assert "citeworth model export context --precision int8" in card


def test_a_packaged_model_installs_and_is_found_by_its_entry_point(exported, tmp_path, monkeypatch):
    from citeworth.models.package import installed_models, package_model

    wheel = package_model(exported["tfidf_lr-fp32"], tmp_path / "dist", "2.0.0", "tiny-lr")
    assert wheel.name == "citeworth_model_tiny_lr-2.0.0-py3-none-any.whl"
    assert package_model(exported["tfidf_lr-fp32"], tmp_path / "again", "2.0.0", "tiny-lr").read_bytes() \
        == wheel.read_bytes()  # deterministic
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", str(site), str(wheel)], check=True, capture_output=True)
    monkeypatch.syspath_prepend(str(site))
    [model] = [m for m in installed_models() if m.name == "tiny-lr"]
    assert (model.distribution, model.version) == ("citeworth-model-tiny-lr", "2.0.0")
    record = {"samples": [{"text": "It was shown before."}]}
    assert load_model(model.path).predict_proba([record]).shape == (1,)


@pytest.mark.parametrize(("damage", "message"), [
    ("unlink:README.md", "README.md is missing from the exported model: export it again"),
    ("append:model.onnx", "model.onnx was altered"),
    ("format:99", "install a newer citeworth"),
    ("format:0", "export the model again with this citeworth"),
    ("unlink:citeworth_export.json", "has neither citeworth_export.json (a model exported by"),
])
def test_a_damaged_export_exits_2_naming_the_file_and_the_fix(exported, tmp_path, capsys, damage, message):
    folder = tmp_path / "model"
    shutil.copytree(exported["sentence-fp32"], folder)
    what, _, argument = damage.partition(":")
    if what == "unlink":
        (folder / argument).unlink()
    elif what == "append":
        with open(folder / argument, "ab") as handle:
            handle.write(b"\0")
    else:
        settings = json.loads((folder / SETTINGS_FILE).read_text())
        (folder / SETTINGS_FILE).write_text(json.dumps({**settings, "format_version": int(argument)}))
    (tmp_path / "draft.md").write_text("Previous work has shown that dark matter improves cell growth.\n")
    assert cli.main(["check", str(tmp_path / "draft.md"), "--model", str(folder)]) == 2
    assert message in capsys.readouterr().err


def test_a_clone_elsewhere_trains_byte_identical_models_in_a_fresh_process(trained, tmp_path):
    clone = tmp_path / "clone"
    shutil.copytree(trained / "data", clone / "data")
    shutil.copy(trained / "params.yaml", clone / "params.yaml")
    subprocess.run([sys.executable, "-m", "citeworth.cli", "run", "train"], cwd=clone, check=True,
                   capture_output=True, timeout=900)
    second = built_outputs(clone)
    assert any(name.endswith("context/model.safetensors") for name in second)  # torch encoders included
    assert second == FIRST_BUILD


def test_a_matrix_cell_writes_only_its_model_and_reruns_identically(trained, monkeypatch):
    monkeypatch.chdir(trained)
    others = [p for p in (trained / "metrics/models").glob("*.json") if p.stem not in ("crnn", "tfidf_lr")]
    before = {p: p.stat().st_mtime_ns for p in others}
    files = [trained / "models/crnn/model.safetensors", trained / "models/tfidf_lr/pipeline.joblib"]
    weights = [f.read_bytes() for f in files]
    assert cli.main(["run", "train", "-S", "models=[crnn, tfidf_lr]"]) == 0
    assert [f.read_bytes() for f in files] == weights  # byte-identical reruns
    assert before == {p: p.stat().st_mtime_ns for p in before}
    assert cli.main(["run", "train", "-S", "models=[crnn]", "-S", "seeds=[1, 2]"]) == 0
    metrics = json.loads((trained / "metrics/models/crnn.json").read_text())
    assert [r["seed"] for r in metrics["per_seed"]] == [1, 2] and metrics["test"]["f1"]["n"] == 2


def test_clear_errors(trained, monkeypatch, capsys):
    monkeypatch.chdir(trained)
    assert cli.main(["run", "train", "-S", "models=[nonexistent]"]) == 2
    assert "not in train.catalog" in capsys.readouterr().err
    assert cli.main(["run", "train", "-S", "data_dir=missing", "-S", "models=[tfidf_lr]"]) == 1
    assert "missing lacks train.jsonl" in capsys.readouterr().err
