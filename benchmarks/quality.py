"""Benchmark: the quality gate (``citeworth run validate``) on one million sentence rows.

    .venv/bin/python benchmarks/quality.py                 # after `make demo` (needs data/citeworth)
    .venv/bin/python benchmarks/quality.py --rows 200000 --pool data/baseline

Issue 4's target: validating 1M sentence rows in under 60 s on 2 cores. For each pool (a folder
of real curated {train,dev,test}.jsonl: the demo dataset, and the spans-only baseline when
present), the benchmark tiles the pool's paragraphs into a dataset of ``--rows`` sentences under
benchmarks/work/quality/ (each copy gets its own paper ids and a distinct leading word, so
sentences stay distinct and no paper crosses splits), then times, in the same run:

- plain: reading the same JSONL into a pandas column and one ``str.contains`` pass per
  residual-marker regex -- the least any marker check has to do;
- gate: the validate stage end to end (flatten to tables, every suite as a GX checkpoint, Data
  Docs, summary.json), without the raw-input suite; the flattening is also timed on its own.

The gate's time is reported as a ratio to the plain pass. Results: benchmarks/results/quality.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import string
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.io import atomic_write, dumps, read_jsonl, write_json
from citeworth.core.schema import SPLITS
from citeworth.quality.config import ValidateParams
from citeworth.quality.gate import validate
from citeworth.quality.markers import MARKERS
from citeworth.quality.tables import dataset_tables, split_tables

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work" / "quality"
RESULTS = ROOT / "benchmarks" / "results" / "quality.json"
TARGET_SECONDS = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="sentence rows to validate (default: 1M)")
    parser.add_argument("--pool", type=Path, action="append",
                        help="folder of real {train,dev,test}.jsonl to tile (repeatable; default: "
                             "data/citeworth and, when present, data/baseline)")
    args = parser.parse_args(argv)
    pools = args.pool or [p for p in (ROOT / "data" / "citeworth", ROOT / "data" / "baseline") if p.is_dir()]
    if not pools:
        parser.error("no pool: run `make demo` first (it writes data/citeworth), or pass --pool")
    runs = [bench_pool(pool, args.rows) for pool in pools]
    write_json(RESULTS, {"machine": machine(), "rows_requested": args.rows, "target_seconds": TARGET_SECONDS,
                         "runs": runs})
    print(json.dumps(runs, indent=2))
    return 0


def bench_pool(pool: Path, rows: int) -> dict:
    work = WORK / pool.name
    dataset = work / "data"
    written = tile(pool, dataset, rows)
    plain = plain_pass(dataset)
    flatten = flatten_pass(dataset)
    gate = gate_pass(dataset, work)
    return {
        "pool": str(pool.relative_to(ROOT) if pool.is_relative_to(ROOT) else pool),
        "sentences": written["sentences"],
        "paragraphs": written["paragraphs"],
        "plain_seconds": round(plain, 2),
        "gate_seconds": round(gate["seconds"], 2),
        "of_which_flatten_seconds": round(flatten, 2),
        "gate_over_plain": round(gate["seconds"] / plain, 2),
        "gate_verdict": gate["verdict"],
        "critical_failures": gate["critical_failures"],
        "within_target": gate["seconds"] < TARGET_SECONDS,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        # Other work on the machine slows both passes; the ratio is the steadier figure.
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def tile(pool: Path, out: Path, rows: int) -> dict:
    """Copies of the pool's paragraphs, split by split, until ``rows`` sentences are written."""
    paragraphs = {split: list(read_jsonl(pool / f"{split}.jsonl")) for split in SPLITS}
    per_copy = sum(len(p["samples"]) for split in paragraphs.values() for p in split)
    if not per_copy:
        raise SystemExit(f"{pool} holds no sentences to tile")
    copies = -(-rows // per_copy)
    counts = {"sentences": 0, "paragraphs": 0}
    for split in SPLITS:
        with atomic_write(out / f"{split}.jsonl") as handle:
            for copy in tqdm(range(copies), desc=f"tile {pool.name}/{split}", unit="copy"):
                for record in paragraphs[split]:
                    handle.write(dumps(relabelled(record, copy)) + "\n")
                    counts["paragraphs"] += 1
                    counts["sentences"] += len(record["samples"])
    return counts


def relabelled(record: dict, copy: int) -> dict:
    """Copy ``copy`` of a paragraph: its own paper id, each sentence opened by a distinct word."""
    word = "Q" + letters(copy)
    samples = [{**s, "text": f"{word} {s['text']}"} for s in record["samples"]]
    return {**record, "paper_id": f"{record['paper_id']}~{copy}", "samples": samples}


def letters(number: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba', ...: a marker-free word per copy."""
    out = ""
    while True:
        number, digit = divmod(number, 26)
        out = string.ascii_lowercase[digit] + out
        if not number:
            return out


def plain_pass(dataset: Path) -> float:
    start = time.perf_counter()
    texts = pd.Series([s["text"] for split in SPLITS for p in read_jsonl(dataset / f"{split}.jsonl")
                       for s in p["samples"]])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="This pattern is interpreted as a regular expression")
        for marker in MARKERS:
            texts.str.contains(marker.pattern).sum()
    return time.perf_counter() - start


def flatten_pass(dataset: Path) -> float:
    """The gate's own reading and flattening into tables, timed alone (it repeats inside the gate)."""
    start = time.perf_counter()
    tables = dataset_tables(dataset)
    split_tables(tables["sentences"].frame, tables["paragraphs"].frame)
    return time.perf_counter() - start


def gate_pass(dataset: Path, work: Path) -> dict:
    site, summary_path = work / "site", work / "summary.json"
    shutil.rmtree(site, ignore_errors=True)
    params = ValidateParams(data_dir=dataset, baseline_dir=None, site_dir=site, summary_path=summary_path)
    start = time.perf_counter()
    try:
        validate(params)
        verdict = "passed"
    except StageFailed:
        verdict = "failed"
    seconds = time.perf_counter() - start
    summary = json.loads(summary_path.read_text())
    return {"seconds": seconds, "verdict": verdict, "critical_failures": summary["critical_failures"]}


def machine() -> dict:
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "pandas": pd.__version__,
            "great_expectations": __import__("great_expectations").__version__}


if __name__ == "__main__":
    sys.exit(main())
