"""Curation speed and memory: ours vs the floor (read + parse + sentence split only), same run.

    python benchmarks/curation.py                 # demo corpus + a >= 500 MB replicated corpus
    python benchmarks/curation.py --large-mb 0    # demo corpus only

Needs the demo corpus downloaded (`citeworth run download`); the demo inputs are params.yaml's.
Every measurement runs in a fresh process so its peak RSS is its own. Writes benchmarks/results/curation.json.

- floor: read and parse every paper of every shard, then split every paragraph that is in a
  permissible section and has citation spans (what a split-everything pipeline pays), one process.
- curate_wN: the curate stage with N worker processes, from scratch.
The large corpus replicates the real unarXive sample (paper ids made unique) into 4 equal shards,
so two workers have equal work.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from citeworth.core.params import load_section

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work"
RESULTS = ROOT / "benchmarks" / "results" / "curation.json"


def peak_rss_mb() -> float:
    """Peak RSS of this process or any worker it waited for (Linux reports KiB, macOS bytes)."""
    scale = 1 / 1024 if platform.system() == "Linux" else 1 / 1024**2
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, workers) * scale, 1)


def measure_floor(inputs: list[dict]) -> dict:
    from citeworth.curate.config import CurationConfig
    from citeworth.curate.sections import SectionFilter
    from citeworth.curate.sentences import SentenceSplitter
    from citeworth.sources import discover_shards, read_shard

    config = CurationConfig()
    sections = SectionFilter(config.sections)
    splitter = SentenceSplitter(config.spacy_model, config.batch_size)
    papers = paragraphs = sentences = 0

    def candidates():
        nonlocal papers
        for spec in inputs:
            for shard in discover_shards(spec["reader"], spec["glob"], spec.get("metadata"),
                                         spec.get("release")):
                for paper in read_shard(shard):
                    if not hasattr(paper, "paragraphs"):
                        continue
                    papers += 1
                    for paragraph in paper.paragraphs:
                        if paragraph.cite_spans and sections.permits(paragraph.section):
                            yield paragraph.text

    start = time.perf_counter()
    for bounds in splitter.split(candidates()):
        paragraphs += 1
        sentences += len(bounds)
    return {"seconds": time.perf_counter() - start, "papers": papers, "paragraphs_split": paragraphs,
            "sentences_split": sentences}


def measure_curate(inputs: list[dict], workers: int, out_dir: Path) -> dict:
    from citeworth.core.params import build
    from citeworth.curate.stage import CurateParams, curate

    shutil.rmtree(out_dir, ignore_errors=True)
    params = build(CurateParams, {"inputs": inputs, "out_dir": str(out_dir), "workers": workers})
    start = time.perf_counter()
    funnel = curate(params)["curation"]
    return {"seconds": time.perf_counter() - start, "papers": funnel["papers"],
            "paragraphs": funnel["paragraphs"], "kept": funnel["kept"],
            "paragraphs_split": funnel["candidates"], "sentences_split": funnel["sentences_split"]}


def child(kind: str, inputs: list[dict], workers: int, out_dir: Path) -> None:
    result = measure_floor(inputs) if kind == "floor" else measure_curate(inputs, workers, out_dir)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def run_child(kind: str, inputs: list[dict], workers: int = 1) -> dict:
    out_dir = WORK / f"interim_{kind}_{workers}"
    command = [sys.executable, __file__, "--child", kind, "--inputs", json.dumps(inputs),
               "--workers", str(workers), "--out", str(out_dir)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode:
        sys.exit(f"{kind} (workers={workers}) failed:\n{result.stderr[-3000:]}")
    shutil.rmtree(out_dir, ignore_errors=True)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    figures["papers_per_s"] = round(figures["papers"] / figures["seconds"], 2)
    if "paragraphs" in figures:
        figures["paragraphs_per_s"] = round(figures["paragraphs"] / figures["seconds"], 2)
    figures["seconds"] = round(figures["seconds"], 2)
    print(f"  {kind:<8} workers={workers}: {figures}", flush=True)
    return figures


def replicate_unarxive(target_mb: int, shards: int = 4) -> list[dict]:
    """Shards of the real unarXive sample, replicated with unique paper ids up to ``target_mb``."""
    source = next(ROOT.glob("raw/demo/demo-v1/**/unarXive_data_sample/*.jsonl"))
    lines = source.read_bytes().splitlines()
    folder = WORK / "large"
    per_shard = target_mb * 1024**2 // shards
    if not folder.exists() or sum(p.stat().st_size for p in folder.glob("*.jsonl")) < target_mb * 1024**2:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for shard in range(shards):
            with open(folder / f"arXiv_src_large_{shard}.jsonl", "wb") as out:
                copy = 0
                while out.tell() < per_shard:
                    for line in lines:
                        record = json.loads(line)
                        record["paper_id"] = f"{record['paper_id']}-r{shard}.{copy}"
                        out.write(json.dumps(record).encode() + b"\n")
                    copy += 1
    return [{"reader": "unarxive", "glob": str(folder / "*.jsonl")}]


def measure_corpus(name: str, inputs: list[dict]) -> dict:
    print(f"{name}:", flush=True)
    floor = run_child("floor", inputs)
    runs = {f"curate_w{n}": run_child("curate", inputs, n) for n in (1, 2)}
    return {
        "floor": floor,
        **runs,
        "curate_w1_seconds_over_floor": round(runs["curate_w1"]["seconds"] / floor["seconds"], 3),
        "speedup_1_to_2_workers": round(runs["curate_w1"]["seconds"] / runs["curate_w2"]["seconds"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large-mb", type=int, default=520, help="size of the replicated corpus (0: skip)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, json.loads(args.inputs), args.workers, args.out)
        return
    demo_inputs = load_section("curate", ROOT / "params.yaml")["inputs"]
    if not any(ROOT.glob("raw/demo/demo-v1/**/unarXive_data_sample/*.jsonl")):
        sys.exit("the demo corpus is missing: run `citeworth run download` first")
    results = {"command": "python benchmarks/curation.py", "cores": _cores(),
               "demo": measure_corpus("demo corpus", demo_inputs)}
    if args.large_mb:
        inputs = replicate_unarxive(args.large_mb)
        size = sum(p.stat().st_size for p in (WORK / "large").glob("*.jsonl"))
        results["large"] = {"megabytes": round(size / 1024**2), **measure_corpus("large corpus", inputs)}
        results["peak_rss_large_over_demo"] = round(
            results["large"]["curate_w1"]["peak_rss_mb"] / results["demo"]["curate_w1"]["peak_rss_mb"], 3)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"-> {RESULTS.relative_to(ROOT)}")


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    main()
