"""A Paper as GrabCite's three files (Färber et al. 2018, §5; GrabCite's ``app-datagen``):

- ``<id>.txt``: the body's sentences, one a line, separated by a line of twelve ``=``; each citation
  marker replaced by `` <GLOBAL-ID> `` and each formula by ``<formula>``;
- ``<id>.refs``: one line per cited global id, ``GLOBAL-ID;reference text;`` (``;`` in the text
  written as ``,``, line breaks as spaces), sorted;
- ``<id>.meta``: JSON ``{"title", "authors", "url"}`` (authors: [] -- the source names none here;
  url: the paper's arXiv or DOI link, where GrabCite put its DBLP link).

Global ids follow GrabCite's order of preference without its DBLP lookup: ``DOI:<doi>``,
``ARXIV:<id>``, else ``GC:<the reference's stable id>`` (a title hash), else ``GC:<paper>/<ref>``.
"""

from __future__ import annotations

import json

from citeworth.core.paper import Paper, Paragraph
from citeworth.text.sentences import Bounds, SentenceSplitter, attach_citation_only, join_across

SEPARATOR = "\n============\n"
UNLINKED = "GC:unlinked"


def global_id(paper: Paper, ref_id: str | None) -> str:
    entry = paper.bib_entries.get(ref_id) if ref_id else None
    if entry is None:
        return UNLINKED
    if "doi" in entry.ids:
        return f"DOI:{entry.ids['doi']}"
    if "arxiv" in entry.ids:
        return f"ARXIV:{entry.ids['arxiv']}"
    if ref_id.startswith(("title:", "entry:")):
        return f"GC:{ref_id}"
    return f"GC:{paper.paper_id}/{ref_id}"


def grabcite_files(paper: Paper, splitter: SentenceSplitter) -> dict[str, str]:
    """``{"txt": ..., "refs": ..., "meta": ...}`` for ``paper``."""
    sentences = []
    for paragraph, bounds in zip(
        paper.paragraphs, splitter.split(p.text for p in paper.paragraphs), strict=True
    ):
        spans = sorted(
            [(c.start, c.end) for c in paragraph.cite_spans] + [(s, e) for s, e, _ in paragraph.ref_spans]
        )
        bounds = attach_citation_only(paragraph.text, join_across(bounds, spans), spans)
        sentences += [_sentence(paper, paragraph, bound) for bound in bounds]
    refs = {}
    for paragraph in paper.paragraphs:
        for cite in paragraph.cite_spans:
            gid = global_id(paper, cite.ref_id)
            if gid != UNLINKED:
                entry = paper.bib_entries[cite.ref_id]
                refs[gid] = " ".join((entry.raw or entry.title or "").split()).replace(";", ",")
    meta = {"title": paper.title, "authors": [], "url": _url(paper)}
    return {
        "txt": SEPARATOR.join(s for s in sentences if s) + "\n",
        "refs": "".join(f"{gid};{text};\n" for gid, text in sorted(refs.items())),
        "meta": json.dumps(meta, sort_keys=True, ensure_ascii=False) + "\n",
    }


def _sentence(paper: Paper, paragraph: Paragraph, bound: Bounds) -> str:
    start, end = bound
    marks = [(c.start, c.end, f" <{global_id(paper, c.ref_id)}> ") for c in paragraph.cite_spans]
    marks += [(s, e, " <formula> ") for s, e, kind in paragraph.ref_spans if kind == "formula"]
    parts, position = [], start
    for mark_start, mark_end, token in sorted(marks):
        if start <= mark_start and mark_end <= end:
            parts += [paragraph.text[position:mark_start], token]
            position = mark_end
    parts.append(paragraph.text[position:end])
    return " ".join("".join(parts).split())


def _url(paper: Paper) -> str | None:
    if "arxiv" in paper.ids:
        return f"https://arxiv.org/abs/{paper.ids['arxiv']}"
    if "doi" in paper.ids:
        return f"https://doi.org/{paper.ids['doi']}"
    return None
