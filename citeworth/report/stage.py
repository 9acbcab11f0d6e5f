"""The ``report`` stage: every ``metrics/models/<name>.json`` into ``metrics/models.json`` and Table 4.

Table 4 lists P / R / F1 of the cite-worthy class (×100, mean ± std over seeds, as the paper) with a
bootstrap 95% interval of F1 over the test sentences, ROC AUC and PR AUC, the number of test
sentences and the training runtime, with the paper's F1 beside each row that has a counterpart. The
reports of the studies (Table 5: domains, Table 6: transfer) are linked by their paths: the report
does not wait for those stages, and its bytes do not depend on whether they ran first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import Field

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_json, write_text
from citeworth.core.params import Params
from citeworth.report.findings import FindingsParams, check_claims, findings_table, predictions

# The paper's Table 4 test F1 (SciBERT/Longformer rows: the same recipe on the bigger encoders).
PAPER_F1 = {
    "tfidf_lr": 54.28, "crnn": 56.41, "transformer": 57.39, "sentence_noweight": 57.91,
    "sentence": 62.06, "pu": 61.73, "solo": 62.14, "context": 67.45,
}


class ReportParams(Params):
    metrics_dir: Path
    """Every model's metrics (the train stage's metrics_dir)."""
    metrics_path: Path
    """All models' summary rows (JSON)."""
    table_path: Path
    """Table 4 (Markdown)."""
    order: list[str] = Field(default_factory=lambda: list(PAPER_F1))
    """row order; others follow by name"""
    paper_f1: dict[str, float] = Field(default_factory=lambda: dict(PAPER_F1))
    """model name -> paper F1"""
    related: list[Path] = Field(default_factory=lambda: [Path("reports/table5.md"),
                                                          Path("reports/table6.md")])
    """linked from the table (written by other stages, maybe later)"""
    findings: FindingsParams | None
    """the paper's findings checked on the test predictions (report/findings.py); null: none"""


def load_model_metrics(metrics_dir: Path) -> dict[str, dict]:
    files = sorted(Path(metrics_dir).glob("*.json"))
    if not files:
        raise StageFailed(f"no model metrics in {metrics_dir}/*.json: run the train stage first")
    return {path.stem: json.loads(path.read_text()) for path in files}


def summary_row(metrics: dict) -> dict:
    """One model's line of ``metrics/models.json``: test P/R/F1, ROC AUC and PR AUC (mean and std over
    seeds; None where undefined), F1's bootstrap 95% interval, test sentences, dev F1 (what
    ``citeworth check`` picks its default model by), runtime, and F1, ROC AUC and PR AUC on the
    test sentences of each collection (eLife, PLOS, ...)."""
    test = metrics["test"]
    row = {"label": metrics["label"], "kind": metrics["kind"], "seeds": test["f1"]["n"]}
    for key in ("precision", "recall", "f1", "roc_auc", "pr_auc"):
        row[key], row[f"{key}_std"] = (_round(test[key][part]) for part in ("mean", "std"))
    row["f1_ci"] = [round(bound, 4) for bound in test["f1_ci"]]
    row["test_sentences"] = test["sentences"]
    row["dev_f1"] = round(metrics["dev"]["f1"]["mean"], 4)
    row["runtime_seconds"] = round(metrics["runtime_seconds"]["mean"], 1)
    row["per_collection"] = {name: {key: _round(scores[key]["mean"]) for key in ("f1", "roc_auc", "pr_auc")}
                             for name, scores in (metrics.get("per_collection") or {}).items()}
    return row


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def ordered(names: list[str], order: list[str]) -> list[str]:
    return [n for n in order if n in names] + sorted(n for n in names if n not in order)


