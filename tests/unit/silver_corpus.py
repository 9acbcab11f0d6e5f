"""A fixture corpus for the silver stage, written by the project: two small papers citing a third.

S2ORC JSON (the ``s2orc_json`` reader), all made up:

- ``c-cited``: a full-text paper on keeping RNA in frozen tissue (DOI 10.5555/cited);
- ``d-abstract``: a paper known only by its abstract (empty body; DOI 10.5555/abstract);
- ``a-citing``: cites c-cited (by DOI) in two sentences, d-abstract in one, an outside paper in
  one; one sentence cites two papers, one has a citation no entry answers ("[9]");
- ``b-citing``: cites c-cited by its title only (author-year), and itself.

The curated dataset (``data/citeworth``) puts a-citing in train and b-citing in test (dev empty).
"""

from __future__ import annotations

import json
from pathlib import Path

CITED_SENTENCES = [
    "Tissue stored at minus eighty degrees kept intact RNA for at least five years.",
    "RNA from samples left at room temperature degraded within two days.",
    "Repeated freezing and thawing damaged RNA more than the storage time did.",
    "Formalin fixation cross-links nucleic acids and fragments RNA.",
    "We extracted total RNA with a silica column kit from every sample.",
    "RNA integrity was measured by capillary electrophoresis.",
    "The tissue bank supplied 120 samples from 40 donors.",
    "Statistical tests used a significance level of 0.05 throughout.",
]
ABSTRACT = ("Heat shock proteins protect cells from damage by high temperature. Their expression rises "
            "within minutes of heating. The work was funded by a national research agency.")
A_SENTENCES = [  # (text with its citation markers, [(marker, bib key or None)])
    ("Archived tissue keeps its RNA intact for years when frozen at minus eighty degrees [1].",
     [("[1]", "BIBREF0")]),
    ("RNA quality drops quickly when samples sit at room temperature [1].", [("[1]", "BIBREF0")]),
    ("Heat shock proteins shield cells from heat stress [2].", [("[2]", "BIBREF1")]),
    ("Many groups run large tissue banks for cancer research [3].", [("[3]", "BIBREF2")]),
    ("Freezing and fixation both change what can be measured [1, 4].", [("[1, 4]", None)]),
    ("Some authors disagree about the best storage temperature [9].", [("[9]", None)]),
    ("We describe our own protocol below.", []),
]
B_SENTENCES = [
    ("Frozen storage preserves RNA integrity in tissue banks (Lee, 2019).", [("(Lee, 2019)", "BIBREF0")]),
    ("We extend our earlier tissue bank study (Kim, 2021).", [("(Kim, 2021)", "BIBREF1")]),
]
CITED_TITLE = "Freezing preserves RNA in archived tissue"
# What curation records for markers the source left unlinked (resolved by their printed numbers).
CURATED_REF_IDS = {"[1, 4]": ["BIBREF0", "BIBREF3"], "[9]": [None]}


def _paragraph(sentences: list[tuple[str, list]], section: str = "Introduction") -> dict:
    text, spans = "", []
    for sentence, markers in sentences:
        start = len(text) + (1 if text else 0)
        text = f"{text} {sentence}" if text else sentence
        for marker, ref_id in markers:
            begin = text.index(marker, start)
            spans.append({"start": begin, "end": begin + len(marker), "text": marker, "ref_id": ref_id})
    return {"text": text, "cite_spans": spans, "ref_spans": [], "section": section}


def _paper(paper_id: str, title: str, doi: str | None, body: list[dict], bib: dict, abstract: str) -> dict:
    return {"paper_id": paper_id, "metadata": {"title": title, "doi": doi, "year": 2020, "authors": []},
            "abstract": [{"text": abstract}], "body_text": body, "bib_entries": bib, "ref_entries": {}}


def _entry(title: str, year: int, last: str, doi: str | None = None) -> dict:
    return {"title": title, "year": year, "authors": [{"first": "A", "middle": [], "last": last}],
            "other_ids": {"DOI": [doi]} if doi else {}, "link": None}


def write_silver_corpus(root: Path) -> Path:
    """The corpus under ``root/raw/s2orc`` and the curated splits under ``root/data/citeworth``;
    returns the glob of the corpus files."""
    raw = root / "raw" / "s2orc"
    raw.mkdir(parents=True)
    cited_body = [_paragraph([(s, []) for s in CITED_SENTENCES[:4]], "Results"),
                  _paragraph([(s, []) for s in CITED_SENTENCES[4:]], "Methods")]
    papers = [
        _paper("c-cited", CITED_TITLE, "10.5555/cited", cited_body, {}, "Frozen tissue keeps its RNA."),
        _paper("d-abstract", "Heat shock proteins", "10.5555/abstract", [], {}, ABSTRACT),
        _paper("a-citing", "Tissue banks", "10.5555/a", [_paragraph(A_SENTENCES)], {
            "BIBREF0": _entry("Some other title for the cited paper", 2020, "Lee", "10.5555/cited"),
            "BIBREF1": _entry("Heat shock proteins", 2018, "Park", "10.5555/abstract"),
            "BIBREF2": _entry("A paper outside the corpus", 2015, "Ode"),
            "BIBREF3": _entry("Another outside paper", 2016, "Ray")}, "Banks of tissue."),
        _paper("b-citing", "Our tissue bank, continued", None, [_paragraph(B_SENTENCES)], {
            "BIBREF0": _entry(CITED_TITLE + ".", 2019, "Lee"),
            "BIBREF1": _entry("Our tissue bank, continued", 2021, "Kim")}, "More banks."),
    ]
    for paper in papers:
        (raw / f"{paper['paper_id']}.json").write_text(json.dumps(paper))
    data = root / "data" / "citeworth"
    data.mkdir(parents=True)
    (data / "train.jsonl").write_text(json.dumps(_curated("a-citing", A_SENTENCES)) + "\n")
    (data / "dev.jsonl").write_text("")
    (data / "test.jsonl").write_text(json.dumps(_curated("b-citing", B_SENTENCES)) + "\n")
    return str(raw / "*.json")


def _curated(paper_id: str, sentences: list[tuple[str, list]]) -> dict:
    """A curated record (only what the silver stage reads): every sentence a sample, markers removed."""
    samples = []
    for sentence, markers in sentences:
        text = sentence
        for marker, _ in markers:
            text = text.replace(f" {marker}", "")
        ref_ids = [CURATED_REF_IDS.get(marker, [ref_id]) for marker, ref_id in markers]
        samples.append({"text": text, "ref_ids": ref_ids or None})
    return {"paper_id": paper_id, "source": "s2orc_json", "section_idx": 0, "samples": samples}
