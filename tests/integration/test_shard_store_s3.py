"""The shard store on S3 against a real S3 API server (``moto_server`` over HTTP on loopback): two
checkouts that share nothing but the bucket reuse each other's curated shards, byte for byte; a
partial entry is never found; the bucket stays within its limit, the least recently used entry going
first; an unreachable or missing bucket only costs a curation."""

from __future__ import annotations

import json
import logging
import subprocess
import tempfile
import time
from pathlib import Path

import boto3
import pytest
from jats_shards import release_shards, tree

from citeworth.curate import s3_shard_store, stage
from citeworth.curate.s3_shard_store import S3ShardStore
from citeworth.curate.shard_store import ShardOutputs
from citeworth.curate.store_settings import LIMIT_ENV, STORE_ENV

BUCKET = "shards"


@pytest.fixture
def s3(moto, monkeypatch, one_worker):
    """A fresh bucket; the store's client finds the server the way production does, from the environment.
    Shards are curated in this process (one_worker): the tests read the store's log."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto["endpoint"])
    client = boto3.client("s3", region_name="us-east-1")
    if BUCKET not in [bucket["Name"] for bucket in client.list_buckets()["Buckets"]]:
        client.create_bucket(Bucket=BUCKET)
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    monkeypatch.setenv(STORE_ENV, f"s3://{BUCKET}/team/store")
    return client


def _checkout(folder: Path, mirror: Path, release: str) -> stage.CurateParams:
    """A git repository of its own holding real JATS shards of ``release``, curated into out/."""
    folder.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return release_shards(folder, mirror, release, folder / "out")


def _stored(client) -> dict[str, list[str]]:
    """fingerprint -> the names of its objects, in the store's prefix."""
    entries: dict[str, list[str]] = {}
    for item in client.list_objects_v2(Bucket=BUCKET, Prefix="team/store/").get("Contents", []):
        fingerprint, name = item["Key"].removeprefix("team/store/").split("/")
        entries.setdefault(fingerprint, []).append(name)
    return {fingerprint: sorted(names) for fingerprint, names in entries.items()}


def _forbidden(rules):
    raise AssertionError("a shard was curated, not reused")


def _curate_elsewhere(params: stage.CurateParams, monkeypatch) -> Path:
    """``params`` curated afresh (no store) into a folder beside its outputs; that folder."""
    monkeypatch.setenv(STORE_ENV, "off")
    fresh = params.model_copy(update={"out_dir": Path(f"{params.out_dir}_fresh")})
    stage.curate(fresh)
    return fresh.out_dir


