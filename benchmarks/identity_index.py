"""The paper identity index of the assemble stage: time and peak memory at 40,000 papers, projected.

    python benchmarks/identity_index.py           # both indexes at 10k .. 800k papers, SQLite's at 1.6M
    python benchmarks/identity_index.py --papers 40000 --sqlite-papers 80000

Needs the demo corpus downloaded (`citeworth run download`; with CITEWORTH_MIRROR set it comes from
the mirror). Writes benchmarks/results/identity_index.json.

The papers: the recombined benchmark corpus (benchmarks/recombined_corpus.py: distinct synthetic
papers of real paragraphs; 12 a paper here, the fewest for which no paper lacks a source paper with
an abstract and an arXiv category, since the index reads none), read by the
unarxive reader, each recorded as curation records a copy (``core.identity.copy_record``: arXiv id,
title, fallback key). Sources overlap, so copies are added as assemble meets them: every 5th paper
again as an S2ORC record (its own S2 corpus id and the same arXiv id) and every 20th as a GROBID
parse with no identifier (the same title, first author and year: the fallback key). The corpus
names no authors, so every copy's first author is one made-up name: only the title tells papers
apart, as the fallback key needs. 1.25 copies a paper, 3 in 20 papers in several copies.

Measured, each in a fresh process reading the copy records from disk (so its peak RSS is its own):

- ``sqlite``: what assemble runs, ``curate.duplicates.CopyIndex``: copies and their identifier keys
  into a SQLite file, the keys sorted by an on-disk index, copies grouped (8 bytes of memory a
  copy), the copy to keep chosen, the duplicates report written;
- ``memory`` (the baseline): the same grouping with every copy record and key in memory
  (``core.identity.group_copies``), no report: what a plain in-memory index costs.

Both must find the same papers. CPU time and peak RSS are reported with the machine's load. Sizes
past the corpus (400k, 800k and 1.6M: the 40,000 papers 10, 20 and 40 times) take its papers again
as new ones (every id and key suffixed), to check that the cost per copy holds and that the SQLite
index's peak RSS stops growing with the keys once its work file and sorts outgrow SQLite's page cache
(1.6M: the SQLite index alone; the in-memory one would hold some 3 GB). The projection to 8.1M
papers (the same 1.25 copies a paper): see ``projection``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work" / "identity_index"
RESULTS = ROOT / "benchmarks" / "results" / "identity_index.json"
PAPERS = (10_000, 20_000, 40_000, 400_000, 800_000)
SQLITE_PAPERS = (1_600_000,)
CORPUS_PAPERS = 40_000
PROJECTED_PAPERS = 8_100_000
PAPERS_PER_SHARD = 1_000
PARAGRAPHS_PER_PAPER = 12
S2ORC_EVERY, TEI_EVERY = 5, 20
AUTHOR = ("Ada Lovelace",)  # the corpus names no authors (module docstring)
GROWTH_BYTES = 9  # per copy: IdentityGroups' parent array (8) and the dropped flags (1)


def peak_rss_mb() -> float:
    """This process's peak RSS: Linux's VmHWM (ru_maxrss would count the forking parent's peak
    before exec), else ru_maxrss (macOS: bytes)."""
    status = Path("/proc/self/status")
    if status.is_file():
        line = next(line for line in status.read_text().splitlines() if line.startswith("VmHWM:"))
        return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 1)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- the copies -----------------------------------------------------------------------------------


def write_copies(papers: int, folder: Path) -> dict:
    """The recombined corpus of ``papers`` papers and its copies, as ``folder/<shard>.jsonl``;
    kept if already written for this many papers."""
    from recombined_corpus import write_corpus  # beside this script

    done = folder / "DONE.json"
    if done.is_file() and json.loads(done.read_text())["papers"] == papers:
        return json.loads(done.read_text())
    corpus = write_corpus(WORK / "corpus", shards=papers // PAPERS_PER_SHARD,
                          papers_per_shard=PAPERS_PER_SHARD, paragraphs_per_paper=PARAGRAPHS_PER_PAPER)
    folder.mkdir(parents=True, exist_ok=True)
    counts = Counter()
    with open(folder / "unarxive.jsonl", "w") as base, open(folder / "s2orc_json.jsonl", "w") as s2orc, \
            open(folder / "tei.jsonl", "w") as tei:
        for number, record in enumerate(_base_copies(corpus["curate_inputs"])):
            record["bench_paper"] = number
            base.write(json.dumps(record) + "\n")
            counts["unarxive"] += 1
            if number % S2ORC_EVERY == 0:
                ids = {"s2": str(10_000_000 + number), "arxiv": record["ids"]["arxiv"]}
                again = {**record, "source": "s2orc_json", "paper_id": ids["s2"], "ids": ids}
                s2orc.write(json.dumps(again) + "\n")
                counts["s2orc_json"] += 1
            if number % TEI_EVERY == 0:
                again = {**record, "source": "tei", "paper_id": f"tei-{number}", "ids": {}}
                tei.write(json.dumps(again) + "\n")
                counts["tei"] += 1
    summary = {"papers": papers, "copies": dict(counts), "corpus": str((WORK / "corpus").relative_to(ROOT))}
    done.write_text(json.dumps(summary))
    return summary


def _base_copies(inputs: list[dict]) -> Iterator[dict]:
    from citeworth.core.identity import copy_record
    from citeworth.sources import BadRecord, InputSpec, input_shards, read_shard

    for shard in input_shards([InputSpec(**spec) for spec in inputs]):
        for paper in read_shard(shard):
            if isinstance(paper, BadRecord):
                raise RuntimeError(f"the recombined corpus has a bad record: {paper}")
            yield copy_record(dataclasses.replace(paper, authors=AUTHOR), len(paper.paragraphs))


def read_copies(folder: Path, papers: int) -> Iterator[tuple[str, dict]]:
    """(shard, copy record) of the first ``papers`` papers, source by source. Past the corpus's
    size its papers come again, as new papers: every key and id suffixed ``~<round>``."""
    corpus = json.loads((folder / "DONE.json").read_text())["papers"]
    for source in ("unarxive", "s2orc_json", "tei"):
        for round_ in range(-(-papers // corpus)):
            with open(folder / f"{source}.jsonl") as lines:
                for line in lines:
                    record = json.loads(line)
                    if record["bench_paper"] + round_ * corpus < papers:
                        yield f"{source}__bench", _again(record, round_) if round_ else record


def _again(record: dict, round_: int) -> dict:
    suffix = f"~{round_}"
    return {**record, "paper_id": record["paper_id"] + suffix, "title": f"{record['title']}{suffix}",
            "ids": {kind: value + suffix for kind, value in record["ids"].items()},
            "fallback": record["fallback"] and record["fallback"] + suffix}


# --- one measurement (a fresh process) ------------------------------------------------------------


def measure(folder: Path, papers: int, method: str) -> dict:
    from citeworth.core.identity import group_copies
    from citeworth.curate.duplicates import SOURCE_ORDER, CopyIndex, write_report

    rss_before = peak_rss_mb()
    wall, cpu = time.perf_counter(), cpu_seconds()
    extra = {}
    if method == "sqlite":
        with tempfile.TemporaryDirectory(dir=WORK) as work:
            index = CopyIndex(Path(work), list(SOURCE_ORDER))
            for shard, record in read_copies(folder, papers):
                index.add(shard, record)
            extra["peak_rss_after_adding_mb"] = peak_rss_mb()
            _, counts = index.resolve()
            extra["peak_rss_after_resolving_mb"] = peak_rss_mb()
            write_report(Path(work) / "duplicates.json", index, counts)
            index.close()
            extra["work_file_bytes"] = (Path(work) / "copies.sqlite").stat().st_size
            extra["report_bytes"] = (Path(work) / "duplicates.json").stat().st_size
        found = {"copies": counts["copies"], "distinct_papers": counts["papers"],
                 "papers_in_several_copies": counts["papers_in_several_copies"]}
    else:
        copies = [record for _, record in read_copies(folder, papers)]
        groups = group_copies(copies)
        sizes = Counter(groups.root(n) for n in range(len(copies)))
        found = {"copies": len(copies), "distinct_papers": len(sizes),
                 "papers_in_several_copies": sum(size > 1 for size in sizes.values())}
    return {"papers": papers, "method": method, "wall_s": round(time.perf_counter() - wall, 2),
            "cpu_s": round(cpu_seconds() - cpu, 2), "peak_rss_mb": peak_rss_mb(),
            "rss_before_mb": rss_before, **found, **extra}


def measured_in_a_fresh_process(folder: Path, papers: int, method: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--measure", str(folder), "--papers", str(papers),
                           "--method", method], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise RuntimeError(f"measuring {method} at {papers} papers failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


# --- the projection -------------------------------------------------------------------------------


def fitted(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares (intercept, slope) through (x, y) points."""
    n = len(points)
    mean_x, mean_y = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0
    return mean_y - slope * mean_x, slope


