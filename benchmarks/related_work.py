"""Benchmark: the related-work stage's section detection and anchor mapping against the hand-made gold.

    .venv/bin/python benchmarks/related_work.py      # after `make demo` or `citeworth run download`

Issue 12's targets: related-work section found for >= 97% of the gold papers, anchors mapped to a
bibliography entry for >= 95%; Kobayashi et al. report section titles found in 110 of 113 ACL PDFs
(GROBID alone: 103 of 113). The gold (tests/gold/related_work.json) covers the 173 mirrored papers:
the stage's inputs in params.yaml (the demo corpus, `citeworth run download`) and the PLOS starter
corpus from $CITEWORTH_MIRROR. The figures are not comparable with Kobayashi's beyond their shape: other
papers, other sources (one GROBID TEI among them), 14 gold sections instead of 113. Results:
benchmarks/results/related_work.json.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

from citeworth.core.io import write_json
from citeworth.corpora.related_work.gold import detect, gold_inputs, load_gold, score
from citeworth.corpora.related_work.sections import SectionFinder
from citeworth.sources import BadRecord, input_shards, read_shard
from citeworth.text.sentences import SentenceSplitter

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "gold" / "related_work.json"
RESULTS = ROOT / "benchmarks" / "results" / "related_work.json"
KOBAYASHI = {"papers": 113, "proposed_titles_found": 110, "grobid_titles_found": 103}


def main() -> int:
    raw = ROOT / "raw"
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    if not raw.is_dir() or not mirror.is_dir():
        print(f"needs the demo corpus in {raw} (citeworth run download) and the mirror ({mirror}): "
              "set CITEWORTH_MIRROR", file=sys.stderr)
        return 2
    inputs = gold_inputs(ROOT, mirror)
    splitter = SentenceSplitter()
    start = time.perf_counter()
    papers = [item for shard in input_shards(inputs) for item in read_shard(shard)
              if not isinstance(item, BadRecord)]
    found = detect(papers, SectionFinder(), splitter.split)
    seconds = time.perf_counter() - start
    scored = score(found, load_gold(GOLD))
    results = {
        "papers_read": len(papers),
        "seconds_read_detect_split": round(seconds, 2),
        "gold": {key: value for key, value in scored.items() if key != "papers"},
        "per_paper": scored["papers"],
        "kobayashi_reported": KOBAYASHI | {
            "proposed_share": round(110 / 113, 4), "grobid_share": round(103 / 113, 4),
            "comparable": "no: 113 ACL PDFs there; here 14 sections from unarXive, PMC/PLOS JATS, arXiv "
                          "LaTeX and one GROBID TEI, whose TEI-only subset (1 paper) is too small to "
                          "compare"},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    write_json(RESULTS, results)
    print(json.dumps(results["gold"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
