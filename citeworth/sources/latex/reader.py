"""The ``arxiv_latex`` reader: a shard of LaTeX sources -> Papers, and BadRecords with reasons.

A shard is one bulk tar, one e-print / ``.tex`` / PDF, or one folder of a paper's files. Each paper
is read on its own: a failure quarantines that paper and reading goes on. Reasons: ``pdf_only``,
``corrupt_gzip``, ``corrupt_tar``, ``too_large``, ``no_main_tex``, ``no_document_body``,
``no_bibliography`` (cites but no ``.bbl``, ``thebibliography`` or ``.bib``), ``latex_timeout``
(past the per-paper time limit), ``latex_parse_error``, ``latex_error`` (anything unforeseen).

Fields of study come from the shard's ``metadata``: JSON lines in the arXiv metadata snapshot's
shape (``id``, ``categories`` "cs.CL cs.LG", ``title``, ``doi``, ``journal-ref``, ``versions``...),
keyed by the paper id this reader gives (the arXiv id; a folder's name). A paper without a row has
no categories, and curation rejects it as ``no_fields_of_study``.
"""

from __future__ import annotations

import logging
import tarfile
from collections.abc import Iterator
from pathlib import Path

from citeworth.core.paper import Paper
from citeworth.sources.base import BadRecord, RecordError, Shard, bad_record
from citeworth.sources.facts import metadata_rows
from citeworth.sources.latex.assemble import paper_from_document
from citeworth.sources.latex.bibliography import load_bibliography
from citeworth.sources.latex.files import (
    STORED_SUFFIXES,
    PaperSource,
    SourceFailure,
    folder_source,
    iter_sources,
    paper_root,
    stored_paper_id,
)
from citeworth.sources.latex.parser import Deadline, parse
from citeworth.sources.latex.project import find_main, flatten, tex_texts

log = logging.getLogger(__name__)

TIME_LIMIT = 60.0  # seconds per paper
_ROW_KEYS = (
    "id",
    "title",
    "categories",
    "doi",
    "journal-ref",
    "versions",
    "update_date",
    "abstract",
    "arxiv_id",
    "authors_parsed",
)


def read(shard: Shard, time_limit: float = TIME_LIMIT) -> Iterator[Paper | BadRecord]:
    rows: dict[str, dict] = {}
    if shard.metadata:
        wanted = paper_ids(shard)
        for item in metadata_rows(shard.metadata, shard, _row_id):
            if isinstance(item, BadRecord):
                yield item
            elif item.paper_id in wanted:
                rows.setdefault(item.paper_id, {key: item.row[key] for key in _ROW_KEYS if key in item.row})
    for source in iter_sources(shard.paths):
        if isinstance(source, SourceFailure):
            yield bad_record(shard, source.location, source.error, source.raw[:2000])
            continue
        try:
            yield read_paper(source, shard, rows.get(source.paper_id), time_limit)
        except RecordError as error:
            yield bad_record(shard, source.location, error, _main_text(source))
        except Exception as exc:  # one paper never stops a shard
            log.exception("unexpected failure reading %s", source.location)
            yield bad_record(
                shard,
                source.location,
                RecordError("latex_error", f"{type(exc).__name__}: {exc}"),
                _main_text(source),
            )


def read_paper(source: PaperSource, shard: Shard, row: dict | None, time_limit: float = TIME_LIMIT) -> Paper:
    deadline = Deadline(time_limit)
    texts = tex_texts(source.files)
    main = find_main(source.files, texts)
    flat = flatten(texts, main)
    document = parse(flat, deadline)
    bibliography = load_bibliography(texts, main, flat.parse_text, document.inline_bibliography)
    if not bibliography and document.citations:
        raise RecordError(
            "no_bibliography",
            f"{main}: {len(document.citations)} citation(s) but no .bbl, thebibliography or .bib",
        )
    return paper_from_document(document, bibliography, source, shard, row)


def paper_ids(shard: Shard) -> set[str]:
    """The ids of the shard's papers, without reading their sources (a bulk tar's member names)."""
    paths = shard.paths
    if len(paths) == 1 and Path(paths[0]).suffix.lower() in STORED_SUFFIXES:
        path = Path(paths[0])
        if path.suffix == ".tar":
            try:
                with tarfile.open(path, "r:") as archive:
                    names = archive.getnames()
            except tarfile.TarError:
                return set()
            return {stored_paper_id(name) for name in names}
        return {stored_paper_id(path.name)}
    source = folder_source(paper_root(paths), paths)
    return {source.paper_id} if isinstance(source, PaperSource) else set()


def _row_id(row: dict) -> str:
    if row.get("id") in (None, ""):
        raise RecordError("missing_key:id", "metadata row has no id")
    return str(row["id"])


def _main_text(source: PaperSource) -> bytes:
    """The start of the paper's largest ``.tex`` file, for the quarantine record."""
    tex = [data for name, data in source.files.items() if name.endswith(".tex")]
    return max(tex, key=len)[:2000] if tex else b""
