"""A parsed LaTeX document and its bibliography -> the one ``Paper`` model.

Citation placeholders carry the cited reference's stable id (``{{cite:doi:10.1038/...}}``,
unarXive's form with deterministic ids); a key no bibliography entry answers to keeps its key and
no ref id. Formulas stay ``{{formula:ID}}`` placeholders with a ``formula`` reference span.
"""

from __future__ import annotations

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources.base import Shard
from citeworth.sources.facts import first_present, identifiers, new_paper, one_line, unique
from citeworth.sources.latex.bibliography import Bibliography, Reference
from citeworth.sources.latex.files import PaperSource
from citeworth.sources.latex.parser import TexDocument, TexParagraph
from citeworth.sources.spans import CITE, RawSpan, make_paragraph
from citeworth.sources.unarxive import arxiv_authors, arxiv_year


def paper_from_document(
    doc: TexDocument, bibliography: Bibliography, source: PaperSource, shard: Shard, row: dict | None
) -> Paper:
    """``row``: the paper's arXiv-metadata-style row (``categories``, ``title``, ``doi``...) or None."""
    row = row or {}
    references = {key: ref for key in doc.cited_keys if (ref := bibliography.lookup(key)) is not None}
    bib_entries = {}
    for reference in [*bibliography.listed, *references.values()]:
        bib_entries.setdefault(reference.stable_id, _bib_entry(reference))
    paragraphs = [
        _paragraph(p, references, f"{source.paper_id} paragraph {i}") for i, p in enumerate(doc.paragraphs)
    ]
    abstract = one_line(" ".join(p.text for p in doc.abstract)) or one_line(row.get("abstract"))
    ids = identifiers([("arxiv", source.arxiv_id or row.get("arxiv_id")),
                       ("doi", str(row["doi"]).split()[0] if row.get("doi") else None)])
    return new_paper(
        shard,
        paper_id=source.paper_id,
        title=one_line(row.get("title")) or one_line(doc.title),
        fields_of_study=unique(str(row.get("categories") or "").split()),  # arXiv's primary category first
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        abstract=abstract,
        ids=ids.items(),
        authors=arxiv_authors(row),
        field_scheme="arxiv",
        has_ref_entries=any(region.kind == "float" for region in doc.regions),
        venue_id=first_present(row.get("journal-ref"), ids.get("doi"), ids.get("arxiv"), source.paper_id),
        year=arxiv_year(row) if row else None,
        extra={"source_name": source.source_name, "source_hash": source.source_hash,
               "main_file": doc.source.main},
    )


def _paragraph(paragraph: TexParagraph, references: dict[str, Reference], where: str) -> Paragraph:
    """The paragraph with each ``{{cite:KEY}}`` rewritten to its reference's stable id."""
    marks = sorted(
        [(c.start, c.end, c.key) for c in paragraph.cites]
        + [(f.start, f.end, None) for f in paragraph.formulas]
    )
    parts, spans, position, length = [], [], 0, 0
    for start, end, key in marks:
        parts.append(paragraph.text[position:start])
        length += start - position
        if key is None:
            token = paragraph.text[start:end]
            spans.append(RawSpan(length, length + len(token), "formula", token))
        else:
            reference = references.get(key)
            ref_id = reference.stable_id if reference else None
            token = f"{{{{cite:{ref_id or key}}}}}"
            spans.append(RawSpan(length, length + len(token), CITE, token, ref_id))
        parts.append(token)
        length += len(token)
        position = end
    parts.append(paragraph.text[position:])
    return make_paragraph("".join(parts), paragraph.section, spans, where, sec_number=paragraph.sec_number)


def _bib_entry(reference: Reference) -> BibEntry:
    return BibEntry(
        ref_id=reference.stable_id,
        title=reference.title,
        year=reference.year,
        raw=reference.raw or None,
        link=first_present(reference.ids.get("arxiv"), reference.ids.get("doi")),
        authors=reference.authors,
        ids=dict(reference.ids),
    )
