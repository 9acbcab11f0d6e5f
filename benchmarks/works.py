"""Benchmark: the cited-works index (``citeworth run works``) and its suggestions
(``citeworth check --suggest --works``): quality without leakage, build cost, size, query latency,
and a projection to 10 million works.

    cd STUDY && python /path/to/citeworth/benchmarks/works.py             # STUDY: a built study
    python benchmarks/works.py --params params/study.yaml                # from the project root
    python benchmarks/works.py --split dev                                # tune on dev, not test
    python benchmarks/works.py --dense                                    # + the MiniLM titles

It needs a curated dataset (``assemble``) and the inputs the ``works`` section of the params file
names; it writes nothing there (indexes go to a temporary folder).

- **Quality.** The works stage builds an index from the **train** split's papers only
  (``-S splits=[train]``, the stage's own code). Queries: the cite-worthy samples of the **test**
  split (``--split``), their text as the dataset has it (citation markers removed); gold: the works
  they cite (their references read from the inputs and resolved by the index's keys: identifiers,
  else the fallback key) that the index holds; a sample citing none of them is no query. The share
  of the test papers' references the index holds is reported beside the figures. Methods, same run,
  same queries: ``tfidf`` (the baseline: TF-IDF cosine over each work's title and up to 20
  of its citing sentences), ``bm25`` (the index's BM25 alone), ``fused`` (what ``check --suggest
  --works`` ranks: BM25 + popularity prior + author surnames, and the dense ranking with
  ``--dense``), and each signal dropped from ``fused`` in turn. Recall@10 and nDCG@10 (binary gains)
  and MRR (first gold's reciprocal rank within the top 100, else 0), averaged per query; and by how
  many index papers cite the gold work (1, 2, 3-4, 5+): Recall@10 and MRR of each gold on its own.
- **Speed.** The build (the stage's own seconds per step, and the process's CPU seconds), the
  index's bytes, its load time, and the fused ranking's latency per flagged sentence, warm (the
  index open, one sentence at a time as the check and the language server ask), median and p90
  over 300 queries, at the train index and at the whole study's index (all splits).
- **Projection to 10M works.** Build time and size scale with the references read (linear, as
  measured); the BM25 query scans the postings of the sentence's words, which grow with the
  corpus: measured on the whole index's texts replicated 1, 2 and 4 times (the same words at 2x and
  4x the works) and extrapolated linearly; the HNSW search grows with the log of the works.

Results: benchmarks/results/works.json (command, machine, load average, date).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from citeworth.core.io import write_json
from citeworth.sources import BadRecord, input_shards, read_shard
from citeworth.stages import stage_params
from citeworth.suggest import works as works_index
from citeworth.suggest.bm25 import BM25
from citeworth.suggest.cited_works.build import WorkFile
from citeworth.suggest.cited_works.stage import works
from citeworth.suggest.works import WorksIndex, WorksRanker, fused

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "works.json"
TOP = 100  # ranks beyond this count as not found (MRR's reciprocal rank 0)
BUCKETS = (("1", 1, 1), ("2", 2, 2), ("3-4", 3, 4), ("5+", 5, 10**9))
SPEED_QUERIES = 300
TARGET_MS = 100
GOAL_RECALL = 0.45
PROJECT_TO = 10_000_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="the params file whose works section names the data (default: %(default)s)")
    parser.add_argument("--split", choices=("test", "dev"), default="test", help="the queries' split")
    parser.add_argument("--dense", action="store_true",
                        help="build the indexes with the embedded MiniLM's title vectors too (slow on CPU)")
    parser.add_argument("--no-scale", action="store_true",
                        help="skip the whole-study index and the projection")
    parser.add_argument("--output", type=Path, default=RESULTS, help="default: %(default)s")
    parser.add_argument("--work", type=Path, metavar="DIR",
                        help="keep the indexes and queries here and reuse them on the next run (tuning)")
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    dense = {"dense": {"encoder": "embedded"}} if args.dense else {}
    with tempfile.TemporaryDirectory(prefix="works-bench-") as temporary:
        folder = args.work or Path(temporary)
        train = reused(folder / "train",
                       lambda: build(args.params, folder / "train", {"splits": ["train"], **dense}))
        index = WorksIndex(folder / "train" / "index")
        queries, references = reused(folder / f"queries-{args.split}",
                                     lambda: test_queries(args.params, args.split, index))
        quality = evaluate(index, queries, references)
        quality["index"] = train
        speed = {"train_index": speed_of(folder / "train" / "index", queries, args.dense)}
        projection = None
        if not args.no_scale:
            whole = reused(folder / "all", lambda: build(args.params, folder / "all", dense))
            speed["whole_study_index"] = whole | speed_of(folder / "all" / "index", queries, args.dense)
            projection = project(folder / "all" / "index", queries, whole, speed["whole_study_index"])
        index.close()
    results = {
        # no path of this machine: the script as the repository names it, the folder by its name
        "command": " ".join(["python", "benchmarks/works.py", *sys.argv[1:]]),
        "cwd": Path.cwd().name, "params": str(args.params),
        "date": started.isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "cpu": _cpu_name(), "python": platform.python_version(),
                    "load_average_1m_at_end": round(os.getloadavg()[0], 2),
                    "note": "shared machine: other jobs ran at the same time"},
        "quality": quality,
        "speed": speed,
        "projection_10m": projection,
    }
    write_json(args.output, results)
    print(_summary(results))
    return 0


def reused(folder: Path, compute):
    """``compute()``, or what it returned the last time it ran for ``folder`` (``--work``)."""
    saved = folder / "result.json"
    if saved.is_file():
        return json.loads(saved.read_text())
    result = compute()
    folder.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(result))
    return result


def build(params_path: Path, folder: Path, overrides: dict) -> dict:
    """The works stage, run on the params file's works section with ``overrides``; its summary,
    wall and CPU seconds."""
    params = stage_params("works", {**overrides, "out_dir": str(folder / "index"),
                                    "stats_path": str(folder / "stats.json")}, params_path)
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    summary = works(params)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"works": summary["counts"]["works"], "counts": summary["counts"],
            "bytes": sum(summary["bytes"].values()), "bytes_by_part": summary["bytes"],
            "seconds_by_step": summary["seconds"],
            "wall_seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)}


def test_queries(params_path: Path, split: str,
                 index: WorksIndex) -> tuple[list[tuple[str, list[int]]], dict]:
    """The cite-worthy samples of ``split`` citing a work the index holds, with those works' rows;
    and how many of that split's cited references the index holds."""
    params = stage_params("works", {"splits": [split]}, params_path)
    with tempfile.TemporaryDirectory(prefix="works-queries-") as folder:
        file = WorkFile(Path(folder) / "references.sqlite")
        counts: Counter = Counter()
        file.select(params.data_dir, [split], counts)
        for shard in input_shards(params.inputs):
            for item in read_shard(shard):
                if not isinstance(item, BadRecord):
                    file.add_paper(item, "dataset", counts)
        queries, cited, held = [], 0, 0
        for text, references in file.cited_by_samples():
            rows = [index.find(r.ids, r.title, r.authors, r.year) for r in references]
            cited += len(rows)
            held += sum(row is not None for row in rows)
            if gold := sorted({row for row in rows if row is not None}):
                queries.append((text, gold))
        file.close()
    return queries, {"split": split, "samples_citing": counts["dataset_citing_sentences"],
                     "cited_references": cited, "cited_references_in_index": held,
                     "share_of_golds_in_index": round(held / cited, 4) if cited else None,
                     "queries": len(queries)}