def projection(runs: list[dict], copies_per_paper: float) -> dict:
    """Both indexes at ``PROJECTED_PAPERS``: CPU and wall time and the work file per copy (a line
    through the measured sizes; CPU also scaled as n log n from the largest size, for the sorts);
    the in-memory index's peak RSS per copy likewise. The SQLite index's memory does not grow with
    the keys (its page cache and its sorter stop at ``PAGE_CACHE_MIB`` each); what grows is the
    parent array and the dropped flags, 9 bytes a copy (``GROWTH_BYTES``). So its peak RSS is
    projected from the largest size by the growth per copy measured between the two largest
    (which should be near 9 bytes), and, for comparison, by the 9 bytes."""
    from citeworth.curate.duplicates import PAGE_CACHE_MIB

    copies = PROJECTED_PAPERS * copies_per_paper
    result = {"papers": PROJECTED_PAPERS, "copies": round(copies)}
    for method in ("sqlite", "memory"):
        mine = sorted((run for run in runs if run["method"] == method), key=lambda run: run["copies"])
        largest = mine[-1]
        figures = {"cpu_s_n_log_n": round(largest["cpu_s"] * copies * math.log(copies)
                                          / (largest["copies"] * math.log(largest["copies"])), 1)}
        for key in ("cpu_s", "wall_s", "work_file_bytes" if method == "sqlite" else "peak_rss_mb"):
            intercept, slope = fitted([(run["copies"], run[key]) for run in mine])
            figures[f"{key}_per_1000_copies"] = round(slope * 1000, 4)
            figures[key] = round(intercept + slope * copies, 1)
        if method == "sqlite":
            figures["work_file_gib"] = round(figures.pop("work_file_bytes") / 2**30, 1)
            before, more, peak = mine[-2], copies - largest["copies"], largest["peak_rss_mb"]
            per_copy = (peak - before["peak_rss_mb"]) * 2**20 / (largest["copies"] - before["copies"])
            figures["peak_rss_bytes_per_copy_between_the_two_largest"] = round(per_copy, 1)
            figures["peak_rss_mb"] = round(peak + per_copy * more / 2**20, 1)
            figures["peak_rss_mb_at_9_bytes_a_copy"] = round(peak + GROWTH_BYTES * more / 2**20, 1)
            figures["page_cache_mib"] = PAGE_CACHE_MIB
        result[method] = figures
    return result


