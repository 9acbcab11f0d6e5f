"""The download stage over HTTP against a real loopback server: the S2 datasets API (documented
responses, presigned file URLs, 429s, a connection dropped mid-file), the demo via an HTTP mirror and
the Europe PMC source via the same mirror, which stores its files as ``.gz``."""

from __future__ import annotations

import json
import logging
import random
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from citeworth.download import releases
from citeworth.download.demo import demo_registry
from citeworth.download.params import DownloadParams, S2ApiParams
from citeworth.download.registry import REGISTRIES
from citeworth.download.remote import DownloadError, select
from citeworth.download.stage import download

API_KEY = "s2-test-key-5b1e9c"
SIGNATURE = "X-Amz-Signature=f00dfeed"
RELEASES = ["2023-01-03", "2023-01-10", "2023-01-17"]


def blob(name: str, size: int) -> bytes:
    return random.Random(name).randbytes(size)


# Files of each release's datasets, and of the two weekly diffs of s2orc.
FILES = {
    "/staging/2023-01-17/s2orc/part_0.jsonl.gz": blob("s2orc0", 3 * 1024 * 1024 + 11),
    "/staging/2023-01-17/s2orc/part_1.jsonl.gz": blob("s2orc1", 200_000),
    "/staging/2023-01-17/papers/part_0.jsonl.gz": blob("papers0", 150_000),
    "/diffs/2023-01-03_2023-01-10/s2orc/upd_0.jsonl.gz": blob("u1", 5000),
    "/diffs/2023-01-03_2023-01-10/s2orc/del_0.jsonl.gz": blob("d1", 300),
    "/diffs/2023-01-10_2023-01-17/s2orc/upd_0.jsonl.gz": blob("u2", 7000),
}


