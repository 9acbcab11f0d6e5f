"""Table 6: downstream scores per task and variant (mean ± std over seeds), as Markdown and JSON."""

from __future__ import annotations

import numpy as np

from citeworth.models.evaluation import mean_std, rounded
from citeworth.studies.transfer.params import TransferParams
from citeworth.studies.transfer.tasks import TaskSpec

BASE = "Base"  # the base encoder, fine-tuned downstream without pre-training on CiteWorth


def aggregate(tasks: list[TaskSpec], results: dict, pretrained: dict, params: TransferParams) -> dict:
    variants = [BASE, *params.variants]
    per_task = {}
    for task in tasks:
        runs = results[task.name]
        per_task[task.name] = {
            "display": task.display, "metric": task.metric,
            # every run of a task scores the same test examples (sentences for the NER tasks)
            "test_items": runs[BASE][0].get("test_items"),
            "test": {v: rounded(mean_std([r["test"] for r in runs[v]])) for v in variants},
            "dev": {v: rounded(mean_std([r["dev"] for r in runs[v]])) for v in variants},
        }
    average = {v: round(float(np.mean([per_task[t.name]["test"][v]["mean"] for t in tasks])), 6)
               for v in variants} if tasks else {}
    return {"encoder": params.encoder, "variants": variants, "seeds": list(params.downstream.seeds),
            "tasks": per_task, "average": average,
            "pretraining": {name: {k: info[k] for k in ("train_sentences", "steps", "train_loss", "dev")}
                            for name, info in pretrained.items()}}


def table6(metrics: dict) -> str:
    variants = metrics["variants"]
    lines = [
        "# Table 6: transfer to downstream tasks",
        "",
        f"Base encoder `{metrics['encoder']}`; test scores ×100, mean ± std over seeds "
        f"{metrics['seeds']}; the best mean of each row in bold.",
        "",
        "| Dataset | Metric | " + " | ".join(variants) + " |",
        "|---|---|" + "---:|" * len(variants),
    ]
    for task in metrics["tasks"].values():
        cells = {v: task["test"][v] for v in variants}
        best = max(c["mean"] for c in cells.values())
        row = [_cell(c["mean"], c["std"], c["mean"] == best) for c in cells.values()]
        lines.append(f"| {task['display']} | {task['metric']} | " + " | ".join(row) + " |")
    if metrics["average"]:
        best = max(metrics["average"].values())
        row = [_cell(metrics["average"][v], None, metrics["average"][v] == best) for v in variants]
        lines.append("| Average | | " + " | ".join(row) + " |")
    lines += ["", "Pre-training (dev split):", ""]
    for name, info in metrics["pretraining"].items():
        dev = info["dev"]
        parts = [f"{info['steps']} steps on {info['train_sentences']} sentences"]
        if "mlm_loss" in dev:
            parts.append(f"dev MLM loss {dev['mlm_loss']:.3f}")
        if "cite" in dev:
            parts.append(f"dev cite-worthiness F1 {100 * dev['cite']['f1']:.2f}")
        lines.append(f"- {name}: " + ", ".join(parts))
    return "\n".join(lines) + "\n"


def _cell(mean: float, std: float | None, bold: bool) -> str:
    text = f"{100 * mean:.2f}" + ("" if std is None else f" ± {100 * std:.2f}")
    return f"**{text}**" if bold else text
