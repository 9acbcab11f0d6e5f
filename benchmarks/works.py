"""Benchmark: the cited-works index (``citeworth run works``) and its suggestions
(``citeworth check --suggest --works``): the learned ranker in a draft's context, quality without
leakage, build cost, size, query latency, and a projection to 10 million works.

    cd STUDY && python /path/to/citeworth/benchmarks/works.py             # STUDY: a built study
    python benchmarks/works.py --params params/study.yaml                # from the project root
    python benchmarks/works.py --train                                    # + write the shipped model
    python benchmarks/works.py --work DIR                                 # keep what it built, reuse it

It needs a curated dataset (``assemble``) and the inputs the ``works`` section of the params file
names; it writes nothing there (indexes go to a temporary folder, or ``--work``).

- **Queries, as a draft asks them.** The works stage builds an index from the **train** split's
  papers only (``-S splits=[train]``, the stage's own code). A query is a cite-worthy sample of the
  **test** split (its text as the dataset has it, citation markers removed) with its draft's
  context: the sentences before and after it in its paragraph, its paper's title and abstract, and
  the works its paper cited **before** it (earlier samples, in the split file's reading order;
  never the gold, never a later one). Gold: the works it cites (its references read from the
  inputs, resolved by the index's keys: identifiers, else the fallback key) that the index holds;
  a sample citing none of them is no query. The share of the test papers' references the index
  holds is reported beside the figures.
- **The learned ranker.** Logistic regression over the features ``WorksRanker.features`` gives
  each candidate of a query's pool (the sentence's BM25, raw and as a share of the pool's best; the
  neighbours' and the title-and-abstract's BM25 as shares; the popularity prior; co-citation with
  the known works over papers and over paragraphs; author surnames), standardised. Trained on the
  **train** split's citing sentences, cross-fitted: the train papers in two halves (by a hash of
  their id), each half's sentences asked of an index of the other half's papers, so that no query
  finds its own sentence or its own paper in the index; the regularisation chosen on the **dev**
  split's queries against the train index (the stop). ``--train`` writes it to
  ``citeworth/suggest/works_ranker.json``, the model the tools ship.
- **Methods, same run, same queries:** ``tfidf`` (TF-IDF cosine over each work's title and up to 20
  of its citing sentences), ``bm25`` (the index's BM25 alone), ``fused`` (today's ranker until this
  one: BM25 + popularity prior + author surnames, hand-set), ``learned`` (``check --suggest
  --works``), ``learned, the sentence alone`` (its signals without the context) and ``learned
  without`` each signal (retrained without it, its pool left out too: the ablation). Recall@1, 5
  and 10, nDCG@10 (binary gains) and MRR (first gold's reciprocal rank within the top 100, else 0),
  averaged per query; by how many index papers cite the gold work (1, 2, 3-4, 5+: Recall@10 and MRR
  of each gold on its own) and by whether the draft knew a reference before the sentence.
- **Speed.** The build (the stage's own seconds per step, and the process's CPU seconds), the
  index's bytes, its load time, and the learned ranking's latency per flagged sentence with its
  context, warm (the index open, one sentence at a time as the check and the language server ask),
  median and p90 over 300 queries, at the train index and at the whole study's index (all splits).
- **Projection to 10M works.** Build time and size scale with the references read (linear, as
  measured); the BM25 queries (sentence and neighbours) scan the postings of their words, which
  grow with the corpus: measured on the whole index's texts replicated 1, 2 and 4 times (the same
  words at 2x and 4x the works) and extrapolated linearly; co-citation counts grow with the known
  works' citing papers: linear.

Results: benchmarks/results/works.json (command, machine, load average, date).
"""

from __future__ import annotations

import argparse
import hashlib
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
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from tqdm import tqdm

