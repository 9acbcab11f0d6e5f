"""Curation speed and memory: ours vs the public CiteWorth worker's floor, measured in the same run.

    python benchmarks/curation.py                    # S2ORC-shaped shard, demo corpus, >= 500 MB corpus
    python benchmarks/curation.py --large-mb 0       # without the >= 500 MB corpus
    python benchmarks/curation.py --only s2orc       # the S2ORC-shaped shard only (the 10x target)
    python benchmarks/curation.py --only s2orc --only recombined   # these two settings, the rest kept

Needs the demo corpus downloaded (`citeworth run download`; with CITEWORTH_MIRROR set it comes from
the mirror). Every measurement runs in a fresh process (its peak RSS is its own, and pysbd's
patterns are compiled per process), one after the other. Writes benchmarks/results/curation.json.

- baseline: what the public CiteWorth worker (copenlu/cite-worth, dataset_creation/build_dataset.py,
  `dataset_worker`) pays at the least, one process: read and parse every paper; for each paper that
  passes the paper filter and `extract_sections` (more than 5 citation spans in permissible
  sections, the first in a valid format), split every permissible paragraph with citation spans
  with the stock pipeline (scispacy's tokenizer + `pysbd_sentencizer`, `nlp.pipe`, `doc.sents`;
  pysbd with its own `re` and abbreviation search, none of citeworth/text/pysbd_regex.py).
  The worker's per-character token maps and per-sentence work are left out, so the real worker is
  slower and the ratios are lower bounds.
- curate_wN: the curate stage with N worker processes, from scratch (N = 1: spaCy is loaded
  before the clock starts, as for the baseline; N > 1: each worker loads it inside the timing).
- s2orc_shaped: an S2ORC 20200705 shard pair (pdf_parses_0.jsonl.gz + metadata_0.jsonl.gz) this
  script builds from the mirrored unarXive sample: its 49 papers 100 times (4,900 papers, distinct
  ids), citations as numbered markers "[n]" with cite_spans, figures and tables as ref_spans,
  formulas as their LaTeX, the MAG field from the arXiv primary category. Reported: papers/s of the
  baseline and of ours (one process, wall clock and CPU), the ratio (goal: >= 10, >= 400 papers/s),
  where ours spends its time (reading, splitting, the rest, timed without a profiler), and the top
  entries of ours' profile (cProfile, a separate run: it inflates Python-level calls).
- recombined: 20 shards of 300 distinct synthetic papers (benchmarks/recombined_corpus.py: 30
  paragraphs of different real papers of the demo corpus each, citations renumbered and linked), so
  that no content cache is helped by repeated papers. The demo's 11,007 distinct paragraphs fill
  331 such papers, so the 6,000 reuse each paragraph about 16 times (never verbatim where it has
  citations: its keys differ); its first pass alone (`first_pass`, no paragraph used twice) is
  measured too, and ours' CPU time shard by shard (`per_shard`): if reuse helped a cache, the whole
  would run faster per paper than the first pass, and the later shards than the first.
- large: the real unarXive sample replicated (paper ids made unique) into 4 equal shards of a
  >= 500 MB corpus, so two workers have equal work; its peak RSS against the demo's shows memory
  stays flat.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gzip
import json
import os
import platform
import pstats
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from citeworth.stages import stage_params

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work"
RESULTS = ROOT / "benchmarks" / "results" / "curation.json"
UNARXIVE = "raw/demo/*/**/unarXive_data_sample/*.jsonl"  # in any demo release
S2ORC_COPIES = 100
PROFILE_TOP = 15


def peak_rss_mb() -> float:
    """Peak RSS of this process or any worker it waited for (Linux reports KiB, macOS bytes)."""
    scale = 1 / 1024 if platform.system() == "Linux" else 1 / 1024**2
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, workers) * scale, 1)


def _clocks() -> tuple[float, float]:
    """Wall and CPU seconds (this process and the workers it waited for)."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _elapsed(start: tuple[float, float]) -> dict:
    wall, cpu = _clocks()
    return {"seconds": wall - start[0], "cpu_seconds": cpu - start[1]}


# --- the measurements (each in its own process) -----------------------------------------------

