"""The S3 sources against a real S3 API server on loopback: ``moto_server`` over HTTP, reached
through a small fault-injecting proxy (503 SlowDown, a transfer cut mid-file).

Legacy S2ORC shards come from a bucket listing; arXiv tars from a requester-pays bucket chosen by
the month range of its manifest. The requester-pays header is checked in moto's own request recording.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import boto3
import pytest
import requests
from botocore.config import Config

from citeworth.download import releases
from citeworth.download.params import ArxivParams, DownloadParams, LegacyS2orcParams, S3Params
from citeworth.download.remote import ChecksumMismatch
from citeworth.download.stage import download

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}
SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")


class FaultProxy:
    """Forwards every request to moto; can answer 503 SlowDown or cut a body short, once per path."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.requests: list[dict] = []
        self.slow_down: dict[str, int] = {}
        self.cut_after: dict[str, int] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def gets(self, path: str) -> list[dict]:
        return [r for r in self.requests if r["method"] == "GET" and r["path"] == path]

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._forward("GET")

            def do_HEAD(self):
                self._forward("HEAD")

            def _forward(self, method: str) -> None:
                path = self.path.partition("?")[0]
                proxy.requests.append({"method": method, "path": path, "range": self.headers.get("Range")})
                if proxy.slow_down.get(path, 0) > 0:
                    proxy.slow_down[path] -= 1
                    return self._reply(503, {"Content-Type": "application/xml"}, SLOW_DOWN)
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                upstream.request(method, self.path, headers=dict(self.headers))
                answer = upstream.getresponse()
                body = answer.read()
                headers = {k: v for k, v in answer.getheaders() if k.lower() not in HOP_BY_HOP}
                upstream.close()
                self._reply(answer.status, headers, body, proxy.cut_after.pop(path, None))

            def _reply(self, status: int, headers: dict, body: bytes, cut: int | None = None) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if cut is None:
                    self.wfile.write(body)
                    return
                self.wfile.write(body[:cut])  # the transfer is cut: part of the body, then hang up
                self.wfile.flush()
                self.close_connection = True

        return Handler


@pytest.fixture
def proxy(moto):
    fault_proxy = FaultProxy(moto["port"])
    yield fault_proxy
    fault_proxy.server.shutdown()
    fault_proxy.server.server_close()


@pytest.fixture
def s3(moto):
    return boto3.client("s3", endpoint_url=moto["endpoint"], region_name="us-east-1")


def blob(name: str, size: int) -> bytes:
    return random.Random(name).randbytes(size)


# ---- legacy S2ORC 20200705 shards from a bucket prefix ----

SHARDS = {
    "metadata/metadata_0.jsonl.gz": blob("m0", 40_000),
    "pdf_parses/pdf_parses_0.jsonl.gz": blob("p0", 2 * 1024 * 1024 + 5),
}


def test_legacy_shards_from_a_prefix_with_throttling_and_a_cut_transfer(s3, proxy, tmp_path, monkeypatch):
    s3.create_bucket(Bucket="s2orc-legacy")
    for key, data in SHARDS.items():
        s3.put_object(Bucket="s2orc-legacy", Key=f"20200705v1/full/{key}", Body=data)
    s3.put_object(Bucket="s2orc-legacy", Key="20200705v1/full/", Body=b"")  # a folder marker
    s3.put_object(Bucket="s2orc-legacy", Key="20200705v1/sample/other.gz", Body=b"x")  # outside the prefix
    metadata = "/s2orc-legacy/20200705v1/full/metadata/metadata_0.jsonl.gz"
    parses = "/s2orc-legacy/20200705v1/full/pdf_parses/pdf_parses_0.jsonl.gz"
    proxy.slow_down = {metadata: 1}
    proxy.cut_after = {parses: 1_000_000}
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)  # the endpoint from the environment, as in production

    params = DownloadParams(source="s2orc_legacy", release="20200705v1", out_dir=tmp_path, backoff=0.01,
                            s2orc_legacy=LegacyS2orcParams(s3_uri="s3://s2orc-legacy/20200705v1/full"))
    summary = download(params)

    release_dir = tmp_path / "s2orc_legacy" / "20200705v1"
    assert summary["fetched"] == 2
    for key, data in SHARDS.items():
        assert (release_dir / key).read_bytes() == data
    assert [r["range"] for r in proxy.gets(metadata)] == [None, None]  # 503 SlowDown, then the retry
    ranges = [r["range"] for r in proxy.gets(parses)]
    assert ranges[0] is None and ranges[1].startswith("bytes=") and 0 < int(ranges[1][6:-1]) <= 1_000_000
    manifest = json.loads((release_dir / "MANIFEST.json").read_text())
    assert [(f["file"], f["origin"], f["sha256"]) for f in manifest["files"]] == [
        (key, f"s3://s2orc-legacy/20200705v1/full/{key}", hashlib.sha256(data).hexdigest())
        for key, data in sorted(SHARDS.items())]

    proxy.requests.clear()
    again = download(params)
    assert (again["fetched"], again["skipped"]) == (0, 2)
    assert proxy.gets(metadata) == proxy.gets(parses) == []  # only the listing went out