from citeworth.core.io import read_jsonl, write_json, write_jsonl
from citeworth.core.schema import CITE_WORTHY
from citeworth.sources import BadRecord, input_shards, read_shard
from citeworth.stages import stage_params
from citeworth.suggest import works as works_index
from citeworth.suggest.authors import AuthorIndex
from citeworth.suggest.bm25 import BM25
from citeworth.suggest.cited_works.build import WorkFile
from citeworth.suggest.cited_works.stage import works
from citeworth.suggest.works import (
    FEATURES,
    NEARBY,
    POOLS,
    WEIGHTS,
    LearnedModel,
    Query,
    WorksIndex,
    WorksRanker,
    fused,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "works.json"
TOP = 100  # ranks beyond this count as not found (MRR's reciprocal rank 0)
BUCKETS = (("1", 1, 1), ("2", 2, 2), ("3-4", 3, 4), ("5+", 5, 10**9))
SPEED_QUERIES = 300
TARGET_MS = 100
GOAL_RECALL, GOAL_MRR = 0.50, 0.33
PROJECT_TO = 10_000_000
LEARNED = tuple(name for name in FEATURES if name != "dense")  # the feature tables' columns
SIGNALS_ALL = LEARNED
SENTENCE_ALONE = ("bm25", "bm25_share", "cited_by", "authors")  # today's signals, weighed by the model
ABLATION = {"the sentence's words": ("bm25", "bm25_share"), "the neighbours": ("neighbours", "passage"),
            "the title and abstract": ("about",), "the papers like the draft": ("similar",),
            "co-citation": ("cocited_papers", "cocited_share", "cocited_paragraphs"),
            "the citations just before it": ("nearby_papers", "nearby_paragraphs"),
            "the popularity prior": ("cited_by",), "author names": ("authors",),
            "the authors of the draft's works": ("shared_authors",)}
POOL_SIGNALS = {"bm25": {"bm25", "bm25_share", "passage"}, "cocited": {"cocited_papers", "cocited_share"},
                "nearby": {"nearby_paragraphs"},
                "neighbours": {"neighbours"}, "about": {"about"}, "similar": {"similar"},
                "dense": {"dense"}}  # a ranking's pool stays while its signal does
C_GRID = {"pointwise": (0.01, 0.1, 1.0), "listwise": (1.0, 10.0, 100.0)}  # tried on dev, by objective
PLACEHOLDER = LearnedModel((), (), (), (), {})  # feature extraction needs no weights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="the params file whose works section names the data (default: %(default)s)")
    parser.add_argument("--train", action="store_true",
                        help=f"write the learned model to {WEIGHTS.relative_to(ROOT)}, the tools' model")
    parser.add_argument("--no-scale", action="store_true",
                        help="skip the whole-study index and the projection")
    parser.add_argument("--output", type=Path, default=RESULTS, help="default: %(default)s")
    parser.add_argument("--work", type=Path, metavar="DIR",
                        help="keep the indexes, queries and features here and reuse them on the next run")
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="works-bench-") as temporary:
        folder = args.work or Path(temporary)
        train = reused(folder / "train", lambda: build(args.params, folder / "train", {"splits": ["train"]}))
        index = WorksIndex(folder / "train" / "index")
        queries, references = reused(folder / "queries-test",
                                     lambda: test_queries(args.params, "test", index))
        dev_queries, _ = reused(folder / "queries-dev", lambda: test_queries(args.params, "dev", index))
        training = training_table(args.params, folder / "folds")
        dev = cached_table(folder / "train", "dev", lambda: feature_table(index, dev_queries, "dev"))
        test = cached_table(folder / "train", "test", lambda: feature_table(index, queries, "test"))
        quality, learned = evaluate(index, queries, references, training, dev, test)
        quality["index"] = train
        if args.train:
            trained = {"command": " ".join(["python", "benchmarks/works.py", *sys.argv[1:]]),
                       "date": started.isoformat(timespec="seconds"), "params": str(args.params),
                       "cwd": Path.cwd().name, "data": "the train split's citing sentences, cross-fitted "
                       "(each half of its papers asked of an index of the other half); objective, "
                       "regularisation and features chosen on the dev split",
                       "objective": quality["learned"]["objective"],
                       "regularisation_c": quality["learned"]["regularisation_c"],
                       "dev": quality["learned"]["dev"]}
            replace(learned, trained=trained).write(WEIGHTS)
        speed = {"train_index": speed_of(index, folder / "train" / "index", queries, learned)}
        projection = None
        if not args.no_scale:
            whole = reused(folder / "all", lambda: build(args.params, folder / "all", {}))
            speed["whole_study_index"] = whole | speed_of(index, folder / "all" / "index", queries, learned)
            projection = project(folder / "all" / "index", index, queries, whole, speed["whole_study_index"])
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


