"""Bad input: every fault becomes a BadRecord with its reason and location, reading goes on after
it, and only a broken gzip stream ends a shard. Fixtures are small JSONL files the test writes."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from citeworth.core.paper import Paper
from citeworth.sources import BadRecord, Shard, discover_shards, read_shard
from citeworth.sources import lines as lines_module
from citeworth.sources.base import RAW_CHARS
from citeworth.sources.lines import BrokenStream, iter_lines


def paper(paper_id="2301.00001", text="Prior work exists {{cite:b1}}.", spans=None, **changes):
    spans = [{"start": 18, "end": 29, "text": "{{cite:b1}}", "ref_id": "b1"}] if spans is None else spans
    block = {"section": "Introduction", "sec_number": "1", "sec_type": "section", "content_type": "paragraph",
             "text": text, "cite_spans": spans, "ref_spans": []}
    record = {"paper_id": paper_id, "metadata": {"categories": "cs.CL"}, "body_text": [block],
              "bib_entries": {"b1": {}}, "ref_entries": {}}
    record.update(changes)
    return record


def line(record) -> bytes:
    return (json.dumps(record) + "\n").encode()


def read_lines(tmp_path, lines: list[bytes], gz=False):
    data = b"".join(lines)
    path = tmp_path / ("shard.jsonl.gz" if gz else "shard.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    [shard] = discover_shards("unarxive", str(path))
    return list(read_shard(shard))


def span(start, end, text="{{cite:b1}}"):
    return {"start": start, "end": end, "text": text, "ref_id": "b1"}


@pytest.mark.parametrize(("bad_line", "reason"), [
    (b'{"paper_id": "2301.1", "body_text": [\n', "malformed_json"),
    (b"[1, 2, 3]\n", "malformed_json"),
    (line(paper())[:-1].replace(b"Prior", b"Pr\xe9or") + b"\n", "invalid_utf8"),
    (line({k: v for k, v in paper().items() if k != "paper_id"}), "missing_key:paper_id"),
    (line({k: v for k, v in paper().items() if k != "body_text"}), "missing_key:body_text"),
    (line(paper(spans=[{"end": 29, "text": "{{cite:b1}}"}])), "missing_key:start"),
    (line(paper(spans=[span("18", 29)])), None),  # a digit string is an offset
    (line(paper(spans=[span("x", 29)])), "bad_type:start"),
    (line(paper(spans=[span(18, 99)])), "span_out_of_range"),
    (line(paper(spans=[span(-1, 10)])), "span_out_of_range"),
    (line(paper(spans=[span(18, 18)])), "empty_span"),
    (line(paper(spans=[span(18, 29), span(20, 24, "cite")])), "overlapping_spans"),
])
def test_each_fault_is_quarantined_and_reading_goes_on(tmp_path, bad_line, reason):
    items = read_lines(tmp_path, [line(paper("2301.00001")), bad_line, line(paper("2301.00003"))])
    if reason is None:
        assert all(isinstance(item, Paper) for item in items)
        return
    first, bad, last = items
    assert (first.paper_id, last.paper_id) == ("2301.00001", "2301.00003")
    assert isinstance(bad, BadRecord)
    assert (bad.reason, bad.location, bad.shard) == (reason, "line 2", "shard")
    assert bad.raw == bad_line.rstrip(b"\n").decode("utf-8", errors="replace")
    assert bad.detail


def test_raw_keeps_the_first_characters_only(tmp_path):
    _, bad = read_lines(tmp_path, [line(paper()), b'{"paper_id": "' + b"x" * 5000 + b"\n"])
    assert bad.reason == "malformed_json" and len(bad.raw) == RAW_CHARS


def test_blank_lines_are_not_records(tmp_path):
    items = read_lines(tmp_path, [line(paper()), b"\n", b"  \n", line(paper("2301.00002"))])
    assert [item.paper_id for item in items] == ["2301.00001", "2301.00002"]


def test_truncated_gzip_ends_the_shard_naming_the_offset_reached(tmp_path):
    lines = [line(paper(f"2301.{i:05d}", text="Prior work exists {{cite:b1}}. " + "y" * 2000 + f" {i}"))
             for i in range(400)]
    path = tmp_path / "shard.jsonl.gz"
    compressed = gzip.compress(b"".join(lines))
    path.write_bytes(compressed[: len(compressed) // 2])
    [shard] = discover_shards("unarxive", str(path))
    *papers, last = read_shard(shard)
    assert 0 < len(papers) < len(lines) and all(isinstance(p, Paper) for p in papers)
    assert (last.reason, last.location) == ("truncated_gzip", f"byte {sum(map(len, lines[: len(papers)]))}")
    assert last.fatal and f"{len(compressed) // 2} bytes on disk" in last.detail


def test_corrupt_gzip_is_fatal_and_reported(tmp_path):
    compressed = bytearray(gzip.compress(b"".join(line(paper(f"2301.{i:05d}")) for i in range(50))))
    compressed[-6] ^= 0xFF  # the CRC trailer no longer matches
    path = tmp_path / "shard.jsonl.gz"
    path.write_bytes(bytes(compressed))
    [shard] = discover_shards("unarxive", str(path))
    *papers, last = read_shard(shard)
    assert len(papers) == 50 and last.reason == "corrupt_gzip" and last.fatal


def _damaged_streams() -> dict[str, bytes]:
    """A gzip file of long JSON lines, cut short, with one bit flipped, and with what may follow it."""
    chance = random.Random(7)
    texts = ["x" * chance.randint(0, 3000) + chance.randbytes(40).hex() for _ in range(300)]
    sound = gzip.compress(b"".join(line(paper(f"2301.{i:05d}", text=text)) for i, text in enumerate(texts)))
    streams = {f"cut at {cut}": sound[:cut] for cut in chance.sample(range(1, len(sound)), 25)}
    for position in chance.sample(range(len(sound)), 40):
        flipped = bytearray(sound)
        flipped[position] ^= 1 << chance.randrange(8)
        streams[f"bit flipped at {position}"] = bytes(flipped)
    streams |= {"garbage after": sound + b"garbage", "zero padding after": sound + bytes(10),
                "two members": sound + sound, "a second header alone": sound + sound[:10],
                "a second magic alone": sound + b"\x1f\x8b", "sound": sound}
    return streams


def _read(lines) -> tuple[list, tuple | None]:
    """The lines read, and the break that ended them (None if none)."""
    read = []
    try:
        for item in lines:
            read.append(item)
    except BrokenStream as exc:
        return read, (exc.reason, exc.offset, exc.line, exc.detail)
    return read, None


@pytest.mark.parametrize(("name", "data"), list(_damaged_streams().items()))
def test_lines_and_breaks_are_the_standard_librarys_though_isal_inflates(tmp_path, name, data):
    """ISA-L reads the stream; a break is reported with gzip's lines, offset and words."""
    path = tmp_path / "shard.jsonl.gz"
    path.write_bytes(data)
    assert _read(iter_lines(path)) == _read(lines_module._lines(path, gzip.open))


