"""Read a remote file from a byte offset: HTTP(S) with Range, S3 ranged GETs, or a local mirror copy.

Retries of a single request (429/5xx, throttling, refused connections) live in the libraries:
urllib3 ``Retry`` on the requests session, botocore's ``standard`` retry mode. A transfer cut in the
middle of a body is retried one level up (``fetch.py``, tenacity), resuming from the ``.part`` file.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from citeworth.download.redaction import install_log_redaction, register_secret
from citeworth.download.remote import CHUNK, Body, RemoteFile

RETRY_STATUSES = (429, 500, 502, 503, 504)
# Network reads are small so that a connection cut mid-body loses little: a chunk is written to the
# .part file only once it has fully arrived.
NET_CHUNK = 64 * 1024
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-\d+|\*)/(\d+|\*)")


@dataclass(frozen=True)
class Network:
    """How hard to try: attempts per request and per file, backoff base (seconds), socket timeout."""

    retries: int = 5
    backoff: float = 1.0
    timeout: float = 60.0
    workers: int = 4


def http_session(net: Network) -> requests.Session:
    """A session that retries 429/5xx and connection errors with exponential backoff and jitter."""
    install_log_redaction()
    retry = Retry(
        total=net.retries,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=frozenset({"GET", "HEAD"}),
        backoff_factor=net.backoff,
        backoff_jitter=net.backoff,
        backoff_max=60,
        respect_retry_after_header=True,
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry, pool_maxsize=max(net.workers, 4))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def parse_content_range(value: str | None) -> tuple[int | None, int | None]:
    """``(start, total)`` from ``bytes 100-199/200`` or ``bytes */200``; None where unknown."""
    match = _CONTENT_RANGE.fullmatch((value or "").strip())
    if not match:
        return None, None
    start, total = match.groups()
    return (int(start) if start else None), (int(total) if total != "*" else None)


class HttpTransport:
    def __init__(self, session: requests.Session, timeout: float) -> None:
        self.session = session
        self.timeout = timeout

    @contextlib.contextmanager
    def open(self, file: RemoteFile, offset: int) -> Iterator[Body]:
        # identity: a gzip-encoded response would make Range offsets and checksums meaningless.
        headers = {"Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        with self.session.get(file.url, headers=headers, stream=True, timeout=self.timeout) as response:
            yield self._body(response, offset)

    @staticmethod
    def _body(response: requests.Response, offset: int) -> Body:
        if response.status_code == 416:  # nothing after offset: the .part may already be whole
            _, total = parse_content_range(response.headers.get("Content-Range"))
            return Body(offset, total, iter(()))
        response.raise_for_status()
        if response.status_code == 206:
            start, total = parse_content_range(response.headers.get("Content-Range"))
            return Body(start or 0, total, response.iter_content(NET_CHUNK))
        length = response.headers.get("Content-Length")
        return Body(0, int(length) if length else None, response.iter_content(NET_CHUNK))


def split_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> ``(bucket, key)``."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"not an s3:// URL: {url!r}")
    return parts.netloc, parts.path.lstrip("/")


class S3Transport:
    def __init__(self, client, requester_pays: bool = False) -> None:
        self.client = client
        self.extra = {"RequestPayer": "requester"} if requester_pays else {}

    @contextlib.contextmanager
    def open(self, file: RemoteFile, offset: int) -> Iterator[Body]:
        bucket, key = split_s3_url(file.url)
        kwargs = dict(Bucket=bucket, Key=key, **self.extra)
        if offset:
            kwargs["Range"] = f"bytes={offset}-"
        try:
            response = self.client.get_object(**kwargs)
        except self.client.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "InvalidRange":
                raise
            yield Body(offset, None, iter(()))
            return
        stream = response["Body"]
        try:
            start, total = parse_content_range(response.get("ContentRange"))
            if total is None:
                start, total = 0, response.get("ContentLength")
            yield Body(start or 0, total, stream.iter_chunks(NET_CHUNK))
        finally:
            stream.close()


class LocalTransport:
    """Copies from a mirror folder; same resume and checksum path as the network transports."""

    @contextlib.contextmanager
    def open(self, file: RemoteFile, offset: int) -> Iterator[Body]:
        path = Path(file.url)
        with open(path, "rb") as handle:
            handle.seek(offset)
            yield Body(offset, path.stat().st_size, iter(lambda: handle.read(CHUNK), b""))


def s3_client(net: Network, endpoint_url: str | None = None, region: str = "us-east-1",
              unsigned: bool = False):
    """A boto3 S3 client; credentials come only from the environment / boto3's default chain.

    ``endpoint_url`` None lets boto3 read ``AWS_ENDPOINT_URL`` (an S3-compatible server or moto).
    """
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    install_log_redaction()
    config = Config(
        retries={"mode": "standard", "max_attempts": net.retries},
        connect_timeout=net.timeout,
        read_timeout=net.timeout,
        max_pool_connections=max(net.workers, 10),
        signature_version=UNSIGNED if unsigned else None,
        # A ranged GET cannot be checked against a whole-object checksum; we verify the whole file.
        response_checksum_validation="when_required",
    )
    session = boto3.session.Session()
    credentials = None if unsigned else session.get_credentials()
    if credentials is not None:  # their values are redacted wherever they might show up
        frozen = credentials.get_frozen_credentials()
        register_secret(frozen.secret_key)
        register_secret(frozen.token)
    return session.client("s3", endpoint_url=endpoint_url, region_name=region, config=config)


def read_s3_object(client, url: str, requester_pays: bool = False) -> bytes:
    """The whole (small) object at ``s3://bucket/key``, e.g. a manifest to plan from."""
    bucket, key = split_s3_url(url)
    extra = {"RequestPayer": "requester"} if requester_pays else {}
    return client.get_object(Bucket=bucket, Key=key, **extra)["Body"].read()


def transport_key(url: str) -> str:
    """Which transport reads ``url``: ``http`` (http/https), ``s3`` or ``file`` (a local path)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        return "http"
    return "s3" if scheme == "s3" else "file"
