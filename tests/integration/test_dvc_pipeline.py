"""``dvc repro`` over the real stages on the embedded demo, in a fresh clone; remotes; experiments.

One module-wide build (``dvc repro validate related_work``: download -> curate (+ baseline) ->
assemble (+ baseline) -> validate, and related_work); the tests then check that DVC sees it as
reproducible and versionable.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time

import pytest
import yaml
from dvc_workspace import (
    DATASET_TARGETS,
    dvc,
    git,
    locked_hashes,
    locked_stages,
    reproduced_workspace,
    tool_env,
)

from citeworth.orchestration.versioning import DATASET_STAGES
from citeworth.stages import STAGES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory, mirror):
    workspace, seconds = reproduced_workspace(tmp_path_factory, tmp_path_factory.mktemp("dvc_ws"))
    print(f"dvc repro {' '.join(DATASET_TARGETS)} on a fresh clone: {seconds:.1f} s")
    return workspace


def test_every_dvc_stage_runs_a_registered_stage_over_its_own_params_section(built):
    from dvc.repo import Repo

    with Repo(str(built)) as repo:
        stages = list(repo.index.stages)  # foreach and matrix stages resolved, as dvc repro runs them
    assert len(stages) >= len(STAGES)
    for stage in stages:
        _, _, section, *_ = stage.cmd.split()
        assert stage.cmd.startswith(f"citeworth run {section}") and section in STAGES, stage.name
        keys = [key for dep in stage.deps if hasattr(dep, "params") for key in dep.params]
        assert keys and all(key.split(".")[0] == section for key in keys), stage.name
        assert stage.outs, stage.name


def test_repro_builds_the_dataset_and_locks_every_dataset_stage(built):
    for split in ("train", "dev", "test"):
        assert (built / "data" / "citeworth" / f"{split}.jsonl").stat().st_size > 0
        assert (built / "data" / "baseline" / f"{split}.jsonl").stat().st_size > 0
    assert json.loads((built / "reports" / "quality" / "summary.json").read_text())["success"] is True
    assert (built / "reports" / "quality" / "site" / "index.html").is_file()
    locked = yaml.safe_load((built / "dvc.lock").read_text())["stages"]
    assert {name.split("@")[0] for name in locked} >= set(DATASET_STAGES)
    assert {"curate@citeworth", "curate@baseline", "assemble@citeworth", "assemble@baseline"} <= set(locked)
    assert json.loads(dvc(built, "status", "--json", "--with-deps", *DATASET_TARGETS).stdout or "{}") == {}


def test_a_second_repro_is_a_no_op(built):
    lock = (built / "dvc.lock").read_bytes()
    out = dvc(built, "repro", *DATASET_TARGETS).stdout
    for stage in locked_stages(built, list(DATASET_STAGES)):
        assert f"Stage '{stage}' didn't change, skipping" in out
    assert (built / "dvc.lock").read_bytes() == lock


def test_rerunning_a_stage_by_force_rewrites_the_same_bytes(built):
    before = locked_hashes(built, ["assemble"])
    dvc(built, "repro", "--force", "--single-item", "assemble@citeworth", "assemble@baseline")
    assert locked_hashes(built, ["assemble"]) == before and len(before) == 2


def test_metrics_show_reads_the_dataset_stats_and_quality_summary(built):
    metrics = json.loads(dvc(built, "metrics", "show", "--json").stdout)
    files = next(iter(metrics.values()))["data"]
    assert {"reports/dataset_stats.json", "reports/quality/summary.json"} <= set(files)
    assert files["reports/quality/summary.json"]["data"]["success"] is True


def test_exp_run_with_a_changed_param_reruns_only_what_depends_on_it(built):
    git(built, "add", "dvc.lock", "reports")
    git(built, "commit", "--quiet", "-m", "dataset built by dvc repro")
    lock = (built / "dvc.lock").read_bytes()
    # params.yaml lists only what the demo sets; a key at its code default is added with DVC's +.
    out = dvc(built, "exp", "run", "--temp", "--name", "seed2", "-S", "+assemble.seed=2", "assemble").stdout
    assert "Stage 'curate@citeworth' didn't change, skipping" in out
    assert "Running stage 'assemble@citeworth'" in out
    shown = json.loads(dvc(built, "exp", "show", "--json").stdout)
    experiments = [exp for rev in shown for exp in (rev.get("experiments") or [])]
    seeds = {run["name"]: run["revs"][0]["data"]["params"]["params.yaml"]["data"]["assemble"]["seed"]
             for run in experiments}
    assert seeds == {"seed2": 2}
    assert (built / "dvc.lock").read_bytes() == lock  # --temp: the workspace keeps the committed build
    dvc(built, "exp", "remove", "seed2")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def s3_server():
    """A real S3 API (moto_server) on loopback; yields its endpoint URL."""
    port = _free_port()
    server = subprocess.Popen([str(shutil.which("moto_server", path=tool_env()["PATH"])), "-H", "127.0.0.1",
                               "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_push_to_s3_wipe_the_cache_and_pull_back(built, s3_server):
    env = tool_env(AWS_ENDPOINT_URL_S3=s3_server, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                   AWS_DEFAULT_REGION="us-east-1")
    bucket = dvc(built, "config", "remote.s3.url").stdout.strip().removeprefix("s3://").split("/")[0]
    create = f"import boto3; boto3.client('s3').create_bucket(Bucket='{bucket}')"
    subprocess.run([sys.executable, "-c", create], env=env, check=True)
    dataset = ["--with-deps", *DATASET_TARGETS]  # the part of the pipeline this module built
    dvc(built, "push", "--remote", "s3", *dataset, env=env)
    before = locked_hashes(built, list(DATASET_STAGES))
    shutil.rmtree(built / ".dvc" / "cache")
    for out in ("raw", "interim", "interim_baseline", "data", "reports/quality/site"):
        shutil.rmtree(built / out)
    assert dvc(built, "status", "--json", *dataset, env=env).stdout.strip() not in ("", "{}")
    dvc(built, "pull", "--remote", "s3", *dataset, env=env)
    assert json.loads(dvc(built, "status", "--json", *dataset, env=env).stdout or "{}") == {}
    assert locked_hashes(built, list(DATASET_STAGES)) == before
    assert (built / "data" / "citeworth" / "train.jsonl").stat().st_size > 0
