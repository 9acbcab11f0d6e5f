"""One paper, one record: assemble keeps one copy of each paper found in several curated shards
(on curated shards this test writes: copies that share an identifier or, without one in common, the
fallback key), reports each, and counts them in the dataset stats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_json, write_jsonl
from citeworth.core.schema import SPLITS
from citeworth.curate.assemble import AssembleParams, assemble

F_TWO, F_THREE = "fallback:0000000000000002", "fallback:0000000000000003"


def copy(paper_id, source, ids, paragraphs, fallback=None, title="A title"):
    return {"paper_id": paper_id, "source": source, "ids": ids, "title": title, "fallback": fallback,
            "paragraphs": paragraphs}


# Shard key -> its copies in reading order. PMC1 comes three times (twice in one JATS folder, once in
# S2ORC by its PMC id); 222 and t2 share only the fallback key (the TEI copy has no identifier);
# 333 and t3 share the fallback key but not their DOIs: two papers.
SHARDS = {
    "jats__a": [copy("PMC1", "jats", {"pmcid": "PMC1", "doi": "10.1/one"}, 2),
                copy("PMC1", "jats", {"pmcid": "PMC1", "doi": "10.1/one"}, 2)],
    "s2orc_json__b": [copy("111", "s2orc_json", {"s2": "111", "pmcid": "PMC1"}, 3),
                      copy("222", "s2orc_json", {"s2": "222"}, 1, F_TWO),
                      copy("333", "s2orc_json", {"doi": "10.1/three"}, 1, F_THREE)],
    "tei__c": [copy("t2", "tei", {}, 1, F_TWO), copy("t3", "tei", {"doi": "10.1/other"}, 1, F_THREE)],
    "unarxive__d": [copy(f"u{n}", "unarxive", {"arxiv": f"2101.{n:05d}"}, 2) for n in range(12)],
}


def paragraph(key: str, record: dict, number: int, index: int) -> dict:
    """A curated paragraph whose text says which copy it is from."""
    source, shard = key.split("__")
    text = f"Copy {number} of paper {record['paper_id']} in {key} says this in paragraph {index}."
    return {"paper_id": record["paper_id"], "section_idx": index, "section_title": "Introduction",
            "mag_field_of_study": ["Biology"], "original_text": text, "source": source, "shard": shard,
            "release": "r1", "samples": [{"text": text, "label": "non-check-worthy"}]}


def write_curated(in_dir: Path, shards: dict[str, list[dict]]) -> None:
    for key, records in shards.items():
        write_jsonl(in_dir / "papers" / f"{key}.jsonl", records)
        write_jsonl(in_dir / "paragraphs" / f"{key}.jsonl",
                    [paragraph(key, record, number, index) for number, record in enumerate(records)
                     for index in range(record["paragraphs"])])
        write_json(in_dir / "stats" / f"{key}.json",
                   {"shard": key, "curation": {"papers": len(records)}, "quarantined": {}})


def params_for(root: Path, **overrides) -> AssembleParams:
    return AssembleParams(in_dir=root / "interim", out_dir=root / "data", stats_path=root / "stats.json",
                          table_path=root / "stats.md", duplicates_path=root / "duplicates.json",
                          split=[0.6, 0.2, 0.2], per_field=None, **overrides)


def dataset(params: AssembleParams) -> dict[str, list[dict]]:
    return {split: [json.loads(line) for line in (params.out_dir / f"{split}.jsonl").read_text().splitlines()]
            for split in SPLITS}


@pytest.fixture(scope="module")
def assembled(tmp_path_factory):
    root = tmp_path_factory.mktemp("assembled")
    write_curated(root / "interim", SHARDS)
    params = params_for(root)
    return params, assemble(params)


def test_each_paper_keeps_one_copy_in_one_split(assembled):
    params, summary = assembled
    splits = dataset(params)
    where = {(r["source"], r["paper_id"], r["original_text"].split(" says")[0]): split
             for split, records in splits.items() for r in records}
    assert {key for key in where if key[1] in {"PMC1", "111"}} == {
        ("jats", "PMC1", "Copy 0 of paper PMC1 in jats__a")}
    assert not [key for key in where if key[1] == "t2"]  # its S2ORC copy 222 is kept
    assert {key[1] for key in where} >= {"222", "333", "t3"}  # different DOIs: two papers
    assert sum(len(records) for records in splits.values()) == 2 + 1 + 1 + 1 + 24
    assert summary["duplicate_copies_dropped"] == 3


def test_the_report_names_every_copy_the_one_kept_and_why(assembled):
    params, _ = assembled
    report = json.loads(params.duplicates_path.read_text())
    first, second = report["groups"]
    assert first["identity"] == ["doi:10.1/one", "pmcid:PMC1", "s2:111"]
    assert first["kept"] == {"source": "jats", "shard": "jats__a", "paper_id": "PMC1", "paragraphs": 2,
                             "ids": {"pmcid": "PMC1", "doi": "10.1/one"}}
    assert [(c["shard"], c["paper_id"]) for c in first["dropped"]] == [("jats__a", "PMC1"),
                                                                         ("s2orc_json__b", "111")]
    assert first["why"] == ("jats ranks before s2orc_json in assemble.source_order; of the jats copies, the "
                            "first by shard, paper id and reading order")
    assert (second["kept"]["paper_id"], [c["paper_id"] for c in second["dropped"]]) == ("222", ["t2"])
    assert second["identity"] == [F_TWO, "s2:222"] and second["why"].startswith("s2orc_json ranks before tei")
    counts = {"copies": 19, "papers": 16, "papers_in_several_copies": 2, "dropped_copies": 3,
              "dropped_paragraphs": 6, "dropped_by_source": {"jats": 1, "s2orc_json": 1, "tei": 1}}
    assert report["counts"] == counts
    stats = json.loads(params.stats_path.read_text())
    assert stats["duplicates"] == counts and stats["overall"]["papers"] == 16
    assert "| Copies left out | 3 (jats 1, s2orc_json 1, tei 1) |" in params.table_path.read_text()


def test_a_rerun_writes_the_same_bytes(assembled, tmp_path):
    params, _ = assembled
    again = params.model_copy(update={"out_dir": tmp_path / "data", "duplicates_path": tmp_path / "d.json",
                                      "stats_path": tmp_path / "s.json", "table_path": tmp_path / "s.md"})
    assemble(again)
    for split in SPLITS:
        name = f"{split}.jsonl"
        assert (again.out_dir / name).read_bytes() == (params.out_dir / name).read_bytes()
    assert again.duplicates_path.read_bytes() == params.duplicates_path.read_bytes()


def test_the_source_order_decides_which_copy_is_kept(tmp_path):
    write_curated(tmp_path / "interim",
                  {key: SHARDS[key] for key in ("jats__a", "s2orc_json__b", "unarxive__d")})
    params = params_for(tmp_path, source_order=["s2orc_json", "jats", "unarxive"])
    assemble(params)
    first = json.loads(params.duplicates_path.read_text())["groups"][0]
    assert (first["kept"]["paper_id"], first["why"]) == (
        "111", "s2orc_json ranks before jats in assemble.source_order")


def test_a_source_the_order_does_not_rank_is_named(tmp_path):
    write_curated(tmp_path / "interim", SHARDS)
    with pytest.raises(StageFailed, match=r"does not rank source 'tei' \(shard tei__c\)"):
        assemble(params_for(tmp_path, source_order=["jats", "s2orc_json", "unarxive"]))
    with pytest.raises(ValueError, match=r"lists \['jats'\] more than once"):
        params_for(tmp_path, source_order=["jats", "tei", "jats"])


@pytest.mark.parametrize("damage", ["a paragraph more", "a paragraph less", "no papers file"])
def test_papers_files_out_of_step_with_their_paragraphs_are_named(tmp_path, damage):
    write_curated(tmp_path / "interim", {"jats__a": SHARDS["jats__a"]})
    papers, paragraphs = (tmp_path / "interim" / kind / "jats__a.jsonl" for kind in ("papers", "paragraphs"))
    lines = paragraphs.read_text().splitlines(keepends=True)
    if damage == "no papers file":
        papers.unlink()
    else:
        paragraphs.write_text("".join(lines + lines[:1] if damage == "a paragraph more" else lines[:-1]))
    with pytest.raises(StageFailed, match="jats__a.jsonl (is missing|does not count the paragraphs)"):
        assemble(params_for(tmp_path))
