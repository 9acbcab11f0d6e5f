"""The related_work stage: the readers' Papers -> Kobayashi et al.'s related-work dataset.

Reads the same inputs as curate (any reader), finds each paper's related-work section
(sections.py), splits it into sentences with the curation's splitter and maps every citation
anchor to its bibliography entry (record.py; links, else numbers, else surname + year), then fills
in cited abstracts from the corpus itself, else from the optional lookup (lookup.py).

Outputs: ``out_dir/related_work.jsonl`` (one record a line, sorted by paper id),
``out_dir/quarantine.jsonl`` (the records a reader could not read, with their reasons), and the
per-source statistics in ``stats_path`` (JSON) and ``table_path`` (Markdown).
The corpus index and the records wait in a SQLite file beside the output until the corpus is read,
so memory stays flat however large the corpus.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import tempfile
from dataclasses import asdict
from pathlib import Path

from pydantic import Field
from tqdm import tqdm

from citeworth.core.io import atomic_write, dumps, write_json, write_text
from citeworth.core.params import Params
from citeworth.corpora.paper_index import PaperIndex
from citeworth.corpora.related_work.lookup import LookupParams, OnlineLookup
from citeworth.corpora.related_work.record import fill_abstracts, paper_record
from citeworth.corpora.related_work.sections import DEFAULT_TITLES, SectionFinder
from citeworth.corpora.related_work.stats import RelatedWorkStats, markdown
from citeworth.sources import BadRecord, InputSpec, input_shards, read_shard
from citeworth.text.sentences import SentenceSplitter

log = logging.getLogger(__name__)
_WORK_PREFIX = ".related_work-"
DATASET_FILE = "related_work.jsonl"


class RelatedWorkParams(Params):
    inputs: list[InputSpec]
    """The papers read (as curate.inputs)."""
    out_dir: Path
    """related_work.jsonl (one paper a line, sorted by paper id) and quarantine.jsonl."""
    stats_path: Path
    """The dataset's statistics per source (JSON)."""
    table_path: Path
    """The same statistics as Markdown."""
    titles: list[str] = Field(default_factory=lambda: list(DEFAULT_TITLES))
    """Section titles (regular expressions on the normalised title, earlier ones preferred)."""
    spacy_model: str | None = None
    """as curate.rules.spacy_model: null = scispacy tokenizer + pysbd"""
    lookup: LookupParams = Field(default_factory=LookupParams)
    """Cited abstracts not in the corpus, looked up online (arXiv API / Semantic Scholar); off by default."""


def related_work(params: RelatedWorkParams) -> dict:
    out_path = Path(params.out_dir) / DATASET_FILE
    out_path.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_path.parent.glob(f"{_WORK_PREFIX}*"):  # left by a killed run
        shutil.rmtree(stale, ignore_errors=True)
    stats = RelatedWorkStats()
    lookup = OnlineLookup(params.lookup)
    with tempfile.TemporaryDirectory(dir=out_path.parent, prefix=_WORK_PREFIX) as work:
        corpus = PaperIndex(Path(work) / "corpus.sqlite")
        pending = _Pending(Path(work) / "records.sqlite")
        try:
            _read(params, corpus, pending, stats, out_path.parent / "quarantine.jsonl")
            with atomic_write(out_path) as out:
                for record in pending.sorted():
                    origins: dict[str, str] = {}
                    finished = fill_abstracts(record, _finder(corpus, lookup, origins))
                    stats.record(record, finished, origins)
                    out.write(dumps(finished) + "\n")
        finally:
            corpus.close()
            pending.close()
    summary = stats.to_dict({"providers": list(params.lookup.providers), "requests": lookup.requests,
                             "errors": lookup.errors, "duplicate_paper_ids": pending.duplicates})
    write_json(params.stats_path, summary)
    write_text(params.table_path, markdown(summary, stats.section_titles(), params.out_dir / DATASET_FILE))
    return summary["overall"]


def _read(params: RelatedWorkParams, corpus: PaperIndex, pending: _Pending, stats: RelatedWorkStats,
          quarantine_path: Path) -> None:
    finder = SectionFinder(params.titles)
    splitter = SentenceSplitter(params.spacy_model)
    shards = input_shards(params.inputs)
    with atomic_write(quarantine_path) as quarantine, tqdm(shards, desc="related_work", unit="shard") as bar:
        for shard in bar:
            for item in read_shard(shard):
                if isinstance(item, BadRecord):
                    stats.bad_record(shard.reader)
                    quarantine.write(dumps(asdict(item)) + "\n")
                    continue
                stats.paper(item.source)
                corpus.add(item)
                if record := paper_record(item, finder, splitter.split):
                    pending.add(record)


def _finder(corpus: PaperIndex, lookup: OnlineLookup, origins: dict[str, str]):
    """``find(cited)`` for fill_abstracts: the corpus first, then the lookup; notes each origin."""
    def in_corpus(cited: dict):
        paper = corpus.with_abstract(cited)
        return paper and (paper.title, paper.abstract)

    def find(cited: dict):
        for origin, source in (("corpus", in_corpus), ("lookup", lookup.find if lookup.enabled else None)):
            found = source(cited) if source else None
            if found:
                if found[1]:
                    origins[cited["ref_id"]] = origin
                return found
        return None
    return find


class _Pending:
    """Records waiting for the whole corpus to be indexed, kept on disk and read back by paper id."""

    def __init__(self, path: Path):
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE records (paper_id TEXT PRIMARY KEY, record TEXT)")
        self.duplicates = 0

    def add(self, record: dict) -> None:
        added = self.db.execute("INSERT OR IGNORE INTO records VALUES (?, ?)",
                                (record["paper_id"], json.dumps(record))).rowcount
        if not added:
            self.duplicates += 1
            log.warning("related_work: paper id %s read twice; the first one is kept", record["paper_id"])

    def sorted(self):
        for (record,) in self.db.execute("SELECT record FROM records ORDER BY paper_id"):
            yield json.loads(record)

    def close(self) -> None:
        self.db.close()
