"""Measure what each switchable deviation from the paper's public code does to the demo corpus.

Curates the downloaded demo release (params.yaml's curate inputs; run ``citeworth run download``
first) once with today's rules and once per variant that switches one rule back, and writes the
papers, paragraphs and sentences kept -- overall and per field -- to docs/deviations.json, the
figures of docs/researchers/deviations.md (every one: docs/reference/deviation-figures.md, which
`python -m citeworth.docs.reference --write` then regenerates).

    .venv/bin/python scripts/deviations.py            # about a minute per variant on 2 cores
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from citeworth.core.io import read_jsonl, write_json
from citeworth.curate.stage import curate
from citeworth.stages import stage_params

# name -> (what it switches, overrides of the curate section: key path -> value)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "ours": ("params.yaml's rules", {}),
    "strict_first_citation": ("a paper's first citation must be in an accepted format (narrative "
                              "\"Smith et al. (2001)\" drops the paper)",
                              {"rules.first_citation_check": "strict"}),
    "no_first_citation_check": ("no paper-level citation-style check", {"rules.first_citation_check": "off"}),
    "citation_anywhere": ("a citation may stand anywhere in the sentence (no position check)",
                          {"rules.require_citation_at_end": False}),
    "no_attached_citations": ("a split-off sentence of citations only is not attached to the one "
                              "before", {"rules.attach_trailing_citations": False}),
    "no_dash_ranges": ("\"[1\u20133]\" is not read as the range \"[1-3]\"", {"rules.dash_ranges": False}),
    "no_span_merging": ("adjacent citation spans are not merged", {"rules.merge_gap": "(?!)"}),
    "no_bracket_balancing": ("a span is not extended over a bracket the parser left outside it",
                             {"rules.balance_brackets": False}),
    "first_listed_field": ("a paper of several fields takes the first instead of being dropped",
                           {"rules.multi_field": "first"}),
}


def measure(overrides: dict[str, Any], out_dir: Path) -> dict:
    params = stage_params("curate", {**overrides, "out_dir": str(out_dir)})  # $CITEWORTH_WORKERS at once
    funnel = curate(params)["curation"]
    papers, paragraphs = defaultdict(set), Counter()
    for path in sorted((out_dir / "paragraphs").glob("*.jsonl")):
        for record in read_jsonl(path):
            field = record["mag_field_of_study"][0]
            papers[field].add(record["paper_id"])
            paragraphs[field] += 1
    return {"papers_kept": funnel["papers_kept"], "paragraphs_kept": funnel["kept"],
            "sentences": funnel["sentences"], "cite_worthy": funnel["cite_worthy"],
            "paragraphs_rejected": dict(sorted(funnel["paragraphs_rejected"].items())),
            "per_field": {f: {"papers": len(papers[f]), "paragraphs": paragraphs[f]} for f in sorted(papers)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("docs/deviations.json"))
    parser.add_argument("--only", nargs="*", choices=list(VARIANTS), help="measure these variants only")
    args = parser.parse_args()
    results = {}
    for name in args.only or VARIANTS:
        what, overrides = VARIANTS[name]
        with tempfile.TemporaryDirectory(prefix=f"deviation-{name}-") as tmp:
            results[name] = {"switch": what, "overrides": overrides, **measure(overrides, Path(tmp))}
        kept = {k: results[name][k] for k in ("papers_kept", "paragraphs_kept", "sentences")}
        print(name, kept, flush=True)
    write_json(args.out, {"release": stage_params("download").release, "variants": results})


if __name__ == "__main__":
    main()
