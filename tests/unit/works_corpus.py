"""A fixture corpus for the works stage, written by the project: three papers citing five works.

S2ORC JSON (the ``s2orc_json`` reader), all made up:

- ``a-reefs`` (train) cites CORAL by DOI and PMID, WHEAT by title, author and year only, ATTENTION
  by DOI, and an entry with nothing to know it by (no title);
- ``b-crops`` (train) cites CORAL by its PMID alone (one work with a-reefs' entry: a shared
  identifier), WHEAT by the same title, author and year (one work: the fallback key, no identifier
  kind in common) and ATTENTION_COPY, a work with ATTENTION's title, author and year but another
  DOI (two works: different DOIs are never one work);
- ``c-heat`` (test) cites CORAL by DOI and a work cited nowhere else.

The curated dataset (``data/citeworth``) puts a-reefs and b-crops in train and c-heat in test.
"""

from __future__ import annotations

import json
from pathlib import Path

from silver_corpus import _curated as _silver_record
from silver_corpus import _paragraph

from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY

CORAL = {"title": "Global warming and recurrent mass bleaching of corals", "year": 2017, "last": "Hughes",
         "ids": {"DOI": ["10.5555/coral"], "PubMed": ["1111"]}, "venue": "Nature"}
WHEAT = {"title": "Elevated CO2 and the photosynthetic efficiency of wheat", "year": 2019, "last": "Garcia",
         "ids": {}, "venue": "Plant Cell"}
ATTENTION = {"title": "Attention is all you need", "year": 2017, "last": "Vaswani",
             "ids": {"DOI": ["10.5555/attention"]}, "venue": "NeurIPS"}
ATTENTION_COPY = {**ATTENTION, "ids": {"DOI": ["10.5555/attention-copy"]}}
HEAT = {"title": "Heat shock proteins in reef fish", "year": 2020, "last": "Okafor",
        "ids": {"DOI": ["10.5555/heat"]}, "venue": None}
NOTHING = {"title": None, "year": None, "last": None, "ids": {}, "venue": None}

A_SENTENCES = [  # (text with its markers, [(marker, bib key)])
    ("Coral reefs bleach when ocean temperatures stay high for weeks (Hughes et al., 2017).",
     [("(Hughes et al., 2017)", "BIBREF0")]),
    ("Elevated carbon dioxide raises the photosynthetic efficiency of wheat [2].", [("[2]", "BIBREF1")]),
    ("Self-attention replaced recurrence in machine translation [3].", [("[3]", "BIBREF2")]),
    ("An unknown source said so [4].", [("[4]", "BIBREF3")]),
    ("We describe our own reef survey below.", []),
]
B_SENTENCES = [
    ("Mass bleaching of corals followed the marine heatwave [1].", [("[1]", "BIBREF0")]),
    ("Wheat fixes more carbon under elevated carbon dioxide [2].", [("[2]", "BIBREF1")]),
    ("Attention models transformed translation [3].", [("[3]", "BIBREF2")]),
]
C_SENTENCES = [
    ("Corals bleach during marine heatwaves [1].", [("[1]", "BIBREF0")]),
    ("Reef fish express heat shock proteins [2].", [("[2]", "BIBREF1")]),
]


def _entry(work: dict, ids: dict | None = None) -> dict:
    return {"title": work["title"], "year": work["year"], "venue": work["venue"],
            "authors": [{"first": "A", "middle": [], "last": work["last"]}] if work["last"] else [],
            "other_ids": work["ids"] if ids is None else ids, "link": None}


def _paper(paper_id: str, sentences: list, bib: dict) -> dict:
    return {"paper_id": paper_id, "metadata": {"title": paper_id, "doi": None, "year": 2021, "authors": []},
            "abstract": [{"text": "An abstract."}], "body_text": [_paragraph(sentences)],
            "bib_entries": {f"BIBREF{i}": entry for i, entry in enumerate(bib)}, "ref_entries": {}}


def write_works_corpus(root: Path) -> str:
    """The corpus under ``root/raw/s2orc`` and the curated splits under ``root/data/citeworth``;
    returns the glob of the corpus files."""
    raw = root / "raw" / "s2orc"
    raw.mkdir(parents=True)
    papers = [
        _paper("a-reefs", A_SENTENCES, [_entry(CORAL), _entry(WHEAT), _entry(ATTENTION), _entry(NOTHING)]),
        _paper("b-crops", B_SENTENCES,
               [_entry(CORAL, {"PubMed": ["1111"]}), _entry(WHEAT), _entry(ATTENTION_COPY)]),
        _paper("c-heat", C_SENTENCES, [_entry(CORAL, {"DOI": ["10.5555/CORAL"]}), _entry(HEAT)]),
    ]
    for paper in papers:
        (raw / f"{paper['paper_id']}.json").write_text(json.dumps(paper))
    data = root / "data" / "citeworth"
    data.mkdir(parents=True)
    (data / "train.jsonl").write_text(json.dumps(_curated("a-reefs", A_SENTENCES)) + "\n"
                                      + json.dumps(_curated("b-crops", B_SENTENCES)) + "\n")
    (data / "dev.jsonl").write_text("")
    (data / "test.jsonl").write_text(json.dumps(_curated("c-heat", C_SENTENCES)) + "\n")
    return str(raw / "*.json")


def _curated(paper_id: str, sentences: list[tuple[str, list]]) -> dict:
    """A curated record (what the works stage reads): every sentence a sample, markers removed,
    labelled cite-worthy when it has a marker."""
    record = _silver_record(paper_id, sentences)
    for sample in record["samples"]:
        sample["label"] = CITE_WORTHY if sample["ref_ids"] else NOT_CITE_WORTHY
    return record
