"""The registry sources eLife and Europe PMC (URLs and checksums shipped with the package) and the
mirror's ``.gz`` rule (a file stored as ``<path>.gz`` is decompressed and checked as the public file)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import re
from pathlib import Path

import pytest

from citeworth.download import releases
from citeworth.download.fetch import Fetcher
from citeworth.download.mirror import GzipFallback, from_mirror
from citeworth.download.params import DownloadParams
from citeworth.download.registry import REGISTRIES
from citeworth.download.remote import ChecksumMismatch, CorruptStoredFile, RemoteFile
from citeworth.download.transports import LocalTransport, Network

SETS = {"elife": ("6c97171", 1781, "github/elifesciences/elife-articles/"),
        "europepmc": ("oa-cc-v1", 2533, "github/0AlphaZero0/Text-Classification-Data-Citation-EuropePMC/")}


@pytest.mark.parametrize("source", sorted(SETS))
def test_each_registry_is_the_mirrors_set_with_its_pinned_origins(source, mirror):
    release, count, prefix = SETS[source]
    files = REGISTRIES[source].remote_files("latest")
    with open(mirror / "SOURCES.tsv", encoding="utf-8", newline="") as handle:
        rows = {row["path"]: row for row in csv.DictReader(handle, delimiter="\t")
                if row["path"].startswith(prefix)}
    assert REGISTRIES[source].resolve("latest") == release
    assert len(files) == count == len(rows)
    for file in files:
        row = rows[file.path]
        assert (row["origin_url"], row["sha256"], int(row["bytes"])) == (file.origin, file.sha256, file.size)
        assert file.origin.startswith("https://raw.githubusercontent.com/") and " " not in file.origin


def test_the_new_sources_answer_the_sensor_and_the_backfill_by_their_calendars():
    params = DownloadParams(source="elife", release="latest", out_dir="raw")
    assert releases.available_releases(params) == ["6c97171"]
    assert releases.newer_release_available("europepmc", None, params) == "oa-cc-v1"
    assert releases.newer_release_available("elife", "6c97171", params) is None
    assert releases.latest_release("elife", "2024-05-01", params=params) == "6c97171"
    assert releases.releases_after("europepmc", "oa-cc-v0", params) == ["oa-cc-v1"]


def test_a_local_mirror_must_hold_each_file_plain_or_gzipped(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "plain.xml").write_bytes(b"x")
    (tmp_path / "a" / "stored.xml.gz").write_bytes(gzip.compress(b"y"))
    files = [RemoteFile(f"a/{name}", f"https://example.org/{name}", url="")
             for name in ("plain.xml", "stored.xml")]
    assert [f.url for f in from_mirror(files, str(tmp_path), "elife")] == \
        [str(tmp_path / "a" / "plain.xml"), str(tmp_path / "a" / "stored.xml")]
    with pytest.raises(Exception, match=r"lacks 1 elife file\(s\), e.g. a/gone.xml"):
        from_mirror([RemoteFile("a/gone.xml", "https://example.org/gone.xml", url="")], str(tmp_path),
                    "elife")


# ---- the .gz rule through the real fetcher ----

def stored_file(tmp_path: Path, data: bytes, stored: bytes) -> RemoteFile:
    """A mirror holding ``stored`` as ``f.xml.gz``; the registry expects the public ``data``."""
    (tmp_path / "mirror").mkdir(exist_ok=True)
    (tmp_path / "mirror" / "f.xml.gz").write_bytes(stored)
    return RemoteFile(path="sub/f.xml", origin="https://example.org/f.xml",
                      url=str(tmp_path / "mirror" / "f.xml"), size=len(data),
                      sha256=hashlib.sha256(data).hexdigest())


def fetch(tmp_path: Path, file: RemoteFile):
    transport = GzipFallback(LocalTransport())
    return Fetcher(tmp_path / "release", lambda url: transport, Network(retries=2, backoff=0.01), {}) \
        .fetch_all([file], desc="t")


def test_a_gzipped_copy_lands_as_the_public_file_and_a_part_resumes(tmp_path):
    data = os.urandom(200_000) + b"<article/>" * 50_000  # several deflate blocks
    file = stored_file(tmp_path, data, gzip.compress(data, mtime=0))
    part = tmp_path / "release" / "sub" / "f.xml.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(data[:123_457])
    result = fetch(tmp_path, file)
    assert (tmp_path / "release" / "sub" / "f.xml").read_bytes() == data and not part.exists()
    assert result.entries[0].sha256 == file.sha256 and result.bytes_fetched == len(data) - 123_457


@pytest.mark.parametrize(("stored", "problem"), [
    (lambda data: gzip.compress(data, mtime=0)[:-4000], "is truncated: its gzip stream ends after"),
    (lambda data: b"no gzip at all", "is not a valid gzip file"),
    (lambda data: gzip.compress(data + b"more", mtime=0), "decompresses to more than the 60000 bytes"),
    (lambda data: gzip.compress(data[:-1], mtime=0), "decompresses to 59999 bytes, not the 60000"),
])
def test_a_broken_gzipped_copy_fails_naming_the_file_and_leaves_no_partial_file(tmp_path, stored, problem):
    data = os.urandom(60_000)
    with pytest.raises(CorruptStoredFile,
                       match=rf"sub/f.xml.gz in the mirror {problem}.*partial download was deleted"):
        fetch(tmp_path, stored_file(tmp_path, data, stored(data)))
    assert list((tmp_path / "release" / "sub").iterdir()) == []


def test_a_gzipped_copy_of_other_bytes_is_a_checksum_mismatch(tmp_path):
    data = os.urandom(60_000)
    other = data[:-1] + bytes([data[-1] ^ 1])
    with pytest.raises(ChecksumMismatch,
                       match=r"f.xml: sha256 \w+ does not match .* of sub/f.xml was deleted"):
        fetch(tmp_path, stored_file(tmp_path, data, gzip.compress(other, mtime=0)))
    assert list((tmp_path / "release" / "sub").iterdir()) == []


def test_the_airflow_trigger_form_offers_every_download_source():
    from citeworth.download.params import SOURCES

    tasks = (Path(__file__).resolve().parents[2] / "plugins" / "citeworth_airflow" / "tasks.py").read_text()
    [offered] = re.findall(r'enum=\[None, ([^\]]*)\]', tasks)
    assert tuple(re.findall(r'"([^"]+)"', offered)) == SOURCES