def test_a_checkout_reuses_the_shards_another_curated_through_s3(s3, mirror, tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    first = _checkout(tmp_path / "a", mirror, "v1")
    monkeypatch.chdir(first.out_dir.parent)
    stage.curate(first)
    stored = _stored(s3)
    assert list(stored.values()) == [["papers.jsonl", "paragraphs.jsonl", "quarantine.jsonl",
                                      "stats.json"]] * 2
    assert not (tmp_path / "a" / ".git" / "citeworth").exists()  # nothing kept on A's disk

    second = _checkout(tmp_path / "b", mirror, "v2")  # another repository, another release
    monkeypatch.chdir(second.out_dir.parent)
    with monkeypatch.context() as patch, caplog.at_level(logging.INFO, logger="citeworth.curate.stage"):
        patch.setattr(stage, "_curator", _forbidden)
        stage.curate(second)
    for key in ("jats__articles", "jats__more"):
        assert f"shard {key}: its content was curated before with these rules and code " \
               f"(s3://{BUCKET}/team/store/" in caplog.text
        assert json.loads((second.out_dir / "stats" / f"{key}.json").read_text())["release"] == "v2"
    assert tree(second.out_dir) == tree(_curate_elsewhere(second, monkeypatch))  # byte for byte
    assert not list(Path(tempfile.gettempdir()).glob("citeworth-shard-*"))  # every download's scratch is gone



def test_an_entry_without_its_stats_is_not_found_and_is_stored_whole_again(s3, mirror, tmp_path, monkeypatch,
                                                                            caplog):
    first = _checkout(tmp_path / "a", mirror, "v1")
    monkeypatch.chdir(first.out_dir.parent)
    stage.curate(first)
    more = json.loads((first.out_dir / "stats" / "jats__more.json").read_text())["fingerprint"]
    s3.delete_object(Bucket=BUCKET, Key=f"team/store/{more}/stats.json")  # what a killed upload leaves
    assert _stored(s3)[more] == ["papers.jsonl", "paragraphs.jsonl", "quarantine.jsonl"]

    second = _checkout(tmp_path / "b", mirror, "v2")
    monkeypatch.chdir(second.out_dir.parent)
    curated = []
    real = stage._curator
    monkeypatch.setattr(stage, "_curator", lambda rules: curated.append(1) or real(rules))
    with caplog.at_level(logging.INFO, logger="citeworth.curate.stage"):
        stage.curate(second)
    assert len(curated) == 1  # the partial entry, not the whole one
    assert "shard jats__more: its content was curated before" not in caplog.text
    assert "shard jats__articles: its content was curated before" in caplog.text
    assert _stored(s3)[more] == ["papers.jsonl", "paragraphs.jsonl", "quarantine.jsonl", "stats.json"]  # anew
    assert tree(second.out_dir) == tree(_curate_elsewhere(second, monkeypatch))


def test_an_upload_cut_short_is_not_found_and_the_next_add_completes_it(s3, tmp_path, monkeypatch):
    store = S3ShardStore(f"s3://{BUCKET}/team/store", limit=10**6)
    real_upload = store.client.upload_file

    def killed_after_the_paragraphs(path, bucket, key):
        if not key.endswith("paragraphs.jsonl"):
            raise ConnectionResetError("the uploading host died")
        real_upload(path, bucket, key)

    monkeypatch.setattr(store.client, "upload_file", killed_after_the_paragraphs)
    outputs = _finished(tmp_path / "done", 10)
    store.add("abc", outputs)
    assert _stored(s3) == {"abc": ["paragraphs.jsonl"]}
    with store.find("abc") as found:
        assert found is None
    monkeypatch.setattr(store.client, "upload_file", real_upload)
    store.add("abc", outputs)  # another host curates it again and stores it whole
    with store.find("abc") as found:
        assert found is not None and found.paragraphs.read_text() == "p" * 10 + "\n"


def _finished(folder: Path, size: int) -> ShardOutputs:
    outputs = ShardOutputs.in_folder(folder)
    folder.mkdir(parents=True)
    for path, text in zip(outputs.files(), ("p" * size + "\n", "c\n", "q\n", "{}\n"), strict=True):
        path.write_text(text)
    return outputs


def test_the_bucket_stays_within_its_limit_the_least_recently_used_going_first(s3, tmp_path, caplog):
    store = S3ShardStore(f"s3://{BUCKET}/team/store", limit=2500)  # two entries of ~1 kB fit, not three
    for name in ("a", "b"):
        store.add(name, _finished(tmp_path / name, 1000))
        time.sleep(1.1)  # S3 keeps LastModified to the second
    with store.find("a") as found:  # used: now more recent than b
        assert found.paragraphs.read_text() == "p" * 1000 + "\n"
    time.sleep(1.1)
    with caplog.at_level(logging.INFO, logger="citeworth.curate.s3_shard_store"):
        store.add("c", _finished(tmp_path / "c", 1000))
    assert sorted(_stored(s3)) == ["a", "c"]
    assert "over its limit of 2500 bytes: evicted b" in caplog.text
    whole, _ = store.entries()
    assert sum(entry.size for entry in whole) <= 2500

    store.add("huge", _finished(tmp_path / "huge", 5000))  # alone over the limit: kept, the others not
    assert sorted(_stored(s3)) == ["huge"]


def test_a_stage_stays_within_a_small_limit(s3, mirror, tmp_path, monkeypatch):
    first = _checkout(tmp_path / "a", mirror, "v1")
    monkeypatch.chdir(first.out_dir.parent)
    monkeypatch.setenv(LIMIT_ENV, "1kB")  # less than one curated shard
    stage.curate(first)
    (kept,) = _stored(s3)  # only the shard added last: an entry being added is never evicted
    assert kept == json.loads((first.out_dir / "stats" / "jats__more.json").read_text())["fingerprint"]


def test_a_missing_bucket_only_costs_a_curation(s3, mirror, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv(STORE_ENV, "s3://no-such-bucket/store")
    first = _checkout(tmp_path / "a", mirror, "v1")
    monkeypatch.chdir(first.out_dir.parent)
    with caplog.at_level(logging.WARNING):
        stage.curate(first)
    assert caplog.text.count("not stored in s3://no-such-bucket/store/") == 2  # each shard tried
    assert "NoSuchBucket" in caplog.text
    assert tree(first.out_dir) == tree(_curate_elsewhere(first, monkeypatch))


def test_an_unreachable_store_is_tried_once_then_left_alone(s3, mirror, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    first = _checkout(tmp_path / "a", mirror, "v1")
    monkeypatch.chdir(first.out_dir.parent)
    with caplog.at_level(logging.WARNING):
        stage.curate(first)
    failures = [record.getMessage() for record in caplog.records if "s3://" in record.getMessage()]
    assert len(failures) == 1, failures  # the first shard's find: then no call until the pause ends
    assert "Could not connect to the endpoint URL" in failures[0]
    assert f"this process uses no shard store for {s3_shard_store.PAUSE_SECONDS} s" in failures[0]
    assert tree(first.out_dir) == tree(_curate_elsewhere(first, monkeypatch))
