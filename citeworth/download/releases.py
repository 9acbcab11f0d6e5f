"""Which source releases exist, and is there one newer than the last processed? (Airflow sensor / backfill)

- ``s2_api``: the release ids of the datasets API (dates, ``YYYY-MM-DD``);
- ``arxiv_s3``: the months (``YYMM``) in the arXiv source manifest;
- ``demo`` and ``s2orc_legacy``: fixed snapshots, their one release is ``params.release``.

``api_key`` is the S2 API key string (the DAG layer may take it from an Airflow connection); when
None, the environment variable ``s2_api.api_key_env`` is used. Nothing here writes files.
"""

from __future__ import annotations

from citeworth.download import arxiv, s2api
from citeworth.download.demo import DEMO_RELEASE
from citeworth.download.params import DownloadParams
from citeworth.download.transports import Network, s3_client


def available_releases(params: DownloadParams, api_key: str | None = None) -> list[str]:
    """Every release of ``params.source``, oldest first."""
    net = Network(params.retries, params.backoff, params.timeout, params.workers)
    if params.source == "s2_api":
        return s2api.client_for(params, net, api_key or s2api.api_key_from_env(params)).releases()
    if params.source == "arxiv_s3":
        client = s3_client(net, params.s3.endpoint_url, params.s3.region, params.s3.unsigned)
        return arxiv.manifest_months(arxiv.parse_manifest(arxiv.read_manifest(params, client)))
    return [DEMO_RELEASE if params.source == "demo" else params.release]


def releases_after(
    params: DownloadParams, last_processed: str | None, api_key: str | None = None
) -> list[str]:
    """The releases newer than ``last_processed`` (all of them if None), oldest first: what to backfill."""
    releases = available_releases(params, api_key)
    if last_processed is None:
        return releases
    return [r for r in releases if _is_newer(params.source, r, last_processed)]


def newer_release_available(
    params: DownloadParams, last_processed: str | None, api_key: str | None = None
) -> str | None:
    """The newest release if it is newer than ``last_processed`` (or nothing was processed yet), else None."""
    newer = releases_after(params, last_processed, api_key)
    return newer[-1] if newer else None


def _is_newer(source: str, release: str, last: str) -> bool:
    if source == "arxiv_s3":
        return arxiv.month_order(release) > arxiv.month_order(arxiv.normalize_month(last))
    if source == "s2_api":
        return release > last  # ISO dates sort as text
    return release != last  # a fixed snapshot: only a different one counts
