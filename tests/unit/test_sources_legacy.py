"""The S2ORC 20200705 shard-pair reader on gzip shards built from the mirrored real papers.

A legacy ``pdf_parses_N`` line has the layout of the 20200705 single-paper JSON, and a
``metadata_N`` line that of the metadata sample, so the test writes real shards from both.
"""

from __future__ import annotations

import gzip
import json

import pytest

from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.s2orc_legacy import MetadataCursor

PARSES = "github/allenai/s2orc-doc2json/tests/s2orc/20200705/*.json"
SAMPLE = "github/allenai/s2orc/data/metadata/sample.jsonl"
IDS = ("18980380", "18980463", "94551546")


@pytest.fixture(scope="module")
def parses(mirror):
    """The three real 20200705 parses as pdf_parses lines, by paper id."""
    lines = {}
    for path in sorted(mirror.glob(PARSES)):
        record = json.loads(path.read_text())
        lines[record["paper_id"]] = json.dumps(record) + "\n"
    assert sorted(lines) == sorted(IDS)
    return lines


@pytest.fixture(scope="module")
def metadata_rows(mirror):
    """Sample rows without a pdf parse, plus the rows of the three papers, in the sample's order."""
    rows = [json.loads(line) for line in (mirror / SAMPLE).read_text().splitlines()]
    return [row for row in rows if row["paper_id"] in IDS or not row["has_pdf_parse"]]


def row_order(metadata_rows):
    return [row["paper_id"] for row in metadata_rows if row["paper_id"] in IDS]


def write_pair(root, parse_lines, rows, number="0"):
    full = root / "20200705v1" / "full"
    (full / "metadata").mkdir(parents=True, exist_ok=True)
    (full / "pdf_parses").mkdir(parents=True, exist_ok=True)
    parses_path = full / "pdf_parses" / f"pdf_parses_{number}.jsonl.gz"
    metadata_path = full / "metadata" / f"metadata_{number}.jsonl.gz"
    parses_path.write_bytes(gzip.compress("".join(parse_lines).encode()))
    metadata_path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    return full


def read_pair(full):
    [shard] = discover_shards("s2orc_legacy", str(full / "*" / "*.jsonl.gz"))
    return shard, list(read_shard(shard))


def test_discovery_pairs_the_files_by_shard_number(tmp_path, parses, metadata_rows):
    full = write_pair(tmp_path, list(parses.values()), metadata_rows, number="7")
    shard, _ = read_pair(full)
    assert (shard.name, shard.release) == ("20200705_7", "20200705")
    assert shard.paths == (str(full / "pdf_parses" / "pdf_parses_7.jsonl.gz"),)
    assert shard.metadata == str(full / "metadata" / "metadata_7.jsonl.gz")
    [same] = discover_shards("s2orc_legacy", str(full / "pdf_parses" / "*.gz"),
                             metadata=str(full / "metadata" / "*.gz"), release="v1")
    assert (same.paths, same.metadata, same.release) == (shard.paths, shard.metadata, "v1")


def test_a_parse_without_its_metadata_file_is_an_error(tmp_path, parses):
    folder = tmp_path / "pdf_parses"
    folder.mkdir()
    (folder / "pdf_parses_3.jsonl.gz").write_bytes(gzip.compress(b"{}\n"))
    with pytest.raises(ValueError, match="metadata_3"):
        discover_shards("s2orc_legacy", str(folder / "*.gz"))


def test_join_in_metadata_order(tmp_path, parses, metadata_rows):
    order = row_order(metadata_rows)
    _, items = read_pair(write_pair(tmp_path, [parses[pid] for pid in order], metadata_rows))
    assert [paper.paper_id for paper in items] == order  # rows without a parse give no Paper
    by_id = {paper.paper_id: paper for paper in items}
    assert by_id["18980380"].fields_of_study == ("Mathematics", "Computer Science")
    assert by_id["94551546"].metadata["venue_id"] == "Npg Asia Materials"
    assert sum(len(p.paragraphs) for p in items) == 124
    assert sum(len(q.cite_spans) for p in items for q in p.paragraphs) == 186
    assert {(p.source, p.release, p.shard) for p in items} == {("s2orc_legacy", "20200705", "20200705_0")}


