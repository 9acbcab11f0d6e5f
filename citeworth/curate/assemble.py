"""The assemble stage: curated shards -> field-balanced, paper-split CiteWorth dataset + stats.

Two passes keep memory flat however large the corpus: the first indexes every kept paragraph
(paper, field, file offset), the second copies the chosen lines into the split files in a
stable order. Splits are by paper, so no paragraph of a test paper is seen in training. (The
released CiteWorth files came split; the public code ships no split of its own.)
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections import defaultdict
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field, field_validator
from tqdm import tqdm

from citeworth.core.io import atomic_write, write_json, write_text
from citeworth.core.params import Params
from citeworth.core.schema import FIELD_OF_STUDY, SPLITS
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


class Entry(NamedTuple):
    paper_id: str
    section_idx: int
    field: str
    path: Path
    offset: int


def assemble(params: AssembleParams) -> dict:
    entries = _index(Path(params.in_dir) / "paragraphs")
    if not entries:
        raise ValueError(f"no curated paragraphs under {params.in_dir}/paragraphs: run curate first")
    sampled = sample_by_field(entries, params.per_field, params.fields, params.seed)
    splits = split_by_paper(sampled, params.split, params.seed)
    out_dir = Path(params.out_dir)
    counts = {name: _write_split(out_dir / f"{name}.jsonl", splits[name]) for name in SPLITS}
    funnel = summarize(_shard_stats(Path(params.in_dir) / "stats"))
    stats = dataset_stats(out_dir, funnel)
    write_json(Path(params.stats_path), stats)
    write_text(Path(params.table_path), stats_markdown(stats))
    return {"paragraphs": counts, "sentences": stats["overall"]["sentences"],
            "cite_worthy_share": stats["overall"]["cite_worthy_share"]}


def _index(paragraph_dir: Path) -> list[Entry]:
    entries = []
    for path in tqdm(sorted(paragraph_dir.glob("*.jsonl")), desc="index", unit="shard"):
        with open(path, "rb") as handle:
            offset = 0
            for line in handle:
                record = json.loads(line)
                entries.append(Entry(record["paper_id"], record["section_idx"],
                                     record[FIELD_OF_STUDY][0], path, offset))
                offset += len(line)
    return entries


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
