"""arXiv categories from arXiv's public OAI-PMH interface, for the papers of downloaded bulk tars.

With ``arxiv.categories: true`` the ``arxiv_s3`` source lists the papers of every downloaded
``arXiv_src_*.tar`` (member names are arXiv ids) and asks ``arxiv.oai_url`` for each one's record
(``verb=GetRecord``, ``metadataPrefix=arXiv``), pausing ``arxiv.oai_delay`` seconds between requests
as arXiv asks of harvesters. 503 (arXiv's flow control, with ``Retry-After``), 429 and 5xx answers
are retried with exponential backoff by the download session. The rows are written, in the arXiv
metadata snapshot's shape (``id``, ``categories``, ``title``, ``doi``, ``journal-ref``,
``update_date``), to ``arxiv_metadata.jsonl`` in the release folder -- the ``metadata`` of an
``arxiv_latex`` input. A rerun asks only for ids it has no row for; an id arXiv does not know gets
no row (curation then rejects the paper as ``no_fields_of_study``).
"""

from __future__ import annotations

import json
import logging
import tarfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

import requests
from tqdm import tqdm

from citeworth.core.io import atomic_write, dumps
from citeworth.core.paper import arxiv_id_from_name
from citeworth.download.remote import DownloadError

log = logging.getLogger(__name__)

METADATA_FILE = "arxiv_metadata.jsonl"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
_FIELDS = {
    "id": "id",
    "title": "title",
    "categories": "categories",
    "doi": "doi",
    "journal-ref": "journal-ref",
    "abstract": "abstract",
}


def tar_paper_ids(tars: Iterable[Path]) -> list[str]:
    """arXiv ids of the members of bulk tars (``2212/2212.00001.gz`` -> ``2212.00001``), sorted."""
    ids = set()
    for path in tars:
        with tarfile.open(path, "r:") as archive:
            ids.update(filter(None, (arxiv_id_from_name(name) for name in archive.getnames())))
    return sorted(ids)


def write_categories(
    release_dir: Path, ids: list[str], session: requests.Session, base_url: str, delay: float, timeout: float
) -> Path:
    """``arxiv_metadata.jsonl`` with a row per known id (rows already there are kept, not asked again)."""
    path = release_dir / METADATA_FILE
    rows = {}
    if path.exists():
        rows = {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    missing = [paper_id for paper_id in ids if paper_id not in rows]
    for number, paper_id in enumerate(tqdm(missing, desc="arXiv OAI-PMH categories", unit="paper")):
        if number and delay:
            time.sleep(delay)
        if (row := get_record(session, base_url, paper_id, timeout)) is not None:
            rows[paper_id] = row
        if number % 100 == 99:
            _write(path, rows)  # a long harvest resumes from here
    _write(path, rows)
    log.info("%s: %d rows (%d asked for)", path, len(rows), len(missing))
    return path


def get_record(session: requests.Session, base_url: str, paper_id: str, timeout: float) -> dict | None:
    """One paper's row, or None when arXiv reports ``idDoesNotExist``."""
    params = {"verb": "GetRecord", "identifier": f"oai:arXiv.org:{paper_id}", "metadataPrefix": "arXiv"}
    try:
        response = session.get(base_url, params=params, timeout=timeout)
        response.raise_for_status()
    except requests.RequestException as exc:
        raise DownloadError(f"OAI-PMH GetRecord {paper_id}: {exc}") from None
    try:
        root = ET.fromstring(response.content)
    except ET.ParseError as exc:
        raise DownloadError(f"OAI-PMH GetRecord {paper_id}: not XML ({exc})") from None
    error = root.find(f"{OAI}error")
    if error is not None:
        if error.get("code") == "idDoesNotExist":
            return None
        raise DownloadError(
            f"OAI-PMH GetRecord {paper_id}: {error.get('code')}: {(error.text or '').strip()}"
        )
    record = root.find(f"{OAI}GetRecord/{OAI}record")
    metadata = record.find(f"{OAI}metadata/{ARXIV}arXiv") if record is not None else None
    if metadata is None:
        raise DownloadError(f"OAI-PMH GetRecord {paper_id}: no arXiv metadata in the answer")
    row = {
        key: " ".join(text.split())
        for key, tag in _FIELDS.items()
        if (text := metadata.findtext(f"{ARXIV}{tag}"))
    }
    row["id"] = paper_id
    if stamp := record.findtext(f"{OAI}header/{OAI}datestamp"):
        row["update_date"] = stamp.strip()
    if created := metadata.findtext(f"{ARXIV}created"):
        row["versions"] = [{"version": "v1", "created": created.strip()}]
    return row


def _write(path: Path, rows: dict[str, dict]) -> None:
    with atomic_write(path) as handle:
        for paper_id in sorted(rows):
            handle.write(dumps(rows[paper_id]) + "\n")
