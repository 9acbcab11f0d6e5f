"""Every ``CITEWORTH_*`` environment variable, what it does and its default: the environment
reference page (``docs/reference/environment.md``) is written from ``VARIABLES`` and from a scan of
the project's files for the names they read (``read_by``), and ``tests/unit/test_docs.py`` fails when
the scan finds a name ``VARIABLES`` lacks, or ``VARIABLES`` keeps one nothing reads any more.

A name is found where it stands on its own (``CITEWORTH_WORKERS``, ``$CITEWORTH_MIRROR``,
``${CITEWORTH_IMAGE:-...}``), not inside a longer one: ``AIRFLOW_CONN_CITEWORTH_S3`` is Airflow's
connection variable, ``CITEWORTH_FIELDS`` a Python constant (in no string).
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"(?<![A-Za-z0-9_])CITEWORTH_[A-Z0-9_]+")
# The project's own files that read or set variables (the site's pages only speak of them).
SCANNED = ("citeworth", "dags", "plugins", "scripts", "benchmarks", "tests", "docker", "Makefile")
SCANNED_SUFFIXES = {".py", ".sh", ".yaml", ".yml", ".env", ".example", ""}
# Files that name variables as examples (of a name that is not one, of a typo a check must catch).
EXAMPLES = ("citeworth/docs/environment.py", "citeworth/docs/drift.py", "tests/unit/test_docs.py")


@dataclass(frozen=True)
class Variable:
    group: str
    default: str
    meaning: str


_DATA = "Data and stages"
_RUNS = "Orchestrated runs (Airflow)"
_CLUSTER = "The Celery cluster"
_PROJECT = "Make targets and tests"

VARIABLES: dict[str, Variable] = {
    "CITEWORTH_MIRROR": Variable(
        _DATA, "the Makefile sets `../shared/data` when that folder exists; else unset",
        "A local folder laid out like the origin URLs (`github/OWNER/REPO/...`) that `download` reads "
        "instead of the network; empty or unset: the origin URLs of the source registry. `download.mirror` "
        "in the params wins over it."),
    "CITEWORTH_WORKERS": Variable(
        _DATA, "each stage's own (`citeworth run STAGE --help`)",
        "How many units of a stage's work run at once (files fetched, PDFs in flight, shards curated, "
        "models trained side by side); `citeworth run STAGE --workers N` sets it. Changes no output byte."),
    "CITEWORTH_GROBID_URL": Variable(
        _DATA, "`http://localhost:8070`",
        "The GROBID service `pdf2tei` sends PDFs to, unless `pdf2tei.grobid_url` names one."),
    "CITEWORTH_SHARD_STORE": Variable(
        _DATA, "`<git common dir>/citeworth/shards` (no store outside a git checkout)",
        "Where curate keeps finished shards for every workspace of the project: a folder, "
        "`s3://bucket/prefix`, or `off`."),
    "CITEWORTH_SHARD_STORE_LIMIT": Variable(
        _DATA, "`20GB`",
        "The shard store's size cap (`500MB`, `1.5GiB`, ...); the least recently used shards go first."),
    "CITEWORTH_PROJECT_DIR": Variable(
        _RUNS, "the folder above `plugins/` (Airflow), else the current folder",
        "The project checkout the DAG tasks and `citeworth` orchestration commands work in."),
    "CITEWORTH_WORKSPACES": Variable(
        _RUNS, "`.dvc/tmp/runs/` in the project",
        "Where each run's workspace (a git worktree of its own) is made."),
    "CITEWORTH_KEEP_FAILED_WORKSPACES_DAYS": Variable(
        _RUNS, "`7`",
        "How many days a failed run's workspace is kept for inspection before housekeeping removes it."),
    "CITEWORTH_DVC_REMOTE": Variable(
        _RUNS, "unset: DVC's default remote",
        "The DVC remote a run's version task pushes to (`s3` on a cluster); the trigger form's "
        "`dvc_remote` field wins over it."),
    "CITEWORTH_GIT_REMOTE": Variable(
        _RUNS, "unset: the local workspace form",
        "The project's git remote. Set, a run's workspace on each host is a worktree of a clone of it, "
        "and the version task pushes its commit and tags there (hosts that share no folder)."),
    "CITEWORTH_TRAIN_QUEUE": Variable(
        _RUNS, "the default queue",
        "The Celery queue of the training tasks (`gpu` in the cluster's settings)."),
    "CITEWORTH_VERSIONING_QUEUE": Variable(
        _RUNS, "the default queue",
        "The Celery queue of the version task: the host with push rights."),
    "CITEWORTH_STAGE_FORK": Variable(
        _RUNS, "unset: a new Python process per stage",
        "`1`: a task's stage child is forked from the worker, which imported the heavy libraries once "
        "(set by `citeworth cluster` workers)."),
    "CITEWORTH_HOST": Variable(
        _CLUSTER, "the machine's fully qualified name",
        "The name a cluster host goes by (its Celery worker, its folders); `citeworth cluster` sets one "
        "per host."),
    "CITEWORTH_API_URL": Variable(
        _CLUSTER, "`http://airflow-apiserver:8080`",
        "The Airflow API server's address the workers' task SDK calls (`docker/cluster.env`)."),
    "CITEWORTH_POSTGRES_ADDRESS": Variable(
        _CLUSTER, "`postgres:5432`",
        "PostgreSQL (Airflow's metadata DB and Celery's result backend), `host:port`."),
    "CITEWORTH_REDIS_ADDRESS": Variable(
        _CLUSTER, "`redis:6379`", "Redis, Celery's broker, `host:port`."),
    "CITEWORTH_S3_ENDPOINT": Variable(
        _CLUSTER, "`http://minio:9000`",
        "The S3 API's endpoint: DVC's `s3` remote, the shard store, the task logs."),
    "CITEWORTH_S3_ACCESS_KEY": Variable(
        _CLUSTER, "none: required on a cluster",
        "The S3 API's access key (from `docker/.env`, never committed)."),
    "CITEWORTH_S3_SECRET_KEY": Variable(
        _CLUSTER, "none: required on a cluster",
        "The S3 API's secret key (from `docker/.env`, never committed)."),
    "CITEWORTH_WORKER_CONCURRENCY": Variable(
        _CLUSTER, "`1`", "Tasks each Celery worker of the container cluster runs at once."),
    "CITEWORTH_IMAGE": Variable(
        _CLUSTER, "`citeworth-airflow:latest`", "The container cluster's image (`docker/compose.yaml`)."),
    "CITEWORTH_GPU_IMAGE": Variable(
        _CLUSTER, "`citeworth-airflow:gpu`", "The GPU worker's image (`docker/compose.yaml`)."),
    "CITEWORTH_PROFILE": Variable(
        _PROJECT, "`study`",
        "The params profile `make study` builds (`params/<profile>.yaml`; `study-gpu`: the paper's "
        "budgets on a GPU)."),
    "CITEWORTH_BACKFILL_TEST": Variable(
        _PROJECT, "unset: skipped",
        "`1` runs the opt-in end-to-end backfill test (about 11 minutes)."),
    "CITEWORTH_FAULT_TESTS": Variable(
        _PROJECT, "unset: skipped",
        "`1` runs the opt-in fault suite on the native cluster (`make faults`, about 35 minutes)."),
    "CITEWORTH_FAULTS_REPORT": Variable(
        _PROJECT, "unset: no report",
        "Where the fault suite writes each fault's record (`benchmarks/faults.py` sets it)."),
    "CITEWORTH_TEST_OUT": Variable(
        _PROJECT, "set by the test", "Internal: where the Neovim test's editor script writes what it saw."),
    "CITEWORTH_TEST_PYTHON": Variable(
        _PROJECT, "set by the test",
        "Internal: the Python the Neovim test's editor starts `citeworth lsp` with."),
}


def read_by(root: Path = ROOT) -> dict[str, list[str]]:
    """Every variable name the project's files use -> those files (relative, sorted)."""
    found: dict[str, set[str]] = {}
    for path in _scanned_files(root):
        for name in _names(path):
            found.setdefault(name, set()).add(path.relative_to(root).as_posix())
    return {name: sorted(files) for name, files in sorted(found.items())}


