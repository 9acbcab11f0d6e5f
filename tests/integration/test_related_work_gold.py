"""The related-work stage against the hand-made gold (tests/gold/related_work.json) on the mirrored
papers -- the demo corpus and the PLOS starter corpus, 173 papers -- and end to end on the demo."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from citeworth.core.paper import Paper
from citeworth.corpora.related_work.gold import detect, gold_inputs, load_gold, score
from citeworth.corpora.related_work.record import CITED, paper_record
from citeworth.corpora.related_work.sections import SectionFinder
from citeworth.sources import BadRecord, InputSpec, input_shards, read_shard
from citeworth.text.sentences import SentenceSplitter

GOLD = Path(__file__).resolve().parents[1] / "gold" / "related_work.json"


def papers(inputs: list[InputSpec]) -> list[Paper]:
    items = [item for shard in input_shards(inputs) for item in read_shard(shard)]
    assert not [item for item in items if isinstance(item, BadRecord)]
    return items


@pytest.fixture(scope="module")
def splitter():
    return SentenceSplitter()


@pytest.fixture(scope="module")
def read(demo_project, mirror):
    found = papers(gold_inputs(demo_project, mirror))
    assert len(found) == 173  # 71 demo papers (4 of them LaTeX) + 102 PLOS
    return found


@pytest.fixture(scope="module")
def scored(read, splitter):
    return score(detect(read, SectionFinder(), splitter.split), load_gold(GOLD))


def test_sections_are_found_under_the_gold_titles_and_nowhere_else(scored):
    print(f"sections found: {scored['sections_found']} of {scored['sections_gold']} "
          f"(+{scored['not_scored']} whose heading the source dropped, not scored)")
    assert scored["share_sections_found"] >= 0.97, [p for p in scored["papers"]
                                                    if p["found_title"] != p["gold_title"]]
    assert scored["false_sections"] == []


def test_anchors_map_to_bibliography_entries(scored):
    print(f"anchors mapped: {scored['anchors_mapped']} of {scored['anchors_gold']}")
    assert scored["share_anchors_mapped"] >= 0.95, [p for p in scored["papers"]
                                                    if p["mapped_anchors"] != p["gold_anchors"]]


def _unlinked(paper: Paper) -> Paper:
    spans = lambda p: tuple(dataclasses.replace(s, ref_id=None, cites=()) for s in p.cite_spans)  # noqa: E731
    return dataclasses.replace(paper, paragraphs=[dataclasses.replace(p, cite_spans=spans(p))
                                                  for p in paper.paragraphs])


def _entries(record: dict) -> list[list[str]]:
    return [[record[CITED][i]["ref_id"] for i in indices if i in record[CITED]]
            for indices in record["CitedPaperIndexList"]]


def test_without_the_sources_links_numbers_find_the_same_entries(read, splitter):
    """GROBID without targets, JATS without rids: the gold's TEI and JATS sections (175 anchors,
    ranges such as [7]-[12] among them) map to the very entries the links name, by number alone."""
    gold = {(p["source"], p["paper_id"]) for p in load_gold(GOLD)["papers"] if p["source"] in ("tei", "jats")}
    checked = 0
    for paper in (p for p in read if (p.source, p.paper_id) in gold):
        linked = paper_record(paper, SectionFinder(), splitter.split)
        unlinked = paper_record(_unlinked(paper), SectionFinder(), splitter.split)
        assert _entries(unlinked) == _entries(linked), paper.paper_id
        checked += sum(map(len, _entries(linked)))
    assert checked == 175


def test_the_cli_stage_on_the_demo_corpus(demo_project, cli):
    cli(demo_project, "run", "related_work")
    lines = (demo_project / "data" / "related_work" / "related_work.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["paper_id"] for r in records] == sorted(r["paper_id"] for r in records)
    # demo-v2 holds the PLOS starter corpus: the stage's demo run covers the whole gold
    assert {r["paper_id"]: r["section_title"] for r in records} == \
        {p["paper_id"]: p["section_title"] for p in load_gold(GOLD)["papers"]}
    for record in records:
        keys = ("Sentences", "AnswersCitationWorthiness", "CitedNumberList", "CollectedCitedNumberList",
                "CitationAnchorList", "CitedPaperIndexList")
        assert len({len(record[key]) for key in keys}) == 1
        tagged = zip(record["Sentences"], record["CitedNumberList"], strict=True)
        assert all(s.count("%cite{[") == n for s, n in tagged)
    stats = json.loads((demo_project / "reports" / "related_work_stats.json").read_text())
    assert stats["overall"]["papers_with_section"] == len(records) and stats["overall"]["papers"] == 173
    assert set(stats["per_source"]) == {"arxiv_latex", "jats", "s2orc_json", "tei", "unarxive"}
    report = (demo_project / "reports" / "related_work_stats.md").read_text()
    assert report.startswith("# Related-work dataset")
