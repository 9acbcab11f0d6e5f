"""The legacy S2ORC 20200705 release: gzipped JSONL shards (``metadata/``, ``pdf_parses/``).

It is read either from an S3 bucket/prefix (boto3 listing + ranged GETs) or from a text file of
(presigned) URLs, one per line, as AI2 handed them out. A shard keeps its path below the common
prefix, e.g. ``metadata/metadata_0.jsonl.gz``. Only sizes are known up front; the sha256 computed
while fetching goes to the manifest.
"""

from __future__ import annotations

import posixpath
from urllib.parse import urlsplit

from citeworth.core.errors import StageFailed
from citeworth.download.params import DownloadParams
from citeworth.download.redaction import public_url
from citeworth.download.remote import DownloadError, Plan, RemoteFile
from citeworth.download.transports import (
    HttpTransport,
    Network,
    S3Transport,
    http_session,
    s3_client,
    split_s3_url,
)


def plan_s2orc_legacy(params: DownloadParams, net: Network) -> Plan:
    legacy = params.s2orc_legacy
    if bool(legacy.s3_uri) == bool(legacy.urls_file):
        raise StageFailed("source s2orc_legacy: set exactly one of s2orc_legacy.s3_uri and .urls_file")
    if legacy.s3_uri:
        client = s3_client(net, params.s3.endpoint_url, params.s3.region, params.s3.unsigned)
        return Plan(params.release, list_s3_files(client, legacy.s3_uri), {"s3": S3Transport(client)})
    urls = read_url_list(legacy.urls_file)
    return Plan(params.release, url_list_files(urls), {"http": HttpTransport(http_session(net), net.timeout)})


def list_s3_files(client, s3_uri: str) -> list[RemoteFile]:
    """Every object under ``s3://bucket/prefix``, with its path below the prefix and its size."""
    bucket, prefix = split_s3_url(s3_uri)
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    files = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            key = obj["Key"]
            if key.endswith("/"):
                continue  # a "folder" marker
            url = f"s3://{bucket}/{key}"
            files.append(RemoteFile(path=key[len(prefix):], origin=url, url=url, size=obj["Size"]))
    if not files:
        raise DownloadError(f"no objects under {s3_uri}")
    return files


def read_url_list(path) -> list[str]:
    """URLs from a text file, one per line; blank lines and ``#`` comments are skipped."""
    with open(path, encoding="utf-8") as handle:
        urls = [line.strip() for line in handle]
    urls = [u for u in urls if u and not u.startswith("#")]
    if not urls:
        raise StageFailed(f"{path} lists no URLs")
    return urls


def url_list_files(urls: list[str]) -> list[RemoteFile]:
    """One file per URL, keeping the URL path below the common folder of all of them."""
    paths = [urlsplit(u).path for u in urls]
    common = posixpath.commonpath([posixpath.dirname(p) for p in paths])
    files = []
    for url, path in zip(urls, paths, strict=True):
        relative = posixpath.relpath(path, common)
        if relative.startswith("..") or relative in (".", ""):
            raise DownloadError(f"cannot name a local file for {public_url(url)}")
        files.append(RemoteFile(path=relative, origin=public_url(url), url=url))
    if len({f.path for f in files}) != len(files):
        raise DownloadError("the URL list names the same file twice")
    return files
