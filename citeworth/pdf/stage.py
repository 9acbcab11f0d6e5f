"""The pdf2tei stage: a folder of PDFs -> GROBID TEI files the ``tei`` reader reads.

Every PDF matching ``inputs`` becomes ``<out_dir>/<its path under the glob's folder>.tei.xml``.
``<out_dir>/MANIFEST.json`` maps each PDF's sha256 to its files, status, GROBID version and
options; a rerun converts only PDFs whose content (or the options) is new, so it is a no-op when
nothing changed and never needs GROBID then. A PDF GROBID cannot read is quarantined -- its
manifest entry and a line of ``<out_dir>/quarantine.jsonl`` give the reason -- and the run goes on;
``redo: quarantined`` asks again (e.g. after raising ``timeout``), ``redo: all`` converts everything.

Crash safety: a TEI is written to a temporary name and renamed, and each finished PDF is appended
to a journal (``.journal.jsonl``, fsynced) that the next run reads, so after a ``kill -9`` every
PDF has a whole TEI or a quarantine record, or is converted again; MANIFEST.json is rewritten
(atomically) only at the end. When GROBID is unreachable or stays busy, the stage stops with one
line naming the URL and how to start a service, keeping what it finished.
"""

from __future__ import annotations

import contextlib
import glob as globbing
import json
import logging
import os
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field
from tqdm import tqdm

from citeworth.core import knobs
from citeworth.core.io import atomic_write, dumps, sha256_file, write_json, write_jsonl
from citeworth.core.params import Params
from citeworth.pdf.grobid import GrobidClient, GrobidOptions, PdfRejected, pooled_session, service_url

log = logging.getLogger(__name__)

MANIFEST = "MANIFEST.json"
QUARANTINE = "quarantine.jsonl"
JOURNAL = ".journal.jsonl"
TEI_SUFFIX = ".tei.xml"
REDO = ("none", "quarantined", "all")
_GLOB_CHARS = frozenset("*?[")
# PDFs in flight at once unless $CITEWORTH_WORKERS says otherwise (GROBID's own pool is ~10 threads)
PDFS_AT_ONCE = 4


class Pdf2TeiParams(Params):
    inputs: str
    """A glob of PDFs (relative to the project root); dvc.yaml depends on its folder (pdfs)."""
    out_dir: Path
    """TEI files, MANIFEST.json (sha256 -> TEI, GROBID version, options) and quarantine.jsonl."""
    url: str | None = None
    """GROBID service; null: $CITEWORTH_GROBID_URL, else http://localhost:8070"""
    timeout: float = 300.0
    """seconds per PDF; a PDF that takes longer is quarantined"""
    retries: int = 5
    """further attempts after 503 / connection errors / a body cut short"""
    backoff: float = 2.0
    """seconds, doubled per attempt, plus jitter"""
    redo: Literal[REDO] = "none"
    """none | quarantined | all"""
    options: GrobidOptions = Field(default_factory=GrobidOptions)
    """GROBID's processFulltextDocument fields, under its own names."""


@dataclass(frozen=True)
class _Pdf:
    """One PDF content: its sha256 and every input path (under the glob's folder) holding it."""

    sha256: str
    path: Path
    relatives: tuple[str, ...]

    @property
    def teis(self) -> list[str]:
        return [tei_name(relative) for relative in self.relatives]


def pdf2tei(params: Pdf2TeiParams) -> dict:
    """Convert the new or changed PDFs; returns counts (converted, skipped, quarantined, ...)."""
    out = Path(params.out_dir)
    pdfs = _discover(params.inputs)
    entries = _load_state(out)
    options = params.options.model_dump()
    todo = [pdf for pdf in pdfs if _needs_work(entries.get(pdf.sha256), pdf, out, options, params.redo)]
    _remove_leftovers(out, pdfs)
    counts = {"pdfs": len(pdfs), "skipped": len(pdfs) - len(todo), "converted": 0, "quarantined": 0}
    try:
        if todo:
            _convert(params, out, todo, entries, counts)
    finally:
        _write_results(out, pdfs, entries)
    counts["quarantined_total"] = sum(entries[pdf.sha256]["status"] == "quarantined" for pdf in pdfs)
    return counts


def _discover(pattern: str) -> list[_Pdf]:
    """The PDFs matching ``pattern``, one per distinct content, in path order."""
    base = _glob_root(pattern)
    by_sha: dict[str, list[Path]] = {}
    for path in sorted(Path(p) for p in globbing.glob(pattern, recursive=True) if os.path.isfile(p)):
        by_sha.setdefault(sha256_file(path), []).append(path)
    return [_Pdf(sha, paths[0], tuple(p.relative_to(base).as_posix() for p in paths))
            for sha, paths in by_sha.items()]


def _glob_root(pattern: str) -> Path:
    """The folder a glob starts in: its leading parts without wildcards."""
    parts = []
    for part in Path(pattern).parts[:-1]:
        if _GLOB_CHARS & set(part):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def tei_name(relative_pdf: str) -> str:
    """``a/b.pdf`` -> ``a/b.tei.xml``."""
    path = Path(relative_pdf)
    return path.with_name(path.stem + TEI_SUFFIX).as_posix()