def test_queries(params_path: Path, split: str, index: WorksIndex,
                 data_dir: Path | None = None) -> tuple[list[dict], dict]:
    """The cite-worthy samples of ``split`` citing a work the index holds, each a query as a draft
    would ask it: its text, its neighbours in the paragraph, its paper's title and abstract, and
    the works its paper cited **before** it (in the split file's reading order; never the gold);
    with ``gold``, those works' rows. And how many of that split's cited references the index holds."""
    overrides = {"splits": [split]} | ({"data_dir": str(data_dir)} if data_dir else {})
    params = stage_params("works", overrides, params_path)
    places = sample_places(Path(params.data_dir) / f"{split}.jsonl")
    with tempfile.TemporaryDirectory(prefix="works-queries-") as folder:
        file = WorkFile(Path(folder) / "references.sqlite")
        counts: Counter = Counter()
        file.select(params.data_dir, [split], counts)
        about = {}
        for shard in input_shards(params.inputs):
            for item in read_shard(shard):
                if not isinstance(item, BadRecord) and file.add_paper(item, "dataset", counts):
                    about[item.paper_id] = " ".join(filter(None, (item.title, item.abstract)))
        queries, cited, held = [], 0, 0
        known: dict[str, set[int]] = defaultdict(set)  # by paper: the works cited so far
        works_of: dict[int, set[int]] = {}  # by sample number: the works it cites
        for number, text, references in file.cited_by_samples():
            paper_id, neighbours, before = places[number]
            rows = [index.find(r.ids, r.title, r.authors, r.year) for r in references]
            cited += len(rows)
            held += sum(row is not None for row in rows)
            works_of[number] = {row for row in rows if row is not None}
            if gold := sorted(works_of[number]):
                nearby = set().union(*(works_of.get(n, set()) for n in before)) - set(gold)
                queries.append({"sentence": text, "neighbours": neighbours, "about": about.get(paper_id, ""),
                                "known": sorted(known[paper_id] - set(gold)), "nearby": sorted(nearby),
                                "gold": gold})
                known[paper_id].update(gold)
        file.close()
    return queries, {"split": split, "samples_citing": counts["dataset_citing_sentences"],
                     "cited_references": cited, "cited_references_in_index": held,
                     "share_of_golds_in_index": round(held / cited, 4) if cited else None,
                     "queries": len(queries),
                     "queries_knowing_a_reference": sum(bool(q["known"]) for q in queries)}


def sample_places(path: Path) -> dict[int, tuple[str, str, list[int]]]:
    """For each cite-worthy sample number as ``WorkFile.select`` counts them: its paper, the text
    of the sentences before and after it in its paragraph, and the numbers of the citing samples
    among the ``NEARBY`` sentences before it there."""
    places, number = {}, 0
    for record in read_jsonl(path):
        samples, numbers = record["samples"], {}
        for at, sample in enumerate(samples):
            if sample.get("label") == CITE_WORTHY and sample.get("ref_ids"):
                number += 1
                numbers[at] = number
                around = [samples[i]["text"] for i in (at - 1, at + 1) if 0 <= i < len(samples)]
                before = [numbers[i] for i in range(at - NEARBY, at) if i in numbers]
                places[number] = (record["paper_id"], " ".join(around), before)
    return places


