"""The curate stage: every shard of raw papers -> kept paragraphs, quarantine and stats.

A shard is the unit of work: `curate_shard` handles one (an Airflow mapped task calls it
directly), `curate` runs them all on a process pool. Each shard writes three files under
``out_dir`` -- ``paragraphs/<shard>.jsonl``, ``quarantine/<shard>.jsonl`` and, last,
``stats/<shard>.json`` -- each atomically. The stats file marks the shard finished: a rerun with
the same inputs and rules skips it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from citeworth.core.io import atomic_write, dumps, sha256_file, write_json
from citeworth.core.params import to_dict
from citeworth.curate.config import CurationConfig
from citeworth.curate.stats import summarize
from citeworth.sources import BadRecord, InputSpec, Shard, discover_shards, read_shard

if TYPE_CHECKING:
    from citeworth.curate.engine import Curator

log = logging.getLogger(__name__)


@dataclass
class CurateParams:
    inputs: list[InputSpec]
    out_dir: Path = Path("interim")
    workers: int = 1
    rules: CurationConfig = field(default_factory=CurationConfig)


def shards(params: CurateParams) -> list[Shard]:
    found = [
        shard
        for spec in params.inputs
        for shard in discover_shards(spec.reader, spec.glob, spec.metadata, spec.release)
    ]
    names = Counter(shard_key(shard) for shard in found)
    if clashes := [name for name, n in names.items() if n > 1]:
        raise ValueError(f"two inputs produce the same shard name(s) {clashes}: give them distinct globs")
    return found


def shard_key(shard: Shard) -> str:
    return f"{shard.reader}__{shard.name}"


def list_shards(params: CurateParams) -> list[str]:
    """Shard keys in a stable order (the unit an Airflow task maps over); outputs of shards that
    are no longer among the inputs are removed, or assemble would read them."""
    keys = [shard_key(shard) for shard in shards(params)]
    _prune(Path(params.out_dir), set(keys))
    return keys


def _prune(out_dir: Path, keys: set[str]) -> None:
    for path in sorted(out_dir.glob("*/*")) if out_dir.is_dir() else []:
        if path.is_file() and path.name.rsplit(".", 1)[0] not in keys:  # <key>.jsonl, <key>.json
            log.info("removing %s: its shard is not among the inputs", path)
            path.unlink()


def curate_shard(params: CurateParams, shard: str | Shard) -> dict:
    """Curate one shard (by key or object); a no-op returning the saved stats when it is done."""
    if isinstance(shard, str):
        by_key = {shard_key(s): s for s in shards(params)}
        if shard not in by_key:
            raise KeyError(f"no shard {shard!r}; shards: {sorted(by_key)}")
        shard = by_key[shard]
    return _ShardRun(params, shard).run()


def curate(params: CurateParams) -> dict:
    """Curate every shard (``params.workers`` processes) and return the merged funnel counts."""
    todo = shards(params)
    _prune(Path(params.out_dir), {shard_key(shard) for shard in todo})
    results: dict[str, dict] = {}
    with tqdm(total=len(todo), desc="curate", unit="shard") as bar:
        if params.workers <= 1 or len(todo) <= 1:
            for shard in todo:
                results[shard_key(shard)] = curate_shard(params, shard)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=min(params.workers, len(todo))) as pool:
                futures = {pool.submit(curate_shard, params, shard): shard for shard in todo}
                for future in as_completed(futures):
                    results[shard_key(futures[future])] = future.result()
                    bar.update()
    return summarize([results[key] for key in sorted(results)])


class _ShardRun:
    """One shard's run: read -> curate -> write paragraphs, quarantine and, last, stats."""

    def __init__(self, params: CurateParams, shard: Shard):
        self.params = params
        self.shard = shard
        key = shard_key(shard)
        out = Path(params.out_dir)
        self.paragraphs_path = out / "paragraphs" / f"{key}.jsonl"
        self.quarantine_path = out / "quarantine" / f"{key}.jsonl"
        self.stats_path = out / "stats" / f"{key}.json"
        self.fingerprint = _fingerprint(params.rules, shard)

    def finished(self) -> dict | None:
        if not (self.stats_path.exists() and self.paragraphs_path.exists()):
            return None
        stats = json.loads(self.stats_path.read_text())
        return stats if stats.get("fingerprint") == self.fingerprint else None

    def run(self) -> dict:
        if (done := self.finished()) is not None:
            log.info("shard %s already curated with these inputs and rules: skipped", shard_key(self.shard))
            return done
        curator = _curator(self.params.rules)
        curator.stats = type(curator.stats)()  # the cached Curator counts this shard afresh
        quarantined: Counter[str] = Counter()
        self.truncated_at: str | None = None
        with atomic_write(self.quarantine_path) as bad_out, atomic_write(self.paragraphs_path) as good_out:
            for record in curator.curate(self._good_papers(bad_out, quarantined)):
                good_out.write(dumps(record) + "\n")
        stats = {
            "shard": shard_key(self.shard),
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
                        shard_key(self.shard), self.truncated_at)
        if quarantined:
            log.warning("shard %s: %d bad records quarantined (%s) in %s", shard_key(self.shard),
                        sum(quarantined.values()), dict(quarantined), self.quarantine_path)
        return stats

    def _good_papers(self, bad_out, quarantined: Counter):
        for item in read_shard(self.shard):
            if isinstance(item, BadRecord):
                quarantined[item.reason.split(":")[0]] += 1
                bad_out.write(dumps(asdict(item)) + "\n")
                if item.fatal:
                    self.truncated_at = item.location
            else:
                yield item


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
    """What decides a shard's output: the rules and the input files' contents (not their mtimes,
    which a fresh download or a DVC checkout changes)."""
    files = [p for p in (*shard.paths, shard.metadata) if p]
    payload = dumps({
        "rules": to_dict(rules),
        "files": [(p, sha256_file(Path(p))) for p in files],
        "release": shard.release,
    })
    return hashlib.sha256(payload.encode()).hexdigest()