class FakeS2:
    """Serves the datasets API from fixtures, files with Range support, and injected faults."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_429: dict[str, int] = {}  # path -> how many 429s before success
        self.drop_after: dict[str, int] = {}  # path -> bytes sent before the connection is cut (once)
        self.mirror: Path | None = None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def file_gets(self) -> list[dict]:
        return [r for r in self.requests if not r["path"].startswith("/datasets/")]

    def api(self, path: str, key: str | None):
        signed = f"?{SIGNATURE}&X-Amz-Credential=AKIATEST"
        if path == "/datasets/v1/release/":
            return 200, RELEASES
        if path == "/datasets/v1/release/latest":
            return 200, {"release_id": RELEASES[-1], "README": "terms", "datasets": [{"name": "s2orc"}]}
        if match := re.fullmatch(r"/datasets/v1/release/([^/]+)/dataset/([^/]+)", path):
            if key != API_KEY:
                return 401, {"message": "Unauthorized"}
            prefix = f"/staging/{match[1]}/{match[2]}/"
            files = [self.base + p + signed for p in sorted(FILES) if p.startswith(prefix)]
            if not files:
                return 404, {"message": "no such dataset"}
            return 200, {"name": match[2], "description": "", "README": "", "files": files}
        if match := re.fullmatch(r"/datasets/v1/diffs/([^/]+)/to/([^/]+)/([^/]+)", path):
            if key != API_KEY:
                return 401, {"message": "Unauthorized"}
            steps = list(zip(RELEASES, RELEASES[1:], strict=False))
            steps = [s for s in steps if match[1] <= s[0] and s[1] <= match[2]]
            diffs = [{
                "from_release": a, "to_release": b,
                "update_files": [self.base + f"/diffs/{a}_{b}/{match[3]}/upd_0.jsonl.gz" + signed],
                "delete_files": [self.base + p + signed for p in sorted(FILES)
                                 if p.startswith(f"/diffs/{a}_{b}/{match[3]}/del_")],
            } for a, b in steps]
            return 200, {"dataset": match[3], "start_release": match[1], "end_release": match[2],
                         "diffs": diffs}
        return 404, {"message": "not found"}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):
                path, _, query = self.path.partition("?")
                key = self.headers.get("x-api-key")
                fake.requests.append({"path": path, "range": self.headers.get("Range"),
                                      "key": key, "query": query})
                if fake.fail_429.get(path, 0) > 0:
                    fake.fail_429[path] -= 1
                    return self._send(429, b'{"message": "Too Many Requests"}')
                if path.startswith("/datasets/"):
                    status, body = fake.api(path, key)
                    return self._send(status, json.dumps(body).encode())
                if path.startswith("/mirror/"):
                    local = fake.mirror / unquote(path[len("/mirror/"):])
                    data = local.read_bytes() if local.is_file() else None
                elif SIGNATURE not in query:  # like S3 without a valid presigned signature
                    return self._send(403, b"AccessDenied")
                else:
                    data = FILES.get(path)
                if data is None:
                    return self._send(404, b"NoSuchKey")
                self._send_range(path, data)

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _send_range(self, path: str, data: bytes) -> None:
                start = 0
                if match := re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or ""):
                    start = int(match[1])
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        return self.end_headers()
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                cut = fake.drop_after.pop(path, None)
                if cut is not None:  # a transfer cut mid-file: send part of the body, then hang up
                    self.wfile.write(data[start:start + cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data[start:])

        return Handler


@pytest.fixture(scope="module")
def s2():
    fake = FakeS2()
    fake.thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture(autouse=True)
def reset(s2, monkeypatch):
    s2.requests.clear()
    s2.fail_429.clear()
    s2.drop_after.clear()
    monkeypatch.setenv("S2_API_KEY", API_KEY)
    monkeypatch.delenv("CITEWORTH_MIRROR", raising=False)
    monkeypatch.setenv("CITEWORTH_WORKERS", "2")  # files fetched at once


def resumed_from(s2: FakeS2, path: str) -> list[int]:
    """The byte offset each GET of ``path`` asked for (0 for a whole-file GET)."""
    ranges = [r["range"] for r in s2.requests if r["path"] == path]
    return [int(re.fullmatch(r"bytes=(\d+)-", r)[1]) if r else 0 for r in ranges]


def s2_params(s2: FakeS2, out_dir: Path, **changes) -> DownloadParams:
    api = S2ApiParams(base_url=f"{s2.base}/datasets/v1", datasets=["s2orc", "papers"],
                      diff_from=changes.pop("diff_from", None))
    return DownloadParams(source="s2_api", release=changes.pop("release", "latest"), out_dir=out_dir,
                          retries=4, backoff=0.01, timeout=10, s2_api=api, **changes)


def test_latest_release_with_429s_and_a_dropped_connection_then_a_noop_rerun(s2, tmp_path, caplog):
    big = "/staging/2023-01-17/s2orc/part_0.jsonl.gz"
    s2.fail_429 = {"/datasets/v1/release/latest": 2, "/staging/2023-01-17/papers/part_0.jsonl.gz": 1}
    s2.drop_after = {big: 1_000_000}
    with caplog.at_level(logging.DEBUG):
        summary = download(s2_params(s2, tmp_path))

    release_dir = tmp_path / "s2_api" / "2023-01-17"
    assert summary["release"] == "2023-01-17" and summary["fetched"] == 3
    for path, data in FILES.items():
        if path.startswith("/staging/"):
            dataset, name = path.split("/")[-2:]
            assert (release_dir / dataset / name).read_bytes() == data
    assert not list(release_dir.rglob("*.part"))
    # the 429s were retried, and the cut transfer resumed where it stopped
    assert sum(r["path"] == "/datasets/v1/release/latest" for r in s2.requests) == 3
    assert resumed_from(s2, big) == [0, 983040]  # the last whole 64 KiB chunk before the cut
    assert all(r["key"] == API_KEY for r in s2.requests if "/dataset/" in r["path"])
    assert all(r["key"] is None for r in s2.file_gets())  # the key goes to the API only

    manifest_text = (release_dir / "MANIFEST.json").read_text()
    manifest = json.loads(manifest_text)
    assert [f["file"] for f in manifest["files"]] == [
        "papers/part_0.jsonl.gz", "s2orc/part_0.jsonl.gz", "s2orc/part_1.jsonl.gz"]
    assert manifest["files"][1]["origin"] == s2.base + big
    for secret in (API_KEY, "f00dfeed", "AKIATEST"):
        assert secret not in manifest_text and secret not in caplog.text and secret not in json.dumps(summary)

    s2.requests.clear()
    again = download(s2_params(s2, tmp_path))
    assert (again["fetched"], again["skipped"], again["bytes_fetched"]) == (0, 3, 0)
    assert (release_dir / "MANIFEST.json").read_text() == manifest_text
    assert s2.file_gets() == []


def test_incremental_diffs_between_two_releases(s2, tmp_path):
    summary = download(s2_params(s2, tmp_path, release="2023-01-17", diff_from="2023-01-03",
                                 include=["s2orc/*"]))
    base = tmp_path / "s2_api" / "2023-01-17" / "s2orc" / "diffs"
    assert summary["fetched"] == 3
    assert (base / "2023-01-03_to_2023-01-10" / "update_files" / "upd_0.jsonl.gz").read_bytes() == \
        FILES["/diffs/2023-01-03_2023-01-10/s2orc/upd_0.jsonl.gz"]
    assert (base / "2023-01-03_to_2023-01-10" / "delete_files" / "del_0.jsonl.gz").exists()
    assert (base / "2023-01-10_to_2023-01-17" / "update_files" / "upd_0.jsonl.gz").exists()


def test_without_an_api_key_the_error_says_what_to_set(s2, tmp_path, monkeypatch):
    monkeypatch.delenv("S2_API_KEY")
    with pytest.raises(DownloadError, match="needs an API key: set S2_API_KEY"):
        download(s2_params(s2, tmp_path))


def test_a_refused_key_is_reported_without_the_key(s2, tmp_path, monkeypatch):
    monkeypatch.setenv("S2_API_KEY", "wrong-key-77aa")
    with pytest.raises(DownloadError, match="the API key was refused") as failure:
        download(s2_params(s2, tmp_path))
    assert "wrong-key-77aa" not in str(failure.value)


def test_persistent_429_gives_up_with_a_clear_error(s2, tmp_path):
    s2.fail_429 = {"/datasets/v1/release/latest": 100}
    with pytest.raises(DownloadError, match=r"release/latest.*too many 429"):
        download(s2_params(s2, tmp_path))


def test_release_questions_for_the_sensor_and_the_backfill(s2, tmp_path):
    params = s2_params(s2, tmp_path)
    assert releases.available_releases(params) == RELEASES
    assert releases.newer_release_available("s2_api", "2023-01-10", params) == "2023-01-17"
    assert releases.newer_release_available("s2_api", "2023-01-17", params) is None
    assert releases.releases_after("s2_api", "2023-01-03", params) == RELEASES[1:]
    assert releases.latest_release("s2_api", "2023-01-12", params=params) == "2023-01-10"


def test_demo_from_an_http_mirror_resumes_and_verifies(s2, mirror, tmp_path):
    s2.mirror = mirror
    archive = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
    s2.drop_after = {f"/mirror/{archive}": 500_000}
    summary = download(DownloadParams(source="demo", release="latest", out_dir=tmp_path,
                                      mirror=f"{s2.base}/mirror", backoff=0.01))
    assert summary["fetched"] == len(demo_registry())
    assert resumed_from(s2, f"/mirror/{archive}") == [0, 458752]
    unpacked = tmp_path / "demo" / "demo-v2" / "github/IllDepence/unarXive/doc/unarXive_data_sample"
    assert (unpacked / "arXiv_src_2212_086.jsonl").stat().st_size == 10741088


def test_a_gzipped_mirror_copy_cut_mid_file_is_fetched_again_and_verified(s2, mirror, tmp_path):
    include = ["github/0AlphaZero0/*/Pipeline Dataset Creation/articlesOA/PMC3[0-3]*.xml"]  # spaces in paths
    files = select(REGISTRIES["europepmc"].remote_files(), include)
    plain = f"/mirror/{quote(files[0].path)}"  # as requested: percent-encoded
    cut = f"{plain}.gz"
    s2.mirror, s2.drop_after = mirror, {cut: 5_000}
    summary = download(DownloadParams(source="europepmc", release="latest", out_dir=tmp_path, include=include,
                                      mirror=f"{s2.base}/mirror", backoff=0.01))
    assert summary["fetched"] == len(files) == 10
    assert resumed_from(s2, cut) == [0, 0]  # a gzip stream is read again from its start
    assert [r["path"] for r in s2.requests].count(plain) == 2  # each try asks for the plain file first: 404
    manifest = json.loads((tmp_path / "europepmc" / "oa-cc-v1" / "MANIFEST.json").read_text())
    assert [e["sha256"] for e in manifest["files"]] == [f.sha256 for f in sorted(files, key=lambda f: f.path)]
