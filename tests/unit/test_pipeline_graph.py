"""One pipeline graph: dvc.yaml's code deps cover what each stage imports, each fingerprint's declared
code covers what its unit imports, and both Airflow DAGs have dvc.yaml's dependencies.

What a stage imports is read from the source (every ``import`` and ``from ... import``, also those
inside functions, which load lazily; and module names written as strings, such as the registry of
model kinds), followed transitively from the stage function's module.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from citeworth.stages import STAGES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "citeworth"


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _with_parents(name: str) -> set[str]:
    """``a.b.c`` -> {a.b, a.b.c}: importing a module imports its packages first (``citeworth`` itself
    is left out: see ``test_the_package_root_holds_no_code``)."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}


@functools.cache
def _direct_imports(module: str) -> frozenset[str]:
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text())
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            named.add(node.module)
            named |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value.split(":")[0])  # "citeworth.models.tfidf", "pkg.module:function"
    ours = {name for name in named if name.startswith(f"{PACKAGE}.") and _is_module(name)}
    return frozenset(set().union(*map(_with_parents, ours)) if ours else set())


def imported_modules(module: str) -> set[str]:
    """``module`` and every citeworth module it can import, transitively."""
    seen: set[str] = set()
    todo = sorted(_with_parents(module))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += sorted(_direct_imports(name) - seen)
    return seen


def _source(module: str) -> Path:
    return Path(importlib.util.find_spec(module).origin).resolve()


def _holds_code(module: str) -> bool:
    """False for a package __init__ of only a docstring and constants: importing it runs nothing."""
    for node in ast.parse(_source(module).read_text()).body:
        constant = isinstance(node, ast.Expr | ast.Assign | ast.AnnAssign) and \
            isinstance(node.value, ast.Constant)
        if not (constant or isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            return True
    return False


def _code_paths(names) -> list[Path]:
    """The folder of each package and the file of each module named."""
    return [_source(name).parent if _source(name).name == "__init__.py" else _source(name) for name in names]


def _uncovered(modules: set[str], covers) -> list[str]:
    """Modules holding code whose source file no entry of ``covers`` (paths) contains."""
    return sorted(m for m in modules if _holds_code(m)
                  and not any(_source(m) == c or c in _source(m).parents for c in covers))


def _dvc_stages() -> dict[str, dict]:
    """dvc.yaml's stage definitions by the citeworth stage their command runs (foreach items expanded)."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    found: dict[str, dict] = {}
    for stage in stages.values():
        if "foreach" in stage:
            for item in stage["foreach"].values():
                found[item["section"]] = stage["do"]
        else:
            found[stage["cmd"].split()[2]] = stage
    return found


def _code_deps(stage: dict) -> list[Path]:
    return [(ROOT / dep).resolve() for dep in stage["deps"] if dep.startswith(f"{PACKAGE}/")]


@pytest.mark.parametrize("stage", list(STAGES))
def test_each_dvc_stage_depends_on_all_the_code_it_imports(stage):
    module = STAGES[stage].partition(":")[0]
    modules = imported_modules(module)
    assert module in modules and len(modules) > 2
    assert _uncovered(modules, _code_deps(_dvc_stages()[stage])) == []


def test_a_stage_s_deps_do_not_reach_into_code_it_never_imports():
    """"Exactly the stages it can affect": no code dep is a package the stage never imports."""
    for stage, definition in _dvc_stages().items():
        sources = {_source(m) for m in imported_modules(STAGES[stage].partition(":")[0])}
        for dep in _code_deps(definition):
            assert any(s == dep or dep in s.parents for s in sources), f"{stage}: {dep} is not imported"


def test_the_package_root_holds_no_code():
    assert not _holds_code(PACKAGE)  # only __version__: no stage dep needs it


@pytest.mark.parametrize("unit, code_owner", [
    ("citeworth.curate.stage", "citeworth.curate.stage"),  # a curated shard
    ("citeworth.studies.domains.stage", "citeworth.studies.domains.cells"),  # cells, cached models
    ("citeworth.studies.transfer.stage", "citeworth.studies.transfer.pretrain"),  # variants, runs
    ("citeworth.models.loop", "citeworth.models.loop"),  # resumable checkpoints
    ("citeworth.models.train", "citeworth.models.train"),  # a trained model (a mapped train task)
])
def test_each_fingerprint_covers_the_code_of_its_unit(unit, code_owner):
    code = importlib.import_module(code_owner).CODE
    assert _uncovered(imported_modules(unit), _code_paths(code)) == []


def test_a_code_change_reruns_the_stages_that_import_it_and_only_those():
    """The consequence, spelled out for two edits."""
    importing = {stage for stage in STAGES
                 if "citeworth.models.fitting" in imported_modules(STAGES[stage].partition(":")[0])}
    assert importing == {"train", "domains"}
    importing = {stage for stage in STAGES
                 if "citeworth.sources.jats" in imported_modules(STAGES[stage].partition(":")[0])}
    assert importing == {"curate", "curate_baseline", "related_work", "export", "validate", "silver"}


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
                         "report": "report", "silver": "silver"},
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