def measure_baseline(inputs: list[dict]) -> dict:
    """The public worker's floor (see the module docstring), with the stock scispacy pipeline."""
    from citeworth.curate.config import CurationConfig
    from citeworth.text import pysbd_regex
    from citeworth.text.scispacy_rules import stock_pipeline
    from citeworth.text.sections import SectionFilter

    nlp = stock_pipeline()  # stock: pysbd_sentencizer + doc.sents, with pysbd as released (below)
    config = CurationConfig()
    sections = SectionFilter(config.permitted_sections)
    counts = {"papers": 0, "paragraphs_split": 0, "sentences_split": 0}

    def worker_paragraphs():
        for paper in _papers(inputs):
            counts["papers"] += 1
            yield from _worker_sections(paper, config, sections)

    start = _clocks()
    with pysbd_regex.stock():
        for doc in nlp.pipe(worker_paragraphs(), batch_size=256):
            counts["paragraphs_split"] += 1
            counts["sentences_split"] += sum(1 for _ in doc.sents)
    return {**_elapsed(start), **counts}


def _papers(inputs: list[dict]):
    from citeworth.sources import BadRecord, discover_shards, read_shard

    for spec in inputs:
        for shard in discover_shards(spec["reader"], spec["glob"], spec.get("metadata"), spec.get("release")):
            yield from (paper for paper in read_shard(shard) if not isinstance(paper, BadRecord))


def _worker_sections(paper, config, sections) -> list[str]:
    """The paragraphs the public worker splits: `filter_papers_full` (our paper filter and field
    rule), then `extract_sections`: permissible sections with citation spans, if more than 5 spans
    in all and the first one's format is valid (numeric or author-year; unarXive's placeholder
    citations count as valid, as they do for the curation)."""
    from citeworth.curate.filters import paper_rejection
    from citeworth.text.citations import citation_format
    from citeworth.text.fields import assign_field

    decision = assign_field(paper.metadata.get("field_scheme"), paper.fields_of_study, config.multi_field)
    if paper_rejection(paper, config) or decision.reason:
        return []
    chosen = [p for p in paper.paragraphs if p.cite_spans and sections.permits(p.section)]
    if sum(len(p.cite_spans) for p in chosen) <= 5:
        return []
    first = citation_format(min(chosen[0].cite_spans, key=lambda span: span.start).text)
    valid = config.accept_placeholder_citations if first == "placeholder" else first in config.formats
    return [p.text for p in chosen] if valid else []


def measure_curate(inputs: list[dict], workers: int, out_dir: Path) -> dict:
    from citeworth.core.params import build
    from citeworth.curate.stage import CurateParams, _curator, curate

    shutil.rmtree(out_dir, ignore_errors=True)
    params = build(CurateParams, {"inputs": inputs, "out_dir": str(out_dir)})  # workers: run_child's variable
    if workers == 1:
        _curator(params.rules).splitter  # noqa: B018  (load spaCy outside the timing, as the baseline does)
    start = _clocks()
    funnel = curate(params)["curation"]
    return {**_elapsed(start), "papers": funnel["papers"], "paragraphs": funnel["paragraphs"],
            "kept": funnel["kept"], "paragraphs_split": funnel["candidates"],
            "sentences_split": funnel["sentences_split"]}


def measure_phases(inputs: list[dict]) -> dict:
    """Where ours spends its CPU time, one process, timed around reading and splitting."""
    from citeworth.core import collector
    from citeworth.curate.config import CurationConfig
    from citeworth.curate.engine import Curator
    from citeworth.text.sentences import SentenceSplitter

    splitter = _TimedSplitter(SentenceSplitter())
    papers = _TimedIterator(_papers(inputs))
    curator = Curator(CurationConfig(), splitter)
    start = time.process_time()
    with collector.streaming():  # as the stage runs it
        kept = sum(1 for _ in curator.curate(papers))
    total = time.process_time() - start
    return {"cpu_seconds": total, "kept": kept, "read_s": papers.seconds, "split_s": splitter.seconds,
            "rules_and_rest_s": total - papers.seconds - splitter.seconds}


def measure_shards(inputs: list[dict]) -> dict:
    """Ours' CPU seconds on each shard in turn, one process, reading left out: the recombined
    corpus reuses paragraphs in later shards, so a cache they helped would make those faster."""
    from citeworth.core import collector
    from citeworth.curate.config import CurationConfig
    from citeworth.curate.engine import Curator
    from citeworth.sources import BadRecord, discover_shards, read_shard
    from citeworth.text.sentences import SentenceSplitter

    curator, seconds = Curator(CurationConfig(), SentenceSplitter()), []
    for spec in inputs:
        for shard in discover_shards(spec["reader"], spec["glob"], spec.get("metadata"), spec.get("release")):
            papers = [paper for paper in read_shard(shard) if not isinstance(paper, BadRecord)]
            start = time.process_time()
            with collector.streaming():
                sum(1 for _ in curator.curate(papers))
            seconds.append(round(time.process_time() - start, 3))
    return {"cpu_seconds_per_shard": seconds}


