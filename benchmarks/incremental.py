"""Incremental rebuild of a release: a release that adds ~10% new shards vs a full build of it.

    python benchmarks/incremental.py                 # 20 shards, then a release with 2 more
    python benchmarks/incremental.py --shards 40     # 40 shards, then a release with 4 more

Reads the unarXive sample from the data mirror ($CITEWORTH_MIRROR, else ../shared/data) and writes
benchmarks/results/incremental.json. Every build runs in a fresh process (spaCy loaded inside the
timing, as a stage run loads it), one after the other, through the stage functions the CLI, DVC
and Airflow run: ``curate`` (one worker process) and then ``assemble``. Validation, training and
versioning are not included: they do not depend on how the shards were made.

- release r1: N shards, each the 49 papers of the sample with paper ids made unique per shard
  (distinct content, about 50 papers a shard), under releases/r1/unarXive/; built with an empty
  shard store (``citeworth.curate.shard_store``), which it fills.
- release r2: r1's shards moved under releases/r2/unarXive/ unchanged (their provenance changes:
  release r2, new paths) plus ceil(N / 10) new shards.
- full: r2 built into an empty folder with an empty store (what a build without reuse does).
- incremental: r2 built into an empty folder, as in a run's fresh workspace or after ``dvc repro``
  empties ``interim/``, with the store r1 filled: the new shards are curated, the others rewritten
  from the store with r2's provenance.
Reported: seconds of each build (curate, assemble, total), the ratio incremental / full of the
total and of curate alone (goal: <= 0.25), and whether the two builds of r2 wrote byte-identical
files (interim/ and the dataset).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work" / "incremental"
RESULTS = ROOT / "benchmarks" / "results" / "incremental.json"
SAMPLE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
GOAL = 0.25


def sample_lines() -> list[bytes]:
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    with tarfile.open(mirror / SAMPLE) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith(".jsonl"))
        return [line for line in archive.extractfile(member).read().splitlines() if line.strip()]


def write_shard(path: Path, lines: list[bytes], number: int) -> None:
    """The sample as shard ``number``: every paper id suffixed, so no two shards are alike."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        for line in lines:
            record = json.loads(line)
            record["paper_id"] = f"{record['paper_id']}-s{number}"
            out.write(json.dumps(record).encode() + b"\n")


def build_releases(shards: int) -> dict[str, int]:
    """releases/r1 (``shards`` shards) and releases/r2 (the same files moved, plus ~10% new)."""
    shutil.rmtree(WORK, ignore_errors=True)
    lines = sample_lines()
    added = math.ceil(shards / 10)
    for number in range(shards):
        write_shard(WORK / "releases" / "r1" / "unarXive" / f"arXiv_src_{number:04d}.jsonl", lines, number)
    shutil.copytree(WORK / "releases" / "r1", WORK / "releases" / "r2")
    for number in range(shards, shards + added):
        write_shard(WORK / "releases" / "r2" / "unarXive" / f"arXiv_src_{number:04d}.jsonl", lines, number)
    return {"r1": shards, "r2": shards + added, "new_in_r2": added, "papers_per_shard": len(lines)}


# --- one build (a child process) -------------------------------------------------------------------

def build(release: str, out: Path) -> dict:
    """curate + assemble of ``release`` into ``out`` (relative paths, run in WORK); their seconds."""
    from citeworth.core.params import build as build_params
    from citeworth.curate.assemble import AssembleParams, assemble
    from citeworth.curate.stage import CurateParams, curate

    curate_params = build_params(CurateParams, {
        "inputs": [{"reader": "unarxive", "glob": f"releases/{release}/unarXive/*.jsonl",
                    "release": release}],
        "out_dir": str(out / "interim")})
    assemble_params = build_params(AssembleParams, {
        "in_dir": str(out / "interim"), "out_dir": str(out / "data"),
        "stats_path": str(out / "reports" / "dataset_stats.json"),
        "table_path": str(out / "reports" / "dataset_stats.md")})
    start = time.perf_counter()
    funnel = curate(curate_params)
    curated = time.perf_counter()
    assemble(assemble_params)
    done = time.perf_counter()
    return {"curate_s": round(curated - start, 3), "assemble_s": round(done - curated, 3),
            "total_s": round(done - start, 3), "papers": funnel["curation"]["papers"],
            "kept": funnel["curation"]["kept"]}


def run_build(name: str, release: str, store: Path) -> dict:
    out = Path("builds") / name
    shutil.rmtree(WORK / out, ignore_errors=True)
    command = [sys.executable, __file__, "--child", release, "--out", str(out)]
    env = {**os.environ, "CITEWORTH_SHARD_STORE": str(store), "CITEWORTH_WORKERS": "1"}  # one worker process
    result = subprocess.run(command, cwd=WORK, env=env, capture_output=True, text=True, check=False)
    if result.returncode:
        sys.exit(f"build {name} failed:\n{result.stderr[-3000:]}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    print(f"  {name:<12} {figures}", flush=True)
    return figures


def tree_digest(folder: Path) -> str:
    sha = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        sha.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=20, help="shards of the first release")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(build(args.child, args.out)))
        return
    layout = build_releases(args.shards)
    print(f"releases: {layout}", flush=True)
    store = WORK / "store"
    builds = {
        "r1": run_build("r1", "r1", store),
        "r2_full": run_build("r2_full", "r2", WORK / "empty_store"),
        "r2_incremental": run_build("r2_incremental", "r2", store),
    }
    identical = tree_digest(WORK / "builds" / "r2_full") == tree_digest(WORK / "builds" / "r2_incremental")
    full, incremental = builds["r2_full"], builds["r2_incremental"]
    results = {
        "command": f"python benchmarks/incremental.py --shards {args.shards}",
        "cores": len(os.sched_getaffinity(0)),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "measured": "curate (1 worker) + assemble, each build in a fresh process",
        "releases": layout,
        "builds": builds,
        "ratio_incremental_to_full": round(incremental["total_s"] / full["total_s"], 3),
        "ratio_incremental_to_full_curate_only": round(incremental["curate_s"] / full["curate_s"], 3),
        "goal_ratio": GOAL,
        "byte_identical_to_full_build": identical,
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(json.dumps({k: results[k] for k in ("ratio_incremental_to_full", "byte_identical_to_full_build")}))
    print(f"-> {RESULTS.relative_to(ROOT)}")
    if not identical:
        sys.exit("the incremental build differs from the full build")


if __name__ == "__main__":
    main()
