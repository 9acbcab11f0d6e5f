"""The ``train`` stage: every model of ``train.models`` × every seed, evaluated on the test split.

Each model is fitted and scored with ``citeworth.models.fitting`` (which the studies share). The
stage writes, per model (so a DVC matrix cell running
``-S 'models=[name]'`` writes only its own files):

- ``models/<name>/``: the best-on-dev seed's model (``save_pretrained`` + tokenizer for transformer
  models) with a model card (data version, params, metrics) and ``citeworth_model.json``;
- ``metrics/models/<name>.json``: test P/R/F1 of the cite-worthy class, ROC AUC and PR AUC, mean ±
  std over seeds, a bootstrap 95% interval of F1 over the test sentences (``f1_ci``), the number of
  test sentences, per field, per seed, dev F1, runtime;
- ``plots/models/<name>/``: ``pr_curve.csv``, ``confusion.csv`` and ``learning_curve.csv`` (dev F1
  against optimizer steps, every seed; DVC plots) and the DVCLive logs;
- ``reports/models/<name>/saliency.md``: InputXGradient for the most / least confident sentences.

A model whose metrics file records the fingerprint of this data version, its catalog entry, the
seeds and ``CODE`` (and whose model folder is there) is not trained again: a rerun, or an Airflow
task mapped over the models in a workspace holding the last version's outputs, decides skip-or-run
from the files themselves, never by asking DVC.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import as_completed
from pathlib import Path

import numpy as np
import yaml

from citeworth.core import knobs
from citeworth.core.fingerprint import current_record, data_version, fingerprint
from citeworth.core.io import write_json, write_text
from citeworth.core.params import Params, ParamsError, to_dict
from citeworth.core.processes import worker_pool
from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.core.threads import torch_threads
from citeworth.models import data
from citeworth.models.base import TrainedModel
from citeworth.models.evaluation import (
    TEST_KEYS,
    THRESHOLD,
    aggregate_seeds,
    bootstrap_f1_interval,
    mean_std,
    pr_curve_rows,
)
from citeworth.models.fitting import dev_sample, evaluate, fit_model, metrics_for, model_spec
from citeworth.models.spec import AnyModelSpec, ModelSpec

log = logging.getLogger(__name__)
# The one declared exception to "same inputs, same bytes" among the DVC-tracked outputs: wall-clock
# training time, under these keys of metrics/models/<name>.json (runtime_seconds, per_seed[].train_seconds),
# copied by the report stage into metrics/models.json and the runtime column of reports/table4.md.
RUNTIME_METRICS = ("runtime_seconds", "train_seconds")
# The code a trained model comes from, this module's import closure (every model kind of the
# registry): an edit to it retrains every model, an edit to Table 4 (citeworth.report) does not.
CODE = (__name__,)
# Under checkpoints_dir: finished fits by their inputs (models.loop.FinishedFits), shared by the
# models of every run -- PU's g is the no-weight sentence model's fit. Not a param: where finished
# work is kept changes no output.
FINISHED_FITS = "finished"


def without_runtimes(metrics):
    """``metrics`` (any JSON value) without the RUNTIME_METRICS keys, at any depth: what two builds
    of the same inputs must agree on."""
    if isinstance(metrics, dict):
        return {k: without_runtimes(v) for k, v in metrics.items() if k not in RUNTIME_METRICS}
    if isinstance(metrics, list):
        return [without_runtimes(v) for v in metrics]
    return metrics


class TrainParams(Params):
    models: list[str]
    """catalog entries to train, in order (a DVC matrix cell passes one)"""
    catalog: dict[str, AnyModelSpec]
    """name -> ModelSpec mapping (kind, encoder, optim, ...)"""
    seeds: list[int]
    """Each model is trained once per seed; metrics are mean and std over them."""
    data_dir: Path
    """The dataset (assemble's out_dir)."""
    models_dir: Path
    """<models_dir>/<name>/: the best seed's weights and spec."""
    metrics_dir: Path
    """<metrics_dir>/<name>.json: test and dev metrics per model."""
    plots_dir: Path
    """<plots_dir>/<name>/: PR curve, confusion matrix, learning curve."""
    reports_dir: Path = Path("reports/models")
    """<reports_dir>/<name>/: the model card and saliency examples."""
    checkpoints_dir: Path = Path("checkpoints")
    """resumable state of unfinished fits, and finished fits for reuse under finished/ (outside DVC outs)"""
    saliency_examples: int
    """most and least confident test sentences explained; 0 = none"""
    threads: int | None
    """torch CPU threads; null = torch's default"""


def train(params: TrainParams) -> dict:
    """Train and evaluate ``params.models`` × ``params.seeds``; write each model's outputs."""
    unknown = [m for m in params.models if m not in params.catalog]
    if unknown:
        raise ParamsError(f"train.models names {unknown} not in train.catalog ({sorted(params.catalog)})")
    specs = [model_spec(name, params.catalog[name]) for name in params.models]
    version = data_version(data.split_files(params.data_dir))
    done = {spec.name: summary for spec in specs if (summary := _trained_before(spec, params, version))}
    if todo := [spec for spec in specs if spec.name not in done]:
        # models side by side, each in a fresh process of its own (the bytes of one after another): a
        # knob, not a param; a DVC matrix cell, an Airflow task and each of make demo's cells train one
        workers = min(knobs.workers(default=1), len(todo))
        done.update(_train_side_by_side(todo, params, version, workers) if workers > 1
                    else _train_here(todo, params, version))
    return {spec.name: done[spec.name] for spec in specs}


def _train_here(specs: list[ModelSpec], params: TrainParams, version: str) -> dict[str, dict]:
    splits = data.load_splits(params.data_dir)
    log.info("dataset %s (version %s): %s sentences", params.data_dir, version[:12],
             {s: len(data.sentences(r)) for s, r in splits.items()})
    with torch_threads(params.threads):
        return {spec.name: _train_model(spec, splits, params, version) for spec in specs}


def _train_side_by_side(specs: list[ModelSpec], params: TrainParams, version: str,
                        workers: int) -> dict[str, dict]:
    """Each model in a freshly spawned process of its own, ``workers`` at a time: what a process
    running one train@<model> cell computes, so the same bytes as one after another. The first
    failure cancels the models not yet started and is raised."""
    with worker_pool(workers, fresh=True) as pool:
        futures = {pool.submit(_train_here, [spec], params, version): spec.name for spec in specs}
        done: dict[str, dict] = {}
        try:
            for future in as_completed(futures):
                done.update(future.result())
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
    return done


def model_fingerprint(spec: ModelSpec, params: TrainParams, version: str) -> str:
    """What decides a model's outputs: the data version, its catalog entry, the seeds, the
    saliency examples, the torch threads (they may change float sums) and ``CODE``."""
    return fingerprint(CODE, data=version, spec=to_dict(spec), seeds=params.seeds,
                       saliency_examples=params.saliency_examples, threads=params.threads)


def _trained_before(spec: ModelSpec, params: TrainParams, version: str) -> dict | None:
    """The model's summary if its outputs come from this data, these params and this code."""
    expected = model_fingerprint(spec, params, version)
    metrics = current_record(params.metrics_dir / f"{spec.name}.json", expected)
    if metrics is None or not (params.models_dir / spec.name).is_dir():
        return None
    log.info("%s already trained on data version %s with these params and code: skipped",
             spec.name, version[:12])
    return _summary(metrics)


def _summary(metrics: dict) -> dict:
    test = metrics["test"]
    return {"f1": round(test["f1"]["mean"], 4), "f1_std": round(test["f1"]["std"], 4),
            "seeds": test["f1"]["n"]}


def _train_model(spec: ModelSpec, splits: dict, params: TrainParams, version: str) -> dict:
    runs, seed_scores, best = [], [], None
    for seed in params.seeds:
        run, trained, test_scores = _run_seed(spec, splits, params, seed)
        runs.append(run)
        seed_scores.append(test_scores)
        if best is None or run["dev"]["f1"] > best[0]["dev"]["f1"]:  # keep only the best-on-dev seed
            best = (run, trained, test_scores)
    best_run, trained, test_scores = best
    metrics = _model_metrics(spec, runs, best_run, trained, version)
    metrics["test"]["f1_ci"] = bootstrap_f1_interval(data.labels(splits["test"]), seed_scores)
    _write_plots(spec, splits["test"], test_scores, runs, params)
    saliency = _write_saliency(spec, trained, splits["test"], test_scores, params)
    card = model_card(spec, metrics, version, params)
    trained.save(params.models_dir / spec.name, extra={"data_version": version, "metrics": metrics["test"]},
                 card=card)
    metrics["saliency_report"] = saliency
    metrics["fingerprint"] = model_fingerprint(spec, params, version)
    write_json(params.metrics_dir / f"{spec.name}.json", metrics)
    test = metrics["test"]
    log.info("%s: test P %.4f R %.4f F1 %.4f ± %.4f (95%% CI %s) over %d seed(s), %d test sentences",
             spec.name, test["precision"]["mean"], test["recall"]["mean"], test["f1"]["mean"],
             test["f1"]["std"], test["f1_ci"], len(runs), test["sentences"])
    return _summary(metrics)


def _run_seed(spec: ModelSpec, splits: dict, params: TrainParams, seed: int):
    log.info("training %s (%s), seed %d", spec.name, spec.kind, seed)
    start = time.perf_counter()
    trained = fit_model(spec, splits["train"], splits["dev"], seed,
                        out_dir=params.checkpoints_dir / spec.name / f"seed{seed}",
                        live_dir=params.plots_dir / spec.name / "dvclive" / f"seed{seed}",
                        finished_dir=params.checkpoints_dir / FINISHED_FITS)
    train_seconds = time.perf_counter() - start
    dev = evaluate(trained, dev_sample(spec, splits["dev"], seed))
    test_scores = trained.predict_proba(splits["test"])
    test = metrics_for(splits["test"], test_scores)
    run = {"seed": seed, "test": test, "dev": dev, "train_seconds": round(train_seconds, 2),
           "history": trained.history, "stats": trained.stats}
    return run, trained, test_scores


def _model_metrics(spec: ModelSpec, runs: list[dict], best_run: dict, trained: TrainedModel,
                   version: str) -> dict:
    fields = sorted(best_run["test"]["per_field"])
    per_field = {f: aggregate_seeds([r["test"]["per_field"][f] for r in runs]) for f in fields}
    per_collection = {c: aggregate_seeds([r["test"]["per_collection"][c] for r in runs], TEST_KEYS)
                      for c in sorted(best_run["test"]["per_collection"])}
    return {
        "model": spec.name, "label": spec.label or spec.name, "kind": spec.kind,
        "encoder": spec.encoder if spec.kind in ("sentence", "context") else None,
        "data_version": version, "n_parameters": trained.n_parameters, "saved_seed": best_run["seed"],
        "test": {**aggregate_seeds([r["test"] for r in runs], TEST_KEYS), "sentences": best_run["test"]["n"]},
        "dev": aggregate_seeds([r["dev"] for r in runs]),
        "runtime_seconds": mean_std([r["train_seconds"] for r in runs]),
        "per_field": per_field,
        "per_collection": per_collection,
        "per_seed": runs,
    }


def _write_plots(spec: ModelSpec, test: list[dict], scores: np.ndarray, runs: list[dict],
                 params: TrainParams) -> None:
    """The saved model's test PR curve, per-sentence (actual, predicted) for DVC's confusion plot,
    and every seed's learning curve (dev F1 and PR AUC at each evaluation; none for models fitted in
    one go)."""
    out = params.plots_dir / spec.name
    columns = ["seed", "step", "dev_f1", "dev_pr_auc", "train_loss"]
    curve = [{"seed": run["seed"], **{k: entry.get(k) for k in columns[1:]}}
             for run in runs for entry in run["history"]]
    write_text(out / "learning_curve.csv", _csv(columns, curve))
    y = data.labels(test)
    rows = pr_curve_rows(y, scores)
    write_text(out / "pr_curve.csv", _csv(["threshold", "precision", "recall"], rows))
    names = {1: CITE_WORTHY, 0: NOT_CITE_WORTHY}
    pairs = [{"actual": names[int(a)], "predicted": names[int(p >= THRESHOLD)]}
             for a, p in zip(y, scores, strict=True)]
    write_text(out / "confusion.csv", _csv(["actual", "predicted"], pairs))


def _csv(columns: list[str], rows: list[dict]) -> str:
    return "\n".join([",".join(columns)] + [",".join(str(r[c]) for c in columns) for r in rows]) + "\n"


def _write_saliency(spec, trained, test, scores, params) -> str | None:
    from citeworth.models import saliency

    if not params.saliency_examples or not saliency.supports_saliency(trained):
        return None
    picks = saliency.pick_examples(scores, params.saliency_examples)
    groups = {group: [saliency.explain(trained, test, i) for i in idx] for group, idx in picks.items()}
    path = params.reports_dir / spec.name / "saliency.md"
    write_text(path, saliency.render_markdown(spec.label or spec.name, groups))
    return str(path)


def model_card(spec: ModelSpec, metrics: dict, version: str, params: TrainParams) -> str:
    """A Hugging Face style model card: what the model is, its data version, params and metrics."""
    test = metrics["test"]
    header = {"library_name": "transformers" if spec.kind != "tfidf_lr" else "sklearn",
              "tags": ["cite-worthiness", "citeworth", spec.kind],
              "metrics": ["precision", "recall", "f1"]}
    p, r, f = ("{mean:.4f} ± {std:.4f}".format(**test[k]) for k in ("precision", "recall", "f1"))
    lines = [
        "---", yaml.safe_dump(header, sort_keys=True).strip(), "---", "",
        f"# {spec.label or spec.name}: cite-worthiness detection", "",
        "Scores each sentence of a scientific paragraph: does it need a citation? Labels: "
        f"`{CITE_WORTHY}` (cite-worthy, class 1) and `{NOT_CITE_WORTHY}` (class 0), as in CiteWorth "
        "(Wright & Augenstein, 2021). Use `citeworth predict --model <this directory>`.", "",
        "## Data", "", f"- dataset: `{params.data_dir}` (train / dev / test JSONL)",
        f"- data version (sha256 of the split files): `{version}`", "",
        "## Metrics (test split, cite-worthy class)", "",
        "| seeds | precision | recall | F1 |", "|---|---|---|---|",
        f"| {test['f1']['n']} | {p} | {r} | {f} |", "",
        f"Saved weights: seed {metrics['saved_seed']} (best dev F1). "
        f"Parameters: {metrics['n_parameters']:,}.", "",
        "## Params", "", "```yaml", yaml.safe_dump(to_dict(spec), sort_keys=True).strip(), "```", "",
    ]
    return "\n".join(lines)
