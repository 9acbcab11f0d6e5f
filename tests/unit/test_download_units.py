"""Download building blocks: redaction, plans, arXiv manifests, release ordering, resumable fetches."""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
import re
from pathlib import Path

import pytest
from tqdm.contrib.logging import logging_redirect_tqdm

from citeworth.core.errors import StageFailed
from citeworth.download import arxiv, releases
from citeworth.download.demo import demo_registry, demo_releases, shipped_files
from citeworth.download.fetch import Fetcher
from citeworth.download.manifest import MANIFEST_NAME, Entry, fetch_log_path, read_manifest, write_manifest
from citeworth.download.params import DownloadParams
from citeworth.download.redaction import REDACTED, install_log_redaction, public_url, redact, register_secret
from citeworth.download.remote import ChecksumMismatch, DownloadError, RemoteFile
from citeworth.download.s2orc_legacy import url_list_files
from citeworth.download.transports import LocalTransport, Network, parse_content_range

PRESIGNED = "https://bucket.s3.amazonaws.com/a/b.gz?AWSAccessKeyId=AKIAXXXX&Signature=s3cr3t&Expires=1"


def test_redact_strips_presigned_queries_and_registered_secrets():
    register_secret("key-1234567890")
    text = f"GET {PRESIGNED} failed; header x-api-key: key-1234567890; '/path?X-Amz-Signature=abc' 503"
    out = redact(text)
    assert "s3cr3t" not in out and "AKIAXXXX" not in out and "abc" not in out
    assert "key-1234567890" not in out
    assert "https://bucket.s3.amazonaws.com/a/b.gz?<redacted>" in out
    assert public_url("https://user:pw@host:8443/p/q.gz?sig=1#frag") == "https://host:8443/p/q.gz"


@pytest.mark.parametrize(("text", "secrets"), [
    ("https://alice:pa55word@host.example:8443/p", ["alice", "pa55word"]),
    ("proxy bob:hunter2@proxy.local:3128 down", ["bob", "hunter2"]),
    ("next=https%3A%2F%2Fb.s3.amazonaws.com%2Fk.gz%3FX-Amz-Credential%3DAKIAQ%252F2026%26X-Amz-Signature%3Dd0d0",
     ["AKIAQ", "d0d0"]),
    ("q=a%26X-Amz-Signature%3Dfeedbead%26b", ["feedbead"]),
    ("could not fetch 127.0.0.1:9000/bucket/key.gz?sig=s3cr3t: timeout", ["s3cr3t"]),
    ("headers={'X-Amz-Security-Token': b'Fwo/G+tok==', 'Authorization': b'AWS4-HMAC-SHA256 "
     "Credential=AKIAQ/2026/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=c0ffee'}",
     ["Fwo/G+tok==", "AKIAQ", "c0ffee"]),
    ("CanonicalRequest:\nGET\n/b\nX-Amz-Security-Token=Fwo%2FG\nx-amz-security-token:Fwo/G+tok==\n", ["Fwo"]),
    ("Signature:\n3801ebd781fdeb6ab1f0ce064fa42feb", ["3801ebd7"]),
    ("<SessionToken>Fwo/G+tok==</SessionToken><SecretAccessKey>wJalr</SecretAccessKey>", ["Fwo", "wJalr"]),
    ("Authorization: Bearer eyJhbGciOi.x.y; AWS_SECRET_ACCESS_KEY=wJalr/x", ["eyJhbGciOi", "wJalr"]),
])
def test_redact_finds_credentials_in_every_shape_they_are_logged_in(text, secrets):
    out = redact(text)
    assert REDACTED in out
    assert not [secret for secret in secrets if secret in out], out


def test_redact_leaves_ordinary_text_alone():
    text = ("Is it real? Found credentials in environment variables. signature_version=None, "
            "mail me@example.org, 127.0.0.1:9000/bucket/key.gz, SignedHeaders=host;x-amz-date, "
            "a tokenizer's pad_token: [PAD], cls_token=[CLS], 'mask_token': '[MASK]'")
    assert redact(text) == text
    assert redact("hf_token: abc123 auth_token=xyz") == f"hf_token: {REDACTED} auth_token={REDACTED}"


def test_a_registered_secret_is_redacted_also_percent_encoded():
    register_secret("tok/en+value=")
    assert redact("a tok/en+value= b tok%2Fen%2Bvalue%3D c") == f"a {REDACTED} b {REDACTED} c"