def test_join_in_any_order_gives_the_same_papers(tmp_path, parses, metadata_rows):
    order = row_order(metadata_rows)
    _, aligned = read_pair(write_pair(tmp_path / "a", [parses[pid] for pid in order], metadata_rows))
    reversed_lines = [parses[pid] for pid in reversed(order)]
    _, reverse = read_pair(write_pair(tmp_path / "b", reversed_lines, metadata_rows))
    assert [p.paper_id for p in reverse] == order[::-1]
    assert {p.paper_id: (p.fields_of_study, p.metadata) for p in aligned} == \
        {p.paper_id: (p.fields_of_study, p.metadata) for p in reverse}


def find(cursor, paper_id):
    """Run the cursor's lookup (a generator of bad rows) to its result."""
    lookup = cursor.find(paper_id)
    try:
        while True:
            next(lookup)
    except StopIteration as done:
        return done.value


def test_aligned_files_buffer_no_metadata(tmp_path, parses, metadata_rows):
    order = row_order(metadata_rows)
    shard, _ = read_pair(write_pair(tmp_path, [parses[pid] for pid in order], metadata_rows))

    def buffered_after_each(ids):
        cursor, sizes = MetadataCursor(shard.metadata, shard), []
        for pid in ids:
            assert find(cursor, pid) is not None
            sizes.append(cursor.buffered)
        return sizes

    assert buffered_after_each(order) == [0, 0, 0]
    assert buffered_after_each(order[::-1]) == [2, 1, 0]  # out of order: skipped rows wait in the buffer


def test_a_parse_without_a_metadata_row_is_quarantined(tmp_path, parses, metadata_rows):
    rows = [row for row in metadata_rows if row["paper_id"] != "18980463"]
    order = row_order(metadata_rows)
    _, items = read_pair(write_pair(tmp_path, [parses[pid] for pid in order], rows))
    bad = [item for item in items if isinstance(item, BadRecord)]
    line = order.index("18980463") + 1
    assert [(b.reason, b.location) for b in bad] == [("missing_metadata", f"line {line}")]
    assert len(items) == 3  # the papers after it are still read


def copies(parses, rows, times):
    """``times`` copies of the three papers and their rows under new ids (a bigger shard)."""
    lines, extra = [], []
    for copy in range(times):
        for pid in IDS:
            record = json.loads(parses[pid])
            record["paper_id"] = f"{pid}{copy:03d}"
            lines.append(json.dumps(record) + "\n")
            row = dict(next(r for r in rows if r["paper_id"] == pid), paper_id=record["paper_id"])
            extra.append(row)
    return lines, extra


def test_truncated_parses_stop_the_shard_at_the_offset_reached(tmp_path, parses, metadata_rows):
    lines, rows = copies(parses, metadata_rows, 10)
    full = write_pair(tmp_path, lines, rows)
    path = full / "pdf_parses" / "pdf_parses_0.jsonl.gz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _, items = read_pair(full)
    *papers, last = items
    assert 0 < len(papers) < len(lines) and not any(isinstance(p, BadRecord) for p in papers)
    assert [p.paper_id for p in papers] == [json.loads(line)["paper_id"] for line in lines[: len(papers)]]
    assert isinstance(last, BadRecord) and last.reason == "truncated_gzip" and last.fatal
    assert last.location == f"byte {sum(len(line.encode()) for line in lines[: len(papers)])}"
    assert "pdf_parses_0.jsonl.gz" in last.detail


def test_truncated_metadata_counts_every_parse_it_cannot_join(tmp_path, parses, metadata_rows):
    lines, rows = copies(parses, metadata_rows, 10)
    full = write_pair(tmp_path, lines, rows)
    path = full / "metadata" / "metadata_0.jsonl.gz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    _, items = read_pair(full)
    papers = [item for item in items if not isinstance(item, BadRecord)]
    [broken] = [item for item in items if isinstance(item, BadRecord) and item.fatal]
    unjoined = [item for item in items if isinstance(item, BadRecord) and item.reason == "metadata_truncated"]
    assert broken.reason == "truncated_gzip" and broken.location.startswith("metadata_0.jsonl.gz byte ")
    assert papers and unjoined and len(papers) + len(unjoined) == len(lines)  # none lost uncounted
    assert [bad.location for bad in unjoined] == [f"line {n}" for n in range(len(papers) + 1, len(lines) + 1)]
    assert "broke off" in unjoined[0].detail
