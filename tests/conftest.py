"""Shared fixtures: the real-data mirror and a demo dataset built once per session by the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.fixture(scope="session")
def demo_project(tmp_path_factory, mirror) -> Path:
    """A project directory with the demo corpus downloaded from the mirror (params.yaml as shipped)."""
    project = tmp_path_factory.mktemp("demo_project")
    shutil.copy(ROOT / "params.yaml", project / "params.yaml")
    run_cli(project, "run", "download")
    return project


@pytest.fixture(scope="session")
def demo_dataset(demo_project) -> Path:
    """The demo project after curate + assemble for ours and the spans-only baseline:
    holds data/citeworth/*.jsonl, data/baseline/*.jsonl, interim*/ and reports/dataset_stats*.json."""
    for stage in ("curate", "assemble", "curate_baseline", "assemble_baseline"):
        run_cli(demo_project, "run", stage)
    return demo_project


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
