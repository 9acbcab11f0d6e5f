"""Benchmark: the silver stage's pair scoring as citing x cited sentences grow from 10k to 1M pairs.

    .venv/bin/python benchmarks/silver.py                    # after `citeworth run download`
    .venv/bin/python benchmarks/silver.py --sizes 100 316 1000 --baseline-pairs 256

The sentences are real: the demo corpus' unarXive papers, split by the curation's splitter and
cleaned by the stage's rules (distinct, at least 20 characters). For each size n, a fresh process
builds the work file the stage builds (n citing sentences, each citing one paper of n sentences:
n x n pairs), vectorises the 2n distinct sentences once with the embedded MiniLM (a cold cache,
so every one is computed), then runs the stage's own ``write_pairs`` (score, label at a cutoff of
0.45, balance, write the kept pairs). It reports the embedding and scoring seconds, pairs scored
per second end to end, and the process' peak RSS.

Baseline, measured in the same run and process kind: per-pair encoding, i.e. both sentences of
every pair run through the encoder (batched as ours), on a sample of pairs; its pairs/s does not
depend on n. The ratio ours / per-pair is what computing embeddings once per sentence buys.
Writes benchmarks/results/silver.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "silver.json"
CORPUS = ROOT / "raw/demo/demo-v1/github/IllDepence/unarXive/doc/unarXive_data_sample/*.jsonl"
CUTOFF, DECIMALS = 4500, 4  # 0.45, the cutoff the stage tunes on the project's gold file
THREADS = 1  # torch CPU threads, as the stage's default (silver.threads)


def peak_rss_mb() -> float:
    scale = 1 / 1024 if platform.system() == "Linux" else 1 / 1024**2
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale, 1)


def corpus_sentences(count: int) -> list[str]:
    """``count`` distinct cleaned sentences of the demo corpus' unarXive papers, in reading order."""
    from citeworth.corpora.paper_index import PaperIndex
    from citeworth.corpora.silver.cleaning import clean
    from citeworth.corpora.silver.pairs import body_sentences
    from citeworth.sources import BadRecord, discover_shards, read_shard
    from citeworth.text.sentences import SentenceSplitter

    split, found = SentenceSplitter().split, {}
    with tempfile.TemporaryDirectory() as work:
        index = PaperIndex(Path(work) / "papers.sqlite", keep_text=True)
        for shard in discover_shards("unarxive", str(CORPUS)):
            for paper in read_shard(shard):
                if isinstance(paper, BadRecord) or not paper.paragraphs:
                    continue
                index.add(paper)
                for sentence in body_sentences(index.get(paper.source, paper.paper_id).body, split):
                    if len(text := clean(sentence.text)) >= 20:
                        found.setdefault(text, None)
                    if len(found) >= count:
                        return list(found)
    raise SystemExit(f"the demo corpus has only {len(found)} distinct sentences; {count} needed")


def child_ours(texts: list[str], n: int) -> dict:
    """The stage's scoring of n citing x n cited sentences, in this (fresh) process."""
    from citeworth.corpora.paper_index import IndexedPaper
    from citeworth.corpora.silver.labelling import write_pairs
    from citeworth.corpora.silver.params import SimilarityParams
    from citeworth.corpora.silver.similarity import Embedder
    from citeworth.corpora.silver.store import Citing, Store

    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        store = Store(work / "pairs.sqlite")
        cited = [(i, text, store.text_row(text)) for i, text in enumerate(texts[n:2 * n])]
        store.add_cited(IndexedPaper(1, "bench", "cited", None, None, None, None), "full_text", cited)
        for i, text in enumerate(texts[:n]):
            store.add_citing(Citing(f"bench/citing#s{i:05d}", "train", "bench", "citing", text,
                                    store.text_row(text), "b0", 1))
        begin = time.perf_counter()
        embedder = Embedder(SimilarityParams(cache_dir=work / "cache"))
        embedder.embed(texts[:1])  # imports and loads the encoder: once per run, whatever n
        start = time.perf_counter()
        vectors, _ = embedder.vectors(store.texts(), work / "vectors.f32")  # a cold cache: all computed
        embedded = time.perf_counter()
        counts: Counter = Counter()
        write_pairs(store, vectors, store.texts(), work, CUTOFF, DECIMALS, 1, counts)
        done = time.perf_counter()
        store.close()
    total = done - start
    return {"citing": n, "cited": n, "pairs": counts["pairs_scored"], "sentences_embedded": 2 * n,
            "load_seconds": round(start - begin, 2), "embed_seconds": round(embedded - start, 2),
            "score_seconds": round(done - embedded, 2),
            "pairs_per_s": round(counts["pairs_scored"] / total, 1),
            "scoring_pairs_per_s": round(counts["pairs_scored"] / (done - embedded), 1),
            "positives": counts["pairs_positive"], "pairs_kept": counts["pairs_train"],
            "peak_rss_mb": peak_rss_mb()}


