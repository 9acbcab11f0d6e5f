"""An error no reader or rule foresaw stops only its own shard: the shard's stats and quarantine
say why, it leaves no paragraphs, the other shards are curated, the stage fails naming it, and a
rerun redoes only that shard. Shards are real unarXive papers from the mirror."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest
import yaml

from citeworth import sources
from citeworth.core.errors import StageFailed, disk_full
from citeworth.core.params import build
from citeworth.curate.stage import CurateParams, curate, curate_shard
from citeworth.curate.stats import summarize

SAMPLE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
READ_UNARXIVE = sources.READERS["unarxive"]


@pytest.fixture(scope="module")
def unarxive_lines(mirror, tmp_path_factory) -> list[bytes]:
    import tarfile

    with tarfile.open(mirror / SAMPLE) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(".jsonl"))
        return tar.extractfile(member).read().splitlines(keepends=True)


@pytest.fixture
def params(tmp_path, unarxive_lines, one_worker) -> CurateParams:
    for i, name in enumerate("abc"):
        (tmp_path / f"{name}.jsonl").write_bytes(b"".join(unarxive_lines[4 * i: 4 * i + 4]))
    return build(CurateParams, {"inputs": [{"reader": "unarxive", "glob": str(tmp_path / "*.jsonl")}],
                                "out_dir": str(tmp_path / "interim")})


def failing_on(shard_name: str):
    """The unarXive reader, except that shard ``shard_name`` breaks off after one paper with an
    error no reader foresees (a disk or network file system failing mid-read)."""
    def read(shard):
        for number, item in enumerate(READ_UNARXIVE(shard)):
            if shard.name == shard_name and number == 1:
                raise OSError("Input/output error")
            yield item

    return read


def test_an_error_in_one_shard_is_recorded_and_the_others_go_on(params, monkeypatch):
    out = params.out_dir
    monkeypatch.setitem(sources.READERS, "unarxive", failing_on("b"))
    with pytest.raises(StageFailed, match=r"1 shard\(s\): unarxive__b \(OSError: Input/output error\); "
                                          r"the other 2 shard\(s\) are curated"):
        curate(params)
    failed = json.loads((out / "stats" / "unarxive__b.json").read_text())
    assert failed["fingerprint"] is None and failed["failed"]["error"] == "OSError: Input/output error"
    assert "Traceback" in failed["failed"]["traceback"]
    [record] = map(json.loads, (out / "quarantine" / "unarxive__b.jsonl").read_text().splitlines())
    assert (record["reason"], record["location"]) == ("shard_error:OSError", "shard")
    assert not (out / "paragraphs" / "unarxive__b.jsonl").exists()
    assert not list(out.glob("*/.*.tmp"))  # nothing half-written
    for name in ("a", "c"):
        assert "curation" in json.loads((out / "stats" / f"unarxive__{name}.json").read_text())
    with pytest.raises(StageFailed, match="unarxive__b"):  # one shard, as an Airflow task runs it
        curate_shard(params, "unarxive__b")
    with pytest.raises(StageFailed, match=r"\['unarxive__b'\] failed curation"):  # assemble's summary
        summarize([json.loads(p.read_text()) for p in sorted((out / "stats").glob("*.json"))])

    monkeypatch.setitem(sources.READERS, "unarxive", READ_UNARXIVE)  # the fault is gone
    finished = {n: (out / "stats" / f"unarxive__{n}.json").stat().st_mtime_ns for n in ("a", "c")}
    funnel = curate(params)
    assert funnel["shards"] == 3 and funnel["curation"]["papers"] == 12
    assert finished == {n: (out / "stats" / f"unarxive__{n}.json").stat().st_mtime_ns for n in ("a", "c")}
    assert (out / "paragraphs" / "unarxive__b.jsonl").exists()


def test_an_input_that_names_nothing_usable_exits_2_naming_it_without_a_traceback(tmp_path, unarxive_lines):
    """Through the CLI as a user runs it: a glob that matches no file, and a malformed
    ``$CITEWORTH_SHARD_STORE_LIMIT``, were tracebacks (FileNotFoundError, ValueError). An optional
    input that matches nothing stays silent: the second run gets as far as curating its shard."""
    (tmp_path / "papers.jsonl").write_bytes(b"".join(unarxive_lines[:2]))
    missing = {"reader": "unarxive", "glob": "raw/none/*.jsonl"}
    first = curate_cli(tmp_path, [missing], {})
    assert first.returncode == 2 and "Traceback" not in first.stderr
    assert "citeworth: unarxive: no files match 'raw/none/*.jsonl'" in first.stderr
    inputs = [{**missing, "optional": True}, {"reader": "unarxive", "glob": "papers.jsonl"}]
    second = curate_cli(tmp_path, inputs, {"CITEWORTH_SHARD_STORE_LIMIT": "lots"})
    assert second.returncode == 2 and "Traceback" not in second.stderr
    assert "citeworth: CITEWORTH_SHARD_STORE_LIMIT: 'lots' is not a size" in second.stderr


def curate_cli(project, inputs: list[dict], env: dict[str, str]) -> subprocess.CompletedProcess:
    (project / "params.yaml").write_text(yaml.safe_dump({"curate": {"inputs": inputs, "out_dir": "interim"}}))
    return subprocess.run([sys.executable, "-m", "citeworth.cli", "run", "curate"], cwd=project,
                          capture_output=True, text=True, env={**os.environ, **env})


def test_a_full_disk_fails_the_stage_naming_it_and_records_no_shard_failure(params, monkeypatch):
    """ENOSPC is the host's fault, not the shard's: no quarantine record or failed stats that a
    rerun on a host with space would have to undo, and a message that says which disk and what to do."""
    out = params.out_dir
    full = params.out_dir / "paragraphs" / "unarxive__b.jsonl"

    def read(shard):
        for number, item in enumerate(READ_UNARXIVE(shard)):
            if shard.name == "b" and number == 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(full))
            yield item

    monkeypatch.setitem(sources.READERS, "unarxive", read)
    with pytest.raises(StageFailed, match=rf"no space left on the disk holding {full} \(\d+ MiB free now\): "
                                          r"free space there, or point CITEWORTH_WORKSPACES"):
        curate_shard(params, "unarxive__b")
    assert not (out / "stats" / "unarxive__b.json").exists()
    assert not (out / "quarantine" / "unarxive__b.jsonl").exists()
    assert not list(out.rglob("*.tmp"))


def test_disk_full_finds_enospc_down_a_chain_of_causes_and_only_there(tmp_path):
    device = os.open("/dev/full", os.O_WRONLY)
    with pytest.raises(OSError) as written:
        os.write(device, b"x")  # the kernel's own ENOSPC
    os.close(device)
    said = disk_full(written.value, tmp_path).args[0]
    assert said.startswith(f"no space left on the disk holding {tmp_path}")
    try:
        try:
            raise written.value
        except OSError as exc:
            raise RuntimeError("dvc push failed") from exc
    except RuntimeError as chained:
        assert disk_full(chained, tmp_path) is not None
    assert disk_full(OSError(errno.EIO, "Input/output error"), tmp_path) is None
    assert disk_full(ValueError("no"), tmp_path) is None