def as_query(found: dict) -> Query:
    return Query(found["sentence"], found["neighbours"], found["about"], tuple(found["known"]),
                 tuple(found["nearby"]))


# -- the learned ranker: features of every candidate of every query -----------------------------------

def feature_table(index: WorksIndex, queries: list[dict], desc: str) -> dict[str, np.ndarray]:
    """Every query's pool: its features (``FEATURES`` but dense, candidates x features), whether it
    is a gold work, its query's number, the rankings that brought it; and each query's golds."""
    ranker = WorksRanker(index, model=PLACEHOLDER)
    rows, gold, query_of, pools, golds = [], [], [], [], []
    none = np.zeros(0, dtype=np.int64)
    for number, found in enumerate(tqdm(queries, desc=desc, unit="query", mininterval=10)):
        pool, features = ranker.features(as_query(found), None, none)
        golds.append(len(found["gold"]))
        if not len(pool):
            continue
        rows.append(np.stack([features.get(name, np.zeros(len(pool))) for name in LEARNED], axis=1))
        gold.append(np.isin(pool, found["gold"]))
        query_of.append(np.full(len(pool), number))
        pools.append(features["pools"])
    return {"x": np.concatenate(rows).astype(np.float32), "gold": np.concatenate(gold),
            "query": np.concatenate(query_of), "pools": np.concatenate(pools), "golds": np.array(golds)}


def cached_table(folder: Path, name: str, compute) -> dict[str, np.ndarray]:
    path = folder / f"{name}.npz"
    if path.is_file():
        with np.load(path) as saved:
            return dict(saved)
    table = compute()
    folder.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:
        np.savez(file, **table)
    return table


def training_table(params_path: Path, folder: Path) -> dict[str, np.ndarray]:
    """The train split's citing sentences as queries, cross-fitted: its papers in two halves (by a
    hash of their id), each half's sentences asked of an index of the other half's papers, so no
    query finds its own sentence or its own paper's citations in the index."""
    data_dir = Path(stage_params("works", {}, params_path).data_dir)
    records = list(read_jsonl(data_dir / "train.jsonl"))
    tables = []
    for half in (0, 1):
        fold = folder / f"fold-{half}"

        def compute(fold=fold, half=half) -> dict[str, np.ndarray]:
            data = fold / "data"
            data.mkdir(parents=True, exist_ok=True)
            mine = [r for r in records if _half(r["paper_id"]) == half]
            write_jsonl(data / "train.jsonl", [r for r in records if _half(r["paper_id"]) != half])
            write_jsonl(data / "dev.jsonl", mine)
            reused(fold, lambda: build(params_path, fold, {"splits": ["train"], "data_dir": str(data)}))
            index = WorksIndex(fold / "index")
            queries, _ = reused(fold / "queries", lambda: test_queries(params_path, "dev", index, data))
            table = feature_table(index, queries, f"train half {half}")
            index.close()
            return table

        tables.append(cached_table(fold, "features", compute))
    offset = len(tables[0]["golds"])
    return {"x": np.concatenate([t["x"] for t in tables]),
            "gold": np.concatenate([t["gold"] for t in tables]),
            "query": np.concatenate([tables[0]["query"], tables[1]["query"] + offset]),
            "pools": np.concatenate([t["pools"] for t in tables]),
            "golds": np.concatenate([t["golds"] for t in tables])}


def _half(paper_id: str) -> int:
    return hashlib.sha256(paper_id.encode()).digest()[0] % 2


