"""The assemble stage: curated shards -> one copy of each paper -> field-balanced, paper-split
CiteWorth dataset + stats + the duplicates report.

Two passes over the curated paragraphs: the first indexes every kept paragraph (paper, field,
file offset, the copy of the paper it belongs to), the second copies the chosen lines into the
split files in a stable order. Sources overlap (S2ORC holds the arXiv and PMC papers the LaTeX and
JATS readers read; a folder may hold one article twice), so between the two one copy of each paper
is kept (curate/duplicates.py: identifiers and a title key, ``source_order``) and the others'
paragraphs left out, before sampling and splitting. Splits are by paper, so no paragraph of a test
paper, in any copy, is seen in training. (The released CiteWorth files came split; the public code
ships no split of its own.)
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field, field_validator
from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.io import atomic_write, write_json, write_text
from citeworth.core.params import Params
from citeworth.core.schema import FIELD_OF_STUDY, SPLITS
from citeworth.curate.duplicates import SOURCE_ORDER, CopyIndex, write_report
from citeworth.curate.stats import dataset_stats, stats_markdown, summarize

log = logging.getLogger(__name__)


class AssembleParams(Params):
    in_dir: Path
    """The curated shards (curate's out_dir)."""
    out_dir: Path
    """train.jsonl, dev.jsonl, test.jsonl."""
    stats_path: Path
    """The dataset's statistics (JSON)."""
    table_path: Path
    """the same figures as Markdown (Table 2)"""
    duplicates_path: Path
    """Every paper found in several copies (across sources, or twice in one): its copies, the one
    kept and why (JSON)."""
    source_order: list[str] = Field(default_factory=lambda: list(SOURCE_ORDER))
    """Readers whose copy of a paper is kept, best first (LaTeX and JATS keep the authors' citation
    markup; S2ORC's PDF parses and our GROBID TEI come after); copies of sources ranked alike go by
    shard, paper id and reading order. Every source the inputs read must be listed."""
    seed: int = 1
    """The sampling and the split by paper."""
    split: list[float] = Field(default_factory=lambda: [0.8, 0.1, 0.1])
    """train/dev/test fractions of the papers (the paper's 80/10/10, §3.3)"""
    per_field: int | Literal["smallest"] | None = "smallest"
    """Paragraphs kept per field: an integer cap, "smallest" (every field cut to the smallest field's
    count: the paper's even sampling, §3.2) or null (keep everything)."""
    fields: list[str] | None = None
    """keep only these fields (None: all ten)"""

    @field_validator("split")
    @classmethod
    def _fractions(cls, split: list[float]) -> list[float]:
        if len(split) != 3 or abs(sum(split) - 1) > 1e-9 or min(split) < 0:
            raise ValueError("must be three non-negative fractions summing to 1")
        return split

    @field_validator("source_order")
    @classmethod
    def _distinct(cls, order: list[str]) -> list[str]:
        if repeated := sorted({source for source in order if order.count(source) > 1}):
            raise ValueError(f"lists {repeated} more than once")
        return order


class Entry(NamedTuple):
    paper_id: str
    section_idx: int
    field: str
    path: Path
    offset: int
    copy: int  # the copy of its paper (CopyIndex's number)


def assemble(params: AssembleParams) -> dict:
    in_dir = Path(params.in_dir)
    with tempfile.TemporaryDirectory(prefix="citeworth-copies-") as work:
        index = CopyIndex(Path(work), params.source_order)
        try:
            entries = _index(in_dir, index)
            if not entries:
                raise ValueError(f"no curated paragraphs under {in_dir}/paragraphs: run curate first")
            dropped, duplicates = index.resolve()
            write_report(Path(params.duplicates_path), index, duplicates)
        finally:
            index.close()
    entries = [entry for entry in entries if not dropped[entry.copy]]
    sampled = sample_by_field(entries, params.per_field, params.fields, params.seed)
    splits = split_by_paper(sampled, params.split, params.seed)
    out_dir = Path(params.out_dir)
    counts = {name: _write_split(out_dir / f"{name}.jsonl", splits[name]) for name in SPLITS}
    funnel = summarize(_shard_stats(in_dir / "stats"))
    stats = dataset_stats(out_dir, funnel, duplicates)
    write_json(Path(params.stats_path), stats)
    write_text(Path(params.table_path), stats_markdown(stats))
    return {"paragraphs": counts, "sentences": stats["overall"]["sentences"],
            "cite_worthy_share": stats["overall"]["cite_worthy_share"],
            "duplicate_copies_dropped": duplicates["dropped_copies"]}


def _index(in_dir: Path, index: CopyIndex) -> list[Entry]:
    """Every curated paragraph, each with the copy of its paper (added to ``index``)."""
    entries: list[Entry] = []
    for path in tqdm(sorted((in_dir / "paragraphs").glob("*.jsonl")), desc="index", unit="shard"):
        papers = in_dir / "papers" / path.name
        if not papers.is_file():
            raise StageFailed(f"{papers} is missing beside {path}: the shard was curated by an older "
                              "citeworth; run curate again")
        with open(path, "rb") as paragraphs, open(papers, "rb") as copies:
            offset = 0
            for copy_line in copies:
                record = json.loads(copy_line)
                copy = index.add(path.stem, record)
                for _ in range(record["paragraphs"]):
                    line = _next_line(paragraphs, path, papers)
                    paragraph = json.loads(line)
                    if paragraph["paper_id"] != record["paper_id"]:
                        raise _out_of_step(path, papers)
                    entries.append(Entry(paragraph["paper_id"], paragraph["section_idx"],
                                         paragraph[FIELD_OF_STUDY][0], path, offset, copy))
                    offset += len(line)
            if paragraphs.readline():
                raise _out_of_step(path, papers)
    return entries


def _next_line(handle, path: Path, papers: Path) -> bytes:
    if line := handle.readline():
        return line
    raise _out_of_step(path, papers)


def _out_of_step(path: Path, papers: Path) -> StageFailed:
    return StageFailed(f"{papers} does not count the paragraphs of {path} (a paper's paragraphs are "
                       "not the lines it claims): curate wrote them together, so one was changed or "
                       "replaced since; run curate again")


def _shard_stats(stats_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(stats_dir.glob("*.json"))]


def _rank(seed: int, key: str) -> str:
    """A seeded, platform-independent sort key (Python's hash() is salted per process)."""
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def sample_by_field(entries: list[Entry], per_field: int | str | None, fields: list[str] | None,
                    seed: int) -> list[Entry]:
    """Keep at most ``per_field`` paragraphs of each field, drawn with ``seed``."""
    by_field: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        if fields is None or entry.field in fields:
            by_field[entry.field].append(entry)
    if per_field is None:
        return [e for f in sorted(by_field) for e in by_field[f]]
    cap = min(len(v) for v in by_field.values()) if per_field == "smallest" else int(per_field)
    kept = []
    for name in sorted(by_field):
        group = sorted(by_field[name], key=lambda e: (e.paper_id, e.section_idx))
        random.Random(_rank(seed, name)).shuffle(group)
        kept.extend(group[:cap])
    return kept


def split_by_paper(entries: list[Entry], fractions: list[float], seed: int) -> dict[str, list[Entry]]:
    """Assign whole papers to train/dev/test, field by field (a paper has one field, so every
    field gets its own 80/10/10): papers in seeded order, cut where the cumulative paragraph
    count passes each fraction. No paper is in two splits."""
    by_field: dict[str, dict[str, list[Entry]]] = defaultdict(lambda: defaultdict(list))
    for entry in entries:
        by_field[entry.field][entry.paper_id].append(entry)
    splits: dict[str, list[Entry]] = {name: [] for name in SPLITS}
    for name in sorted(by_field):
        for split, chunk in _cut(by_field[name], fractions, seed).items():
            splits[split].extend(chunk)
    for name in SPLITS:
        splits[name].sort(key=lambda e: (e.paper_id, e.section_idx))
    return splits


def _cut(by_paper: dict[str, list[Entry]], fractions: list[float], seed: int) -> dict[str, list[Entry]]:
    """A paper goes to the split its paragraphs' midpoint falls in, so small fields still
    reach dev and test while large ones converge to the fractions."""
    total = sum(len(v) for v in by_paper.values())
    bounds = (fractions[0], fractions[0] + fractions[1])
    cut: dict[str, list[Entry]] = {name: [] for name in SPLITS}
    seen = 0
    for pid in sorted(by_paper, key=lambda p: _rank(seed, p)):
        middle = (seen + len(by_paper[pid]) / 2) / total
        name = "train" if middle < bounds[0] else "dev" if middle < bounds[1] else "test"
        cut[name].extend(by_paper[pid])
        seen += len(by_paper[pid])
    return cut


def _write_split(path: Path, entries: list[Entry]) -> int:
    handles: dict[Path, object] = {}
    try:
        with atomic_write(path, "wb") as out:
            for entry in entries:
                if entry.path not in handles:
                    handles[entry.path] = open(entry.path, "rb")
                source = handles[entry.path]
                source.seek(entry.offset)
                out.write(source.readline())
    finally:
        for handle in handles.values():
            handle.close()
    return len(entries)
