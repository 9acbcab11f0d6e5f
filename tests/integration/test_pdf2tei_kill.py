"""``kill -9`` during ``citeworth run pdf2tei``, then a rerun: every PDF ends with a whole TEI or a
quarantine record, never a partial file, and the finished PDFs are not sent again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from grobid_server import RecordedGrobid

from citeworth.pdf.stage import JOURNAL, MANIFEST, QUARANTINE

PDFS = [f"paper{i:02d}.pdf" for i in range(10)] + ["broken.pdf"]


def test_a_killed_run_resumes_and_leaves_no_partial_tei(tmp_path, mirror):
    with RecordedGrobid(mirror) as grobid:
        (tmp_path / "pdfs").mkdir()
        for name in PDFS:
            (tmp_path / "pdfs" / name).write_bytes(grobid.pdf.read_bytes() + f"%{name}\n".encode())
        (tmp_path / "params.yaml").write_text(
            f"pdf2tei:\n  inputs: pdfs/*.pdf\n  out_dir: out\n  url: {grobid.url}\n"
            "  retries: 2\n  backoff: 0.01\n")
        grobid.default = ("slow", 0.3)
        grobid.script["broken.pdf"] = ["error"]
        out = tmp_path / "out"

        command = [sys.executable, "-m", "citeworth.cli", "run", "pdf2tei", "--workers", "2"]
        run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while _journaled(out) < 3 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        assert run.returncode == -signal.SIGKILL, "the run ended before it could be killed"
        finished = _journaled(out)
        assert 3 <= finished < len(PDFS) and not (out / MANIFEST).exists()
        with open(out / JOURNAL, "a") as journal:  # as if the kill had cut the journal's last line
            journal.write('{"sha256": "0123')
        sent_before = len(grobid.requests)

        grobid.default = "ok"
        rerun = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stderr[-2000:]

    quarantined = {json.loads(line)["pdf"] for line in (out / QUARANTINE).read_text().splitlines()}
    assert quarantined == {"broken.pdf"}
    for name in PDFS:
        tei = out / name.replace(".pdf", ".tei.xml")
        if name not in quarantined:
            assert tei.read_bytes() == grobid.tei, name  # whole: byte for byte what GROBID sent
            assert ET.parse(tei).getroot().tag.endswith("TEI")
    leftovers = sorted(p.name for p in out.iterdir() if not p.name.endswith(".tei.xml"))
    assert leftovers == [MANIFEST, QUARANTINE]  # no temporary files, no journal
    assert len(json.loads((out / MANIFEST).read_text())["files"]) == len(PDFS)
    # the rerun sent only what the killed run had not finished (+1: a 500 is asked twice)
    assert len(grobid.requests) - sent_before <= len(PDFS) - finished + 1


def _journaled(out) -> int:
    path = out / JOURNAL
    return len(path.read_text().splitlines()) if path.exists() else 0