def fit(table: dict[str, np.ndarray], features: tuple[str, ...], objective: str, c: float) -> LearnedModel:
    """A linear model of ``features`` (standardised) over the candidates the rankings of those
    features bring: ``pointwise``, logistic regression of gold against not; ``listwise``, the
    conditional logit (each query's softmax over its pool, the likelihood of its golds), ``c`` the
    inverse of the L2 penalty in both."""
    keep = _kept(table, features)
    columns = [LEARNED.index(name) for name in features]
    x = table["x"][keep][:, columns].astype(np.float64)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z, gold = (x - mean) / scale, table["gold"][keep]
    if objective == "pointwise":
        from sklearn.linear_model import LogisticRegression

        weights = LogisticRegression(C=c, max_iter=1000).fit(z, gold).coef_[0]
    else:
        weights = _conditional_logit(z, gold, table["query"][keep], c)
    return LearnedModel(features, tuple(mean.round(6)), tuple(scale.round(6)), tuple(weights.round(6)), {})


def _conditional_logit(z: np.ndarray, gold: np.ndarray, query: np.ndarray, c: float) -> np.ndarray:
    """The weights maximising each query's log-probability of its golds under a softmax over its
    pool (rows grouped by query), less ||w||^2 / 2c; L-BFGS."""
    from scipy.optimize import minimize

    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    lengths = np.diff(np.r_[starts, len(query)])
    gold = gold.astype(np.float64)
    answered = np.repeat(np.add.reduceat(gold, starts) > 0, lengths)
    z, gold, query = z[answered], gold[answered], query[answered]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    lengths = np.diff(np.r_[starts, len(query)])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        scores = z @ w
        e = np.exp(scores - np.repeat(np.maximum.reduceat(scores, starts), lengths))
        every, golds = np.add.reduceat(e, starts), np.add.reduceat(e * gold, starts)
        share = e * gold / np.repeat(golds, lengths) - e / np.repeat(every, lengths)
        return -np.log(golds / every).sum() + w @ w / (2 * c), -(share @ z) + w / c

    return minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x


def _kept(table: dict[str, np.ndarray], features: tuple[str, ...]) -> np.ndarray:
    """The candidates some ranking of ``features`` brought."""
    bits = sum(1 << POOLS.index(pool) for pool, needs in POOL_SIGNALS.items() if needs & set(features))
    return (table["pools"] & bits) > 0


def table_ranks(table: dict[str, np.ndarray], model: LearnedModel) -> list[list[float]]:
    """Each query's gold works' ranks under ``model`` (inf: not in the pool it ranks)."""
    keep = _kept(table, model.features)
    features = {name: table["x"][keep][:, LEARNED.index(name)] for name in model.features}
    scores, _ = model.score(features)
    query, gold = table["query"][keep], table["gold"][keep]
    ranks = [[math.inf] * count for count in table["golds"]]
    order_ = np.lexsort((-scores, query))
    starts = np.searchsorted(query[order_], np.arange(len(ranks)))
    for number in range(len(ranks)):
        end = starts[number + 1] if number + 1 < len(ranks) else len(order_)
        found = np.flatnonzero(gold[order_[starts[number]:end]]) + 1
        ranks[number][:len(found)] = found.tolist()
    return ranks


def train(training: dict[str, np.ndarray], dev: dict[str, np.ndarray]) -> tuple[LearnedModel, dict]:
    """The model the dev queries choose (the stop): first its objective and regularisation on every
    feature, then its features, dropping one at a time while dropping one improves dev's Recall@10
    + MRR (backward elimination); the dev figures of each step."""
    def on_dev(features: tuple[str, ...], objective: str, c: float) -> dict:
        return summarise(table_ranks(dev, fit(training, features, objective, c)))

    def worth(found: dict) -> float:
        return found["recall@10"] + found["mrr"]

    tried = {(objective, c): on_dev(SIGNALS_ALL, objective, c)
             for objective, grid in C_GRID.items() for c in grid}
    setting = max(tried, key=lambda chosen: worth(tried[chosen]))
    features, best, dropped = SIGNALS_ALL, tried[setting], []
    while len(features) > 1:
        without = {name: on_dev(tuple(f for f in features if f != name), *setting) for name in features}
        name = max(without, key=lambda name: worth(without[name]))
        if worth(without[name]) <= worth(best):
            break
        features, best = tuple(f for f in features if f != name), without[name]
        dropped.append({"dropped": name, "dev": best})
    return fit(training, features, *setting), {
        "objective": setting[0], "c": setting[1], "features": features, "dropped_on_dev": dropped,
        "dev": {f"{objective}, c={c}": found for (objective, c), found in tried.items()}, "chosen_dev": best}