def child_per_pair(texts: list[str], pairs: int) -> dict:
    """Per-pair encoding of ``pairs`` pairs (both sentences every time), batched as ours."""
    import numpy as np

    from citeworth.corpora.silver.params import SimilarityParams
    from citeworth.corpora.silver.similarity import Embedder

    with tempfile.TemporaryDirectory() as work:
        embedder = Embedder(SimilarityParams(cache_dir=Path(work)))
        embedder.embed(texts[:2])  # load the encoder outside the clock, as ours loads it once
        half = len(texts) // 2
        chosen = [(texts[i % half], texts[half + (i * 7) % half]) for i in range(pairs)]
        start = time.perf_counter()
        for first in range(0, pairs, 32):  # 32 pairs = 64 sentences a batch, ours' batch size
            batch = chosen[first:first + 32]
            vectors = embedder.embed([text for pair in batch for text in pair])
            np.sum(vectors[0::2] * vectors[1::2], axis=1)
        seconds = time.perf_counter() - start
    return {"pairs": pairs, "seconds": round(seconds, 2), "pairs_per_s": round(pairs / seconds, 1),
            "peak_rss_mb": peak_rss_mb()}


def run_child(kind: str, texts_path: Path, number: int) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(texts_path), str(number)],
                          capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"})
    if done.returncode:
        raise SystemExit(f"{kind} {number} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 316, 1000],
                        help="n: n citing x n cited sentences per run (default: 10k, ~100k, 1M pairs)")
    parser.add_argument("--baseline-pairs", type=int, default=256, help="pairs encoded one by one")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        from citeworth.core.threads import torch_threads

        kind, path, number = args.child
        texts = json.loads(Path(path).read_text())
        with torch_threads(THREADS):
            result = child_ours(texts, int(number)) if kind == "ours" else child_per_pair(texts, int(number))
        print(json.dumps(result))
        return 0
    if not list(CORPUS.parent.glob(CORPUS.name)):
        print(f"needs the demo corpus at {CORPUS.parent} (citeworth run download)", file=sys.stderr)
        return 2
    texts = corpus_sentences(2 * max(args.sizes))
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "texts.json"
        path.write_text(json.dumps(texts))
        load = os.getloadavg()
        per_pair = run_child("per_pair", path, args.baseline_pairs)
        runs = [run_child("ours", path, n) for n in args.sizes]
    for row in runs:
        row["over_per_pair"] = round(row["pairs_per_s"] / per_pair["pairs_per_s"], 1)
        row["rss_over_smallest"] = round(row["peak_rss_mb"] / runs[0]["peak_rss_mb"], 3)
    results = {"command": "python benchmarks/silver.py " + " ".join(sys.argv[1:]), "cores": os.cpu_count(),
               "device": "cpu", "torch_threads": THREADS, "encoder": "embedded (MiniLM-L6, 384 dims)",
               "cutoff": CUTOFF / 10 ** DECIMALS,
               "load_average_at_start": [round(x, 2) for x in load],
               "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
               "baseline_per_pair_encoding": per_pair, "sizes": runs}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    for row in runs:
        print(f"{row['pairs']:>9,} pairs: {row['pairs_per_s']:>9,.0f} pairs/s "
              f"(embed {row['embed_seconds']} s, "
              f"score {row['score_seconds']} s), {row['over_per_pair']}x per-pair encoding, "
              f"peak RSS {row['peak_rss_mb']} MB")
    print(f"per-pair encoding: {per_pair['pairs_per_s']} pairs/s; results: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
