"""The quality gate on the real demo dataset (built from the mirrored papers), through the CLI."""

from __future__ import annotations

import json


def test_the_real_demo_dataset_passes_the_gate(demo_dataset, cli, tmp_path):
    out = tmp_path / "quality"
    cli(demo_dataset, "run", "validate", "-S", f"site_dir={out / 'site'}",
            "-S", f"summary_path={out / 'summary.json'}")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["success"] is True, summary["critical_failures"]
    assert (out / "site" / "index.html").is_file()
    assert summary["rows"]["sentences"] > 0
    # The raw-input suite read the downloaded papers with the curate stage's readers.
    assert summary["rows"]["raw_records"] > 0 and summary["rows"]["raw_spans"] > 0
    assert summary["expectations"]["raw_spans.span_text_matches"]["success"] is True
    # Table 3's comparison, automated: the spans-only baseline keeps residual markers, ours none.
    assert summary["baseline"]["available"] is True
    removed = summary["markers_removed_percent"]
    assert removed["ours"] == 100.0
    assert removed["baseline"] < removed["ours"]
