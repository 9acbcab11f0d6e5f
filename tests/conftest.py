"""Shared fixtures: the real-data mirror and a demo dataset built once per session by the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from session_builds import built_once, copy_tree

ROOT = Path(__file__).resolve().parents[1]


# The modules that take minutes, longest first (seconds each under `make test` on an idle 2-core machine:
# `make test` prints the slowest tests). `make test` spreads whole modules over pytest-xdist workers
# in collection order, so these start first and the short ones fill the other workers' time instead
# of one long module starting last.
LONGEST_FIRST = (
    "integration/test_cluster.py",                # ~930 s: one native cluster, backfill and faults
    "integration/test_airflow_dags.py",           # ~360 s
    "integration/test_results_page_browser.py",   # ~240 s
    "integration/test_demo_models.py",            # ~180 s
    "integration/test_training_stage.py",         # ~150 s: every model kind trained, then exported
    "integration/test_author_install.py",         # ~60 s: a fresh venv with an author's install
    "integration/test_dvc_reproducible.py",       # ~90 s
    "integration/test_airflow_setup.py",          # ~70 s
    "integration/test_airflow_arxiv_latex.py",    # ~60 s
    "integration/test_dvc_pipeline.py",           # ~50 s
    "integration/test_remote_workspace.py",       # ~50 s
    "unit/test_orchestration_runs.py",            # ~45 s
)


def _rank(item: pytest.Item) -> int:
    path = item.path.relative_to(ROOT / "tests").as_posix()
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: every other test keeps its place


@pytest.fixture(autouse=True, scope="session")
def session_shard_store(tmp_path_factory):
    """The shard store of session fixtures (set up before any test's own): never the checkout's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWORTH_SHARD_STORE", str(tmp_path_factory.mktemp("session_shard_store")))
        yield


@pytest.fixture(autouse=True)
def own_shard_store(monkeypatch, tmp_path_factory) -> Path:
    """Each test (and the processes it starts) keeps curated shards in a store of its own: not in the
    checkout's git directory, and never reusing another test's shards."""
    store = tmp_path_factory.mktemp("shard_store")
    monkeypatch.setenv("CITEWORTH_SHARD_STORE", str(store))
    return store


@pytest.fixture
def one_worker(monkeypatch) -> None:
    """The stage's work in this process, one unit after another (``$CITEWORTH_WORKERS``; curate's
    default is a process per CPU), where a test counts calls or reads the log of that work."""
    monkeypatch.setenv("CITEWORTH_WORKERS", "1")


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The local mirror of the real public data (CI: ../shared/data, set by the Makefile)."""
    value = os.environ.get("CITEWORTH_MIRROR")
    if not value or not Path(value).is_dir():
        pytest.fail("CITEWORTH_MIRROR must name the data mirror (e.g. ../shared/data): use `make test`")
    return Path(value)


def run_cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``citeworth`` in ``project`` as a user would; fail the test with its output on error."""
    result = subprocess.run([sys.executable, "-m", "citeworth.cli", *args], cwd=project,
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"citeworth {' '.join(args)} exited {result.returncode}:\n{result.stderr[-4000:]}")
    return result


@pytest.fixture
def torch_one_thread():
    """Toy models gain nothing from intra-op threads and lose much to them on a busy machine."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def cli():
    """``cli(project, *args)``: run the citeworth CLI in a project directory (fails the test on error)."""
    return run_cli


def demo_download(tmp_path_factory) -> Path:
    """The run's one project with the demo corpus downloaded from the mirror (params.yaml as shipped)."""
    def download(project: Path) -> None:
        shutil.copy(ROOT / "params.yaml", project / "params.yaml")
        run_cli(project, "run", "download")

    return built_once(tmp_path_factory, "demo_download", download)


@pytest.fixture(scope="session")
def demo_project(tmp_path_factory, mirror) -> Path:
    """This session's copy of a project with the demo corpus downloaded (params.yaml as shipped)."""
    return copy_tree(demo_download(tmp_path_factory), tmp_path_factory.mktemp("demo_project"))


@pytest.fixture(scope="session")
def demo_dataset(tmp_path_factory, demo_project) -> Path:
    """The demo project after curate + assemble for ours and the spans-only baseline:
    holds data/citeworth/*.jsonl, data/baseline/*.jsonl, interim*/ and reports/dataset_stats*.json.
    The stages only add files, so the run's one build is copied over this session's demo_project."""
    def curate_and_assemble(project: Path) -> None:
        copy_tree(demo_download(tmp_path_factory), project)
        for stage in ("curate", "assemble", "curate_baseline", "assemble_baseline"):
            run_cli(project, "run", stage)

    return copy_tree(built_once(tmp_path_factory, "demo_dataset", curate_and_assemble), demo_project)


@pytest.fixture
def edit_code(monkeypatch, tmp_path):
    """``edit_code("models/tfidf.py")``: from then on, code fingerprints see that file of the citeworth
    package edited (a copy with a line added), as after a change to the code; the file is untouched."""
    import citeworth
    from citeworth.core import fingerprint

    package = Path(citeworth.__file__).parent
    real_files = fingerprint.source_files
    edited: dict[Path, Path] = {}

    def edit(relative: str) -> None:
        original = package / relative
        copy = tmp_path / "edited_code" / relative
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(original.read_bytes() + b"\n# an edit\n")
        edited[original] = copy
        fingerprint.code_digest.cache_clear()

    monkeypatch.setattr(fingerprint, "source_files", lambda *modules: [
        (name, edited.get(path, path)) for name, path in real_files(*modules)])
    yield edit
    fingerprint.code_digest.cache_clear()
