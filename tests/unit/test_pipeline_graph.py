"""One pipeline graph: dvc.yaml's code deps are exactly what each stage imports, each fingerprint's
code is what its unit imports and nothing else, every data path comes from params.yaml, and both
Airflow DAGs have dvc.yaml's dependencies.

What a module imports is read from the source by ``citeworth.core.codedeps`` (its own tests:
tests/unit/test_core_codedeps.py); here it is held against dvc.yaml and the fingerprints.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from citeworth.core.codedeps import code_files, imported_modules, source_file
from citeworth.orchestration import dvc_code_deps
from citeworth.stages import STAGES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "citeworth"
DVC_STAGES = dvc_code_deps.stage_modules(ROOT / "dvc.yaml")


def _dvc_definitions() -> dict[str, dict]:
    """dvc.yaml's stage definitions by name (a foreach's ``do``)."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    return {name: stage.get("do", stage) for name, stage in stages.items()}


def _code_deps(name: str) -> list[str]:
    return [dep for dep in _dvc_definitions()[name]["deps"] if dep.startswith(f"{PACKAGE}/")]


def _relative(paths) -> set[Path]:
    return {path.relative_to(ROOT) for path in paths}


@pytest.mark.parametrize("stage", list(DVC_STAGES))
def test_each_dvc_stage_depends_on_exactly_the_code_it_imports(stage):
    imported = _relative(code_files(DVC_STAGES[stage]))
    covered = dvc_code_deps.covered_files(_code_deps(stage))
    assert sorted(imported - covered) == [], "imported, not a dep"
    assert sorted(covered - imported) == [], "a dep, never imported"


def test_every_stage_of_the_registry_is_a_dvc_stage():
    assert set(DVC_STAGES.values()) == {entry.partition(":")[0] for entry in STAGES.values()}


def test_the_command_finds_and_fixes_over_broad_and_missing_deps(tmp_path, capsys):
    original = (ROOT / "dvc.yaml").read_text()
    broad = original.replace("      - citeworth/report\n", "      - citeworth/models\n")
    assert broad != original
    (tmp_path / "dvc.yaml").write_text(broad)
    assert dvc_code_deps.main([str(tmp_path / "dvc.yaml"), "--check"]) == 1
    assert "code deps differ" in capsys.readouterr().err
    assert dvc_code_deps.main([str(tmp_path / "dvc.yaml"), "--write"]) == 0
    assert (tmp_path / "dvc.yaml").read_text() == original  # comments and other deps kept


def test_every_data_path_of_dvc_yaml_comes_from_params():
    """Outputs, metrics, plots and data deps are ``${...}`` like params.yaml's paths; the one
    exception is pdf2tei's ``pdfs``, the folder of its params' glob (DVC cannot take a glob's root)."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for name, stage in _dvc_definitions().items():
        paths = [dep for dep in stage["deps"] if not dep.startswith(f"{PACKAGE}/")]
        for key in ("outs", "metrics", "plots"):
            paths += [next(iter(entry)) if isinstance(entry, dict) else entry for entry in stage.get(key, [])]
        for path in paths:
            if name == "pdf2tei" and path == "pdfs":
                assert params["pdf2tei"]["inputs"].startswith("pdfs/")
                continue
            assert re.search(r"\$\{[^}]+\}", path), f"{name}: {path} is hard-coded"


def test_the_package_root_holds_no_code():
    """The closure leaves ``citeworth/__init__.py`` out (a version bump redoes nothing): only a
    docstring and constants there."""
    for node in ast.parse(source_file(PACKAGE).read_text()).body:
        constant = isinstance(node, ast.Expr | ast.Assign | ast.AnnAssign) and \
            isinstance(node.value, ast.Constant)
        assert constant or isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _fingerprinted_files(owner: str) -> set[str]:
    """The files the fingerprint of ``owner``'s ``CODE`` digests."""
    return {path.relative_to(ROOT).as_posix() for path in code_files(*importlib.import_module(owner).CODE)}


@pytest.mark.parametrize("owner, covered, not_covered", [
    # a curated shard: the rules engine (imported lazily) and the readers, not assembling or Table 2
    ("citeworth.curate.stage", ["curate/engine.py", "sources/jats.py", "text/pysbd_regex.py"],
     ["curate/assemble.py", "curate/annotation.py"]),
    # a trained model: every kind of the registry (named by strings), not Table 4 or the studies
    ("citeworth.models.train", ["models/fitting.py", "models/tfidf.py", "models/context.py"],
     ["report/stage.py", "studies/domains/tables.py", "corpora/silver/siamese.py"]),
    # a domain cell: the model code, not Table 5's formatting or its plots
    ("citeworth.studies.domains.cells", ["models/fitting.py", "studies/domains/splits.py"],
     ["studies/domains/tables.py", "studies/domains/plots.py", "report/stage.py"]),
    # a transfer variant: pretraining and its heads, not Table 6
    ("citeworth.studies.transfer.pretrain", ["models/loop.py", "studies/transfer/downstream.py"],
     ["studies/transfer/tables.py", "report/stage.py"]),
])
def test_each_fingerprint_covers_the_code_its_unit_imports_and_no_other(owner, covered, not_covered):
    files = _fingerprinted_files(owner)
    assert source_file(owner).relative_to(ROOT).as_posix() in files
    assert {f"citeworth/{path}" for path in covered} <= files
    assert not {f"citeworth/{path}" for path in not_covered} & files


