"""The ``download`` stage: fetch one release of one source into ``raw/<source>/<release>/``.

Steps: the source plans its files (resolving ``latest``), the fetcher brings each one in (skipping
those already present with the right checksum), archives are unpacked safely beside themselves, and
``MANIFEST.json`` records every file (fetched and unpacked) with size, sha256 and origin, and no
time, so the same release gives the same manifest anywhere; each transfer's time goes to the fetch
log beside the release folder. A rerun with nothing new is a no-op that rewrites a byte-identical
manifest.

Secrets: the S2 API key is read from ``$S2_API_KEY`` (``s2_api.api_key_env``); S3 credentials and
``AWS_ENDPOINT_URL`` from the environment / boto3's chain. Neither is ever logged or recorded.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError

from citeworth.core import knobs
from citeworth.core.errors import StageFailed
from citeworth.core.io import atomic_write
from citeworth.download.arxiv import plan_arxiv
from citeworth.download.fetch import Fetcher
from citeworth.download.manifest import Entry, read_manifest, write_manifest
from citeworth.download.oai import tar_paper_ids, write_categories
from citeworth.download.params import DownloadParams
from citeworth.download.redaction import redact
from citeworth.download.registry import REGISTRIES
from citeworth.download.remote import Digests, DownloadError, InlineFile, Plan, select
from citeworth.download.s2api import plan_s2_api
from citeworth.download.s2orc_legacy import plan_s2orc_legacy
from citeworth.download.transports import Network, http_session, transport_key
from citeworth.download.unpack import unpack, unpack_target

log = logging.getLogger(__name__)

PLANNERS: dict[str, Callable[[DownloadParams, Network], Plan]] = {
    **{name: registry.plan for name, registry in REGISTRIES.items()},  # demo, elife, europepmc
    "s2_api": plan_s2_api,
    "s2orc_legacy": plan_s2orc_legacy,
    "arxiv_s3": plan_arxiv,
}


def download(params: DownloadParams) -> dict:
    """Fetch ``params.release`` of ``params.source``; returns a summary (the resolved release included)."""
    net = Network(params.retries, params.backoff, params.timeout, knobs.workers(default=Network.workers))
    plan = _plan(params, net)
    if "/" in plan.release or "\\" in plan.release or plan.release in ("", ".", ".."):
        raise StageFailed(f"release {plan.release!r} cannot name a folder in {params.out_dir}")
    files = select(plan.files, params.include)
    release_dir = params.out_dir / params.source / plan.release
    previous = read_manifest(release_dir)
    fetcher = Fetcher(release_dir, _transport_for(plan), net, previous, params.verify_existing)
    result = fetcher.fetch_all(files, desc=f"download {params.source}/{plan.release}")
    entries = result.entries + [_write_inline(f, release_dir) for f in plan.inline]
    unpacked = _unpack_archives(result.entries, release_dir, params, previous)
    if params.source == "arxiv_s3" and params.arxiv.categories:
        entries.append(_arxiv_categories(result.entries, release_dir, params, net))
    manifest = write_manifest(release_dir, params.source, plan.release, entries + unpacked)
    log.info("%s/%s: %d fetched, %d already present",
             params.source, plan.release, result.fetched, result.skipped)
    return {
        "source": params.source,
        "release": plan.release,
        "dir": str(release_dir),
        "manifest": str(manifest),
        "files": len(entries),
        "fetched": result.fetched,
        "skipped": result.skipped,
        "bytes_fetched": result.bytes_fetched,
        "unpacked_files": len(unpacked),
    }


def _plan(params: DownloadParams, net: Network) -> Plan:
    try:
        return PLANNERS[params.source](params, net)
    except (BotoCoreError, ClientError) as exc:
        raise DownloadError(f"{params.source}: {redact(exc)}") from None


def _transport_for(plan: Plan):
    def transport_for(url: str):
        key = transport_key(url)
        if key not in plan.transports:
            raise DownloadError(f"no {key} transport for this source")
        return plan.transports[key]

    return transport_for


def _write_inline(file: InlineFile, release_dir: Path) -> Entry:
    path = release_dir / file.path
    if not (path.exists() and path.read_bytes() == file.content):
        with atomic_write(path, "wb") as handle:
            handle.write(file.content)
    sha256 = hashlib.sha256(file.content).hexdigest()
    return Entry(file=file.path, size=len(file.content), sha256=sha256, origin=file.origin)


def _arxiv_categories(tars: list[Entry], release_dir: Path, params: DownloadParams, net: Network) -> Entry:
    """``arxiv_metadata.jsonl``: the OAI-PMH categories of the downloaded tars' papers."""
    ids = tar_paper_ids(release_dir / tar.file for tar in tars if tar.file.endswith(".tar"))
    path = write_categories(release_dir, ids, http_session(net), params.arxiv.oai_url, params.arxiv.oai_delay,
                            net.timeout)
    digest = Digests.of_file(path)
    return Entry(file=path.name, size=digest.size, sha256=digest.sha256.hexdigest(),
                 origin=params.arxiv.oai_url)


def _unpack_archives(archives: list[Entry], release_dir: Path, params: DownloadParams,
                     previous: dict[str, Entry]) -> list[Entry]:
    """Unpack each fetched archive (unless its files are there already) and return their entries."""
    entries = []
    for archive in archives:
        target = unpack_target(release_dir / archive.file, params.unpack)
        if target is None:
            continue
        kept = _still_unpacked(archive, release_dir, previous, params.verify_existing)
        if kept is not None:
            entries += kept
            continue
        log.info("unpacking %s", archive.file)
        prefix = target.relative_to(release_dir).as_posix()
        members = unpack(release_dir / archive.file, target, params.max_unpack_bytes)
        entries += [
            Entry(file=f"{prefix}/{name}", size=d.size, sha256=d.sha256.hexdigest(), origin=archive.origin,
                  unpacked_from=archive.file)
            for name, d in sorted(members.items())
        ]
    return entries


def _still_unpacked(archive: Entry, release_dir: Path, previous: dict[str, Entry],
                    verify: bool) -> list[Entry] | None:
    """The previous entries of ``archive``'s members if it is unchanged and they are all intact."""
    before = previous.get(archive.file)
    members = [e for e in previous.values() if e.unpacked_from == archive.file]
    if before is None or before.sha256 != archive.sha256 or not members:
        return None
    for member in members:
        path = release_dir / member.file
        if not path.is_file() or path.stat().st_size != member.size:
            return None
        if verify and Digests.of_file(path).sha256.hexdigest() != member.sha256:
            return None
    return members