def test_every_log_record_is_redacted_whichever_logger_and_handler_print_it(caplog):
    install_log_redaction()
    with caplog.at_level(logging.DEBUG), logging_redirect_tqdm():  # the handler swap a download does
        logging.getLogger("urllib3.connectionpool").debug('"GET %s HTTP/1.1" 200', "/f.gz?Signature=zz9")
        logging.getLogger("botocore.auth").debug("Signature:\n%s", "ab12cd34")
        try:
            raise OSError("Max retries exceeded with url: /k?X-Amz-Signature=ee77")
        except OSError:
            logging.getLogger("some.library").exception("failed")
    assert "/f.gz?<redacted>" in caplog.text
    assert not [s for s in ("zz9", "ab12cd34", "ee77") if s in caplog.text], caplog.text


def test_content_range_parsing():
    assert parse_content_range("bytes 100-199/200") == (100, 200)
    assert parse_content_range("bytes */200") == (None, 200)
    assert parse_content_range("bytes 0-9/*") == (0, None)
    assert parse_content_range(None) == (None, None)


DEMO_PREFIXES = (
        "github/IllDepence/unarXive/doc/",  # the sample archive + data_format.md
        "github/allenai/s2orc-doc2json/tests/s2orc/",  # the mirror holds 8 (3 + 3 + 2 releases)
        "github/allenai/s2orc/data/metadata/",
        "github/allenai/scibert/data/",  # train/dev/test of 4 classification + 3 NER tasks
        "github/titipata/pubmed_parser/data/",  # PMC JATS
        "github/kermitt2/grobid_client_python/",  # GROBID TEI
        "github/scipy/scipy-articles/scipy-1.0/",  # LaTeX: SciPy 1.0's .tex files and .bib
        "github/scolobb/sympy-paper/",  # LaTeX: SymPy
        "github/lh3/minimap2/tex/",  # LaTeX: minimap2
        "github/allenai/s2orc-doc2json/tests/latex/",  # the arXiv e-print 2004.14974
        "github/PLOS/allofplos/allofplos/starter_corpus/",  # the PLOS starter corpus (JATS)
)


@pytest.mark.parametrize(("release", "counts"), [
    ("demo-v1", [2, 8, 1, 21, 8, 2, 0, 0, 0, 0, 0]),  # the demo before the LaTeX and PLOS papers: 42 files
    ("demo-v2", [2, 8, 1, 21, 8, 2, 8, 27, 2, 1, 102]),
])
def test_demo_registry_is_the_documented_demo_set_of_each_release(release, counts):
    files = demo_registry(release)
    count = [sum(f.path.startswith(prefix) for f in files) for prefix in DEMO_PREFIXES]
    assert count == counts
    assert sum(count) == len(files)
    assert all(len(f.sha256) == 64 and f.size > 0 and f.url == f.origin for f in files)
    assert len({f.path for f in files}) == len(files)
    latex_categories = [f.path for f in shipped_files(release)]
    assert latex_categories == ([] if release == "demo-v1" else ["arxiv_latex_metadata.jsonl"])


def test_each_demo_release_holds_the_files_of_the_ones_before():
    names = [r.name for r in demo_releases()]
    assert names == ["demo-v1", "demo-v2"]
    older, newer = ({f.path for f in demo_registry(name)} for name in names)
    assert older < newer
    assert demo_registry() == demo_registry("latest") == demo_registry("demo-v2")
    with pytest.raises(StageFailed, match="releases demo-v1, demo-v2"):
        demo_registry("demo-v9")


def test_a_shipped_file_that_differs_from_its_registry_row_is_refused(monkeypatch, tmp_path):
    from citeworth.download import demo, registry

    edited = tmp_path / "demo_arxiv_metadata.jsonl"
    edited.write_bytes(demo.LATEX_METADATA.read_bytes() + b"\n")
    for table in ("demo_files.tsv", "demo_releases.tsv"):
        (tmp_path / table).write_bytes((registry.HERE / table).read_bytes())
    monkeypatch.setattr(registry, "HERE", tmp_path)
    with pytest.raises(StageFailed, match="update the registry row"):
        shipped_files("demo-v2")


def test_demo_registry_agrees_with_the_mirror_sources_list(mirror):
    with open(mirror / "SOURCES.tsv", encoding="utf-8", newline="") as handle:
        sources = {row["path"]: row for row in csv.DictReader(handle, delimiter="\t")}
    for file in demo_registry():
        row = sources[file.path]
        assert (row["origin_url"], row["sha256"], int(row["bytes"])) == (file.origin, file.sha256, file.size)