def test_a_code_change_reruns_the_stages_that_import_it_and_only_those():
    """The consequence, spelled out for four edits."""
    def importing(module: str) -> set[str]:
        return {stage for stage, entry in DVC_STAGES.items() if module in imported_modules(entry)}

    assert importing("citeworth.models.fitting") == {"train", "domains", "scaling"}
    assert importing("citeworth.sources.jats") == {"curate", "related_work", "export", "validate", "silver",
                                                   "works"}
    assert importing("citeworth.report.stage") == {"report"}
    assert importing("citeworth.curate.assemble") == {"assemble"}


# --- the DAGs have dvc.yaml's graph -----------------------------------------------------------------

# The dvc.yaml stage each stage-running DAG task belongs to (planning tasks belong to what they plan;
# a mapped task stands for all cells of a matrix). The other tasks are orchestration around the
# stages (ORCHESTRATION).
TASK_STAGES = {
    "citeworth_dataset": {"download": "download", "pdf2tei": "pdf2tei", "plan_curate": "curate@citeworth",
                          "curate_shard": "curate@citeworth", "plan_curate_baseline": "curate@baseline",
                          "curate_baseline_shard": "curate@baseline", "assemble": "assemble@citeworth",
                          "assemble_baseline": "assemble@baseline", "validate": "validate",
                          "related_work": "related_work", "export": "export"},
    "citeworth_models": {"plan_models": "train", "train_model": "train", "plan_cells": "domains",
                         "domain_cell": "domains", "domains": "domains", "transfer": "transfer",
                         "report": "report", "silver": "silver", "scaling": "scaling", "works": "works"},
}


ORCHESTRATION = {"resolve_release", "open_workspace", "version", "close_workspace", "housekeeping",
                 "new_data_version", "train_models"}
# dvc.yaml matrices whose cells one DAG task (mapped or looping) runs.
MATRIX_CELLS = ("train@", "export@")


def _closure(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    reach = set(edges)
    while True:
        more = {(a, d) for a, b in reach for c, d in reach if b == c} - reach
        if not more:
            return reach
        reach |= more


@pytest.fixture(scope="module")
def dvc_edges() -> set[tuple[str, str]]:
    """``dvc dag``'s edges, a matrix's cells (train@<model>) as the one stage a mapped task runs."""
    dot = subprocess.run([sys.executable, "-m", "dvc", "dag", "--dot"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    edges = set()
    for line in dot.splitlines():
        if "->" in line:
            a, b = (part.strip().strip('";') for part in line.split("->"))
            edges.add(tuple(name.split("@")[0] if name.startswith(MATRIX_CELLS) else name for name in (a, b)))
    return edges


@pytest.fixture(scope="module")
def dag_edges(dag_facts) -> dict[str, set[tuple[str, str]]]:
    """Each DAG's dependencies between the stages its tasks run (through any task in between)."""
    graphs = {}
    for dag_id, mapping in TASK_STAGES.items():
        tasks = dag_facts["dags"][dag_id]["tasks"]
        reach = _closure({(up, task) for task, facts in tasks.items() for up in facts["upstream"]})
        graphs[dag_id] = {(mapping[a], mapping[b]) for a, b in reach
                          if a in mapping and b in mapping and mapping[a] != mapping[b]}
    return graphs


@pytest.fixture(scope="module")
def dvc_stages() -> set[str]:
    """Every stage of dvc.yaml (``dvc stage list``: a stage with no edge in ``dvc dag`` too), a
    matrix's cells as the one stage a mapped task runs."""
    listed = subprocess.run([sys.executable, "-m", "dvc", "stage", "list", "--name-only"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    return {name.split("@")[0] if name.startswith(MATRIX_CELLS) else name for name in listed}


def test_every_dvc_stage_runs_in_one_dag_and_every_stage_task_is_mapped(dvc_stages, dag_facts):
    mapped = [stage for mapping in TASK_STAGES.values() for stage in set(mapping.values())]
    assert sorted(mapped) == sorted(dvc_stages)
    for dag_id, mapping in TASK_STAGES.items():
        tasks = set(dag_facts["dags"][dag_id]["tasks"])
        assert set(mapping) <= tasks
        assert tasks - set(mapping) <= ORCHESTRATION, dag_id


@pytest.mark.parametrize("dag_id", list(TASK_STAGES))
def test_each_dag_has_the_dependencies_of_dvc_dag(dag_id, dag_edges, dvc_edges):
    stages = set(TASK_STAGES[dag_id].values())
    wanted = {(a, b) for a, b in _closure(dvc_edges) if a in stages and b in stages}
    assert dag_edges[dag_id] == wanted


def test_report_does_not_wait_for_the_studies_and_training_waits_for_the_quality_gate(dvc_edges):
    reach = _closure(dvc_edges)
    assert ("domains", "report") not in reach and ("transfer", "report") not in reach
    assert {("validate", "train"), ("validate", "domains"), ("validate", "transfer")} <= dvc_edges


def test_dvc_sees_both_spans_only_baseline_stages_of_the_foreach():
    listed = subprocess.run([sys.executable, "-m", "dvc", "stage", "list", "--name-only"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    assert {"curate@citeworth", "curate@baseline", "assemble@citeworth", "assemble@baseline"} <= set(listed)
