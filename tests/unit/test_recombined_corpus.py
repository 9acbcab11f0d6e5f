"""The recombined benchmark corpus (benchmarks/recombined_corpus.py) on a small unarXive fixture:
distinct papers and paragraphs, citations renumbered and still linked to the right entries, the
reader reads it back, and curation keeps paragraphs with their citations."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from citeworth.core.params import build
from citeworth.curate.stage import CurateParams, curate
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.base import InputSpec

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "recombined_corpus.py"
_SPEC = importlib.util.spec_from_file_location("recombined_corpus", _PATH)
recombined = sys.modules[_SPEC.name] = importlib.util.module_from_spec(_SPEC)  # benchmarks/ is no package
_SPEC.loader.exec_module(recombined)

SOURCES, PARAGRAPHS = 5, 4  # real papers of the fixture, paragraphs each
CITE = re.compile(r"\{\{cite:(\w+)\}\}")
SECTIONS = ("Introduction", "Related Work", "Background", "Discussion")


def source_record(paper: int) -> dict:
    """A source paper: every paragraph has three sentences and two citations of its own entries."""
    body, bib = [], {}
    for n in range(PARAGRAPHS):
        keys = [f"p{paper}k{n}a", f"p{paper}k{n}b"]
        for key in keys:
            bib[key] = {"bib_entry_raw": f"Entry {key}. Journal of Fixtures, 2020.",
                        "ids": {"doi": f"10.1/{key}"}}
        text = (f"Topic {n} of source paper {paper} has been studied in detail before "
                f"{{{{cite:{keys[0]}}}}}. "
                f"A later method for topic {n} extends that work to larger samples {{{{cite:{keys[1]}}}}}. "
                f"We build on both results in the experiments of source paper {paper} (Figure {n}).")
        cites = [{"start": m.start(), "end": m.end(), "text": m.group(0), "ref_id": m.group(1)}
                 for m in CITE.finditer(text)]
        figure = text.index("Figure")
        refs = [{"start": figure, "end": figure + 8, "text": f"Figure {n}", "ref_id": f"fig{n}"}]
        body.append({"section": SECTIONS[n], "sec_number": str(n + 1), "sec_type": "section",
                     "content_type": "paragraph", "text": text, "cite_spans": cites, "ref_spans": refs})
    meta = {"id": f"2301.0000{paper}", "title": f"Source {paper}", "categories": "cs.CL",
            "abstract": f"Abstract of source {paper}.",
            "versions": [{"created": "Mon, 2 Jan 2023 10:00:00 GMT"}]}
    return {"paper_id": meta["id"], "metadata": meta, "abstract": {"text": meta["abstract"]},
            "body_text": body, "bib_entries": bib,
            "ref_entries": {f"fig{n}": {"type": "figure"} for n in range(PARAGRAPHS)}}


@pytest.fixture()
def sources(tmp_path: Path) -> list[InputSpec]:
    folder = tmp_path / "sources"
    folder.mkdir()
    lines = [json.dumps(source_record(paper)) for paper in range(SOURCES)]
    (folder / "arXiv_src_2301_001.jsonl").write_text("\n".join(lines) + "\n")
    return [InputSpec(reader="unarxive", glob=str(folder / "*.jsonl"))]


def write(dest: Path, sources: list[InputSpec], **settings) -> dict:
    settings = {"shards": 2, "papers_per_shard": 3, "paragraphs_per_paper": 3, **settings}
    return recombined.write_corpus(dest, inputs=sources, **settings)


def corpus_papers(manifest: dict) -> list:
    spec = manifest["curate_inputs"][0]
    read = [paper for shard in discover_shards(spec["reader"], spec["glob"], release=spec["release"])
            for paper in read_shard(shard)]
    assert not [paper for paper in read if isinstance(paper, BadRecord)]
    return read


def test_the_reader_reads_every_paper_back_with_linked_citations(tmp_path, sources):
    manifest = write(tmp_path / "corpus", sources)
    papers = corpus_papers(manifest)
    assert len(papers) == manifest["papers"] == 6
    assert sorted({paper.shard for paper in papers}) == [f"arXiv_src_recombined_00{n}" for n in (0, 1)]
    for paper in papers:
        assert len(paper.paragraphs) == 3
        assert all(span.ref_id in paper.bib_entries for p in paper.paragraphs for span in p.cite_spans)
        assert sum(len(p.cite_spans) for p in paper.paragraphs) == 6


def test_citations_are_renumbered_per_paper_and_keep_their_entries(tmp_path, sources):
    for paper in corpus_papers(write(tmp_path / "corpus", sources)):
        keys = list(dict.fromkeys(span.ref_id for p in paper.paragraphs for span in p.cite_spans))
        assert keys == [recombined._cite_key(paper.paper_id, n) for n in range(len(keys))]
        for paragraph in paper.paragraphs:
            source = int(re.search(r"source paper (\d)", paragraph.text).group(1))
            topic = int(re.search(r"Topic (\d)", paragraph.text).group(1))
            raws = [paper.bib_entries[span.ref_id].raw for span in paragraph.cite_spans]
            assert raws == [f"Entry p{source}k{topic}{x}. Journal of Fixtures, 2020." for x in "ab"]
            assert paragraph.section == SECTIONS[topic]
            (start, end, kind), = paragraph.ref_spans
            assert (paragraph.text[start:end], kind) == (f"Figure {topic}", "figure")


def test_papers_combine_different_sources_and_nothing_repeats(tmp_path, sources):
    manifest = write(tmp_path / "corpus", sources, papers_per_shard=8)  # 48 paragraphs of 20: reused
    papers = corpus_papers(manifest)
    texts = [p.text for paper in papers for p in paper.paragraphs]
    assert len(set(texts)) == len(texts) == 48
    assert len({tuple(p.text for p in paper.paragraphs) for paper in papers}) == len(papers)
    for paper in papers:
        sources_used = [re.search(r"source paper (\d)", p.text).group(1) for p in paper.paragraphs]
        assert len(set(sources_used)) == len(sources_used)
    uses = manifest["source_paragraph_uses"]
    assert manifest["source"]["distinct_paragraphs"] == SOURCES * PARAGRAPHS
    assert (uses["unused"], uses["mean"], uses["verbatim_repeats"]) == (0, 2.4, 0) and uses["max"] <= 3


def test_distinct_only_uses_every_source_paragraph_once_at_most(tmp_path, sources):
    manifest = write(tmp_path / "corpus", sources, papers_per_shard=8, distinct_only=True)
    source_paragraphs = Counter(CITE.sub("", p.text) for paper in corpus_papers(manifest)
                                for p in paper.paragraphs)
    assert manifest["papers"] == 6 and max(source_paragraphs.values()) == 1  # 18 of the 20 paragraphs
    assert manifest["shards"] == 1 and not (tmp_path / "corpus" / "arXiv_src_recombined_001.jsonl").exists()
    assert manifest["source_paragraph_uses"]["max"] == 1


def test_the_same_seed_writes_the_same_corpus_and_another_seed_another(tmp_path, sources):
    def shard_bytes(seed: int, name: str) -> bytes:
        write(tmp_path / name, sources, seed=seed)
        return (tmp_path / name / "arXiv_src_recombined_000.jsonl").read_bytes()

    assert shard_bytes(0, "a") == shard_bytes(0, "b")
    assert shard_bytes(1, "c") != shard_bytes(0, "a")


def test_a_rerun_with_the_same_settings_keeps_the_corpus(tmp_path, sources):
    dest = tmp_path / "corpus"
    write(dest, sources)
    shard = dest / "arXiv_src_recombined_000.jsonl"
    shard.write_text(shard.read_text())  # a marker: a rewrite would replace the file
    before = shard.stat().st_mtime_ns
    write(dest, sources)
    assert shard.stat().st_mtime_ns == before
    write(dest, sources, shards=3)
    assert (dest / "arXiv_src_recombined_002.jsonl").exists() and not (tmp_path / "corpus.partial").exists()


def test_too_few_source_papers_for_a_paper_is_an_error(tmp_path, sources):
    with pytest.raises(ValueError, match="6 paragraphs per paper need as many source papers; there are 5"):
        write(tmp_path / "corpus", sources, paragraphs_per_paper=6)


def test_curation_of_one_shard_keeps_paragraphs_with_their_citations(tmp_path, sources, monkeypatch):
    monkeypatch.setenv("CITEWORTH_SHARD_STORE", "off")
    manifest = write(tmp_path / "corpus", sources)
    inputs = [{**manifest["curate_inputs"][0], "glob": str(tmp_path / "corpus" / "*_000.jsonl")}]
    out = tmp_path / "interim"
    funnel = curate(build(CurateParams, {"inputs": inputs, "out_dir": str(out)}))["curation"]
    assert funnel["papers"] == 3 and funnel["kept"] == 9
    records = [json.loads(line) for path in sorted((out / "paragraphs").rglob("*.jsonl"))
               for line in path.read_text().splitlines()]
    assert len(records) == 9
    for record in records:
        keys = {recombined._cite_key(record["paper_id"], n) for n in range(6)}
        cited = [ref for s in record["samples"] if s["label"] == "check-worthy" for refs in s["ref_ids"]
                 for ref in refs]
        assert len(cited) == 2 and set(cited) <= keys
