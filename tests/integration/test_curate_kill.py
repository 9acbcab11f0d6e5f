"""``kill -9`` of a parallel curate: its workers die with it, nothing half-written passes for a
shard's output, and a rerun completes. Real processes, real unarXive papers from the mirror."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import psutil
import pytest

SAMPLE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
SHARDS = 6  # with 2 workers, the first finished shard leaves four to go
PAPERS = 20  # per shard
PARAMS = """curate:
  inputs:
    - reader: unarxive
      glob: raw/*.jsonl
  out_dir: interim
"""


@pytest.fixture
def project(tmp_path, mirror) -> Path:
    with tarfile.open(mirror / SAMPLE) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(".jsonl"))
        lines = tar.extractfile(member).read().splitlines()[:PAPERS]
    (tmp_path / "raw").mkdir()
    for shard in range(SHARDS):
        records = [json.loads(line) for line in lines]
        for record in records:
            record["paper_id"] = f"{record['paper_id']}-{shard}"
        text = "".join(json.dumps(record) + "\n" for record in records)
        (tmp_path / "raw" / f"arXiv_src_{shard}.jsonl").write_text(text)
    (tmp_path / "params.yaml").write_text(PARAMS)
    return tmp_path


def dead(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE  # killed, waiting to be reaped by init
    except psutil.NoSuchProcess:
        return True


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.slow
def test_kill_9_of_a_parallel_curate_takes_its_workers_with_it(project, cli):
    stats = project / "interim" / "stats"
    run = subprocess.Popen([sys.executable, "-m", "citeworth.cli", "run", "curate", "--workers", "2"],
                           cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    workers: list[psutil.Process] = []
    try:
        parent = psutil.Process(run.pid)
        assert wait_for(lambda: stats.is_dir() and any(stats.glob("*.json")), 300), "no shard finished"
        workers = parent.children(recursive=True)
        finished_at_kill = len(list(stats.glob("*.json")))
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        assert len(workers) >= 2 and finished_at_kill < SHARDS  # killed mid-run, with workers busy
        assert wait_for(lambda: all(dead(w) for w in workers), 10), \
            f"workers outlived their parent: {[w.pid for w in workers if not dead(w)]}"
    finally:  # whatever the outcome, leave no process of this test behind
        if run.poll() is None:
            run.kill()
        for worker in workers:
            with contextlib.suppress(psutil.NoSuchProcess):
                worker.kill()
    # Every file under its real name is whole (written to a temporary name, then renamed). A shard
    # is finished when its stats file exists (written last); the kill may fall between the renames
    # of a shard's paragraphs and its stats, and then the rerun redoes that shard.
    for paragraphs in (project / "interim" / "paragraphs").glob("*.jsonl"):
        records = [json.loads(line) for line in paragraphs.read_text().splitlines()]
        if (shard_stats := stats / f"{paragraphs.stem}.json").exists():
            assert len(records) == json.loads(shard_stats.read_text())["curation"]["kept"]
    cli(project, "run", "curate", "--workers", "2")
    assert len(list(stats.glob("*.json"))) == SHARDS
    assert not list((project / "interim").glob("*/.*.tmp"))  # the killed run's temporary files are gone