def table4(all_metrics: dict[str, dict], params: ReportParams) -> str:
    base = params.table_path.parent
    lines = ["# Table 4: cite-worthiness detection on the CiteWorth test split", "",
             "Precision, recall and F1 of the cite-worthy class (×100), mean ± std over seeds, and F1's "
             "95% interval when the test sentences are drawn again with replacement (1,000 draws; the "
             "interval of the seed mean); ROC AUC and PR AUC (average precision) of the scores, ×100; "
             "runtime is the mean training time per seed. *Paper F1*: the paper's Table 4 for the same "
             "recipe (its encoders: SciBERT / Longformer, the full dataset, 5 seeds, 118,185 test "
             "sentences).", "",
             "| Method | Encoder | Seeds | Test sentences | P | R | F1 | F1 95% CI | ROC AUC | PR AUC "
             "| Runtime | Paper F1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in ordered(list(all_metrics), params.order):
        m, test = all_metrics[name], all_metrics[name]["test"]
        p, r, f, roc, pr = (_percent(test[k]) for k in ("precision", "recall", "f1", "roc_auc", "pr_auc"))
        low, high = test["f1_ci"]
        paper = f"{params.paper_f1[name]:.2f}" if name in params.paper_f1 else "–"
        lines.append(f"| {m['label']} | {m.get('encoder') or '–'} | {test['f1']['n']} | "
                     f"{test['sentences']:,} | {p} | {r} | {f} | {100 * low:.1f}–{100 * high:.1f} | "
                     f"{roc} | {pr} | "
                     f"{_duration(m['runtime_seconds']['mean'])} | {paper} |")
    details = (f"[{n}]({_link(params.metrics_dir / f'{n}.json', base)})" for n in sorted(all_metrics))
    lines += ["", "Per-model details (per field, per seed, dev F1, training history): " + ", ".join(details)]
    saliency = {n: m["saliency_report"] for n, m in sorted(all_metrics.items()) if m.get("saliency_report")}
    if saliency:
        lines += ["", "Saliency (InputXGradient) of the most / least confident test sentences: "
                  + ", ".join(f"[{n}]({_link(Path(p), base)})" for n, p in saliency.items())]
    if params.findings is not None:
        lines += ["", f"The paper's findings on these predictions: [{params.findings.table_path}]"
                  f"({_link(params.findings.table_path, base)})"]
    if params.related:
        lines += ["", "Related reports: " + ", ".join(f"[{p}]({_link(p, base)})" for p in params.related)]
    return "\n".join(lines) + "\n"


def _percent(stats: dict) -> str:
    """"mean ± std" ×100, or "–" where the score is undefined (the test split holds one class)."""
    if stats["mean"] is None:
        return "–"
    return f"{100 * stats['mean']:.2f} ± {100 * stats['std']:.2f}"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}h{minutes:02d}m{secs:02d}s"


def _link(target: Path, base: Path) -> str:
    return Path(os.path.relpath(target, base)).as_posix()


def report(params: ReportParams) -> dict:
    """Aggregate the per-model metrics into ``metrics/models.json`` and the Markdown Table 4."""
    all_metrics = load_model_metrics(params.metrics_dir)
    summary = {name: summary_row(m) for name, m in all_metrics.items()}
    write_json(params.metrics_path, summary)
    write_text(params.table_path, table4(all_metrics, params))
    result = {"models": len(summary), "table": str(params.table_path),
              "f1": {name: row["f1"] for name, row in sorted(summary.items())}}
    if params.findings is not None:
        result["findings"] = write_findings(params.findings, sorted(all_metrics))
    return result


def write_findings(params: FindingsParams, models: list[str]) -> dict[str, str]:
    """The paper's claims judged on the test predictions of ``models``: claim -> verdict."""
    actual, predicted = predictions(params.plots_dir, models)
    results = check_claims(params.claims, actual, predicted, params.seed)
    write_json(params.path, {"test_sentences": int(len(actual)), "findings": results})
    write_text(params.table_path, findings_table(results, len(actual)))
    return {result["claim"]: result["verdict"] for result in results}
