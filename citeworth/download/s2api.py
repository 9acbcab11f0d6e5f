"""The Semantic Scholar datasets API (today's S2ORC): releases, dataset files and incremental diffs.

Endpoints (``base_url`` = ``https://api.semanticscholar.org/datasets/v1``):

- ``GET /release/`` -> list of release ids (``"2023-03-28"``, ...), oldest first;
- ``GET /release/{id}`` -> ``{"release_id", "README", "datasets": [...]}``; ``id`` may be ``latest``;
- ``GET /release/{id}/dataset/{name}`` -> ``{"name", "description", "README", "files": [presigned URLs]}``;
- ``GET /diffs/{start}/to/{end}/{name}`` -> ``{"dataset", "start_release", "end_release",
  "diffs": [{"from_release", "to_release", "update_files": [...], "delete_files": [...]}]}``.

The API key (header ``x-api-key``) is a plain string given by the caller: the stage reads it from the
environment variable ``s2_api.api_key_env`` (``S2_API_KEY``); the Airflow layer may take it from a
connection. 429 and 5xx answers are retried with exponential backoff and jitter (urllib3 ``Retry``).
The file URLs are presigned S3 URLs: their query strings never reach logs, errors or the manifest.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import requests

from citeworth.download.params import DownloadParams
from citeworth.download.redaction import public_url, redact, register_secret
from citeworth.download.remote import DownloadError, Plan, RemoteFile
from citeworth.download.transports import HttpTransport, Network, http_session


class S2DatasetsClient:
    def __init__(self, base_url: str, api_key: str | None, session: requests.Session, timeout: float) -> None:
        register_secret(api_key)
        self.base_url = base_url.rstrip("/")
        self.headers = {"x-api-key": api_key} if api_key else {}
        self.session = session
        self.timeout = timeout

    def releases(self) -> list[str]:
        return sorted(self._get("/release/"))

    def resolve(self, release: str) -> str:
        """``latest`` -> the newest release id; any other id is returned as it is."""
        return self._get("/release/latest")["release_id"] if release == "latest" else release

    def dataset_files(self, release: str, dataset: str) -> list[str]:
        return list(self._get(f"/release/{release}/dataset/{dataset}")["files"])

    def diffs(self, start: str, end: str, dataset: str) -> list[dict[str, Any]]:
        return list(self._get(f"/diffs/{start}/to/{end}/{dataset}")["diffs"])

    def _get(self, path: str) -> Any:
        where = f"S2 datasets API {path}"
        try:
            response = self.session.get(self.base_url + path, headers=self.headers, timeout=self.timeout)
        except requests.RequestException as exc:
            raise DownloadError(f"{where}: {redact(exc)}") from None
        if response.status_code in (401, 403):
            hint = "the API key was refused" if self.headers else "it needs an API key: set S2_API_KEY"
            raise DownloadError(f"{where}: HTTP {response.status_code}, {hint}")
        if response.status_code == 404:
            raise DownloadError(f"{where}: HTTP 404, no such release, dataset or diff")
        if not response.ok:
            raise DownloadError(f"{where}: HTTP {response.status_code} {redact(response.reason)}")
        try:
            return response.json()
        except ValueError:
            raise DownloadError(f"{where}: the answer is not JSON") from None


def api_key_from_env(params: DownloadParams) -> str | None:
    return os.environ.get(params.s2_api.api_key_env) or None


def client_for(params: DownloadParams, net: Network, api_key: str | None) -> S2DatasetsClient:
    return S2DatasetsClient(params.s2_api.base_url, api_key, http_session(net), net.timeout)


def plan_s2_api(params: DownloadParams, net: Network) -> Plan:
    """Full files of each dataset of the release, or (``diff_from``) the diffs leading up to it.

    Layout: ``<dataset>/<file>`` and ``<dataset>/diffs/<from>_to_<to>/{update_files,delete_files}/<file>``.
    """
    client = client_for(params, net, api_key_from_env(params))
    release = client.resolve(params.release)
    files = []
    for dataset in params.s2_api.datasets:
        if params.s2_api.diff_from:
            files += _diff_files(client, params.s2_api.diff_from, release, dataset)
        else:
            urls = client.dataset_files(release, dataset)
            files += [_remote(f"{dataset}/{_file_name(url)}", url) for url in urls]
    _check_unique(files)
    return Plan(release, files, {"http": HttpTransport(client.session, net.timeout)})


def _diff_files(client: S2DatasetsClient, start: str, end: str, dataset: str) -> list[RemoteFile]:
    files = []
    for diff in client.diffs(start, end, dataset):
        folder = f"{dataset}/diffs/{diff['from_release']}_to_{diff['to_release']}"
        for kind in ("update_files", "delete_files"):
            files += [_remote(f"{folder}/{kind}/{_file_name(url)}", url) for url in diff.get(kind, [])]
    return files


def _remote(path: str, url: str) -> RemoteFile:
    return RemoteFile(path=path, origin=public_url(url), url=url)


def _file_name(url: str) -> str:
    name = PurePosixPath(urlsplit(url).path).name
    if not name or name in (".", ".."):
        raise DownloadError(f"S2 datasets API gave a file URL without a file name: {public_url(url)}")
    return name


def _check_unique(files: list[RemoteFile]) -> None:
    seen: dict[str, str] = {}
    for file in files:
        if file.path in seen:
            raise DownloadError(f"two files would land at {file.path}: {seen[file.path]} and {file.origin}")
        seen[file.path] = file.origin