def evaluate(index: WorksIndex, queries: list[dict], references: dict, training: dict, dev: dict,
             test: dict) -> tuple[dict, LearnedModel]:
    """Every method's ranks of the gold works on the test queries, summarised; the learned model."""
    learned, chosen = train(training, dev)
    rows: dict[str, list[dict]] = defaultdict(list)
    cited = [[int(index.cited_by[g]) for g in q["gold"]] for q in queries]
    for name, rank in baselines(index).items():
        for q, counts in zip(queries, cited, strict=True):
            top = list(rank(q["sentence"]))
            rows[name].append({"ranks": [top.index(g) + 1 if g in top else math.inf for g in q["gold"]],
                               "cited_by": counts, "known": bool(q["known"])})
    setting = (chosen["objective"], chosen["c"])
    variants = {"learned": learned, "learned, the sentence alone": fit(training, SENTENCE_ALONE, *setting)}
    for group, left_out in ABLATION.items():
        if set(left_out) & set(learned.features):
            kept = tuple(f for f in learned.features if f not in left_out)
            variants[f"learned without {group}"] = fit(training, kept, *setting)
    for name, model in variants.items():
        for ranks, counts, q in zip(table_ranks(test, model), cited, queries, strict=True):
            rows[name].append({"ranks": ranks, "cited_by": counts, "known": bool(q["known"])})
    summary = {name: metrics(found) for name, found in rows.items()}
    best = summary["learned"]
    in_pool = statistics.fmean(r <= TOP for ranks in table_ranks(test, learned) for r in ranks)
    return {"references": references, "queries": len(queries), "methods": summary,
            "learned": {"features": dict(zip(learned.features, learned.weights, strict=True)),
                        "objective": chosen["objective"], "regularisation_c": chosen["c"],
                        "dev_by_setting": chosen["dev"], "dropped_on_dev": chosen["dropped_on_dev"],
                        "dev": chosen["chosen_dev"],
                        "training": {"queries": len(training["golds"]), "candidates": len(training["gold"]),
                                     "golds_in_pool": round(float(training["gold"].sum())
                                                            / max(1, int(training["golds"].sum())), 4)},
                        "test_golds_in_pool": round(in_pool, 4)},
            "goal": {"recall@10": GOAL_RECALL, "mrr": GOAL_MRR,
                     "learned": {k: best[k] for k in ("recall@10", "mrr")},
                     "today": {k: summary["fused"][k] for k in ("recall@10", "mrr")},
                     "reached": best["recall@10"] >= GOAL_RECALL and best["mrr"] >= GOAL_MRR}}, learned


