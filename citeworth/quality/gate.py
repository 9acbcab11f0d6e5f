"""The validate stage: the dataset must pass its expectation suites before anything trains on it.

Suites run over the dataset's sentences and paragraphs, the split-integrity tables and (when
``raw_inputs`` are given) a sample of the raw papers. The spans-only baseline runs through the same
sentence and paragraph suites for the side-by-side residual-marker rates, but never gates.
Outputs: Data Docs at ``site_dir`` (with ``failures.json``: each failed expectation's example rows,
which summary.json leaves out) and ``summary_path``. A failed critical expectation raises
``StageFailed`` naming it, its row count and example rows (so the CLI exits 1 and the DVC stage
or Airflow task fails), after both outputs are written; a failed soft one is logged as a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_json
from citeworth.core.paper import Paper
from citeworth.core.schema import SPLITS
from citeworth.quality.checkpoints import run_suites
from citeworth.quality.config import ValidateParams
from citeworth.quality.results import enforce
from citeworth.quality.suites import suites
from citeworth.quality.summary import summary
from citeworth.quality.tables import Table, dataset_tables, raw_tables, split_tables
from citeworth.sources import BadRecord, input_shards, read_shard

log = logging.getLogger(__name__)
BASELINE = "baseline_"  # prefix of the baseline's table names
FAILURES_FILE = "failures.json"  # in the site: failed expectations of ours with their example rows

__all__ = ["ValidateParams", "validate"]


def validate(params: ValidateParams) -> dict:
    """Validate the dataset, its splits, the raw input and the baseline; fail on a critical breach."""
    tables = _dataset_and_splits(Path(params.data_dir), params.curated_dir)
    if params.raw_inputs:
        tables.update(raw_tables(_raw_items(params)))
    baseline, baseline_facts = _baseline(params.baseline_dir)
    tables.update(baseline)
    by_name = suites(params, raw=bool(params.raw_inputs))
    suite_of = {name: by_name[name.removeprefix(BASELINE)] for name in tables}
    found = run_suites(tables, suite_of, Path(params.site_dir), params.examples)
    ours = [o for o in found if not o.table.startswith(BASELINE)]
    theirs = [o for o in found if o.table.startswith(BASELINE)]
    result = summary({name: len(t.frame) for name, t in tables.items()}, ours, theirs, baseline_facts)
    write_json(Path(params.summary_path), result)
    write_json(Path(params.site_dir) / FAILURES_FILE, {o.name: o.failure() for o in ours if not o.success})
    enforce(ours, Path(params.site_dir))
    return {
        "success": result["success"],
        "warnings": result["warnings"],
        "sentences": len(tables["sentences"].frame),
        "markers_removed_percent": result["markers_removed_percent"],
        "site": str(Path(params.site_dir) / "index.html"),
        "summary": str(params.summary_path),
    }


def _dataset_and_splits(data_dir: Path, curated_dir: Path | None) -> dict[str, Table]:
    if missing := _missing_splits(data_dir):
        raise StageFailed(f"dataset split file(s) missing in {data_dir}: {', '.join(missing)} "
                          "(run the assemble stage first)")
    tables = dataset_tables(data_dir)
    tables.update(split_tables(tables["sentences"].frame, tables["paragraphs"].frame, curated_dir))
    return tables


def _baseline(baseline_dir: Path | None) -> tuple[dict[str, Table], dict]:
    """The baseline's tables and what summary.json says about it (a missing one is no error)."""
    if baseline_dir is None:
        return {}, {"data_dir": None, "available": False, "note": "no baseline_dir configured"}
    facts = {"data_dir": str(baseline_dir), "available": False}
    if missing := _missing_splits(Path(baseline_dir)):
        note = f"absent: no {', '.join(missing)} (run curate_baseline and assemble_baseline)"
        log.warning("baseline not compared: %s in %s", note, baseline_dir)
        return {}, {**facts, "note": note}
    tables = dataset_tables(Path(baseline_dir), prefix=BASELINE)
    return tables, {**facts, "available": True, "note": "validated with the dataset's suites, not gating"}


def _missing_splits(data_dir: Path) -> list[str]:
    return [f"{split}.jsonl" for split in SPLITS if not (data_dir / f"{split}.jsonl").exists()]


def _raw_items(params: ValidateParams) -> Iterator[tuple[str, Paper | BadRecord]]:
    try:
        shards = input_shards(params.raw_inputs)
    except (FileNotFoundError, ValueError) as exc:
        raise StageFailed(f"raw input of the raw-input suite: {exc}") from exc
    for shard in shards:
        for item in islice(read_shard(shard), params.raw_records_per_shard):
            yield shard.reader, item