def test_url_list_keeps_paths_below_the_common_folder_and_hides_signatures():
    urls = [
        "https://h.example/20200705v1/full/metadata/metadata_0.jsonl.gz?Signature=a1",
        "https://h.example/20200705v1/full/pdf_parses/pdf_parses_0.jsonl.gz?Signature=b2",
    ]
    files = url_list_files(urls)
    assert [f.path for f in files] == ["metadata/metadata_0.jsonl.gz", "pdf_parses/pdf_parses_0.jsonl.gz"]
    assert all("Signature" not in f.origin and "Signature" in f.url for f in files)
    assert "Signature" not in repr(files)
    assert [f.path for f in url_list_files(urls[:1])] == ["metadata_0.jsonl.gz"]


ARXIV_MANIFEST = b"""<?xml version='1.0' standalone='yes'?>
<arXivSRC>
  <file><content_md5sum>x</content_md5sum><filename>src/arXiv_src_9912_001.tar</filename>
    <md5sum>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA</md5sum><num_items>10</num_items><seq_num>1</seq_num>
    <size>100</size><yymm>9912</yymm></file>
  <file><filename>src/arXiv_src_0001_001.tar</filename><md5sum>bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</md5sum>
    <size>200</size><yymm>0001</yymm></file>
  <file><filename>src/arXiv_src_0001_002.tar</filename><md5sum>cccccccccccccccccccccccccccccccc</md5sum>
    <size>300</size><yymm>0001</yymm></file>
  <file><filename>src/arXiv_src_2212_001.tar</filename><md5sum>dddddddddddddddddddddddddddddddd</md5sum>
    <size>400</size><yymm>2212</yymm></file>
</arXivSRC>"""


def test_arxiv_manifest_months_order_across_the_century():
    chunks = arxiv.parse_manifest(ARXIV_MANIFEST)
    assert chunks[0].md5 == "a" * 32 and chunks[0].size == 100
    assert arxiv.manifest_months(chunks) == ["9912", "0001", "2212"]
    picked = arxiv.select_chunks(chunks, "9912", "0001")
    assert [c.filename for c in picked] == [
        "src/arXiv_src_9912_001.tar", "src/arXiv_src_0001_001.tar", "src/arXiv_src_0001_002.tar"]
    assert arxiv.normalize_month("2022-12") == "2212" == arxiv.normalize_month("2212")
    with pytest.raises(StageFailed, match="neither YYMM nor YYYY-MM"):
        arxiv.normalize_month("Dec 2022")
    with pytest.raises(StageFailed, match="no month 13"):
        arxiv.normalize_month("2213")


def test_the_demo_calendar_answers_the_sensor_and_the_backfill_by_date():
    params = DownloadParams(source="demo", release="latest", out_dir="raw")
    assert releases.available_releases(params) == ["demo-v1", "demo-v2"]
    assert releases.newer_release_available("demo", None, params) == "demo-v2"
    assert releases.newer_release_available("demo", "demo-v1", params) == "demo-v2"
    assert releases.newer_release_available("demo", "demo-v2", params) is None
    assert releases.releases_after("demo", "demo-v1", params) == ["demo-v2"]
    assert releases.releases_after("demo", "demo-v0", params) == ["demo-v1", "demo-v2"]
    # a weekly backfill from 2024-01-01 to 2024-03-01 meets both releases, each from its date on
    days = ["2024-01-01", "2024-01-29", "2024-01-31", "2024-02-01", "2024-03-01"]
    assert [releases.latest_release("demo", day, params=params) for day in days] == \
        ["demo-v1", "demo-v1", "demo-v1", "demo-v2", "demo-v2"]
    with pytest.raises(StageFailed, match="no release by 2023-12-31"):
        releases.latest_release("demo", "2023-12-31", params=params)


def test_a_fixed_snapshot_answers_the_sensor_without_network():
    legacy = DownloadParams(source="s2orc_legacy", release="20200705v1", out_dir="raw")
    assert releases.newer_release_available("s2orc_legacy", "20200705v1", legacy) is None


def test_release_ordering_rules():
    assert releases.is_newer("s2_api", "2024-01-02", "2023-12-31")
    assert not releases.is_newer("s2_api", "2023-12-31", "2023-12-31")
    assert releases.is_newer("arxiv_s3", "0001", "9912")
    assert releases.is_newer("arxiv_s3", "2301", "2022-12")
    assert releases._published_by("arxiv_s3", "2212", "2022-12-31")
    assert not releases._published_by("arxiv_s3", "2301", "2022-12-31")
    assert releases._published_by("s2_api", "2023-03-28", "2023-03-28")


# ---- the resumable, verified fetch, read from a local folder (the mirror transport) ----