def test_a_sound_stream_is_read_by_isal_alone(tmp_path, monkeypatch):
    path = tmp_path / "shard.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(line(paper(f"2301.{i:05d}")) for i in range(50))))
    monkeypatch.setattr(gzip, "open", None)  # the standard library's reader is not called
    assert len(list(iter_lines(path))) == 50


def test_gzip_is_recognised_by_content_not_name(tmp_path):
    path = tmp_path / "part-0"
    path.write_bytes(gzip.compress(line(paper())))
    [shard] = discover_shards("unarxive", str(path))
    assert [p.paper_id for p in read_shard(shard)] == ["2301.00001"]


def test_single_paper_json_faults_name_the_file(tmp_path):
    folder = tmp_path / "20200705"
    folder.mkdir()
    (folder / "1.json").write_text('{"paper_id": "1", "body_text": [')
    (folder / "2.json").write_bytes(b'{"paper_id": "2", "body_text": [], "x": "\xff"}')
    (folder / "3.json").write_text(json.dumps({"paper_id": "3"}))
    beyond = {"text": "A [1].", "section": "", "cite_spans": [{"start": 2, "end": 9, "text": "[1]"}]}
    (folder / "4.json").write_text(json.dumps({"paper_id": "4", "body_text": [beyond]}))
    (folder / "5.json").write_text(json.dumps({"paper_id": "5", "body_text": []}))
    [shard] = discover_shards("s2orc_json", str(folder / "*.json"))
    *bad, good = read_shard(shard)
    assert [(b.location, b.reason) for b in bad] == [
        ("file 1.json", "malformed_json"), ("file 2.json", "invalid_utf8"),
        ("file 3.json", "missing_key:body_text"), ("file 4.json", "span_out_of_range")]
    assert good.paper_id == "5"


def test_discovery_errors_are_specific(tmp_path):
    with pytest.raises(FileNotFoundError, match="no files match"):
        discover_shards("unarxive", str(tmp_path / "*.jsonl"))
    with pytest.raises(ValueError, match="unknown reader 'grobid'"):
        discover_shards("grobid", str(tmp_path / "*"))
    (tmp_path / "a.jsonl").write_bytes(line(paper()))
    with pytest.raises(ValueError, match="own metadata"):
        discover_shards("unarxive", str(tmp_path / "*.jsonl"), metadata=str(tmp_path / "a.jsonl"))
    with pytest.raises(FileNotFoundError, match="exactly one file"):
        discover_shards("s2orc_json", str(tmp_path / "*.jsonl"), metadata=str(tmp_path / "none*.jsonl"))
    with pytest.raises(ValueError, match="unknown reader"):
        read_shard(Shard("nope", "x", (str(tmp_path / "a.jsonl"),), "r"))


def test_shard_names_are_sorted_safe_and_unique(tmp_path):
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "arXiv src 2212.jsonl").write_bytes(line(paper()))
    shards = discover_shards("unarxive", str(tmp_path / "*" / "*.jsonl"))
    names = [shard.name for shard in shards]
    assert len(set(names)) == 2 and names == sorted(names)
    assert all(name.startswith("arXiv_src_2212-") for name in names)
    assert discover_shards("unarxive", str(tmp_path / "*" / "*.jsonl")) == shards  # deterministic
