"""The GROBID client and the pdf2tei stage against a recorded GROBID on loopback (tests/grobid_server.py):
the real TEI for the mirrored PDF, and busy, failing, slow, truncated and malformed answers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from grobid_server import RECORDED_VERSION, RecordedGrobid

from citeworth.core.errors import StageFailed
from citeworth.core.knobs import WORKERS_ENV
from citeworth.pdf.grobid import URL_ENV, GrobidOptions
from citeworth.pdf.stage import MANIFEST, QUARANTINE, Pdf2TeiParams, pdf2tei
from citeworth.sources import discover_shards, read_shard


@pytest.fixture
def grobid(mirror, monkeypatch):
    """The recorded service, sent two PDFs at once unless a test asks otherwise."""
    monkeypatch.setenv(WORKERS_ENV, "2")
    with RecordedGrobid(mirror) as server:
        yield server


def make_pdfs(grobid: RecordedGrobid, folder: Path, *names: str) -> list[Path]:
    """Copies of the mirrored PDF, each made distinct by a trailing PDF comment (still a valid PDF)."""
    paths = []
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(grobid.pdf.read_bytes() + f"\n%copy {name}\n".encode())
        paths.append(path)
    return paths


def params(tmp_path: Path, grobid: RecordedGrobid | None, **overrides) -> Pdf2TeiParams:
    values = dict(inputs=str(tmp_path / "pdfs" / "**" / "*.pdf"), out_dir=tmp_path / "out",
                  url=grobid.url if grobid else None, timeout=30, retries=3, backoff=0.01)
    return Pdf2TeiParams(**(values | overrides))


def manifest(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / MANIFEST).read_text())["files"]


def quarantine(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "out" / QUARANTINE).read_text().splitlines()]


def test_pdfs_become_the_recorded_tei_with_a_manifest_and_a_rerun_is_a_no_op(tmp_path, grobid):
    make_pdfs(grobid, tmp_path / "pdfs", "a.pdf", "sub/b.pdf")
    assert pdf2tei(params(tmp_path, grobid)) == {"pdfs": 2, "skipped": 0, "converted": 2, "quarantined": 0,
                                                 "quarantined_total": 0}
    out = tmp_path / "out"
    assert (out / "a.tei.xml").read_bytes() == grobid.tei == (out / "sub" / "b.tei.xml").read_bytes()
    files = manifest(tmp_path)
    assert sorted(entry["pdfs"][0] for entry in files.values()) == ["a.pdf", "sub/b.pdf"]
    entry = next(e for e in files.values() if e["pdfs"] == ["a.pdf"])
    assert entry == {"pdfs": ["a.pdf"], "teis": ["a.tei.xml"], "status": "ok",
                     "grobid_version": RECORDED_VERSION, "options": vars(GrobidOptions())}
    sent = grobid.requests[0]["fields"]
    assert sent["includeRawCitations"] == ["1"] and sent["consolidateCitations"] == ["0"]
    assert not (out / ".journal.jsonl").exists() and quarantine(tmp_path) == []

    before = (out / MANIFEST).read_bytes()
    assert pdf2tei(params(tmp_path, grobid))["skipped"] == 2
    assert len(grobid.requests) == 2 and (out / MANIFEST).read_bytes() == before

    papers = [p for shard in discover_shards("tei", str(out / "**" / "*.tei.xml")) for p in read_shard(shard)]
    assert sorted(p.paper_id for p in papers) == ["a", "b"] and all(p.bib_entries for p in papers)


def test_busy_answers_and_a_cut_body_are_retried(tmp_path, grobid):
    make_pdfs(grobid, tmp_path / "pdfs", "busy.pdf", "cut.pdf", "drop.pdf")
    grobid.script.update(
        {"busy.pdf": ["busy", "busy", "ok"], "cut.pdf": ["truncated", "ok"], "drop.pdf": ["drop", "ok"]})
    assert pdf2tei(params(tmp_path, grobid))["converted"] == 3
    assert [grobid.uploads(name) for name in ("busy.pdf", "cut.pdf", "drop.pdf")] == [3, 2, 2]
    assert (tmp_path / "out" / "cut.tei.xml").read_bytes() == grobid.tei


def test_pdfs_grobid_cannot_read_are_quarantined_and_the_run_goes_on(tmp_path, grobid, monkeypatch):
    names = ["empty.pdf", "fails.pdf", "good.pdf", "half.pdf", "malformed.pdf", "slow.pdf"]
    make_pdfs(grobid, tmp_path / "pdfs", *names)
    grobid.script.update({"empty.pdf": ["no_content"], "fails.pdf": ["error"], "half.pdf": ["truncated"],
                          "malformed.pdf": ["malformed"], "slow.pdf": [("slow", 2)]})
    monkeypatch.setenv(WORKERS_ENV, "3")
    counts = pdf2tei(params(tmp_path, grobid, timeout=0.5))
    assert (counts["converted"], counts["quarantined"]) == (1, 5)
    reasons = {row["pdf"]: row["reason"] for row in quarantine(tmp_path)}
    assert reasons == {"empty.pdf": "no_content", "fails.pdf": "grobid_error",
                       "half.pdf": "truncated_response", "malformed.pdf": "malformed_tei",
                       "slow.pdf": "timeout"}
    # 204 is final; a 500 is asked once more; a cut or malformed body is asked retries + 1 times
    assert [grobid.uploads(name) for name in names] == [1, 2, 1, 4, 4, 1]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [MANIFEST, "good.tei.xml", QUARANTINE]
    assert {e["status"] for e in manifest(tmp_path).values()} == {"ok", "quarantined"}

    # a rerun leaves quarantined PDFs alone unless asked
    grobid.script.clear()
    assert pdf2tei(params(tmp_path, grobid))["skipped"] == 6
    counts = pdf2tei(params(tmp_path, grobid, redo="quarantined"))
    assert (counts["converted"], counts["quarantined_total"]) == (5, 0) and quarantine(tmp_path) == []


def test_changed_options_or_content_convert_again_and_removed_pdfs_leave(tmp_path, grobid):
    a, b = make_pdfs(grobid, tmp_path / "pdfs", "a.pdf", "b.pdf")
    pdf2tei(params(tmp_path, grobid))
    a.write_bytes(a.read_bytes() + b"%edited\n")
    b.unlink()
    assert pdf2tei(params(tmp_path, grobid))["converted"] == 1
    assert [e["pdfs"] for e in manifest(tmp_path).values()] == [["a.pdf"]]
    assert not (tmp_path / "out" / "b.tei.xml").exists()
    with_sentences = GrobidOptions(segmentSentences=1, teiCoordinates=["ref", "biblStruct"])
    assert pdf2tei(params(tmp_path, grobid, options=with_sentences))["converted"] == 1
    assert grobid.requests[-1]["fields"]["teiCoordinates"] == ["ref", "biblStruct"]


def test_a_service_that_stays_away_stops_the_run_keeping_what_it_finished(tmp_path, grobid, monkeypatch):
    make_pdfs(grobid, tmp_path / "pdfs", "a.pdf", "b.pdf")
    grobid.script["b.pdf"] = ["busy"]
    monkeypatch.setenv(WORKERS_ENV, "1")
    with pytest.raises(StageFailed, match=f"GROBID at {grobid.url} stayed unavailable for b.pdf .*busy"):
        pdf2tei(params(tmp_path, grobid))
    assert [e["pdfs"] for e in manifest(tmp_path).values()] == [["a.pdf"]] and quarantine(tmp_path) == []
    grobid.script.clear()
    assert pdf2tei(params(tmp_path, grobid))["converted"] == 1  # resumes with b only


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_without_a_service_the_cli_says_so_in_one_line_and_exits_non_zero(tmp_path, mirror):
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "pdfs" / "a.pdf").write_bytes((mirror / "github/kermitt2/grobid_client_python/resources/"
                                               "test_pdf/0046d83a-edd6-4631-b57c-755cdcce8b7f.pdf").read_bytes())
    (tmp_path / "params.yaml").write_text("pdf2tei:\n  inputs: pdfs/**/*.pdf\n  out_dir: raw/pdf2tei\n"
                                          "  retries: 0\n")
    url = closed_port_url()
    env = os.environ | {URL_ENV: url}
    done = subprocess.run([sys.executable, "-m", "citeworth.cli", "run", "pdf2tei"], cwd=tmp_path,
                          capture_output=True, text=True, env=env)
    assert done.returncode == 1
    [line] = [line for line in done.stderr.splitlines() if line.startswith("citeworth:")]
    assert f"no GROBID service answers at {url}" in line and "--profile grobid" in line
    assert URL_ENV in line


def test_nothing_to_convert_needs_no_service(tmp_path):
    (tmp_path / "pdfs").mkdir()
    counts = pdf2tei(params(tmp_path, None, url=closed_port_url()))
    assert counts == {"pdfs": 0, "skipped": 0, "converted": 0, "quarantined": 0, "quarantined_total": 0}
    assert manifest(tmp_path) == {} and quarantine(tmp_path) == []
