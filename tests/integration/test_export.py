"""The export stage on real papers of the mirror: unarXive JSONL that the ``unarxive`` reader reads back
with the same paragraphs and spans (nothing quarantined), GrabCite files in the paper's format,
byte-identical reruns, and a failed run that leaves the previous export in place."""

from __future__ import annotations

import json
import re

import pytest

from citeworth.corpora.export.stage import ExportParams, export, paper_file_name
from citeworth.sources import BadRecord, InputSpec, discover_shards, read_shard

EPRINT = "github/allenai/s2orc-doc2json/tests/latex/2004.14974.gz"
SCIPY = "github/scipy/scipy-articles/scipy-1.0"
UNARXIVE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
TEI = "github/kermitt2/grobid_client_python/resources/**/*.tei.xml"


@pytest.fixture(scope="module")
def inputs(mirror, tmp_path_factory) -> list[InputSpec]:
    import tarfile

    unpacked = tmp_path_factory.mktemp("unarxive")
    with tarfile.open(mirror / UNARXIVE) as archive:
        archive.extractall(unpacked, filter="data")
    return [
        InputSpec("arxiv_latex", str(mirror / EPRINT)),
        InputSpec("arxiv_latex", str(mirror / SCIPY)),
        InputSpec("tei", str(mirror / TEI)),
        InputSpec("unarxive", str(unpacked / "*/*.jsonl")),
    ]


def papers_of(inputs: list[InputSpec]) -> dict:
    papers = {}
    for spec in inputs:
        for shard in discover_shards(spec.reader, spec.glob, spec.metadata, spec.release):
            for item in read_shard(shard):
                assert not isinstance(item, BadRecord), item
                papers.setdefault(item.paper_id, item)
    return papers


def test_unarxive_export_reads_back_with_the_same_spans(inputs, tmp_path):
    summary = export(ExportParams(inputs=inputs, format="unarxive", out_dir=tmp_path, stats_dir=tmp_path,
                          spacy_model=None))
    originals = papers_of(inputs)
    assert summary["papers"] == len(originals) and not any(k.startswith("quarantined") for k in summary)
    files = sorted((tmp_path / "unarxive").glob("*.jsonl"))
    assert [f.name for f in files][:2] == ["arxiv_latex__2004.14974.jsonl", "arxiv_latex__scipy-1.0.jsonl"]
    back = papers_of([InputSpec("unarxive", str(tmp_path / "unarxive" / "*.jsonl"))])
    assert set(back) == set(originals)
    for paper_id, original in originals.items():
        again = back[paper_id]
        assert [(p.text, p.section, p.cite_spans, p.ref_spans) for p in again.paragraphs] == [
            (p.text, p.section, p.cite_spans, p.ref_spans) for p in original.paragraphs
        ], paper_id
        assert set(again.bib_entries) == set(original.bib_entries)
    record = json.loads(files[0].read_text().splitlines()[0])
    assert record["metadata"]["id"] == "2004.14974" and record["_source_name"] == "2004.14974.gz"
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-")
    assert not uuid.search(files[0].read_text()), "marker ids are hashes, never uuid4"
    formulas = [e for e in record["ref_entries"].values() if e["type"] == "formula"]
    assert formulas and record["bib_entries"]["arxiv:2004.05150"]["ids"]["arxiv_id"] == "2004.05150"


def test_export_is_byte_identical_on_rerun_and_replaces_old_files(inputs, tmp_path):
    params = ExportParams(inputs=inputs[:2], format="unarxive", out_dir=tmp_path, stats_dir=tmp_path,
                          spacy_model=None)
    export(params)
    first = {p.name: p.read_bytes() for p in (tmp_path / "unarxive").iterdir()}
    (tmp_path / "unarxive" / "stale.jsonl").write_text("{}\n")
    export(params)
    assert {p.name: p.read_bytes() for p in (tmp_path / "unarxive").iterdir()} == first


def test_a_failed_export_leaves_the_previous_one(inputs, tmp_path, monkeypatch):
    params = ExportParams(inputs=inputs[:1], format="unarxive", out_dir=tmp_path, stats_dir=tmp_path,
                          spacy_model=None)
    export(params)
    before = {p.name: p.read_bytes() for p in (tmp_path / "unarxive").iterdir()}

    def boom(paper):
        raise RuntimeError("disk full")

    monkeypatch.setattr("citeworth.corpora.export.unarxive.unarxive_record", boom)
    with pytest.raises(RuntimeError):
        export(params)
    assert {p.name: p.read_bytes() for p in (tmp_path / "unarxive").iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_grabcite_files(inputs, tmp_path):
    summary = export(ExportParams(inputs=inputs[:2], format="grabcite", out_dir=tmp_path, stats_dir=tmp_path,
                          spacy_model=None))
    assert summary["papers"] == 2
    folder = tmp_path / "grabcite"
    assert sorted(p.name for p in folder.iterdir()) == [
        f"{paper}.{suffix}" for paper in ("2004.14974", "scipy-1.0") for suffix in ("meta", "refs", "txt")
    ]
    text = (folder / "2004.14974.txt").read_text()
    sentences = text.rstrip("\n").split("\n============\n")
    assert len(sentences) > 100 and all("\n" not in s for s in sentences)
    assert not any(token in text for token in ("{{", "}}", "\\"))
    markers = set(re.findall(r"<([^<>]+)>", text))
    refs = dict(line.split(";", 1) for line in (folder / "2004.14974.refs").read_text().splitlines())
    assert markers - {"formula"} <= set(refs), "every linked marker has its reference"
    assert "ARXIV:2004.05150" in refs and all(line.endswith(";") for line in refs.values())
    assert json.loads((folder / "2004.14974.meta").read_text()) == {
        "authors": [],
        "title": "Fact or Fiction: Verifying Scientific Claims",
        "url": "https://arxiv.org/abs/2004.14974",
    }
    scipy = (folder / "scipy-1.0.txt").read_text()
    assert "<DOI:10.7717/peerj-cs.103>" in scipy  # SciPy's citation of the SymPy paper, by DOI


def test_file_names_of_old_arxiv_ids():
    assert paper_file_name("hep-th/9901001") == "hep-th_9901001"
