"""Scoring section detection and anchor mapping against a hand-made gold file.

The gold (tests/gold/related_work.json; see its ``about``) lists every paper of a corpus that has a
related-work-like section: the section's title and its number of citation anchors. Scores:

- section found: gold papers whose section the stage finds under the same title (normalised);
- false sections: papers outside the gold where the stage finds one;
- anchors mapped: over gold papers with an anchor count, the stage's anchors mapped to a
  bibliography entry, each paper capped at its gold count (more than the gold is no credit).
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterable
from pathlib import Path

from citeworth.core.paper import Paper
from citeworth.core.params import load_document, resolve_references
from citeworth.corpora.related_work.record import Splitter, mapped_anchors, paper_record
from citeworth.corpora.related_work.sections import SectionFinder
from citeworth.sources import InputSpec
from citeworth.text.sections import normalize_title

PLOS_STARTER = "github/PLOS/allofplos/allofplos/starter_corpus/*.xml"


def load_gold(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def gold_inputs(project: Path, mirror: Path) -> list[InputSpec]:
    """The corpus the gold covers: the stage's own inputs in ``project`` (params.yaml's
    related_work.inputs, references resolved, paths made absolute) and the PLOS starter corpus --
    from the mirror when the downloaded release lacks it (demo-v1; demo-v2 holds it)."""
    document = load_document(project / "params.yaml")
    inputs = resolve_references(document["related_work"]["inputs"], document, "related_work.inputs")
    located = [InputSpec(**(item | _paths_under(project, item))) for item in inputs]
    if any(spec.glob.endswith(PLOS_STARTER) and glob.glob(spec.glob) for spec in located):
        return located
    return [*located, InputSpec("jats", str(mirror / PLOS_STARTER))]


def detect(papers: Iterable[Paper], finder: SectionFinder, split: Splitter) -> dict[tuple[str, str], dict]:
    """``(source, paper_id)`` -> the found section's title, anchors and mapped anchors, for every
    paper where the stage finds a section."""
    found = {}
    for paper in papers:
        if record := paper_record(paper, finder, split):
            found[(paper.source, paper.paper_id)] = {
                "title": record["section_title"], "anchors": sum(record["CitedNumberList"]),
                "mapped": mapped_anchors(record)}
    return found


def score(found: dict[tuple[str, str], dict], gold: dict) -> dict:
    rows, hits, gold_anchors, mapped = [], 0, 0, 0
    for paper in gold["papers"]:
        ours = found.get((paper["source"], paper["paper_id"]))
        hit = ours is not None and normalize_title(ours["title"]) == normalize_title(paper["section_title"])
        hits += hit
        if paper["anchors"] is not None:
            gold_anchors += paper["anchors"]
            mapped += min(ours["mapped"], paper["anchors"]) if hit else 0
        rows.append({"source": paper["source"], "paper_id": paper["paper_id"],
                     "gold_title": paper["section_title"], "found_title": ours and ours["title"],
                     "gold_anchors": paper["anchors"], "found_anchors": ours and ours["anchors"],
                     "mapped_anchors": ours and ours["mapped"]})
    known = {(p["source"], p["paper_id"]) for p in gold["papers"] + gold.get("not_scored", [])}
    false_sections = sorted(f"{source}:{paper_id} ({found[(source, paper_id)]['title']})"
                            for source, paper_id in found if (source, paper_id) not in known)
    return {
        "sections_found": hits,
        "sections_gold": len(gold["papers"]),
        "share_sections_found": round(hits / len(gold["papers"]), 4),
        "false_sections": false_sections,
        "not_scored": len(gold.get("not_scored", [])),
        "anchors_mapped": mapped,
        "anchors_gold": gold_anchors,
        "share_anchors_mapped": round(mapped / gold_anchors, 4) if gold_anchors else None,
        "papers": rows,
    }


def _paths_under(project: Path, item: dict) -> dict[str, str]:
    """An input's file paths (glob, metadata) as absolute paths under ``project``."""
    return {key: str(project / item[key]) for key in ("glob", "metadata") if item.get(key)}