class _TimedIterator:
    def __init__(self, items):
        self.items, self.seconds = iter(items), 0.0

    def __iter__(self):
        return self

    def __next__(self):
        start = time.process_time()
        try:
            return next(self.items)
        finally:
            self.seconds += time.process_time() - start


class _TimedSplitter:
    def __init__(self, splitter):
        self.splitter, self.seconds = splitter, 0.0

    def split(self, texts):
        start = time.process_time()
        bounds = list(self.splitter.split(texts))
        self.seconds += time.process_time() - start
        return iter(bounds)


def measure_profile(inputs: list[dict], out_dir: Path) -> dict:
    """ours under cProfile: the top entries by own time and by cumulative time."""
    from citeworth.core.params import build
    from citeworth.curate.stage import CurateParams, _curator, curate

    shutil.rmtree(out_dir, ignore_errors=True)
    params = build(CurateParams, {"inputs": inputs, "out_dir": str(out_dir)})  # run_child's one worker
    _curator(params.rules).splitter  # noqa: B018
    profile = cProfile.Profile()
    profile.runcall(curate, params)
    rows = [{"function": _where(func), "own_s": own, "cumulative_s": cumulative, "calls": calls}
            for func, (_, calls, own, cumulative, _) in pstats.Stats(profile).stats.items()]
    total = max(row["cumulative_s"] for row in rows)  # the curate call

    def top(key: str) -> list[dict]:
        ranked = sorted(rows, key=lambda row: row[key], reverse=True)[:PROFILE_TOP]
        return [{**row, "own_s": round(row["own_s"], 2), "cumulative_s": round(row["cumulative_s"], 2),
                 "share_of_run": round(row[key] / total, 3)} for row in ranked]

    return {"profiled_seconds": round(total, 2), "by_own_time": top("own_s"),
            "by_cumulative_time": top("cumulative_s")}