def _load_state(out: Path) -> dict[str, dict]:
    """sha256 -> entry, from the manifest of the last finished run and the journal of an
    interrupted one (whose last line a kill may have cut: it is ignored)."""
    entries: dict[str, dict] = {}
    if (out / MANIFEST).exists():
        entries.update(json.loads((out / MANIFEST).read_text())["files"])
    if (out / JOURNAL).exists():
        for line in (out / JOURNAL).read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                entries[record.pop("sha256")] = record
    return entries


def _needs_work(entry: dict | None, pdf: _Pdf, out: Path, options: dict, redo: str) -> bool:
    if entry is None or entry.get("options") != options or redo == "all":
        return True
    if entry["status"] == "quarantined":
        return redo == "quarantined"
    return not all((out / tei).is_file() for tei in pdf.teis)


def _remove_leftovers(out: Path, pdfs: list[_Pdf]) -> None:
    """Temporary files a killed run left, and TEI files whose PDF is gone from the inputs."""
    wanted = {tei for pdf in pdfs for tei in pdf.teis}
    for path in sorted(out.rglob("*")) if out.is_dir() else []:
        stale_tei = path.name.endswith(TEI_SUFFIX) and path.relative_to(out).as_posix() not in wanted
        if path.is_file() and (stale_tei or (path.name.startswith(".") and path.name.endswith(".tmp"))):
            why = "its PDF is gone" if stale_tei else "left by an interrupted run"
            log.info("removing %s (%s)", path, why)
            path.unlink()


def _convert(params: Pdf2TeiParams, out: Path, todo: list[_Pdf], entries: dict[str, dict],
             counts: dict) -> None:
    workers = knobs.workers(default=PDFS_AT_ONCE)
    client = GrobidClient(service_url(params.url), params.timeout, params.retries, params.backoff,
                          session=pooled_session(workers))
    version = client.version()
    options = params.options.model_dump()
    log.info("pdf2tei: %d PDF(s) to convert with GROBID %s at %s", len(todo), version, client.url)
    with _journal(out) as journal, tqdm(total=len(todo), desc="pdf2tei", unit="pdf") as bar:
        for pdf, result in _in_flight(client, params, todo, workers):
            entry = {"pdfs": list(pdf.relatives), "grobid_version": version, "options": options}
            if isinstance(result, PdfRejected):
                entry |= {"status": "quarantined", "reason": result.reason, "detail": result.detail}
                counts["quarantined"] += 1
                log.warning("pdf2tei: %s quarantined: %s", pdf.relatives[0], result)
            else:
                for tei in pdf.teis:
                    with atomic_write(out / tei, "wb") as handle:
                        handle.write(result)
                entry |= {"status": "ok", "teis": pdf.teis}
                counts["converted"] += 1
            entries[pdf.sha256] = entry
            journal.write(dumps({"sha256": pdf.sha256, **entry}) + "\n")
            journal.flush()
            os.fsync(journal.fileno())
            bar.update()


def _in_flight(client: GrobidClient, params: Pdf2TeiParams, todo: list[_Pdf],
               workers: int) -> Iterator[tuple[_Pdf, bytes | PdfRejected]]:
    """Each PDF with its TEI or rejection as they finish, at most ``workers`` requests at once;
    ``GrobidUnavailable`` stops the run (requests in flight finish first)."""
    pending: dict[Future, _Pdf] = {}
    queue = iter(todo)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while True:
            while len(pending) < workers and (pdf := next(queue, None)) is not None:
                pending[pool.submit(_convert_one, client, pdf, params.options)] = pdf
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: pending[f].relatives):
                yield pending.pop(future), future.result()


def _convert_one(client: GrobidClient, pdf: _Pdf, options: GrobidOptions) -> bytes | PdfRejected:
    try:
        return client.fulltext(pdf.path, options)
    except PdfRejected as rejected:
        return rejected


@contextlib.contextmanager
def _journal(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / JOURNAL, "a", encoding="utf-8") as handle:
        yield handle


def _write_results(out: Path, pdfs: list[_Pdf], entries: dict[str, dict]) -> None:
    """MANIFEST.json and quarantine.jsonl for the PDFs of this run's inputs; then the journal is no
    longer needed. Entries of PDFs gone from the inputs are dropped."""
    current = [pdf for pdf in pdfs if pdf.sha256 in entries]
    manifest = {pdf.sha256: _manifest_entry(entries[pdf.sha256], pdf) for pdf in current}
    write_json(out / MANIFEST, {"files": dict(sorted(manifest.items()))})
    quarantined = [{"pdf": relative, "sha256": pdf.sha256, **{k: entry[k] for k in ("reason", "detail")}}
                   for pdf in current if (entry := entries[pdf.sha256])["status"] == "quarantined"
                   for relative in pdf.relatives]
    write_jsonl(out / QUARANTINE, sorted(quarantined, key=lambda row: row["pdf"]))
    with contextlib.suppress(FileNotFoundError):
        (out / JOURNAL).unlink()


def _manifest_entry(entry: dict, pdf: _Pdf) -> dict:
    """The entry with this run's paths (a PDF may have moved; its content, the key, did not)."""
    entry = {**entry, "pdfs": list(pdf.relatives)}
    if entry["status"] == "ok":
        entry["teis"] = pdf.teis
    return entry
