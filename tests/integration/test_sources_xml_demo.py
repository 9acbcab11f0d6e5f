"""The PMC JATS and GROBID TEI files in the embedded demo, through the real CLI (the shared
``demo_dataset`` session fixture): JATS articles yield clean paragraphs, TEI papers are rejected
for their missing field of study."""

from __future__ import annotations

import json

from citeworth.text import citations as cit
from citeworth.text.fields import CITEWORTH_FIELDS
from citeworth.text.sections import SectionFilter


def test_jats_articles_yield_clean_paragraphs(demo_dataset):
    rows = [json.loads(line) for split in ("train", "dev", "test")
            for line in (demo_dataset / "data" / "citeworth" / f"{split}.jsonl").read_text().splitlines()]
    jats = [row for row in rows if row["source"] == "jats"]
    assert len({row["paper_id"] for row in jats}) >= 5 and len(jats) >= 30
    fields = lambda rows: {row["mag_field_of_study"][0] for row in rows}  # noqa: E731
    # PMC's BMC and PLoS articles are biomedical; the PLOS starter corpus spans the taxonomy
    assert fields(row for row in jats if row["paper_id"].startswith("PMC")) == {"Biology", "Medicine"}
    assert fields(jats) <= set(CITEWORTH_FIELDS)
    assert all(SectionFilter().permits(row["section_title"]) for row in jats)
    samples = [sample for row in jats for sample in row["samples"]]
    assert all("{{" not in s["text"] and "  " not in s["text"] for s in samples)
    cited = [s for s in samples if s["label"] == "check-worthy"]
    # read as the curation reads them by default (curate.rules.dash_ranges: "[13–15]" is numeric)
    assert cited and all(cit.citation_format(cit.ascii_dashes(text)) in {"numeric", "author_year"}
                         for s in cited for text in s["citation_text"])
    assert not any(cit.missed_citation(s["text"]) for s in samples)


def test_tei_papers_are_read_and_rejected_for_no_field(demo_dataset):
    for shard in ("tei__test_1", "tei__test_pdf"):
        stats = json.loads((demo_dataset / "interim" / "stats" / f"{shard}.json").read_text())
        assert stats["quarantined"] == {}
        assert stats["curation"]["papers_rejected"] == {"no_fields_of_study": 1}