def local_file(tmp_path: Path, data: bytes, **expect) -> RemoteFile:
    source = tmp_path / "mirror" / "f.bin"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    return RemoteFile(path="sub/f.bin", origin="https://example.org/f.bin", url=str(source), **expect)


def fetcher(tmp_path: Path, previous: dict[str, Entry] | None = None) -> Fetcher:
    return Fetcher(tmp_path / "release", lambda url: LocalTransport(), Network(retries=2, backoff=0.01),
                   previous or {})


def test_a_partial_file_is_resumed_not_refetched(tmp_path):
    data = os.urandom(3 * 1024 * 1024 + 17)
    file = local_file(tmp_path, data, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    part = tmp_path / "release" / "sub" / "f.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(data[:1_000_000])
    result = fetcher(tmp_path).fetch_all([file], desc="t")
    assert (tmp_path / "release" / "sub" / "f.bin").read_bytes() == data
    assert not part.exists()
    assert result.bytes_fetched == len(data) - 1_000_000
    assert result.entries[0].sha256 == file.sha256 and result.fetched == 1


def test_a_checksum_mismatch_deletes_the_partial_file_and_fails_clearly(tmp_path):
    data = b"the real bytes" * 100
    file = local_file(tmp_path, data, size=len(data), sha256="0" * 64)
    with pytest.raises(ChecksumMismatch, match=r"https://example.org/f.bin: sha256 \w+ does not match the "
                       r"expected 0{64}; the partial download of sub/f.bin was deleted"):
        fetcher(tmp_path).fetch_all([file], desc="t")
    assert list((tmp_path / "release" / "sub").iterdir()) == []


def test_present_files_are_kept_and_only_transfers_reach_the_fetch_log(tmp_path):
    data = b"abc" * 1000
    file = local_file(tmp_path, data, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    first = fetcher(tmp_path).fetch_all([file], desc="t").entries[0]
    assert first == Entry(file=file.path, size=len(data), sha256=file.sha256, origin=file.origin)
    again = fetcher(tmp_path, {file.path: first}).fetch_all([file], desc="t")
    assert (again.fetched, again.skipped, again.bytes_fetched) == (0, 1, 0)
    assert again.entries[0] == first
    (tmp_path / "release" / "sub" / "f.bin").write_bytes(b"tampered")
    healed = fetcher(tmp_path, {file.path: first}).fetch_all([file], desc="t")
    assert healed.fetched == 1
    assert (tmp_path / "release" / "sub" / "f.bin").read_bytes() == data
    assert healed.entries[0] == first  # the same bytes again: the manifest does not change
    # When is recorded outside the release folder (the DVC output): one line per transfer.
    log = [json.loads(line) for line in fetch_log_path(tmp_path / "release").read_text().splitlines()]
    assert fetch_log_path(tmp_path / "release") == tmp_path / "release.fetch-log.jsonl"
    assert [(e["file"], e["sha256"]) for e in log] == [(file.path, file.sha256)] * 2
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e["fetched_at"]) for e in log)


def test_an_older_manifest_with_fetch_times_is_read_and_rewritten_without_them(tmp_path):
    entry = {"file": "a.gz", "size": 3, "sha256": "0" * 64, "origin": "https://x/a.gz",
             "fetched_at": "2020-01-01T00:00:00Z"}
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"source": "s", "release": "r", "files": [entry]}))
    read = read_manifest(tmp_path)
    write_manifest(tmp_path, "s", "r", list(read.values()))
    assert "fetched_at" not in (tmp_path / MANIFEST_NAME).read_text()


@pytest.mark.parametrize("path", ["../escape.gz", "a/../../escape.gz", "/etc/passwd", "", "a\\..\\b"])
def test_remote_names_cannot_leave_the_release_folder(path):
    with pytest.raises(DownloadError, match="outside the release folder"):
        RemoteFile(path=path, origin="s3://bucket/key", url="s3://bucket/key")


def test_without_verify_existing_a_present_file_is_trusted_by_size_and_manifest(tmp_path):
    data = b"xyz" * 1000
    file = local_file(tmp_path, data, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    entry = fetcher(tmp_path).fetch_all([file], desc="t").entries[0]
    (tmp_path / "release" / "sub" / "f.bin").write_bytes(b"X" * len(data))  # same size, other bytes
    trusting = Fetcher(tmp_path / "release", lambda url: LocalTransport(), Network(), {file.path: entry},
                       verify_existing=False)
    assert trusting.fetch_all([file], desc="t").fetched == 0  # the documented trade-off: no re-hash
    assert fetcher(tmp_path, {file.path: entry}).fetch_all([file], desc="t").fetched == 1
