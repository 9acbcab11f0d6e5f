"""The curation pipeline end to end on the mirrored real papers, through the real CLI."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import datasets
import pytest

FIELDS = {"Biology", "Medicine", "Engineering", "Chemistry", "Psychology", "Computer Science",
          "Materials Science", "Economics", "Mathematics", "Physics"}
SAMPLE_KEYS = {"text", "label", "original_text", "ref_ids", "citation_text"}


def records(folder: Path, split: str) -> list[dict]:
    return [json.loads(line) for line in (folder / f"{split}.jsonl").read_text().splitlines()]


def test_dataset_has_the_released_shape(demo_dataset, tmp_path):
    data = demo_dataset / "data" / "citeworth"
    rows = [r for split in ("train", "dev", "test") for r in records(data, split)]
    assert rows, "the demo corpus must yield curated paragraphs"
    for row in rows:
        assert {"paper_id", "section_idx", "section_title", "mag_field_of_study", "original_text",
                "samples", "source", "release", "shard"} <= row.keys()
        assert len(row["mag_field_of_study"]) == 1 and row["mag_field_of_study"][0] in FIELDS
        for sample in row["samples"]:
            assert SAMPLE_KEYS <= sample.keys()
            assert sample["label"] in {"check-worthy", "non-check-worthy"}
            assert sample["text"][0].isupper() and sample["text"][-1] in ".!?" and len(sample["text"]) > 20
    assert {r["source"] for r in rows} >= {"unarxive"}
    files = {s: str(data / f"{s}.jsonl") for s in ("train", "dev", "test") if records(data, s)}
    loaded = datasets.load_dataset("json", data_files=files, cache_dir=str(tmp_path))
    assert {s: loaded[s].num_rows for s in files} == {s: len(records(data, s)) for s in files}


def test_no_paper_in_two_splits(demo_dataset):
    data = demo_dataset / "data" / "citeworth"
    owners: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        for row in records(data, split):
            assert owners.setdefault(row["paper_id"], split) == split


def test_stats_report_the_funnel_and_table2(demo_dataset):
    stats = json.loads((demo_dataset / "reports" / "dataset_stats.json").read_text())
    overall = stats["overall"]
    assert overall["sentences"] == sum(stats["splits"][s]["sentences"] for s in ("train", "dev", "test"))
    assert 0 < overall["cite_worthy_share"] < 1
    assert stats["funnel"]["curation"]["kept"] >= overall["paragraphs"]
    assert (demo_dataset / "reports" / "dataset_stats.md").read_text().startswith("# CiteWorth")


def test_baseline_keeps_more_but_dirtier_sentences(demo_dataset):
    ours = json.loads((demo_dataset / "reports" / "dataset_stats.json").read_text())["overall"]
    base = json.loads((demo_dataset / "reports" / "dataset_stats_baseline.json").read_text())["overall"]
    assert base["sentences"] > ours["sentences"]


def test_rerun_skips_finished_shards_and_outputs_are_byte_identical(demo_dataset, cli):
    stats_files = sorted((demo_dataset / "interim" / "stats").glob("*.json"))
    before = {p: p.stat().st_mtime_ns for p in stats_files}
    data_before = {p.name: p.read_bytes() for p in (demo_dataset / "data" / "citeworth").glob("*.jsonl")}
    cli(demo_dataset, "run", "curate")
    cli(demo_dataset, "run", "assemble")
    assert {p: p.stat().st_mtime_ns for p in stats_files} == before
    data_after = {p.name: p.read_bytes() for p in (demo_dataset / "data" / "citeworth").glob("*.jsonl")}
    assert data_after == data_before


def test_one_and_two_workers_give_identical_files(demo_dataset, cli):
    one = demo_dataset / "interim"
    cli(demo_dataset, "run", "curate", "--workers", "1", "-S", "out_dir=interim_w1")
    for path in sorted((one / "paragraphs").glob("*.jsonl")):
        assert (demo_dataset / "interim_w1" / "paragraphs" / path.name).read_bytes() == path.read_bytes()
    shutil.rmtree(demo_dataset / "interim_w1")


@pytest.fixture
def damaged_shard(demo_dataset, tmp_path):
    """A copy of a real unarXive shard with a malformed line, an invalid UTF-8 line and a record
    missing its body, between real papers."""
    source = sorted((demo_dataset / "raw").rglob("unarXive_data_sample/*.jsonl"))[0]
    lines = source.read_bytes().splitlines(keepends=True)
    paper = json.loads(lines[0])
    del paper["body_text"]
    bad = [b'{"paper_id": "broken", \n', b'{"paper_id": "\xff\xfe"}\n', json.dumps(paper).encode() + b"\n"]
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "arXiv_src_damaged.jsonl").write_bytes(b"".join(lines[:2] + bad + lines[2:4]))
    return folder


def test_bad_records_are_quarantined_with_reasons_and_the_run_continues(demo_dataset, damaged_shard, cli):
    inputs = json.dumps([{"reader": "unarxive", "glob": str(damaged_shard / "*.jsonl")}])
    cli(demo_dataset, "run", "curate", "-S", f"inputs={inputs}", "-S", "out_dir=interim_damaged")
    out = demo_dataset / "interim_damaged"
    quarantine = [json.loads(line) for p in (out / "quarantine").glob("*.jsonl")
                  for line in p.read_text().splitlines()]
    reasons = sorted(q["reason"].split(":")[0] for q in quarantine)
    assert reasons == ["invalid_utf8", "malformed_json", "missing_key"], quarantine
    stats = json.loads(next((out / "stats").glob("*.json")).read_text())
    assert stats["curation"]["papers"] == 4  # the four intact papers were all read
    assert sum(stats["quarantined"].values()) == 3
    shutil.rmtree(out)


def test_a_truncated_shard_is_named_with_the_offset_reached(demo_dataset, mirror, tmp_path, cli):
    """A legacy S2ORC shard pair written from the real 20200705 papers, its parses cut mid-stream."""
    parses = [json.loads(p.read_text()) for p in
              sorted(mirror.glob("github/allenai/s2orc-doc2json/tests/s2orc/20200705/*.json"))]
    ids = {p["paper_id"] for p in parses}
    rows = [json.loads(line) for line in
            (mirror / "github/allenai/s2orc/data/metadata/sample.jsonl").read_text().splitlines()]
    folder = tmp_path / "20200705v1"
    folder.mkdir()
    (folder / "metadata_0.jsonl.gz").write_bytes(gzip.compress(
        "".join(json.dumps(r) + "\n" for r in rows if r["paper_id"] in ids).encode()))
    whole = gzip.compress("".join(json.dumps(p) + "\n" for p in parses).encode())
    (folder / "pdf_parses_0.jsonl.gz").write_bytes(whole[: len(whole) * 2 // 3])
    inputs = json.dumps([{"reader": "s2orc_legacy", "glob": str(folder / "*.jsonl.gz")}])
    cli(demo_dataset, "run", "curate", "-S", f"inputs={inputs}", "-S", "out_dir=interim_truncated")
    out = demo_dataset / "interim_truncated"
    stats = json.loads(next((out / "stats").glob("*.json")).read_text())
    assert stats["truncated_at"].startswith("byte ")
    assert 1 <= stats["curation"]["papers"] < len(parses)  # the papers before the cut were read
    [bad] = [json.loads(line) for line in next((out / "quarantine").glob("*.jsonl")).read_text().splitlines()]
    assert bad["reason"] == "truncated_gzip" and bad["location"] == stats["truncated_at"]
    shutil.rmtree(out)