# ---- arXiv bulk sources from a requester-pays bucket ----

TARS = {
    ("2211", 1): blob("t2211", 30_000),
    ("2212", 1): blob("t2212a", 50_000),
    ("2212", 2): blob("t2212b", 20_000),
    ("2301", 1): blob("t2301", 10_000),
}


def arxiv_manifest(wrong_md5_for: str | None = None) -> bytes:
    entries = []
    for (yymm, seq), data in TARS.items():
        name = f"src/arXiv_src_{yymm}_{seq:03d}.tar"
        md5 = "0" * 32 if name == wrong_md5_for else hashlib.md5(data).hexdigest()
        entries.append(f"<file><content_md5sum>x</content_md5sum><filename>{name}</filename>"
                       f"<md5sum>{md5}</md5sum><num_items>3</num_items><seq_num>{seq}</seq_num>"
                       f"<size>{len(data)}</size><yymm>{yymm}</yymm></file>")
    return f"<?xml version='1.0' standalone='yes'?>\n<arXivSRC>{''.join(entries)}</arXivSRC>".encode()


@pytest.fixture
def arxiv_bucket(s3):
    bucket = f"arxiv-{random.randrange(10**9)}"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_request_payment(Bucket=bucket, RequestPaymentConfiguration={"Payer": "Requester"})
    for (yymm, seq), data in TARS.items():
        s3.put_object(Bucket=bucket, Key=f"src/arXiv_src_{yymm}_{seq:03d}.tar", Body=data)
    s3.put_object(Bucket=bucket, Key="src/arXiv_src_manifest.xml", Body=arxiv_manifest())
    return bucket


def arxiv_params(bucket: str, endpoint: str, out_dir: Path, **arxiv) -> DownloadParams:
    return DownloadParams(source="arxiv_s3", release=arxiv.pop("release", "2212"), out_dir=out_dir,
                          backoff=0.01, s3=S3Params(endpoint_url=endpoint),
                          arxiv=ArxivParams(bucket=bucket, **arxiv))


def recorded_gets(moto, bucket: str) -> list[dict]:
    lines = moto["recording"].read_text().splitlines() if moto["recording"].exists() else []
    entries = [json.loads(line) for line in lines]
    return [e for e in entries if e["method"] == "GET" and f"/{bucket}/" in e["url"]]


def test_arxiv_month_range_with_requester_pays_reaching_the_server(moto, arxiv_bucket, proxy, tmp_path):
    requests.post(f"{moto['endpoint']}/moto-api/recorder/reset-recording", timeout=5)
    requests.post(f"{moto['endpoint']}/moto-api/recorder/start-recording", timeout=5)
    try:
        summary = download(arxiv_params(arxiv_bucket, proxy.url, tmp_path))
    finally:
        requests.post(f"{moto['endpoint']}/moto-api/recorder/stop-recording", timeout=5)

    release_dir = tmp_path / "arxiv_s3" / "2212"
    assert summary["release"] == "2212" and summary["fetched"] == 2
    assert sorted(p.name for p in (release_dir / "src").iterdir()) == [
        "arXiv_src_2212_001.tar", "arXiv_src_2212_002.tar", "arXiv_src_manifest.xml"]
    assert (release_dir / "src/arXiv_src_2212_002.tar").read_bytes() == TARS[("2212", 2)]
    manifest = json.loads((release_dir / "MANIFEST.json").read_text())
    assert [f["file"] for f in manifest["files"]] == [
        "src/arXiv_src_2212_001.tar", "src/arXiv_src_2212_002.tar", "src/arXiv_src_manifest.xml"]

    gets = recorded_gets(moto, arxiv_bucket)
    assert len(gets) == 3  # the manifest and two tars
    for entry in gets:
        headers = {k.lower(): v for k, v in entry["headers"].items()}
        assert headers.get("x-amz-request-payer") == "requester", entry["url"]


def test_arxiv_latest_and_an_explicit_month_range(arxiv_bucket, proxy, tmp_path):
    latest = download(arxiv_params(arxiv_bucket, proxy.url, tmp_path, release="latest"))
    assert latest["release"] == "2301" and latest["fetched"] == 1
    ranged = download(arxiv_params(arxiv_bucket, proxy.url, tmp_path, release="2023-01", month_from="2211"))
    assert ranged["release"] == "2301" and (ranged["fetched"], ranged["skipped"]) == (3, 1)