def baselines(index: WorksIndex) -> dict:
    """The sentence-alone methods as text -> its top ``TOP`` rows: TF-IDF, BM25, today's ranker."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = work_texts(index)
    vectoriser = TfidfVectorizer(stop_words="english")
    matrix = vectoriser.fit_transform(texts)

    def tfidf(text: str) -> np.ndarray:
        return _top((matrix @ vectoriser.transform([text]).T).toarray().ravel())

    def bm25(text: str) -> np.ndarray:
        return _top(index.bm25.scores(text))

    def today(text: str) -> np.ndarray:
        """The hand-set fusion ``check --suggest --works`` ranked with before (works.fused)."""
        scores = index.bm25.scores(text)
        pool = _top(scores)[:works_index.POOL]
        if not len(pool):
            return pool
        works = index.works(pool)
        authors = AuthorIndex([w.authors for w in works], [w.year for w in works]).scores(text)
        fused_ = fused({"bm25": scores[pool][None], "authors": authors[None],
                        "cited_by": np.asarray(index.cited_by[pool], dtype=np.float64)[None]})[0]
        return pool[np.argsort(-fused_, kind="stable")[:TOP]]

    return {"tfidf": tfidf, "bm25": bm25, "fused": today}


def work_texts(index: WorksIndex) -> list[str]:
    """Each work's title and up to 20 of its citing sentences (the TF-IDF baseline's documents)."""
    return [" ".join([work.title or "", *index.contexts(work.row, 20)])
            for work in index.works(range(index.size))]


def _top(scores: np.ndarray) -> np.ndarray:
    top = np.argpartition(-scores, TOP)[:TOP] if len(scores) > TOP else np.arange(len(scores))
    top = top[np.argsort(-scores[top], kind="stable")]
    return top[scores[top] > 0]


def per_query(ranks: list[float]) -> dict:
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(ranks), 10)))
    return {"recall@1": sum(r <= 1 for r in ranks) / len(ranks),
            "recall@5": sum(r <= 5 for r in ranks) / len(ranks),
            "recall@10": sum(r <= 10 for r in ranks) / len(ranks),
            "mrr": 1 / min(ranks) if min(ranks) <= TOP else 0.0,
            "ndcg@10": sum(1 / math.log2(r + 1) for r in ranks if r <= 10) / ideal}


def summarise(ranks: list[list[float]]) -> dict:
    """The per-query figures averaged over queries."""
    found = [per_query(r) for r in ranks]
    return {name: round(statistics.fmean(q[name] for q in found), 4) for name in found[0]}


def metrics(rows: list[dict]) -> dict:
    found = summarise([row["ranks"] for row in rows])
    pairs = [(rank, cited) for row in rows for rank, cited in zip(row["ranks"], row["cited_by"], strict=True)]
    found["by_gold_cited_by"] = {
        name: {"golds": len(chosen), "recall@10": round(statistics.fmean(r <= 10 for r in chosen), 4),
               "mrr": round(statistics.fmean(1 / r if r <= TOP else 0.0 for r in chosen), 4)}
        for name, low, high in BUCKETS if (chosen := [r for r, c in pairs if low <= c <= high])}
    found["by_draft_knows_a_reference"] = {}
    for name, flag in (("yes", True), ("no", False)):
        if chosen := [row["ranks"] for row in rows if row["known"] == flag]:
            summary = summarise(chosen)
            found["by_draft_knows_a_reference"][name] = {
                "queries": len(chosen), "recall@10": summary["recall@10"], "mrr": summary["mrr"]}
    return found


def speed_of(train: WorksIndex, folder: Path, queries: list[dict], model: LearnedModel) -> dict:
    """Load time and the learned ranking's latency per sentence, warm, one sentence at a time (as
    the check and the language server ask), each with its draft's context: neighbours, title and
    abstract, and the works cited before it (found again in this index by their keys)."""
    start = time.perf_counter()
    index = WorksIndex(folder)
    loaded = time.perf_counter() - start
    ranker = WorksRanker(index, model=model)
    chosen = queries[:SPEED_QUERIES]
    known = {row for q in chosen for row in q["known"]}
    rows = {work.row: index.find(work.ids, work.title, work.authors, work.year)
            for work in train.works(sorted(known))}
    def here(found: list[int]) -> tuple[int, ...]:
        return tuple(rows[r] for r in found if rows[r] is not None)

    asked = [replace(as_query(q), known=here(q["known"]), nearby=here(q["nearby"])) for q in chosen]
    for query in asked[:5]:  # warm: the memory-mapped pages
        ranker.rank([query], 3)
    times = []
    for query in asked:
        start = time.perf_counter()
        ranker.rank([query], 3)
        times.append(1000 * (time.perf_counter() - start))
    index.close()
    times.sort()
    return {"works": index.size, "load_seconds": round(loaded, 3), "sentences": len(times),
            "ms_per_sentence_median": round(statistics.median(times), 1),
            "ms_per_sentence_p90": round(times[int(0.9 * (len(times) - 1))], 1),
            "target_ms": TARGET_MS, "within_target": statistics.median(times) <= TARGET_MS,
            "load_average_1m": round(os.getloadavg()[0], 2)}


def project(folder: Path, train: WorksIndex, queries: list[dict], whole: dict, speed: dict) -> dict:
    """Build time, size and query latency at 10M works, from the whole index (see the docstring):
    the ranker's latency there is what it took at the whole index, its BM25 part (the sentence's
    and its neighbours' queries) replaced by BM25's projected time, and its co-citation counts (the
    known works' citing units and theirs: linear in the corpus's papers) scaled linearly; the
    rest, the pool's features and metadata, does not grow with the works."""
    index = WorksIndex(folder)
    texts = work_texts(index)
    n, weights = index.size, index.meta["settings"]["bm25"]
    cocitation_bytes = (folder / "cocitation.npz").stat().st_size
    index.close()
    asked = queries[:100]
    measured = []
    for times in (1, 2, 4):
        bm25 = BM25(texts * times, weights["k1"], weights["b"])
        start = time.perf_counter()
        for query in asked:
            for text in (query["sentence"], query["neighbours"]):
                np.argpartition(-bm25.scores(text), works_index.POOL)
        measured.append((n * times, 1000 * (time.perf_counter() - start) / len(asked)))
        del bm25
    sizes, ms = np.array([m[0] for m in measured], dtype=float), np.array([m[1] for m in measured])
    slope, intercept = np.polyfit(sizes, ms, 1)
    scale = PROJECT_TO / whole["works"]
    bm25_at_10m = float(intercept + slope * PROJECT_TO)
    start = time.perf_counter()
    for query in asked:
        for relation in train.cocited.values():
            relation.counts(np.array(query["known"], dtype=np.int64))
    cocited_ms = 1000 * (time.perf_counter() - start) / len(asked)
    cocited_at_10m = cocited_ms * PROJECT_TO / train.size
    return {"from_works": whole["works"],
            "bm25_ms_per_sentence_measured": [{"works": int(s), "ms": round(t, 1)} for s, t in measured],
            "bm25_ms_per_sentence_at_10m": round(bm25_at_10m),
            "cocitation_ms_per_sentence_measured": {"works": train.size, "ms": round(cocited_ms, 2)},
            "cocitation_ms_per_sentence_at_10m": round(cocited_at_10m, 1),
            "ranker_ms_per_sentence_at_10m":
                round(speed["ms_per_sentence_median"] - measured[0][1] + bm25_at_10m + cocited_at_10m),
            "build_cpu_seconds_at_10m_linear": round(whole["cpu_seconds"] * scale),
            "bytes_at_10m_linear": round(whole["bytes"] * scale),
            "cocitation_bytes_per_million_works": round(cocitation_bytes * 1_000_000 / n),
            "note": "linear in works: reading, resolving, BM25 indexing, the co-citation arrays and the "
                    "SQLite tables all grow with the references; the BM25 query with the postings of its "
                    "words; a draft's title-and-abstract query runs once per draft, not per sentence"}


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
        lines.append(f"  {name:42s} R@1 {found['recall@1']:.3f}  R@10 {found['recall@10']:.3f}  "
                     f"MRR {found['mrr']:.3f}")
    weights = quality["learned"]["features"]
    lines.append("  learned weights: " + ", ".join(f"{name} {value:+.2f}" for name, value in weights.items()))
    for name, speed in results["speed"].items():
        lines.append(f"  {name}: {speed['works']} works, load {speed['load_seconds']} s, "
                     f"{speed['ms_per_sentence_median']} ms/sentence (p90 {speed['ms_per_sentence_p90']})")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
