"""An author's install, tried as a user would: a small model trained here is exported and packaged
(`citeworth model export`, `citeworth model package`), then this checkout (no extra) and the model's
wheel are pip-installed into a fresh virtual environment. There, with no --model, `citeworth check`
reads a real LaTeX paper of the mirror (arXiv 2004.14974, 28 files) and a Markdown draft and writes
SARIF, and `citeworth lsp` answers a real LSP client; torch, Airflow, DVC and Great Expectations
cannot be imported. Wheels come from pip's cache as `make setup` left it (about a minute)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import pytest_asyncio
import torch
import yaml
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities
from transformers import BertConfig, BertModel

from citeworth import cli
from citeworth.core.io import write_jsonl
from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.models import encoders

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PAPER = "github/allenai/s2orc-doc2json/tests/latex/2004.14974.gz"  # an arXiv source the demo reads
PIPELINE_ONLY = ("torch", "airflow", "dvc", "great_expectations", "transformers", "spacy", "sklearn")
CITING = ["Previous work has shown that {a} improves {b}.", "It has been reported that {a} relates to {b}."]
PLAIN = ["We measured {a} in our own experiments with {b}.", "In this section we describe {a} and {b}."]
TOPICS = ["protein folding", "gene expression", "dark matter", "cell growth", "heat transfer"]


def _paragraphs(rng: random.Random, n: int) -> list[dict]:
    records = []
    for i in range(n):
        cites = [rng.random() < 0.4 for _ in range(rng.randint(1, 4))]
        samples = [{"text": rng.choice(CITING if c else PLAIN).format(a=rng.choice(TOPICS),
                                                                       b=rng.choice(TOPICS)),
                    "label": CITE_WORTHY if c else NOT_CITE_WORTHY} for c in cites]
        records.append({"paper_id": f"p{i // 2}", "mag_field_of_study": ["Biology"], "samples": samples,
                        "collection": "fixture", "source": "fixture", "release": "test"})
    return records


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> list[Path]:
    """This checkout's wheel and a model package's: a sentence model on a tiny BERT, trained by the
    train stage, exported (ONNX, int8) and packaged."""
    root = tmp_path_factory.mktemp("model_project")
    rng = random.Random(5)
    for split, n in (("train", 30), ("dev", 8), ("test", 8)):
        write_jsonl(root / "data/citeworth" / f"{split}.jsonl", _paragraphs(rng, n))
    tokenizer = encoders.load_tokenizer(encoders.EMBEDDED)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1,
                         num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=128)).save_pretrained(root / "tiny")
    tokenizer.save_pretrained(root / "tiny")
    sentence = {"kind": "sentence", "encoder": str(root / "tiny"), "max_length": 64,
                "optim": {"batch_size": 8, "epochs": 1, "lr": 0.0005, "warmup_steps": 1,
                          "eval_batch_size": 32}}
    (root / "params.yaml").write_text(yaml.safe_dump({"train": {
        "models": ["sentence"], "catalog": {"sentence": sentence}, "seeds": [1], "saliency_examples": 0,
        "threads": 1, "data_dir": "data/citeworth", "models_dir": "models", "metrics_dir": "metrics/models",
        "plots_dir": "plots/models"}}))
    dist = tmp_path_factory.mktemp("wheels")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert cli.main(["run", "train"]) == 0
        assert cli.main(["model", "export", "sentence", "--out", "exported", "--name", "tiny-sentence"]) == 0
        assert cli.main(["model", "package", "exported", "--dist", str(dist)]) == 0
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(dist), str(ROOT)], check=True, capture_output=True)
    return sorted(dist.glob("*.whl"))


@pytest.fixture(scope="module")
def author(wheels, tmp_path_factory) -> Path:
    """A fresh virtual environment with the checkout's wheel (no extra) and the model package."""
    venv = tmp_path_factory.mktemp("author") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([venv / "bin/python", "-m", "pip", "install", "--quiet", "--constraint",
                           ROOT / "requirements.lock", *wheels], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def drafts(mirror, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("drafts")  # no models/ and no metrics/ here: the package is the model
    with tarfile.open(mirror / PAPER) as tar:
        tar.extractall(folder / "paper", filter="data")
    shutil.copy(ROOT / "tests/fixtures/check/draft.md", folder / "draft.md")
    return folder


def citeworth(author: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([author / "bin/citeworth", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")})


def test_the_pipeline_is_not_installed(author):
    for module in PIPELINE_ONLY:
        done = subprocess.run([author / "bin/python", "-c", f"import {module}"], capture_output=True,
                              text=True)
        assert done.returncode == 1 and "ModuleNotFoundError" in done.stderr, module


def test_the_installed_package_is_the_default_model(author, drafts):
    listed = json.loads(citeworth(author, drafts, "model", "list", "--json").stdout)
    [model] = listed["installed"]
    assert (model["name"], model["distribution"]) == ("tiny-sentence", "citeworth-model-tiny-sentence")
    assert listed["default"] == model["path"] and listed["checkout"] == []


def test_check_reads_a_latex_paper_and_a_markdown_draft_with_the_installed_model(author, drafts):
    done = citeworth(author, drafts, "check", "paper/emnlp2020.tex", "draft.md", "--format", "jsonl",
                     "--threshold", "0")
    assert done.returncode == 1, done.stderr  # threshold 0: every uncited sentence is a flag
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    files = {row["file"] for row in rows}
    assert "draft.md" in files and len([f for f in files if f.startswith("paper/")]) > 5
    statuses = {row["status"] for row in rows}
    assert len(rows) > 250 and {"flagged", "cited"} <= statuses <= {"flagged", "cited", "suppressed"}
    assert "citeworth_model_tiny_sentence/model, threshold 0" in done.stderr


def test_check_writes_sarif(author, drafts):
    done = citeworth(author, drafts, "check", "draft.md", "--format", "sarif", "--output", "out.sarif",
                     "--threshold", "0", "--fail-on", "1000")
    assert done.returncode == 0, done.stderr
    log = json.loads((drafts / "out.sarif").read_text())
    assert log["version"] == "2.1.0" and log["runs"][0]["results"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(author, drafts):
    env = {**os.environ, "XDG_CACHE_HOME": str(drafts / "cache")}
    lsp = await ClientServerConfig([str(author / "bin/citeworth"), "lsp"], server_env=env).start()
    await lsp.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=(drafts / "paper").as_uri(),
        initialization_options={"citeworth": {"threshold": 0}}))
    yield lsp
    await lsp.shutdown_session()
    await lsp.stop()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_language_server_publishes_diagnostics_with_the_installed_model(client, drafts):
    path = drafts / "draft.md"
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "markdown", 1, path.read_text())))
    deadline = time.monotonic() + 120
    while not client.diagnostics.get(uri):
        assert time.monotonic() < deadline, "no diagnostics within 120 s"
        await asyncio.sleep(0.05)
    assert all(d.code == "CW001" for d in client.diagnostics[uri])