def evaluate(index: WorksIndex, queries: list[tuple[str, list[int]]], references: dict) -> dict:
    """Every method's ranks of the gold works, summarised."""
    methods = rankers(index)
    rows: dict[str, list[dict]] = defaultdict(list)
    for text, gold in queries:
        for name, rank in methods.items():
            top = list(rank(text))
            ranks = [top.index(g) + 1 if g in top else math.inf for g in gold]
            rows[name].append({"ranks": ranks, "cited_by": [int(index.cited_by[g]) for g in gold]})
    summary = {name: metrics(found) for name, found in rows.items()}
    best = summary["fused"]["recall@10"]
    return {"references": references, "queries": len(queries), "methods": summary,
            "goal": {"recall@10": GOAL_RECALL, "fused": best, "reached": best >= GOAL_RECALL}}


def rankers(index: WorksIndex) -> dict:
    """Each method as text -> its top ``TOP`` rows."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = work_texts(index)
    vectoriser = TfidfVectorizer(stop_words="english")
    matrix = vectoriser.fit_transform(texts)
    ranker = WorksRanker(index, _encoder() if index.vectors is not None else None)

    def tfidf(text: str) -> np.ndarray:
        return _top((matrix @ vectoriser.transform([text]).T).toarray().ravel())

    def bm25(text: str) -> np.ndarray:
        return _top(index.bm25.scores(text))

    def fused_without(*left_out: str):
        def rank(text: str) -> np.ndarray:
            query = ranker.encoder.encode([text])[0] if ranker.encoder is not None else None
            pool, signals = ranker.signals(text, query, np.zeros(0, dtype=np.int64))
            if not len(pool):
                return pool
            scores = fused({name: value for name, value in signals.items() if name not in left_out})[0]
            return pool[np.argsort(-scores, kind="stable")[:TOP]]
        return rank

    methods = {"tfidf": tfidf, "bm25": bm25, "fused": fused_without(),
               "fused without the prior": fused_without("cited_by"),
               "fused without author names": fused_without("authors")}
    if ranker.encoder is not None:
        methods["fused without dense"] = fused_without("dense")
        methods["dense alone"] = fused_without("bm25", "authors", "cited_by")
    return methods


def work_texts(index: WorksIndex) -> list[str]:
    """Each work's title and up to 20 of its citing sentences (the TF-IDF baseline's documents)."""
    return [" ".join([work.title or "", *index.contexts(work.row, 20)])
            for work in index.works(range(index.size))]


def _top(scores: np.ndarray) -> np.ndarray:
    top = np.argpartition(-scores, TOP)[:TOP] if len(scores) > TOP else np.arange(len(scores))
    top = top[np.argsort(-scores[top], kind="stable")]
    return top[scores[top] > 0]


def metrics(rows: list[dict]) -> dict:
    def query(ranks: list[float]) -> dict:
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(ranks), 10)))
        return {"recall@10": sum(r <= 10 for r in ranks) / len(ranks),
                "mrr": 1 / min(ranks) if min(ranks) <= TOP else 0.0,
                "ndcg@10": sum(1 / math.log2(r + 1) for r in ranks if r <= 10) / ideal}

    per_query = [query(row["ranks"]) for row in rows]
    found = {name: round(statistics.fmean(q[name] for q in per_query), 4)
             for name in ("recall@10", "mrr", "ndcg@10")}
    pairs = [(rank, cited) for row in rows for rank, cited in zip(row["ranks"], row["cited_by"], strict=True)]
    found["by_gold_cited_by"] = {
        name: {"golds": len(chosen), "recall@10": round(statistics.fmean(r <= 10 for r in chosen), 4),
               "mrr": round(statistics.fmean(1 / r if r <= TOP else 0.0 for r in chosen), 4)}
        for name, low, high in BUCKETS if (chosen := [r for r, c in pairs if low <= c <= high])}
    return found


def speed_of(folder: Path, queries: list[tuple[str, list[int]]], dense: bool) -> dict:
    """Load time and the fused ranking's latency per sentence, warm, one sentence at a time."""
    start = time.perf_counter()
    index = WorksIndex(folder)
    loaded = time.perf_counter() - start
    ranker = WorksRanker(index, _encoder() if dense else None)
    texts = [text for text, _ in queries][:SPEED_QUERIES]
    for text in texts[:5]:  # warm: the memory-mapped pages, the graph, the encoder
        ranker.rank([text], 3)
    times = []
    for text in texts:
        start = time.perf_counter()
        ranker.rank([text], 3)
        times.append(1000 * (time.perf_counter() - start))
    index.close()
    times.sort()
    return {"works": index.size, "load_seconds": round(loaded, 3), "sentences": len(times),
            "ms_per_sentence_median": round(statistics.median(times), 1),
            "ms_per_sentence_p90": round(times[int(0.9 * (len(times) - 1))], 1),
            "target_ms": TARGET_MS, "within_target": statistics.median(times) <= TARGET_MS,
            "load_average_1m": round(os.getloadavg()[0], 2)}


