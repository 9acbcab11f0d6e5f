"""The study profile (params/study.yaml) end to end on a slice of the mirror: the study source's
bundle with tens of eLife and Europe PMC articles beside the demo corpus, run as `make study` runs it
(its own workspace, the phases side by side, the results versioned on runs/<profile>), then a draft
checked with the build's model by name. The whole study is `make study` (benchmarks/study.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from dvc_workspace import fresh_workspace, git, run, tool_env

from citeworth.core.io import read_jsonl

# The study with a slice of each JATS set (every demo file: the study's demo inputs are not optional),
# logistic regression for Table 4 and the scaling curve, and the report.
SLICE = """extends: study.yaml
download:
  include:
    - github/IllDepence/*
    - github/allenai/*
    - github/titipata/*
    - github/kermitt2/*
    - github/PLOS/*
    - github/scipy/*
    - github/scolobb/*
    - github/lh3/*
    - arxiv_latex_metadata.jsonl
    - github/elifesciences/elife-articles/elife000*.xml
    - github/0AlphaZero0/Text-Classification-Data-Citation-EuropePMC/Scripts/articlesOA/PMC38*
    - github/0AlphaZero0/Text-Classification-Data-Citation-EuropePMC/Scripts/articlesOA/PMC39*
    - github/0AlphaZero0/Text-Classification-Data-Citation-EuropePMC/Scripts/articlesOA/PMC43*
train:
  models: [tfidf_lr]
scaling:
  curves:
    solo: null
    tfidf_lr:
      model: {kind: tfidf_lr, label: Logistic Regression}
      sizes: [500, null]
"""
PHASES = (["download", "pdf2tei"], ["curate@citeworth", "curate@baseline"],
          ["assemble@citeworth", "assemble@baseline"], ["validate"], ["train@tfidf_lr", "scaling"])
DRAFT = ("# Notes\n\nCell migration depends on the actin cytoskeleton, as several studies have shown. "
         "We imaged the cells every five minutes for two hours. The protein was first described in yeast "
         "and later found in every eukaryote examined.\n")


@pytest.fixture(scope="module")
def slice_build(tmp_path_factory, mirror) -> tuple[Path, Path]:
    """A fresh clone with the slice profile, built as make study builds (the phases it runs)."""
    project = fresh_workspace(tmp_path_factory.mktemp("study") / "project")
    (project / "params" / "slice.yaml").write_text(SLICE)
    git(project, "add", "--all")
    git(project, "commit", "--quiet", "-m", "the study on a slice")
    env = tool_env(CITEWORTH_MIRROR=str(mirror))
    citeworth = [sys.executable, "-m", "citeworth.cli"]
    workspace = Path(run([*citeworth, "profile", "open", "slice"], project, env=env).stdout.strip())
    for phase in PHASES:
        run([sys.executable, "-m", "citeworth.orchestration.side_by_side", "--jobs", "2", *phase], workspace,
            env=env, timeout=900)
    run([sys.executable, "-m", "dvc", "repro", "report"], workspace, env=env, timeout=600)
    run([*citeworth, "profile", "version", "slice"], project, env=env)
    return project, workspace


def test_the_slice_reads_every_collection_and_records_collection_and_subject(slice_build):
    _, workspace = slice_build
    records = [r for split in ("train", "dev", "test")
               for r in read_jsonl(workspace / "data" / "citeworth" / f"{split}.jsonl")]
    collections = {r["collection"] for r in records}
    assert {"elife", "europepmc", "plos", "unarxive"} <= collections
    elife = [r for r in records if r["collection"] == "elife"]
    assert elife and all(r["subject"] for r in elife)  # eLife's subject headings
    manifest = json.loads((workspace / "raw" / "study" / "study-v1" / "MANIFEST.json").read_text())
    assert manifest["source"] == "study"
    summary = json.loads((workspace / "reports" / "quality" / "summary.json").read_text())
    assert summary["success"], summary["critical_failures"]


def test_its_model_metrics_per_collection_the_scaling_curve_and_the_findings(slice_build):
    _, workspace = slice_build
    metrics = json.loads((workspace / "metrics" / "models" / "tfidf_lr.json").read_text())
    tested = {r["collection"] for r in read_jsonl(workspace / "data" / "citeworth" / "test.jsonl")}
    assert set(metrics["per_collection"]) == tested and len(tested) >= 2
    assert all(0 <= c["f1"]["mean"] <= 1 for c in metrics["per_collection"].values())
    scaling = json.loads((workspace / "metrics" / "scaling.json").read_text())
    sizes = [p["train_sentences"] for p in scaling["curves"]["tfidf_lr"]["points"]]
    assert sizes[0] >= 500 and sizes[-1] == scaling["train_sentences"]
    assert (workspace / "reports" / "findings.md").exists()  # claims naming untrained models left out


def test_it_is_versioned_on_its_branch_and_check_scores_a_draft_with_its_model(slice_build, tmp_path):
    project, workspace = slice_build
    assert git(project, "rev-parse", "runs/slice^") == git(project, "rev-parse", "HEAD")
    assert "tfidf_lr" in json.loads(git(project, "show", "runs/slice:metrics/models.json"))
    assert not (project / "data").exists()  # the checkout's own outputs untouched
    (project / "draft.md").write_text(DRAFT)
    done = run([sys.executable, "-m", "citeworth.cli", "check", "draft.md", "--model", "slice", "--format",
                "jsonl", "--fail-on", "99"], project)
    scored = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(scored) == 3 and all(0 <= s["score"] <= 1 for s in scored)