def _where(func: tuple[str, int, str]) -> str:
    path, line, name = func
    for marker in ("site-packages/", "/citeworth/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path}:{line})" if path != "~" else name


# --- the S2ORC-shaped shard -----------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(\w+):([^{}\s]+)\}\}")
_REF_PREFIX = {"figure": "FIGREF", "table": "TABREF"}


def build_s2orc_shard(folder: Path, copies: int = S2ORC_COPIES) -> list[dict]:
    """The S2ORC-shaped shard pair (see the module docstring); its curate inputs."""
    parses, metadata = folder / "pdf_parses_0.jsonl.gz", folder / "metadata_0.jsonl.gz"
    source = next(ROOT.glob(UNARXIVE))
    stamp = folder / "BUILT_FROM"
    expected = f"{source.stat().st_size} {copies}\n"
    if not (stamp.exists() and stamp.read_text() == expected):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        records = [json.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
        with gzip.open(parses, "wt", encoding="utf-8") as parse_out, \
                gzip.open(metadata, "wt", encoding="utf-8") as row_out:
            for copy in range(copies):
                for number, record in enumerate(records):
                    paper_id = str(10_000_000 + copy * len(records) + number)
                    parse, row = s2orc_from_unarxive(record, paper_id)
                    parse_out.write(json.dumps(parse) + "\n")
                    row_out.write(json.dumps(row) + "\n")
        stamp.write_text(expected)
    return [{"reader": "s2orc_legacy", "glob": str(folder / "*.jsonl.gz")}]


def s2orc_from_unarxive(record: dict, paper_id: str) -> tuple[dict, dict]:
    """One unarXive record as an S2ORC 20200705 pdf_parse line and metadata row."""
    from citeworth.text.fields import arxiv_field

    bib: dict[str, int] = {}
    floats: dict[str, dict[str, int]] = {"figure": {}, "table": {}}
    body = [_s2orc_paragraph(block, record.get("ref_entries") or {}, bib, floats)
            for block in record["body_text"] if block.get("content_type") == "paragraph"]
    entries = record.get("bib_entries") or {}
    meta = record["metadata"]
    abstract = (record.get("abstract") or {}).get("text") or meta.get("abstract") or ""
    parse = {
        "paper_id": paper_id, "_pdf_hash": "",
        "abstract": [{"section": "Abstract", "text": abstract, "cite_spans": [], "ref_spans": []}],
        "body_text": body,
        "bib_entries": {f"BIBREF{n}": {"title": (entries.get(key) or {}).get("bib_entry_raw"), "authors": [],
                                       "year": None, "venue": "", "link": None} for key, n in bib.items()},
        "ref_entries": {f"{_REF_PREFIX[kind]}{n}": {"text": "", "type": kind}
                        for kind, seen in floats.items() for n in seen.values()},
    }
    field = arxiv_field((meta.get("categories") or "").split()[0]) if meta.get("categories") else None
    row = {"paper_id": paper_id, "title": meta.get("title"), "abstract": abstract, "year": 2022,
           "arxiv_id": meta.get("id"), "acl_id": None, "pmc_id": None, "pubmed_id": None, "doi": None,
           "venue": None, "journal": None, "mag_field_of_study": [field] if field else [],
           "has_pdf_parse": True, "has_pdf_parsed_abstract": bool(abstract), "has_pdf_parsed_body_text": True,
           "has_pdf_parsed_bib_entries": bool(bib), "has_pdf_parsed_ref_entries": bool(parse["ref_entries"]),
           "has_inbound_citations": True, "has_outbound_citations": bool(bib)}
    return parse, row


def _s2orc_paragraph(block: dict, ref_entries: dict, bib: dict[str, int],
                     floats: dict[str, dict[str, int]]) -> dict:
    """unarXive placeholders as a PDF parse prints them: citations "[n]", "Figure n", LaTeX."""
    text, pieces, cites, refs, length, cursor = block["text"], [], [], [], 0, 0
    for match in _PLACEHOLDER.finditer(text):
        pieces.append(text[cursor:match.start()])
        length += match.start() - cursor
        kind, ref = match.groups()
        if kind == "cite":
            n = bib.setdefault(ref, len(bib))
            surface = f"[{n + 1}]"
            cites.append({"start": length, "end": length + len(surface), "text": surface,
                          "ref_id": f"BIBREF{n}"})
        elif kind in floats:
            n = floats[kind].setdefault(ref, len(floats[kind]))
            surface = f"{kind.title()} {n + 1}"
            refs.append({"start": length, "end": length + len(surface), "text": surface,
                         "ref_id": f"{_REF_PREFIX[kind]}{n}"})
        else:
            surface = " ".join(((ref_entries.get(ref) or {}).get("latex") or "x").split())
        pieces.append(surface)
        length += len(surface)
        cursor = match.end()
    pieces.append(text[cursor:])
    return {"section": block.get("section") or "", "text": "".join(pieces), "cite_spans": cites,
            "ref_spans": refs, "eq_spans": []}


# --- running the measurements -----------------------------------------------------------------

def child(kind: str, inputs: list[dict], workers: int, out_dir: Path) -> None:
    if kind == "baseline":
        result = measure_baseline(inputs)
    elif kind == "phases":
        result = measure_phases(inputs)
    elif kind == "shards":
        result = measure_shards(inputs)
    elif kind == "profile":
        result = measure_profile(inputs, out_dir)
    else:
        result = measure_curate(inputs, workers, out_dir)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def run_child(kind: str, inputs: list[dict], workers: int = 1) -> dict:
    out_dir = WORK / f"interim_{kind}_{workers}"
    command = [sys.executable, __file__, "--child", kind, "--inputs", json.dumps(inputs),
               "--workers", str(workers), "--out", str(out_dir)]
    # curate every time: no shard reused from a store; curate's processes (core.knobs)
    env = {**os.environ, "CITEWORTH_SHARD_STORE": "off", "CITEWORTH_WORKERS": str(workers)}
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    if result.returncode:
        sys.exit(f"{kind} (workers={workers}) failed:\n{result.stderr[-3000:]}")
    shutil.rmtree(out_dir, ignore_errors=True)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    for clock, rate in (("seconds", "papers_per_s"), ("cpu_seconds", "papers_per_cpu_s")):
        if clock in figures and "papers" in figures:
            figures[rate] = figures["papers"] / figures[clock]
    figures = {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}
    shown = {k: v for k, v in figures.items() if not k.startswith("by_")}
    print(f"  {kind:<8} workers={workers}: {shown}", flush=True)
    return figures


def measure_s2orc_shaped() -> dict:
    inputs = build_s2orc_shard(WORK / "s2orc_shaped")
    print(f"S2ORC-shaped shard ({S2ORC_COPIES} x the unarXive sample):", flush=True)
    baseline = run_child("baseline", inputs)
    ours = run_child("curate", inputs, 1)
    return {
        "shard": {"papers": ours["papers"], "megabytes_gz": round(sum(
            p.stat().st_size for p in (WORK / "s2orc_shaped").glob("*.gz")) / 1024**2, 1)},
        "baseline": baseline,
        "curate_w1": ours,
        "speedup_wall": round(baseline["seconds"] / ours["seconds"], 2),
        "speedup_cpu": round(baseline["cpu_seconds"] / ours["cpu_seconds"], 2),
        "goal": {"speedup": 10, "papers_per_s": 400},
        "where_ours_spends_cpu": run_child("phases", inputs),
        "profile": run_child("profile", inputs),
    }


def replicate_unarxive(target_mb: int, shards: int = 4) -> list[dict]:
    """Shards of the real unarXive sample, replicated with unique paper ids up to ``target_mb``."""
    lines = next(ROOT.glob(UNARXIVE)).read_bytes().splitlines()
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
    baseline = run_child("baseline", inputs)
    runs = {f"curate_w{n}": run_child("curate", inputs, n) for n in (1, 2)}
    return {
        "baseline": baseline,
        **runs,
        "speedup_w1_wall": round(baseline["seconds"] / runs["curate_w1"]["seconds"], 3),
        "speedup_w1_cpu": round(baseline["cpu_seconds"] / runs["curate_w1"]["cpu_seconds"], 3),
        "speedup_1_to_2_workers": round(runs["curate_w1"]["seconds"] / runs["curate_w2"]["seconds"], 3),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],  # the machine is shared
    }


def measure_recombined(shards: int, inputs: list) -> dict:
    """The recombined corpus, and its first pass alone (every source paragraph once), and ours'
    time shard by shard: if reused paragraphs helped a cache, the whole corpus would run faster per
    paper than its first pass, and later shards (more reuse) faster than the first ones."""
    from recombined_corpus import write_corpus

    results, manifests = {}, {}
    for name, distinct_only in (("all", False), ("first_pass", True)):
        manifest = manifests[name] = write_corpus(WORK / f"recombined_{name}", shards=shards, inputs=inputs,
                                                  distinct_only=distinct_only)
        corpus = {key: manifest[key] for key in ("shards", "papers", "paragraphs", "source_paragraph_uses")}
        label = f"recombined corpus, {name.replace('_', ' ')} ({manifest['shards']} shards)"
        results[name] = {"corpus": corpus, **measure_corpus(label, manifest["curate_inputs"])}
    results["all"]["per_shard"] = run_child("shards", manifests["all"]["curate_inputs"])
    settings = manifest["settings"]
    return {"source": manifest["source"], "seed": settings["seed"],
            "paragraphs_per_paper": settings["paragraphs_per_paper"], **results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large-mb", type=int, default=520, help="size of the replicated corpus (0: skip)")
    parser.add_argument("--recombined-shards", type=int, default=20,
                        help="shards of the recombined corpus (0: skip)")
    parser.add_argument("--only", choices=["s2orc", "recombined"], action="append",
                        help="measure only this setting (repeatable); the results file keeps the others")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, json.loads(args.inputs), args.workers, args.out)
        return
    if not any(ROOT.glob(UNARXIVE)):
        sys.exit("the demo corpus is missing: run `citeworth run download` first")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() and args.only else {}
    os.chdir(ROOT)  # params.yaml's input globs are relative to the project root
    run = {"command": " ".join(["python benchmarks/curation.py", *sys.argv[1:]]), "cores": _cores(),
           "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    results.update(run)
    only = set(args.only or ["s2orc", "recombined"])
    curate_params = stage_params("curate", path=ROOT / "params.yaml")  # {{download.release}} resolved
    if "s2orc" in only:
        results["s2orc_shaped"] = {**measure_s2orc_shaped(), "run": run}
    if "recombined" in only:
        results.pop("recombined", None)
        if args.recombined_shards:
            results["recombined"] = {**measure_recombined(args.recombined_shards, curate_params.inputs),
                                     "run": run}
    if not args.only:
        demo_inputs = [dataclasses.asdict(spec) for spec in curate_params.inputs]
        results["demo"] = measure_corpus("demo corpus", demo_inputs)
        results.pop("large", None)
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
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    main()
