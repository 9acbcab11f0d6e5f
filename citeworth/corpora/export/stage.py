"""The ``export`` stage: every input's papers -> unarXive JSONL or GrabCite files under ``out_dir``.

The format's folder is built beside the old one and swapped in whole, so a failed run leaves the
previous export as it was and a finished one holds no file of an earlier run. Records a reader
cannot read are quarantined (``<format>_quarantine.jsonl``) and counted (``<stats_dir>/<format>_stats.json``,
a metric outside the cached outputs, as every stage's stats);
a paper id met twice (two inputs holding one paper) is exported once, the first time.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Literal

from tqdm import tqdm

from citeworth.core.io import dumps, write_json, write_text
from citeworth.core.paper import Paper
from citeworth.core.params import Params
from citeworth.sources import BadRecord, InputSpec, Shard, input_shards, read_shard

log = logging.getLogger(__name__)

FORMATS = ("unarxive", "grabcite")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ExportParams(Params):
    inputs: list[InputSpec]
    """The papers exported (as curate.inputs)."""
    format: Literal[FORMATS] = "unarxive"
    """unarxive | grabcite"""
    out_dir: Path
    """<out_dir>/<format>/: the exported files."""
    spacy_model: str | None
    """grabcite's sentence splitter, as curate.rules.spacy_model"""
    stats_dir: Path
    """<format>_stats.json: papers, shards, quarantined records."""


def export(params: ExportParams) -> dict:
    out_dir = Path(params.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    shards = input_shards(params.inputs)
    staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=f".{params.format}."))
    counts: Counter[str] = Counter()
    bad: list[BadRecord] = []
    try:
        writer = _UnarxiveWriter(staging) if params.format == "unarxive" else _GrabciteWriter(staging, params)
        seen: set[str] = set()
        for shard in tqdm(shards, desc=f"export {params.format}", unit="shard"):
            papers = []
            for item in read_shard(shard):
                if isinstance(item, BadRecord):
                    bad.append(item)
                    counts[f"quarantined:{item.reason.split(':')[0]}"] += 1
                elif item.paper_id in seen:
                    counts["duplicate_paper_id"] += 1
                else:
                    seen.add(item.paper_id)
                    papers.append(item)
            writer.write(shard, papers)
            counts["papers"] += len(papers)
        _swap_in(staging, out_dir / params.format)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    write_text(out_dir / f"{params.format}_quarantine.jsonl", "".join(dumps(asdict(b)) + "\n" for b in bad))
    summary = {
        "format": params.format,
        "dir": str(out_dir / params.format),
        "shards": len(shards),
        **dict(sorted(counts.items())),
    }
    write_json(Path(params.stats_dir) / f"{params.format}_stats.json", summary)
    return summary


def paper_file_name(paper_id: str) -> str:
    """A paper id as a file name (old arXiv ids hold a slash: ``hep-th/9901001`` -> ``hep-th_9901001``)."""
    return _UNSAFE.sub("_", paper_id).strip("._") or "paper"


class _UnarxiveWriter:
    def __init__(self, folder: Path):
        self.folder = folder

    def write(self, shard: Shard, papers: list[Paper]) -> None:
        from citeworth.corpora.export.unarxive import unarxive_record

        if papers:
            write_text(
                self.folder / f"{shard.reader}__{shard.name}.jsonl",
                "".join(dumps(unarxive_record(paper)) + "\n" for paper in papers),
            )


class _GrabciteWriter:
    def __init__(self, folder: Path, params: ExportParams):
        from citeworth.text.sentences import SentenceSplitter

        self.folder = folder
        self.splitter = SentenceSplitter(params.spacy_model)

    def write(self, shard: Shard, papers: list[Paper]) -> None:
        from citeworth.corpora.export.grabcite import grabcite_files

        for paper in papers:
            for suffix, text in grabcite_files(paper, self.splitter).items():
                write_text(self.folder / f"{paper_file_name(paper.paper_id)}.{suffix}", text)


def _swap_in(staging: Path, target: Path) -> None:
    """Replace ``target`` by ``staging`` (the old folder is renamed away first, then removed)."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old")
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(old)
        target.rename(old)
    staging.chmod(0o755)
    staging.rename(target)
    if old is not None:
        shutil.rmtree(old)