def _scanned_files(root: Path) -> list[Path]:
    """The project's own files under ``SCANNED``: git's list where there is one (not a venv or a
    build left in the checkout), else every file."""
    listed = subprocess.run(["git", "ls-files", "-z", *SCANNED], cwd=root, capture_output=True)
    if listed.returncode == 0:
        candidates = [root / name for name in listed.stdout.decode().split("\0") if name]
    else:
        candidates = [p for entry in SCANNED for p in ([root / entry] if (root / entry).is_file()
                                                      else sorted((root / entry).rglob("*")))]
    return [p for p in candidates if p.is_file() and p.suffix in SCANNED_SUFFIXES
            and "__pycache__" not in p.parts and p.relative_to(root).as_posix() not in EXAMPLES]


def _names(path: Path) -> set[str]:
    """The names in ``path``: in a Python file only those in its strings (docstrings and comments
    name variables too: a comment that names one without reading it is still documentation)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".py":
        return set(NAME.findall(text))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set(NAME.findall(text))
    strings = [node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    comments = [line.partition("#")[2] for line in text.splitlines() if "#" in line]
    return {name for chunk in [*strings, *comments] for name in NAME.findall(chunk)}


def environment_page(found: dict[str, list[str]]) -> str:
    """The reference page: one table per group, each variable with its default, meaning and the
    project's files that read or set it (the tests' and benchmarks' only where nothing else does)."""
    sections = []
    for group in dict.fromkeys(variable.group for variable in VARIABLES.values()):
        rows = [f"| `{name}` | {variable.default} | {variable.meaning} | "
                f"{', '.join(f'`{file}`' for file in _readers(found.get(name, []))) or '–'} |"
                for name, variable in VARIABLES.items() if variable.group == group]
        sections.append(f"## {group}\n\n| variable | default | what it does | read in |\n|---|---|---|---|\n"
                        + "\n".join(rows) + "\n")
    return "\n".join([
        "<!-- Generated from citeworth/docs/environment.py and a scan of the project's files by "
        "`python -m citeworth.docs.reference --write`: edit those, not this page. -->\n",
        "# Environment variables\n",
        f"Every `CITEWORTH_*` variable the project reads ({len(VARIABLES)}), found by scanning its code, "
        "scripts and container files. None of them changes what a stage computes: results are params "
        "(`params.yaml`), versioned with the outputs; these say where things are and how work is spread. "
        "Credentials come only from the environment or Airflow's connections, never from a committed file. "
        "Other programs' own variables (`AIRFLOW__*`, `AWS_*`, `XDG_CACHE_HOME`) are in the pages of the "
        "part that uses them: [Airflow](../operators/airflow.md), [S3](../operators/s3.md), "
        "[the cluster](../operators/cluster.md).\n",
        *sections,
    ])


def _readers(files: list[str]) -> list[str]:
    own = [file for file in files if not file.startswith(("tests/", "benchmarks/"))]
    return own or files
