"""Which source releases exist, and is there one newer than the last processed? (Airflow sensor / backfill)

- ``s2_api``: the release ids of the datasets API (dates, ``YYYY-MM-DD``);
- ``arxiv_s3``: the months (``YYMM``) in the arXiv source manifest;
- ``demo``, ``elife``, ``europepmc`` (registry sources, ``download/registry.py``): the dated releases
  of their calendars (``download/<source>_releases.tsv``; demo: demo-v1 published 2024-01-01, demo-v2
  2024-02-01), ordered and dated by them;
- ``s2orc_legacy``: a fixed snapshot with one release (``params.release``).

``latest_release(source, as_of)`` answers "which release had ``source`` published by ``as_of``", so a
backfill run for a past date maps to one release; ``newer_release_available(source, last_processed)``
serves a sensor and ``releases_after(source, last_processed)`` a backfill.

``params`` (endpoints, bucket, API base URL...) default to the ``download`` section of ./params.yaml.
``api_key`` is the S2 API key string (the DAG layer may take it from an Airflow connection); when
None, the environment variable ``s2_api.api_key_env`` is used. Nothing here writes files.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from citeworth.core.errors import StageFailed
from citeworth.download import arxiv, s2api
from citeworth.download.params import DownloadParams
from citeworth.download.registry import REGISTRIES
from citeworth.download.transports import Network, s3_client


def available_releases(params: DownloadParams, api_key: str | None = None) -> list[str]:
    """Every release of ``params.source``, oldest first."""
    net = Network(params.retries, params.backoff, params.timeout)
    if params.source == "s2_api":
        return s2api.client_for(params, net, api_key or s2api.api_key_from_env(params)).releases()
    if params.source == "arxiv_s3":
        client = s3_client(net, params.s3.endpoint_url, params.s3.region, params.s3.unsigned)
        return arxiv.manifest_months(arxiv.parse_manifest(arxiv.read_manifest(params, client)))
    if params.source in REGISTRIES:
        return [release.name for release in REGISTRIES[params.source].releases()]
    return [params.release]


def latest_release(source: str, as_of: Any = None, params: DownloadParams | None = None,
                   api_key: str | None = None) -> str:
    """The newest release ``source`` had published by ``as_of`` (a date/datetime; None: now)."""
    releases = available_releases(_params_for(source, params), api_key)
    if as_of is not None:
        releases = [r for r in releases if _published_by(source, r, _day(as_of))]
    if not releases:
        raise StageFailed(f"source {source} had published no release by {as_of}")
    return releases[-1]


def releases_after(source: str, last_processed: str | None, params: DownloadParams | None = None,
                   api_key: str | None = None) -> list[str]:
    """The releases newer than ``last_processed`` (all of them if None), oldest first: what to backfill."""
    releases = available_releases(_params_for(source, params), api_key)
    if last_processed is None:
        return releases
    return [r for r in releases if is_newer(source, r, last_processed)]


def newer_release_available(source: str, last_processed: str | None, params: DownloadParams | None = None,
                            api_key: str | None = None) -> str | None:
    """The newest release of ``source`` if newer than ``last_processed`` (or that is None), else None."""
    newer = releases_after(source, last_processed, params, api_key)
    return newer[-1] if newer else None


def _params_for(source: str, params: DownloadParams | None) -> DownloadParams:
    """``params`` (default: the ``download`` section of ./params.yaml) with ``source`` set."""
    if params is None:
        from citeworth.stages import stage_params

        params = stage_params("download")
    return params.model_copy(update={"source": source})


def is_newer(source: str, release: str, last: str) -> bool:
    """Was ``source``'s ``release`` published after ``last``? (By name or calendar, no listing.)"""
    if source == "arxiv_s3":
        return arxiv.month_order(release) > arxiv.month_order(arxiv.normalize_month(last))
    if source == "s2_api":
        return release > last  # ISO dates sort as text
    if source in REGISTRIES:
        published = REGISTRIES[source].published()
        return last not in published or published[release] > published[last]
    return release != last  # a fixed snapshot: only a different one counts


def _day(value: Any) -> str:
    """``YYYY-MM-DD`` of a date, datetime (pendulum too) or ISO string."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()[:10]
    return str(value)[:10]


def _published_by(source: str, release: str, day: str) -> bool:
    if source == "arxiv_s3":
        return arxiv.month_order(release) <= arxiv.month_order(arxiv.normalize_month(day[:7]))
    if source == "s2_api":
        return release <= day
    if source in REGISTRIES:
        return REGISTRIES[source].published()[release] <= day
    return True
