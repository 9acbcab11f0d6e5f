"""A Paper as a line of unarXive JSONL (the schema of unarXive's 2023 data sample; doc/data_format.md).

Marker ids are deterministic: a placeholder's id is what the paper's text already holds (the LaTeX
reader's stable reference ids and formula hashes), and a reference span without a placeholder gets a
hash of the paper id, paragraph, offset and kind -- never uuid4, so an export is reproducible byte
for byte. The existing ``unarxive`` reader reads an export back with the same paragraphs and spans.
"""

from __future__ import annotations

import hashlib

from citeworth.core.paper import Paper, Paragraph
from citeworth.sources.unarxive import PLACEHOLDER
from citeworth.text.fields import mapped_fields

# unarXive's ``ids`` of a reference, with the Paper identifier kind each one is read from.
_IDS = {
    "open_alex_id": None,
    "sem_open_alex_id": None,
    "pubmed_id": "pmid",
    "pmc_id": "pmcid",
    "doi": "doi",
    "arxiv_id": "arxiv",
}


def unarxive_record(paper: Paper) -> dict:
    ref_entries: dict[str, dict] = {}
    body = [_block(paper, index, paragraph, ref_entries) for index, paragraph in enumerate(paper.paragraphs)]
    scheme = paper.metadata.get("field_scheme")
    discipline = mapped_fields(scheme, paper.fields_of_study) if scheme else []
    return {
        "paper_id": paper.paper_id,
        "_pdf_hash": None,
        "_source_hash": paper.metadata.get("source_hash"),
        "_source_name": paper.metadata.get("source_name"),
        "metadata": {
            "id": paper.ids.get("arxiv") or paper.paper_id,
            "title": paper.title,
            "abstract": paper.abstract,
            "doi": paper.ids.get("doi"),
            # unarXive's categories are arXiv codes, space-separated; other schemes' names have spaces.
            "categories": " ".join(paper.fields_of_study) if scheme == "arxiv" else None,
            "update_date": str(paper.metadata["year"]) if paper.metadata.get("year") else None,
        },
        "discipline": discipline[0] if discipline else None,
        "abstract": {"section": "Abstract", "text": paper.abstract or "", "cite_spans": [], "ref_spans": []},
        "body_text": body,
        "bib_entries": {ref_id: _bib_entry(entry) for ref_id, entry in sorted(paper.bib_entries.items())},
        "ref_entries": dict(sorted(ref_entries.items())),
    }


def _block(paper: Paper, index: int, paragraph: Paragraph, ref_entries: dict[str, dict]) -> dict:
    ref_spans = []
    for start, end, kind in paragraph.ref_spans:
        text = paragraph.text[start:end]
        match = PLACEHOLDER.fullmatch(text)
        ref_id = match.group(2) if match else _hash(f"{paper.paper_id}\0{index}\0{start}\0{kind}")
        ref_spans.append({"start": start, "end": end, "text": text, "ref_id": ref_id})
        ref_entries.setdefault(ref_id, {"type": kind})
    return {
        # Each paragraph names its top-level section as a section block of its own, so the section
        # the reader derives is the one the Paper has.
        "section": paragraph.section,
        "sec_number": paragraph.sec_number,
        "sec_type": "section",
        "content_type": "paragraph",
        "text": paragraph.text,
        "cite_spans": [
            {"start": c.start, "end": c.end, "text": c.text, "ref_id": c.ref_id} for c in paragraph.cite_spans
        ],
        "ref_spans": ref_spans,
    }


def _bib_entry(entry) -> dict:
    arxiv = entry.ids.get("arxiv")
    return {
        "bib_entry_raw": entry.raw or entry.title or "",
        "contained_arXiv_ids": [{"id": arxiv, "text": arxiv, "start": None, "end": None}] if arxiv else [],
        "contained_links": [],
        "discipline": None,
        "ids": {key: entry.ids.get(kind, "") if kind else "" for key, kind in _IDS.items()},
    }


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()