def project(folder: Path, queries: list[tuple[str, list[int]]], whole: dict, speed: dict) -> dict:
    """Build time, size and query latency at 10M works, from the whole index (see the docstring):
    the ranker's latency there is what it took at the whole index, its BM25 part replaced by BM25's
    projected time (the rest, the pool's signals and metadata, does not grow with the works)."""
    index = WorksIndex(folder)
    texts = work_texts(index)
    n, weights = index.size, index.meta["settings"]["bm25"]
    index.close()
    sentences = [text for text, _ in queries][:100]
    measured = []
    for times in (1, 2, 4):
        bm25 = BM25(texts * times, weights["k1"], weights["b"])
        start = time.perf_counter()
        for text in sentences:
            scores = bm25.scores(text)
            np.argpartition(-scores, works_index.POOL)
        measured.append((n * times, 1000 * (time.perf_counter() - start) / len(sentences)))
        del bm25
    sizes, ms = np.array([m[0] for m in measured], dtype=float), np.array([m[1] for m in measured])
    slope, intercept = np.polyfit(sizes, ms, 1)
    scale = PROJECT_TO / whole["works"]
    bm25_at_10m = float(intercept + slope * PROJECT_TO)
    return {"from_works": whole["works"],
            "bm25_ms_per_sentence_measured": [{"works": int(s), "ms": round(t, 1)} for s, t in measured],
            "bm25_ms_per_sentence_at_10m": round(bm25_at_10m),
            "ranker_ms_per_sentence_at_10m":
                round(speed["ms_per_sentence_median"] - measured[0][1] + bm25_at_10m),
            "build_cpu_seconds_at_10m_linear": round(whole["cpu_seconds"] * scale),
            "bytes_at_10m_linear": round(whole["bytes"] * scale),
            "note": "linear in works: reading, resolving, BM25 indexing and the SQLite tables all grow "
                    "with the references; the BM25 query with the postings of its words"}


def _encoder():
    from citeworth.suggest.dense import Encoder

    return Encoder(threads=1)


def _cpu_name() -> str:
    try:
        return next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def _summary(results: dict) -> str:
    quality = results["quality"]
    share = quality["references"]["share_of_golds_in_index"]
    lines = [f"queries {quality['queries']}, golds in index {share}"]
    for name, found in quality["methods"].items():
        lines.append(f"  {name:28s} R@10 {found['recall@10']:.3f}  MRR {found['mrr']:.3f}  "
                     f"nDCG@10 {found['ndcg@10']:.3f}")
    for name, speed in results["speed"].items():
        lines.append(f"  {name}: {speed['works']} works, load {speed['load_seconds']} s, "
                     f"{speed['ms_per_sentence_median']} ms/sentence (p90 {speed['ms_per_sentence_p90']})")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