def compared(runs: list[dict], papers: int) -> dict:
    """The in-memory baseline and the SQLite index at ``papers`` papers, side by side."""
    pair = {run["method"]: run for run in runs if run["papers"] == papers}
    growth = {method: round(run["peak_rss_mb"] - run["rss_before_mb"], 1) for method, run in pair.items()}
    return {"papers": papers, "copies": pair["sqlite"]["copies"],
            "replicated_corpus": papers > json.loads((WORK / "copies" / "DONE.json").read_text())["papers"],
            "cpu_s": {method: run["cpu_s"] for method, run in pair.items()},
            "wall_s": {method: run["wall_s"] for method, run in pair.items()},
            "peak_rss_mb": {method: run["peak_rss_mb"] for method, run in pair.items()},
            "rss_growth_mb": growth,
            "ratio_cpu_sqlite_to_memory": round(pair["sqlite"]["cpu_s"] / max(pair["memory"]["cpu_s"], 0.01),
                                                2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, action="append",
                        help=f"sizes to measure with both indexes (default {PAPERS})")
    parser.add_argument("--sqlite-papers", type=int, action="append",
                        help=f"sizes to measure with the SQLite index alone (default {SQLITE_PAPERS})")
    parser.add_argument("--corpus-papers", type=int, default=CORPUS_PAPERS,
                        help=f"papers of the recombined corpus (default {CORPUS_PAPERS}); larger sizes "
                             "take its papers again")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--method", choices=("sqlite", "memory"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.papers[0], args.method)))
        return
    sizes = sorted(args.papers or PAPERS)
    sqlite_sizes = sorted(args.sqlite_papers or SQLITE_PAPERS)
    os.chdir(ROOT)  # params.yaml's input globs are relative to the project root
    load_before = os.getloadavg()
    copies = write_copies(args.corpus_papers, WORK / "copies")
    runs = [measured_in_a_fresh_process(WORK / "copies", papers, method)
            for papers in sizes for method in ("memory", "sqlite")]
    runs += [measured_in_a_fresh_process(WORK / "copies", papers, "sqlite") for papers in sqlite_sizes]
    for papers in sizes:
        found = [(run["copies"], run["distinct_papers"], run["papers_in_several_copies"]) for run in runs
                 if run["papers"] == papers]
        if len(set(found)) != 1:
            raise RuntimeError(f"the two indexes disagree at {papers} papers: {found}")
    largest = max(sizes)
    copies_per_paper = next(run["copies"] for run in runs if run["papers"] == largest) / largest
    result = {
        "command": " ".join(["python benchmarks/identity_index.py",
                             *(f"--papers {papers}" for papers in (args.papers or [])),
                             *(f"--sqlite-papers {papers}" for papers in (args.sqlite_papers or [])),
                             *([f"--corpus-papers {args.corpus_papers}"]
                               if args.corpus_papers != CORPUS_PAPERS else [])]),
        "measured": "curate/duplicates.py CopyIndex (add, resolve, report) against an in-memory index of "
                    "the same grouping (core.identity.group_copies), each in a fresh process reading the "
                    "copy records from disk; peak RSS includes the interpreter and imports (rss_before_mb)",
        "corpus": copies,
        "runs": runs,
        "at_corpus_size": compared(runs, min(largest, args.corpus_papers)),
        "at_largest": compared(runs, largest),
        "projection": projection(runs, copies_per_paper),
        "machine": {"cores": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load_before],
                    "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                    "python": platform.python_version()},
    }
    RESULTS.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