def test_arxiv_checksum_mismatch_fails_and_leaves_no_partial_file(s3, arxiv_bucket, proxy, tmp_path):
    bad = "src/arXiv_src_2212_001.tar"
    s3.put_object(Bucket=arxiv_bucket, Key="src/arXiv_src_manifest.xml",
                  Body=arxiv_manifest(wrong_md5_for=bad))
    with pytest.raises(ChecksumMismatch, match=rf"s3://{arxiv_bucket}/{bad}: md5 \w+ does not match the "
                       rf"expected 0{{32}}; the partial download of {bad} was deleted"):
        download(arxiv_params(arxiv_bucket, proxy.url, tmp_path))
    src = tmp_path / "arxiv_s3" / "2212" / "src"
    assert not (src / "arXiv_src_2212_001.tar").exists()
    assert not (src / "arXiv_src_2212_001.tar.part").exists()  # (002 may keep a .part: it was cancelled)
    assert not (tmp_path / "arxiv_s3" / "2212" / "MANIFEST.json").exists()


def test_arxiv_release_questions_for_the_sensor(arxiv_bucket, proxy, tmp_path):
    params = arxiv_params(arxiv_bucket, proxy.url, tmp_path)
    assert releases.available_releases(params) == ["2211", "2212", "2301"]
    assert releases.newer_release_available("arxiv_s3", "2212", params) == "2301"
    assert releases.newer_release_available("arxiv_s3", "2023-01", params) is None
    assert releases.latest_release("arxiv_s3", "2022-12-15", params=params) == "2212"


# ---- no secret in a DEBUG run's logs or files ----

SESSION = {"AWS_ACCESS_KEY_ID": "AKIASECRETTEST0KEYID",
           "AWS_SECRET_ACCESS_KEY": "wJalr/Secret+Access=Key0EXAMPLE",
           "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEBc/Session+Token=Value0xyz//ABC+def=="}


def test_a_debug_download_signed_with_a_session_token_logs_and_writes_no_secret(moto, s3, tmp_path):
    """``citeworth -v run download`` over the S3 API and over presigned URLs (both signed with a
    session token), as a user runs it: botocore and urllib3 log at DEBUG; no secret comes out."""
    bucket = "secret-shards"
    s3.create_bucket(Bucket=bucket)
    for key, data in SHARDS.items():
        s3.put_object(Bucket=bucket, Key=f"v1/{key}", Body=data[:5000])
    credentials = {"aws_access_key_id": SESSION["AWS_ACCESS_KEY_ID"],
                   "aws_secret_access_key": SESSION["AWS_SECRET_ACCESS_KEY"],
                   "aws_session_token": SESSION["AWS_SESSION_TOKEN"]}
    # One URL signed the SigV4 way (X-Amz-Signature=hex), one the SigV2 way (Signature=base64, encoded).
    signers = [boto3.client("s3", endpoint_url=moto["endpoint"], region_name="us-east-1",
                            config=Config(signature_version=version), **credentials)
               for version in ("s3v4", "s3")]
    urls = [signer.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": f"v1/{key}"})
            for signer, key in zip(signers, SHARDS, strict=True)]
    urls_file = tmp_path / "urls.txt"  # an input, outside the project whose files are searched
    urls_file.write_text("\n".join(urls) + "\n")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "params.yaml", project / "params.yaml")
    env = {**os.environ, **SESSION, "AWS_ENDPOINT_URL": moto["endpoint"], "AWS_DEFAULT_REGION": "us-east-1"}
    env.pop("AWS_PROFILE", None)
    logs = ""
    for release, where in (("via-api", f"s2orc_legacy.s3_uri=s3://{bucket}/v1"),
                           ("presigned", f"s2orc_legacy.urls_file={urls_file}")):
        done = subprocess.run([sys.executable, "-m", "citeworth.cli", "-v", "run", "download", "-S",
                               "source=s2orc_legacy", "-S", f"release={release}", "-S", where],
                              cwd=project, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        logs += done.stdout + done.stderr
    assert "botocore.endpoint" in logs and "urllib3.connectionpool" in logs  # DEBUG really ran
    assert len(list((project / "raw" / "s2orc_legacy").rglob("*.jsonl.gz"))) == 4

    signatures = [value for url in urls for name, [value] in parse_qs(urlsplit(url).query).items()
                  if name in ("X-Amz-Signature", "Signature")]
    assert len(signatures) == 2
    secrets = [*SESSION.values(), *signatures]
    secrets += [quote(secret, safe="") for secret in secrets]
    written = {path: path.read_text(errors="replace") for path in project.rglob("*")
               if path.is_file() and not path.name.endswith(".gz")}
    for secret in secrets:
        assert secret not in logs, f"{secret} in the logs"
        assert not [path for path, text in written.items() if secret in text], f"{secret} in a file"
    # The signatures botocore computes per request (Authorization header, its "Signature:" line).
    assert not re.findall(r"Signature\W{0,4}[0-9a-f]{64}", logs)
