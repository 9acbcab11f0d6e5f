"""The works stage: the cited-works index of the curated papers.

1. The papers of the curated dataset's ``splits`` are chosen (``build.py``), with their cite-worthy
   samples.
2. ``inputs`` are read again (the readers curate uses): each chosen paper's bibliography, and with
   ``contexts: full_text`` the sentences of its body that cite.
3. Every reference is resolved to one work by ``core/identity.py``'s rules; each work gets its
   metadata, its citing-paper count and its citing sentences.
4. The index is written (``citeworth/suggest/works.py``): SQLite for the works, their keys and
   contexts; ``bm25s`` for the lexical ranking; which papers and paragraphs cite which works
   (co-citation) and the indexed papers' titles and abstracts (``bm25s`` too); with
   ``dense.encoder`` the titles' vectors and an HNSW graph over them (nmslib).

Outputs: ``out_dir`` (the index folder, replaced whole once complete) and ``stats_path`` (counts and
the index's size in bytes). The summary it returns adds the seconds each step took (not written:
every door writes the same bytes).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_json
from citeworth.core.params import to_dict
from citeworth.core.threads import torch_threads
from citeworth.models.base import atomic_dir
from citeworth.sources import BadRecord, input_shards, read_shard
from citeworth.suggest.cited_works.build import WorkFile
from citeworth.suggest.cited_works.params import WorksParams
from citeworth.suggest.works import IndexWriter

log = logging.getLogger(__name__)
_WORK_PREFIX = ".works-"


def works(params: WorksParams) -> dict:
    data_dir = Path(params.data_dir)
    missing = [str(data_dir / f"{split}.jsonl") for split in params.splits
               if not (data_dir / f"{split}.jsonl").is_file()]
    if missing:
        raise StageFailed(f"curated dataset file(s) missing: {', '.join(missing)} "
                          "(run the assemble stage first)")
    out_dir = Path(params.out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.parent.glob(f"{_WORK_PREFIX}*"):  # left by a killed run
        shutil.rmtree(stale, ignore_errors=True)
    counts: Counter = Counter()
    seconds: dict[str, float] = {}
    with (tempfile.TemporaryDirectory(dir=out_dir.parent, prefix=_WORK_PREFIX) as work,
          atomic_dir(out_dir) as tmp):
        file = WorkFile(Path(work) / "references.sqlite")
        try:
            with _timed(seconds, "read"):
                file.select(data_dir, list(params.splits), counts)
                _read(params, file, counts)
            with _timed(seconds, "resolve"):
                file.group()
                writer = IndexWriter(tmp, settings=to_dict(params), max_contexts=params.max_contexts)
                for found in file.works():
                    writer.add(found)
            with _timed(seconds, "lexical"):
                writer.write_lexical(params.bm25.k1, params.bm25.b)
                writer.write_citations(file.citations(), file.paper_texts(), params.bm25.k1, params.bm25.b)
            if params.dense.encoder:
                with _timed(seconds, "dense"), torch_threads(params.threads):
                    dense = params.dense
                    writer.write_dense(dense.encoder, dense.max_length, dense.batch_size, dense.device,
                                       dense.hnsw_m, dense.hnsw_ef_construction)
            counts.update(writer.counts)
            writer.finish(dict(counts))
        finally:
            file.close()
    stats = {"counts": dict(sorted(counts.items())),
             "bytes": {path.name: _size(path) for path in sorted(out_dir.iterdir())}}
    write_json(params.stats_path, stats)
    return {**stats, "seconds": {name: round(value, 1) for name, value in seconds.items()}}


def _read(params: WorksParams, file: WorkFile, counts: Counter) -> None:
    for shard in tqdm(input_shards(params.inputs), desc="works: read", unit="shard"):
        for item in read_shard(shard):
            if isinstance(item, BadRecord):
                counts["bad_records"] += 1
            elif file.add_paper(item, params.contexts, counts):
                counts["papers_indexed"] += 1
    if unread := file.unread():
        counts["papers_not_in_inputs"] = len(unread)
        log.warning("works: %d curated paper(s) not found in the inputs (first: %s)", len(unread),
                    "/".join(unread[0]))


class _timed:
    def __init__(self, seconds: dict[str, float], name: str):
        self.seconds, self.name = seconds, name

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.seconds[self.name] = time.perf_counter() - self.start


def _size(path: Path) -> int:
    if not path.is_dir():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
