"""The curate stage: every shard of raw papers -> kept paragraphs, quarantine and stats.

A shard is the unit of work: `curate_shard` handles one (an Airflow mapped task calls it
directly), `curate` runs them all on a process pool. Each shard writes four files under
``out_dir`` -- ``paragraphs/<shard>.jsonl``, ``papers/<shard>.jsonl`` (one line for each paper with
kept paragraphs, in their order: its identity across sources and how many of the paragraphs lines
are its, see ``core.identity.copy_record``), ``quarantine/<shard>.jsonl`` and, last,
``stats/<shard>.json`` -- each atomically. The stats file marks the shard finished: a rerun with
the same inputs, rules and code (``CODE``, see ``citeworth.core.fingerprint``) skips it.

Across releases: a shard's fingerprint covers its content, not its place (the files' bytes and
names within the shard's folder, its metadata, the reader, the rules and the code; not the folder
it lies in, its release or its name), and finished shards are kept by fingerprint in the shard
store (``citeworth.curate.shard_store``). A new release, built in a fresh workspace or after
``dvc repro`` emptied ``out_dir``, curates only its new or changed shards: every other is written
from the store with its new release and name, byte-identical to a fresh curation.

A bad record never stops a shard (readers and the curation quarantine it with its reason). An
error nothing foresaw stops only its shard: its stats file then records the error (``failed``)
instead of counts, its quarantine holds one ``shard_error`` record, it has no paragraphs file,
the other shards go on, and the stage fails at the end naming the failed shards; a rerun redoes
only those.
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import as_completed
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field
from tqdm import tqdm

from citeworth.core import collector, knobs, schema
from citeworth.core.errors import StageFailed, disk_full
from citeworth.core.fingerprint import content_version, current_record, fingerprint
from citeworth.core.identity import copy_record
from citeworth.core.io import atomic_write, dumps, write_json, write_jsonl
from citeworth.core.paper import Paper
from citeworth.core.params import Params, to_dict
from citeworth.core.processes import worker_pool
from citeworth.curate.config import CURATION_ERROR, CurationConfig
from citeworth.curate.shard_store import ShardOutputs, reuse
from citeworth.curate.stats import summarize
from citeworth.curate.store_settings import configured_store
from citeworth.sources import BadRecord, InputSpec, Shard, input_shards, read_shard
from citeworth.sources.base import RAW_CHARS

if TYPE_CHECKING:
    from citeworth.curate.engine import Curator

log = logging.getLogger(__name__)

# The code a curated shard comes from, this module's import closure (the rules engine, the readers,
# the text toolkit): an edit to it recurates every shard, an edit elsewhere (assemble.py) does not.
CODE = (__name__,)
# What a shard's stats record of where it came from: reuse rewrites them, the fingerprint omits them.
PROVENANCE = ("shard", "release", "inputs")


class CurateParams(Params):
    inputs: list[InputSpec]
    """Which reader reads which downloaded files; each matching file (or shard pair) is one shard."""
    out_dir: Path
    """paragraphs/, papers/, stats/ and quarantine/ of every shard."""
    rules: CurationConfig = Field(default_factory=CurationConfig)
    """The curation rules (the paper's and its public code's)."""


def shards(params: CurateParams) -> list[Shard]:
    found = input_shards(params.inputs)
    names = Counter(shard_key(shard) for shard in found)
    if clashes := [name for name, n in names.items() if n > 1]:
        raise ValueError(f"two inputs produce the same shard name(s) {clashes}: give them distinct globs")
    return found


def shard_key(shard: Shard) -> str:
    return schema.shard_key(shard.reader, shard.name)


def list_shards(params: CurateParams) -> list[str]:
    """Shard keys in a stable order (the unit an Airflow task maps over); outputs of shards that
    are no longer among the inputs are removed, or assemble would read them."""
    keys = [shard_key(shard) for shard in shards(params)]
    _prune(Path(params.out_dir), set(keys))
    return keys


def shard_outputs(out_dir: Path, key: str) -> ShardOutputs:
    """Where shard ``key`` writes its paragraphs, papers, quarantine and stats in ``out_dir``."""
    out = Path(out_dir)
    return ShardOutputs(out / "paragraphs" / f"{key}.jsonl", out / "papers" / f"{key}.jsonl",
                        out / "quarantine" / f"{key}.jsonl", out / "stats" / f"{key}.json")


def _prune(out_dir: Path, keys: set[str]) -> None:
    for path in sorted(out_dir.glob("*/*")) if out_dir.is_dir() else []:
        if path.is_file() and path.name.rsplit(".", 1)[0] not in keys:  # <key>.jsonl, <key>.json
            log.info("removing %s: its shard is not among the inputs", path)
            path.unlink()


def curate_shard(params: CurateParams, shard: str | Shard) -> dict:
    """Curate one shard (by key or object); a no-op returning the saved stats when it is done.
    Raises StageFailed when the shard fails (after recording why in its stats and quarantine)."""
    if isinstance(shard, str):
        by_key = {shard_key(s): s for s in shards(params)}
        if shard not in by_key:
            raise KeyError(f"no shard {shard!r}; shards: {sorted(by_key)}")
        shard = by_key[shard]
    stats = _ShardRun(params, shard).run()
    if "failed" in stats:
        raise StageFailed(_failure_message(params, [stats]))
    return stats


def curate(params: CurateParams) -> dict:
    """Curate every shard and return the merged funnel counts; StageFailed (after every other shard
    is done) names the shards that failed. ``$CITEWORTH_WORKERS`` processes (``core.knobs``; default:
    one per CPU this process may use) curate shards side by side."""
    todo = shards(params)
    _prune(Path(params.out_dir), {shard_key(shard) for shard in todo})
    workers = knobs.workers(default=knobs.available_cpus())
    results: dict[str, dict] = {}
    with tqdm(total=len(todo), desc="curate", unit="shard") as bar:
        for key, stats in _run_shards(params, todo, workers):
            results[key] = stats
            bar.update()
    if failed := [results[key] for key in sorted(results) if "failed" in results[key]]:
        raise StageFailed(_failure_message(params, failed, len(todo)))
    return summarize([results[key] for key in sorted(results)])


def _run_shards(params: CurateParams, todo: list[Shard], workers: int) -> Iterator[tuple[str, dict]]:
    if workers <= 1 or len(todo) <= 1:
        for shard in todo:
            yield shard_key(shard), _ShardRun(params, shard).run()
        return
    with worker_pool(min(workers, len(todo))) as pool:
        futures = {pool.submit(_run_shard, params, shard): shard for shard in todo}
        for future in as_completed(futures):
            shard = futures[future]
            try:
                stats = future.result()
            except Exception as exc:  # the worker died (e.g. killed for memory) or its result was lost
                stats = _ShardRun(params, shard).fail(exc)
            yield shard_key(shard), stats


def _run_shard(params: CurateParams, shard: Shard) -> dict:
    return _ShardRun(params, shard).run()


def _failure_message(params: CurateParams, failed: list[dict], total: int | None = None) -> str:
    names = ", ".join(f"{stats['shard']} ({stats['failed']['error']})" for stats in failed)
    others = f"the other {total - len(failed)} shard(s) are curated; " if total else ""
    return (f"curation failed for {len(failed)} shard(s): {names}; {others}the tracebacks are in "
            f"{Path(params.out_dir) / 'stats'}/<shard>.json, and a rerun redoes only the failed shards")


class _ShardRun:
    """One shard's run: read -> curate -> write paragraphs, quarantine and, last, stats."""

    def __init__(self, params: CurateParams, shard: Shard):
        self.params = params
        self.shard = shard
        self.key = shard_key(shard)
        self.outputs = shard_outputs(params.out_dir, self.key)
        self.paragraphs_path, self.papers_path, self.quarantine_path, self.stats_path = self.outputs.files()
        self.identity = {"shard": self.key, "name": shard.name, "release": shard.release,
                         "inputs": list(shard.paths)}
        self.store = configured_store()

    def run(self) -> dict:
        """The shard's stats: curated now or before, or ``failed`` (recorded) when it raised."""
        try:
            self.fingerprint = _fingerprint(self.params.rules, self.shard)
            stats = self._reused() or self._curate()
            if self.store:
                self.store.add(self.fingerprint, self.outputs)
            return stats
        except Exception as exc:
            if full := disk_full(exc, self.params.out_dir):  # the host's fault, not the shard's: no record
                raise full from exc
            return self.fail(exc)

    def _reused(self) -> dict | None:
        """The stats of this content curated before: in ``out_dir`` for this very shard (a no-op),
        in ``out_dir`` with other provenance or in the store (rewritten as this shard's); else None."""
        outputs_exist = self.paragraphs_path.exists() and self.papers_path.exists()
        here = current_record(self.stats_path, self.fingerprint) if outputs_exist else None
        if here is not None and all(here.get(key) == self.identity[key] for key in PROVENANCE):
            log.info("shard %s already curated with these inputs, rules and code: skipped", self.key)
            return here
        if here is not None:
            return self._rewritten(self.outputs, str(self.stats_path))
        if not self.store:
            return None
        with self.store.find(self.fingerprint) as found:
            return self._rewritten(found, self.store.where(self.fingerprint)) if found else None

    def _rewritten(self, found: ShardOutputs, where: str) -> dict | None:
        """The stats of ``found`` written out as this shard's; None (so curated afresh, and a
        stored copy removed) when it is unreadable."""
        try:
            stats = reuse(found, self.outputs, self.identity)
        except (OSError, ValueError, KeyError) as exc:  # a damaged copy: curate afresh, store anew
            log.warning("shard %s: the curated copy %s is unreadable (%s): curated afresh", self.key, where,
                        exc)
            if found is not self.outputs:
                self.store.discard(self.fingerprint)
            return None
        log.info("shard %s: its content was curated before with these rules and code (%s): reused",
                 self.key, where)
        return stats

    def fail(self, exc: BaseException) -> dict:
        """Record that the shard failed: stats with the error, one shard_error quarantine record,
        no paragraphs or papers (a stale file would pass for this run's output)."""
        trace = "".join(traceback.format_exception(exc)).strip()
        error = f"{type(exc).__name__}: {exc}"
        log.error("shard %s failed: %s", self.key, trace)
        self.paragraphs_path.unlink(missing_ok=True)
        self.papers_path.unlink(missing_ok=True)
        record = BadRecord(self.shard.name, "shard", f"shard_error:{type(exc).__name__}", trace[-4000:], "")
        write_jsonl(self.quarantine_path, [asdict(record)])
        stats = {"shard": self.key, "inputs": list(self.shard.paths), "release": self.shard.release,
                 "fingerprint": None, "failed": {"error": error[:1000], "traceback": trace[-4000:]}}
        write_json(self.stats_path, stats)
        return stats

    def _curate(self) -> dict:
        curator = _curator(self.params.rules)
        curator.stats = type(curator.stats)()  # the cached Curator counts this shard afresh
        quarantined: Counter[str] = Counter()
        self.truncated_at: str | None = None
        with atomic_write(self.quarantine_path) as bad_out, atomic_write(self.paragraphs_path) as good_out, \
                atomic_write(self.papers_path) as papers_out, collector.streaming():
            papers = self._good_papers(bad_out, quarantined)
            on_error = functools.partial(self._quarantine_paper, bad_out=bad_out, quarantined=quarantined)
            on_kept = functools.partial(self._record_copy, papers_out=papers_out)
            for record in curator.curate(papers, on_error=on_error, on_kept=on_kept):
                good_out.write(dumps(record) + "\n")
        stats = {
            "shard": self.key,
            "inputs": list(self.shard.paths),
            "release": self.shard.release,
            "fingerprint": self.fingerprint,
            "curation": curator.stats.to_dict(),
            "quarantined": dict(sorted(quarantined.items())),
            "truncated_at": self.truncated_at,
        }
        write_json(self.stats_path, stats)
        if self.truncated_at:
            log.warning("shard %s is truncated: read up to %s; the papers before it are curated",
                        self.key, self.truncated_at)
        if quarantined:
            log.warning("shard %s: %d bad records quarantined (%s) in %s", self.key,
                        sum(quarantined.values()), dict(quarantined), self.quarantine_path)
        return stats

    def _good_papers(self, bad_out, quarantined: Counter):
        for item in read_shard(self.shard):
            if isinstance(item, BadRecord):
                self._quarantine(item, bad_out, quarantined)
                if item.fatal:
                    self.truncated_at = item.location
            else:
                yield item

    def _quarantine_paper(self, paper: Paper, exc: Exception, bad_out, quarantined: Counter) -> None:
        """A paper whose curation raised (the curation counts it as rejected) goes to quarantine."""
        reason, detail = f"{CURATION_ERROR}:{type(exc).__name__}", f"{type(exc).__name__}: {exc}"[:RAW_CHARS]
        record = BadRecord(self.shard.name, f"paper {paper.paper_id}", reason, detail, paper.paper_id)
        self._quarantine(record, bad_out, quarantined)

    @staticmethod
    def _record_copy(paper: Paper, records: int, papers_out) -> None:
        """A paper with kept paragraphs: its identity, and how many paragraphs lines are its."""
        papers_out.write(dumps(copy_record(paper, records)) + "\n")

    @staticmethod
    def _quarantine(item: BadRecord, bad_out, quarantined: Counter) -> None:
        quarantined[item.reason.split(":")[0]] += 1
        bad_out.write(dumps(asdict(item)) + "\n")


_CURATORS: dict[str, Curator] = {}


def _curator(rules: CurationConfig) -> Curator:
    """One Curator (and so one loaded spaCy pipeline) per process and rule set; imported here so
    listing shards (an Airflow task, the validate stage) never loads spaCy."""
    from citeworth.curate.engine import Curator

    key = dumps(to_dict(rules))
    if key not in _CURATORS:
        _CURATORS[key] = Curator(rules)
    return _CURATORS[key]


def _fingerprint(rules: CurationConfig, shard: Shard) -> str:
    """What decides a shard's output: the code, the rules, the reader, the collection its records name
    and the input files' contents (not their mtimes, which a fresh download or a DVC checkout changes,
    nor their folder, release or shard name: provenance that ``shard_store.reuse`` rewrites)."""
    metadata = content_version([shard.metadata]) if shard.metadata else None
    return fingerprint(CODE, rules=to_dict(rules), reader=shard.reader, collection=shard.collection,
                       data=content_version(shard.paths), metadata=metadata)
