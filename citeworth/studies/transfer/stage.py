"""The transfer stage (§6, Table 6): is cite-worthiness a useful pre-training signal?

From a base encoder (the embedded default; SciBERT in paper mode) the variants LM, Cite and LMCite
are pre-trained on the curated CiteWorth sentences (``pretrain``); then Base and the variants are
fine-tuned on the downstream tasks (``tasks``, ``downstream``) over several seeds.
``metrics/transfer.json`` and ``reports/table6.md`` hold mean ± std per task and variant
(``tables``). Every pre-trained variant and every (task, variant, seed) run is fingerprinted by its
inputs and params, so a rerun redoes only what changed.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.fingerprint import current_record, data_version, digest, fingerprint
from citeworth.core.io import write_json, write_text
from citeworth.core.params import to_dict
from citeworth.core.threads import torch_threads
from citeworth.models.evaluation import rounded
from citeworth.studies.transfer.downstream import fine_tune
from citeworth.studies.transfer.params import TransferParams
from citeworth.studies.transfer.pretrain import CODE, OBJECTIVES, pretrain_variant
from citeworth.studies.transfer.tables import BASE, aggregate, table6
from citeworth.studies.transfer.tasks import TaskData, TaskSpec, load_task, resolve_task, task_files

log = logging.getLogger(__name__)


def transfer(params: TransferParams) -> dict:
    unknown = sorted(set(params.variants) - set(OBJECTIVES))
    if unknown:
        raise StageFailed(f"unknown transfer variant(s) {unknown}; variants: {', '.join(OBJECTIVES)}")
    tasks = [resolve_task(t) for t in params.downstream.tasks]
    for task in tasks:
        missing = [str(p) for p in task_files(params.downstream.data_root, task) if not p.exists()]
        if missing:
            raise StageFailed(f"task {task.name}: missing {', '.join(missing)} (run the download stage, or "
                              "point transfer.downstream.data_root at the SciBERT benchmark's data folder)")
    with torch_threads(params.threads):
        pretrained = {name: pretrain_variant(name, params) for name in params.variants}
        encoders_by_variant = {BASE: (params.encoder, digest({"encoder": params.encoder}))}
        encoders_by_variant.update({name: (str(Path(params.models_dir) / name), info["fingerprint"])
                                    for name, info in pretrained.items()})
        loaded: dict[str, TaskData] = {}  # each task's files are read once, and only if a run needs them
        results = {task.name: {variant: [run_downstream(task, variant, encoder, version, seed, params, loaded)
                                         for seed in params.downstream.seeds]
                               for variant, (encoder, version) in encoders_by_variant.items()}
                   for task in tasks}
    metrics = aggregate(tasks, results, pretrained, params)
    write_json(Path(params.metrics_path), metrics)
    write_text(Path(params.table_path), table6(metrics))
    return {"average": metrics["average"], "tasks": {t: m["test"] for t, m in metrics["tasks"].items()}}


def run_downstream(task: TaskSpec, variant: str, encoder: str, encoder_fingerprint: str, seed: int,
                   params: TransferParams, loaded: dict[str, TaskData]) -> dict:
    """Fine-tune ``encoder`` on ``task`` with ``seed``, or reuse the run's result if up to date."""
    ds = params.downstream
    expected = fingerprint(CODE, task=asdict(task), encoder=encoder_fingerprint, seed=seed,
                           finetune=to_dict(ds.finetune), data=data_version(task_files(ds.data_root, task)),
                           threads=params.threads)  # they may change float sums
    path = Path(params.runs_dir) / task.name / f"{variant}-seed{seed}.json"
    if (result := current_record(path, expected)) is not None:
        return result
    log.info("transfer: fine-tuning %s on %s, seed %d", variant, task.name, seed)
    if task.name not in loaded:
        loaded[task.name] = load_task(ds.data_root, task)
    scores = fine_tune(encoder, loaded[task.name], ds.finetune, seed)
    result = {"task": task.name, "variant": variant, "seed": seed, "metric": task.metric,
              "fingerprint": expected, **rounded(scores)}
    write_json(path, result)
    return result
