"""arXiv bulk LaTeX sources from the requester-pays S3 bucket ``arxiv`` (you pay for the transfer).

``src/arXiv_src_manifest.xml`` lists every tar chunk: ``<file>`` elements with ``filename``
(``src/arXiv_src_2212_001.tar``), ``yymm``, ``size``, ``md5sum``, ``seq_num``... A release here is a
month (``YYMM``, ``latest`` = the newest month in the manifest); the stage fetches the chunks of the
months ``arxiv.month_from``..``arxiv.month_to`` (default: the release month), every request with
``RequestPayer='requester'``, checks each chunk's size and md5 against the manifest, and keeps the
manifest it selected from beside them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.etree import ElementTree

from citeworth.core.errors import StageFailed
from citeworth.download.params import DownloadParams
from citeworth.download.remote import DownloadError, InlineFile, Plan, RemoteFile
from citeworth.download.transports import Network, S3Transport, read_s3_object, s3_client

_MONTH = re.compile(r"(?:(\d{2})(\d{2})-(\d{2})|(\d{2})(\d{2}))")


@dataclass(frozen=True)
class ArxivChunk:
    filename: str
    yymm: str
    size: int
    md5: str


def normalize_month(value: str) -> str:
    """``YYMM`` from ``YYMM`` or ``YYYY-MM``; StageFailed for anything else."""
    match = _MONTH.fullmatch(str(value).strip())
    if not match:
        raise StageFailed(f"arXiv month {value!r} is neither YYMM nor YYYY-MM")
    _, yy, mm, yy2, mm2 = match.groups()
    yy, mm = (yy, mm) if yy else (yy2, mm2)
    if not 1 <= int(mm) <= 12:
        raise StageFailed(f"arXiv month {value!r} has no month {mm}")
    return yy + mm


def month_order(yymm: str) -> int:
    """A sortable number for ``YYMM``: arXiv began in 1991, so 91-99 are 19xx and the rest 20xx."""
    yy, mm = int(yymm[:2]), int(yymm[2:])
    return ((1900 if yy >= 91 else 2000) + yy) * 100 + mm


def parse_manifest(xml: bytes) -> list[ArxivChunk]:
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise DownloadError(f"the arXiv source manifest is not valid XML: {exc}") from None
    chunks = []
    for node in root.iter("file"):
        try:
            chunks.append(ArxivChunk(
                filename=node.findtext("filename").strip(),
                yymm=node.findtext("yymm").strip(),
                size=int(node.findtext("size")),
                md5=node.findtext("md5sum").strip().lower(),
            ))
        except (AttributeError, ValueError):
            raise DownloadError("an arXiv manifest <file> lacks filename, yymm, size or md5sum") from None
    return chunks


def manifest_months(chunks: list[ArxivChunk]) -> list[str]:
    return sorted({c.yymm for c in chunks}, key=month_order)


def select_chunks(chunks: list[ArxivChunk], month_from: str, month_to: str) -> list[ArxivChunk]:
    lo, hi = month_order(month_from), month_order(month_to)
    return [c for c in chunks if lo <= month_order(c.yymm) <= hi]


def read_manifest(params: DownloadParams, client) -> bytes:
    url = f"s3://{params.arxiv.bucket}/{params.arxiv.manifest_key}"
    return read_s3_object(client, url, params.arxiv.requester_pays)


def plan_arxiv(params: DownloadParams, net: Network) -> Plan:
    arxiv = params.arxiv
    client = s3_client(net, params.s3.endpoint_url, params.s3.region, params.s3.unsigned)
    xml = read_manifest(params, client)
    chunks = parse_manifest(xml)
    months = manifest_months(chunks)
    if not months:
        raise DownloadError("the arXiv source manifest lists no files")
    release = months[-1] if params.release == "latest" else normalize_month(params.release)
    month_to = normalize_month(arxiv.month_to) if arxiv.month_to else release
    month_from = normalize_month(arxiv.month_from) if arxiv.month_from else month_to
    selected = select_chunks(chunks, month_from, month_to)
    if not selected:
        raise StageFailed(
            f"no arXiv source tars for months {month_from}..{month_to}; "
            f"the manifest covers {months[0]}..{months[-1]}"
        )
    files = [_remote(arxiv.bucket, c) for c in selected]
    manifest = InlineFile(arxiv.manifest_key, f"s3://{arxiv.bucket}/{arxiv.manifest_key}", xml)
    return Plan(release, files, {"s3": S3Transport(client, arxiv.requester_pays)}, [manifest])


def _remote(bucket: str, chunk: ArxivChunk) -> RemoteFile:
    url = f"s3://{bucket}/{chunk.filename}"
    return RemoteFile(path=chunk.filename, origin=url, url=url, size=chunk.size, md5=chunk.md5)
