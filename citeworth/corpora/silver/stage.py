"""The silver stage: Roy & Mercer's silver-standard citation-linkage corpus, and models trained on it.

1. Every paper of ``inputs`` goes into the paper index (``corpora/paper_index.py``).
2. Citing sentences: the curated papers' sentences (``citing: full_text``; or only the curated
   dataset's samples, ``citing: dataset``) with 1 to ``max_citations`` resolved citations, each
   linked to the cited paper the index holds; the cited paper's sentences are its full text, else
   its abstract (marked ``cited_from``).
3. Every sentence is cleaned (``cleaning.py``), every distinct text vectorised once
   (``similarity.py``), and the cosine cutoff tuned on the gold file's dev pairs (``cutoff.py``).
4. Each citing sentence is paired with every sentence of its cited paper(s); a pair is positive
   when its rounded cosine is at least the cutoff; all positives and as many random negatives are
   kept per citing sentence (``balance.py``), split by the citing paper's curated split.
5. The corpus is validated (``citeworth/quality/silver.py``: positives = negatives for every
   citing sentence), the siamese model trained on it and scored like the paper's Tables 4-6.

Outputs: ``out_dir/{train,dev,test}.jsonl`` (one pair a line, by citing sentence) and
``quarantine.jsonl``; ``reports_dir/cutoff.json``, ``report.md`` and ``quality/`` (Data Docs);
``metrics_path``; ``models_dir/{silver,gold}/``.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from citeworth.core.io import read_jsonl, sha256_file, write_json, write_text
from citeworth.core.params import ParamsError, to_dict
from citeworth.core.schema import SPLITS
from citeworth.core.threads import torch_threads
from citeworth.corpora.paper_index import PaperIndex
from citeworth.corpora.silver import corpus, siamese
from citeworth.corpora.silver.cleaning import check_rules, clean
from citeworth.corpora.silver.cutoff import GoldPair, grid, load_gold, tune
from citeworth.corpora.silver.labelling import write_pairs
from citeworth.corpora.silver.params import SilverParams
from citeworth.corpora.silver.report import markdown
from citeworth.corpora.silver.similarity import Vectors, quantise, vectorise
from citeworth.corpora.silver.store import Store
from citeworth.models.evaluation import THRESHOLD, binary_metrics
from citeworth.quality.silver import check_silver
from citeworth.text.sentences import SentenceSplitter

log = logging.getLogger(__name__)
_WORK_PREFIX = ".silver-"
CUTOFF_RULE = "max MCC on the gold dev pairs, then balanced accuracy, then the lower cutoff"


def silver(params: SilverParams) -> dict:
    _check(params)
    gold = load_gold(params.gold_path)
    out_dir = Path(params.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(f"{_WORK_PREFIX}*"):  # left by a killed run
        shutil.rmtree(stale, ignore_errors=True)
    counts: Counter = Counter()
    with torch_threads(params.threads):
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=_WORK_PREFIX) as work:
            cutoff, annotator = _build(params, Path(work), gold, counts)
        quality = check_silver(out_dir, Path(params.reports_dir) / "quality")
        models = _models(params, gold)
    summary = {"counts": _counts(counts), "cutoff": cutoff["chosen"], "gold_test": {"annotator": annotator,
               **models["gold_test"]}, "silver_test": models["silver_test"], "quality": quality}
    write_json(params.metrics_path, summary)
    write_text(Path(params.reports_dir) / "report.md", markdown(summary, cutoff, _examples(out_dir)))
    return summary["counts"]


def _check(params: SilverParams) -> None:
    try:
        check_rules(params.cleaning)
    except ValueError as exc:
        raise ParamsError(str(exc)) from exc


def _build(params: SilverParams, work: Path, gold: list[GoldPair], counts: Counter) -> tuple[dict, dict]:
    """Index, link, vectorise, tune the cutoff, write the pairs: (cutoff.json's content, the
    annotator's gold-test metrics)."""
    index, store = PaperIndex(work / "papers.sqlite", keep_text=True), Store(work / "pairs.sqlite")
    try:
        corpus.index_papers(params, index, Path(params.out_dir) / "quarantine.jsonl", counts)
        splitter = SentenceSplitter(params.spacy_model)
        corpus.collect_citing(params, index, store, splitter.split, counts)
        corpus.collect_cited(params, index, store, splitter.split, counts)
        gold_rows = [(store.text_row(clean(pair.citing, params.cleaning)),
                      store.text_row(clean(pair.cited, params.cleaning))) for pair in gold]
        texts = store.texts()
        vectors, facts = vectorise(texts, params.similarity, work)
        cutoff, annotator = _cutoff(params, gold, gold_rows, vectors, facts)
        decimals = params.similarity.decimals
        units = round(cutoff["chosen"]["cutoff"] * 10 ** decimals)
        write_pairs(store, vectors, texts, Path(params.out_dir), units, decimals, params.seed, counts)
    finally:
        index.close()
        store.close()
    return cutoff, annotator


def _cutoff(params: SilverParams, gold: list[GoldPair], rows: list[tuple[int, int]], vectors: Vectors,
            facts: dict) -> tuple[dict, dict]:
    """Tune the cutoff on the gold dev pairs; write cutoff.json; score the annotator on gold test."""
    decimals = params.similarity.decimals
    scores = np.array([quantise(vectors.cosines(a - 1, [b - 1]), decimals)[0] for a, b in rows])
    labels = np.array([pair.score >= params.positive_score for pair in gold])
    dev = np.array([pair.split == "dev" for pair in gold])
    chosen, table = tune(scores[dev], labels[dev], grid(params.cutoff, decimals), decimals)
    result = {
        "rule": CUTOFF_RULE, "positive": "rounded cosine >= cutoff", "decimals": decimals,
        "chosen": chosen, "grid": table, "similarity": facts, "cleaning": list(params.cleaning),
        "gold": {"path": str(params.gold_path), "sha256": sha256_file(params.gold_path),
                 "positive_score": params.positive_score,
                 **{f"{split}_{what}": int(np.sum((np.array([p.split for p in gold]) == split) & mask))
                    for split in ("dev", "test") for what, mask in (("pairs", True), ("positives", labels))}},
        "grid_params": to_dict(params.cutoff),
    }
    write_json(Path(params.reports_dir) / "cutoff.json", result)
    cut = round(chosen["cutoff"] * 10 ** decimals)
    return result, binary_metrics(labels[~dev], scores[~dev] >= cut)


def _models(params: SilverParams, gold: list[GoldPair]) -> dict:
    """The siamese model trained on the silver train split (early stopping on silver dev) and, as
    the paper's Table 4 control, on the gold dev pairs; both scored on the gold test pairs."""
    silver = {name: list(read_jsonl(Path(params.out_dir) / f"{name}.jsonl")) for name in SPLITS}
    gold_pairs = {split: [_gold_pair(pair, params) for pair in gold if pair.split == split]
                  for split in ("dev", "test")}
    results: dict = {"gold_test": {}, "silver_test": {"siamese_silver": None}}
    for name, train, dev in (("silver", silver["train"], silver["dev"]), ("gold", gold_pairs["dev"], [])):
        if not train:
            log.warning("silver: no %s training pairs: no siamese model trained on them", name)
            results["gold_test"][f"siamese_{name}"] = None
            shutil.rmtree(Path(params.models_dir) / name, ignore_errors=True)  # no stale model stays
            continue
        model = siamese.fit(params.model, train, dev, Path(params.checkpoints_dir) / name,
                            desc=f"siamese ({name})")
        model.save(Path(params.models_dir) / name)
        results["gold_test"][f"siamese_{name}"] = _scored(model, gold_pairs["test"])
        if name == "silver" and silver["test"]:
            results["silver_test"]["siamese_silver"] = _scored(model, silver["test"])
    Path(params.models_dir).mkdir(parents=True, exist_ok=True)
    return results


def _gold_pair(pair: GoldPair, params: SilverParams) -> dict:
    """A gold pair as the model reads pairs: cleaned as the corpus is, labelled 0/1."""
    return {"citing_text": clean(pair.citing, params.cleaning),
            "cited_text": clean(pair.cited, params.cleaning),
            "label": int(pair.score >= params.positive_score)}


def _scored(model: siamese.SiameseModel, pairs: list[dict]) -> dict:
    labels = np.array([pair["label"] for pair in pairs], dtype=np.int64)
    return binary_metrics(labels, model.predict_proba(pairs) >= THRESHOLD)


def _counts(counts: Counter) -> dict:
    return dict(sorted(counts.items()))


def _examples(out_dir: Path, limit: int = 5) -> list[dict]:
    """The best-scoring positive pair of each of the first ``limit`` citing sentences of the first
    split that has any (the files are sorted by citing sentence: reading stops early)."""
    for name in SPLITS:
        best: dict[str, dict] = {}
        for pair in read_jsonl(out_dir / f"{name}.jsonl"):
            if pair["citing_id"] not in best and len(best) == limit:
                break
            if pair["label"] == 1 and pair["score"] > best.get(pair["citing_id"], {"score": -2.0})["score"]:
                best[pair["citing_id"]] = pair
        if best:
            return list(best.values())
    return []
