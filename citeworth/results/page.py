"""The results page: what the stages wrote, as tables and charts a person would rather look at.

``build_page`` reads the result files of one version (``files.Files``) into a plain view model,
one section per stage output; a section whose file is absent is left out (``None``). ``render``
fills the Jinja2 template packaged here. Nothing is computed that the stages did not write, except
sums and shares of their counts: the files stay the one source of truth.

Every table carries ``n``: how many test items (sentences, pairs, examples) stand behind it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote

import yaml

from citeworth.core.schema import SPLITS
from citeworth.results.charts import CHARTS, bar_chart, chart_png
from citeworth.results.files import RUN_BRANCH_PREFIX, Files, Ref

SILVER_CUTOFF = "reports/silver/cutoff.json"
SILVER_DATA = "data/silver"
FAILURES_FILE = "failures.json"  # written into the Data Docs site by the validate stage
DOMAIN_FIGURES = (("heatmap.png", "F1 heatmap: train field × test field"),
                  ("pca.png", "Sentence embeddings by field (PCA, coloured by field)"))


@dataclass(frozen=True)
class ResultPaths:
    """Where the stages write what the page shows (their params.yaml values, else the defaults)."""

    dataset_stats: str = "reports/dataset_stats.json"
    duplicates: str = "reports/duplicates.json"
    quality_summary: str = "reports/quality/summary.json"
    data_docs: str = "reports/quality/site"
    models: str = "metrics/models.json"
    model_plots: str = "plots/models"
    domains: str = "metrics/domains.json"
    domain_plots: str = "plots/domains"
    transfer: str = "metrics/transfer.json"
    related_work: str = "reports/related_work_stats.json"
    findings: str = "metrics/findings.json"
    scaling: str = "metrics/scaling.json"
    scaling_plots: str = "plots/scaling"

    @classmethod
    def from_params(cls, params: dict) -> ResultPaths:
        def value(section: str, key: str, default: str) -> str:
            return str((params.get(section) or {}).get(key) or default)

        d = cls()
        return cls(
            dataset_stats=value("assemble", "stats_path", d.dataset_stats),
            duplicates=value("assemble", "duplicates_path", d.duplicates),
            quality_summary=value("validate", "summary_path", d.quality_summary),
            data_docs=value("validate", "site_dir", d.data_docs),
            models=value("report", "metrics_path", d.models),
            model_plots=value("train", "plots_dir", d.model_plots),
            domains=value("domains", "metrics_path", d.domains),
            domain_plots=value("domains", "plots_dir", d.domain_plots),
            transfer=value("transfer", "metrics_path", d.transfer),
            related_work=value("related_work", "stats_path", d.related_work),
            findings=str(((params.get("report") or {}).get("findings") or {}).get("path") or d.findings),
            scaling=value("scaling", "metrics_path", d.scaling),
            scaling_plots=value("scaling", "plots_dir", d.scaling_plots),
        )

    def image_dirs(self) -> tuple[str, ...]:
        """The folders whose images (and chart CSVs) the page may serve."""
        return (self.model_plots, self.domain_plots, self.scaling_plots)


@dataclass
class Page:
    version: str  # the version's label ("working copy" or a ref)
    refs: list[Ref]
    selected: str | None  # the ref shown, None for the working copy
    run: dict
    sections: dict[str, Any] = field(default_factory=dict)


def params_of(files: Files) -> dict:
    """The version's params.yaml ({} when it has none)."""
    return yaml.safe_load(files.read_text("params.yaml") or "{}") or {}


RunFinder = Callable[..., list[dict]]  # (tag=..., run_id=...) -> Airflow DAG runs, newest first


def build_page(files: Files, refs: list[Ref], head: str | None = None,
               find_runs: RunFinder | None = None) -> Page:
    """The page of one version. ``head``: the working copy's commit; ``find_runs``: the Airflow
    shell's lookup of DAG runs (dicts with dag_id, run_id, state, run_type, start_date, end_date)."""
    params = params_of(files)
    paths = ResultPaths.from_params(params)
    stats = files.read_json(paths.dataset_stats)
    test_split = ((stats or {}).get("splits") or {}).get("test") or {}
    page = Page(files.label, refs, files.ref, _run(files, params, refs, head, find_runs))
    page.sections = {
        "quality": _quality(files, paths),
        "dataset": _dataset(stats),
        "funnel": _funnel(stats, paths),
        "models": _models(files, paths, test_split),
        "findings": _findings(files.read_json(paths.findings)),
        "scaling": _scaling(files.read_json(paths.scaling), paths),
        "domains": _domains(files.read_json(paths.domains), paths),
        "transfer": _transfer(files.read_json(paths.transfer)),
        "silver": _silver(files),
        "related_work": _related_work(files.read_json(paths.related_work)),
    }
    return page


# --- the run ---------------------------------------------------------------------------------------


def _run(files: Files, params: dict, refs: list[Ref], head: str | None, find_runs: RunFinder | None) -> dict:
    """Source, release, date and commit of the version, and the Airflow runs behind it: the run that
    versioned a data tag (the working copy counts as the tag on its commit), the run a ``runs/``
    branch is named after, else the latest run of each DAG."""
    ref = next((r for r in refs if r.name == files.ref), None)
    if ref is None and head:
        ref = next((r for r in refs if r.commit == head and r.kind == "data version"), None)
    if ref is not None and ref.kind == "data version":
        _, source, release = ref.name.split("/", 2)
        query = {"tag": ref.name}
    else:
        download = params.get("download") or {}
        source, release = download.get("source"), download.get("release")
        query = {"run_id": ref.name.removeprefix(RUN_BRANCH_PREFIX)} if ref is not None else {}
    runs = [{**run, "url": f"../dags/{quote(run['dag_id'])}/runs/{quote(run['run_id'], safe='')}"}
            for run in (find_runs(**query) if find_runs else [])]
    # The working copy is the branch's: the results of runs on the defaults.
    return {"source": source, "release": release, "ref": ref, "airflow_runs": runs,
            "latest_runs": not query, "commit": ref.commit if ref else head,
            "results_of": ref.results_of if ref else "defaults",
            "experiment": ref is not None and ref.kind == "run"}


# --- the quality gate ------------------------------------------------------------------------------

# A failed expectation's keys; a version validated before failures.json existed has only the figures.
FAILURE_KEYS = {"why": "", "expectation": "", "rows": None, "unexpected_count": None,
                "unexpected_percent": None, "examples": [], "findings": None, "error": None}


def _quality(files: Files, paths: ResultPaths) -> dict | None:
    summary = files.read_json(paths.quality_summary)
    if summary is None:
        return None
    failures = files.read_json(f"{paths.data_docs}/{FAILURES_FILE}") or {}
    expectations = summary.get("expectations") or {}

    def failed(names: list[str]) -> list[dict]:
        return [{**FAILURE_KEYS, "name": name, **expectations.get(name, {}), **failures.get(name, {})}
                for name in names]

    residual = sorted((summary.get("residual_markers") or {}).items())
    markers = [{"check": check, **rates} for check, rates in residual]
    return {
        "success": summary.get("success"),
        "critical": failed(summary.get("critical_failures") or []),
        "warnings": failed(summary.get("warnings") or []),
        "checked": len(expectations),
        "passed": sum(1 for e in expectations.values() if e.get("success")),
        "rows": summary.get("rows") or {},
        "n": (summary.get("rows") or {}).get("sentences"),
        "markers": markers,
        "markers_removed": summary.get("markers_removed_percent") or {},
        "baseline_available": (summary.get("baseline") or {}).get("available"),
        "examples_recorded": bool(failures),
        "data_docs": f"{paths.data_docs}/index.html",
    }


# --- Table 2 and the funnel ------------------------------------------------------------------------

# Table 2's rows as the paper lays them out: (label, key in dataset_stats.json)
TABLE2_ROWS = (
    ("Sentences", "sentences"), ("Tokens", "tokens"), ("Cite-worthy", "cite_worthy"),
    ("Non-cite-worthy", "non_cite_worthy"), ("Cite-worthy share", "cite_worthy_share"),
    ("Min char length", "min_chars"), ("Max char length", "max_chars"), ("Average char length", "mean_chars"),
    ("Median char length", "median_chars"), ("Paragraphs", "paragraphs"), ("Papers", "papers"),
)
SHARES = {"cite_worthy_share"}


def _dataset(stats: dict | None) -> dict | None:
    if not stats or not stats.get("overall"):
        return None
    splits = stats.get("splits") or {}
    columns = [("all", stats["overall"])]
    columns += [(split, splits[split]) for split in SPLITS if split in splits]
    fields = sorted((stats.get("fields") or {}).items())
    return {
        "split_columns": [name for name, _ in columns],
        "field_columns": [name for name, _ in fields],
        "rows": [{"label": label, "share": key in SHARES,
                  "splits": [values.get(key) for _, values in columns],
                  "fields": [values.get(key) for _, values in fields]} for label, key in TABLE2_ROWS],
        "n": (splits.get("test") or {}).get("sentences"),
    }


def _funnel(stats: dict | None, paths: ResultPaths) -> dict | None:
    funnel = (stats or {}).get("funnel") or {}
    curation = funnel.get("curation")
    if not curation:
        return None
    # A version assembled before papers were resolved across sources has no duplicates' counts.
    duplicates = (stats or {}).get("duplicates")
    steps = [("papers read", curation.get("papers")), ("papers kept", curation.get("papers_kept")),
             ("one copy of each", (duplicates or {}).get("papers")),
             ("paragraphs read", curation.get("paragraphs")),
             ("in permitted sections", curation.get("paragraphs_in_sections")),
             ("candidates", curation.get("candidates")), ("paragraphs kept", curation.get("kept")),
             ("sentences kept", curation.get("sentences"))]
    steps = [(label, value) for label, value in steps if isinstance(value, int)]
    rejections = {f"{level}: {reason}": count for level in ("paper", "paragraph")
                  for reason, count in (curation.get(f"{level}s_rejected") or {}).items()}
    quarantined = funnel.get("quarantined") or {}
    return {
        "steps": bar_chart(steps),
        "rejections": bar_chart(sorted(rejections.items(), key=lambda item: (-item[1], item[0]))),
        "quarantined": sorted(quarantined.items()) if isinstance(quarantined, dict) else [],
        "shards": funnel.get("shards"),
        "n": curation.get("papers"),
        "duplicates": duplicates and {**duplicates, "report": paths.duplicates,
                                      "dropped_by_source": sorted(duplicates["dropped_by_source"].items())},
    }


# --- Table 4 ---------------------------------------------------------------------------------------


def _models(files: Files, paths: ResultPaths, test_split: dict) -> dict | None:
    models = files.read_json(paths.models)
    if not models:
        return None
    rows = []
    for name, m in sorted(models.items(), key=lambda item: (-(item[1].get("f1") or 0), item[0])):
        charts = {chart: f"{paths.model_plots}/{name}/{chart}.png" for chart in CHARTS
                  if files.read_bytes(f"{paths.model_plots}/{name}/{chart}.csv") is not None}
        rows.append({
            "name": name, "label": m.get("label", name), "kind": m.get("kind"), "seeds": m.get("seeds"),
            "precision": (m.get("precision"), m.get("precision_std")),
            "recall": (m.get("recall"), m.get("recall_std")), "f1": (m.get("f1"), m.get("f1_std")),
            "f1_ci": m.get("f1_ci"), "roc_auc": m.get("roc_auc"), "pr_auc": m.get("pr_auc"),
            "dev_f1": m.get("dev_f1"), "runtime_seconds": m.get("runtime_seconds"),
            "test_sentences": m.get("test_sentences", test_split.get("sentences")), "charts": charts,
        })
    best = max(models, key=lambda name: (models[name].get("dev_f1") or 0, name))
    return {"rows": rows, "n": test_split.get("sentences"), "n_positive": test_split.get("cite_worthy"),
            "has_interval": any(r["f1_ci"] for r in rows),
            "has_auc": any(r["roc_auc"] is not None or r["pr_auc"] is not None for r in rows),
            "best": models[best].get("label", best),
            "per_collection": sorted((models[best].get("per_collection") or {}).items())}


def _findings(findings: dict | None) -> dict | None:
    if not findings or not findings.get("findings"):
        return None
    return {"rows": findings["findings"], "n": findings.get("test_sentences")}


def _scaling(metrics: dict | None, paths: ResultPaths) -> dict | None:
    if not metrics or not metrics.get("curves"):
        return None
    return {"curves": list(metrics["curves"].values()), "n": metrics.get("test_sentences"),
            "train_sentences": metrics.get("train_sentences"),
            "figure": f"{paths.scaling_plots}/scaling.png"}


# --- Table 5 ---------------------------------------------------------------------------------------


def _domains(metrics: dict | None, paths: ResultPaths) -> dict | None:
    if not metrics or not metrics.get("matrix"):
        return None
    fields = metrics.get("fields") or sorted(metrics["matrix"])
    data = metrics.get("data") or {}

    def cell(train: str, test: str) -> dict:
        scores = (metrics["matrix"].get(train) or {}).get(test) or {}
        counts = ((data.get(train) or {}).get(test) or {}).get("test") or {}
        return {"f1": scores.get("f1"), "f1_std": scores.get("f1_std"), "n": counts.get("sentences"),
                "in_domain": train == test}

    rows = [{"field": train, "cells": [cell(train, test) for test in fields]} for train in fields]
    clusters = metrics.get("clusters") or {}
    return {
        "fields": fields, "rows": rows, "unit": metrics.get("group_by") or "field",
        "whole_target": (metrics.get("out_of_domain_test") or "all") == "all",
        "sigma": [(metrics.get("sigma") or {}).get(f) for f in fields],
        "rho": [(metrics.get("rho") or {}).get(f) for f in fields],
        "sigma_in_domain": metrics.get("sigma_in_domain"), "seeds": metrics.get("seeds") or [],
        "model": (metrics.get("model") or {}).get("label") or (metrics.get("model") or {}).get("kind"),
        "purity": clusters.get("purity"),
        "cluster_sentences": sum((clusters.get("sentences") or {}).values()),
        "figures": [(f"{paths.domain_plots}/{name}", caption) for name, caption in DOMAIN_FIGURES],
    }


# --- Table 6 ---------------------------------------------------------------------------------------


def _transfer(metrics: dict | None) -> dict | None:
    if not metrics or not metrics.get("tasks"):
        return None
    variants = metrics.get("variants") or []
    rows = []
    for name, task in metrics["tasks"].items():
        test = task.get("test") or {}
        best = max((test[v]["mean"] for v in variants if v in test), default=None)
        rows.append({"task": task.get("display", name), "metric": task.get("metric"),
                     "n": task.get("test_items"),
                     "cells": [{**(test.get(v) or {}), "best": (test.get(v) or {}).get("mean") == best}
                               for v in variants]})
    average = metrics.get("average") or {}
    return {"variants": variants, "rows": rows, "average": [average.get(v) for v in variants],
            "encoder": metrics.get("encoder"), "seeds": metrics.get("seeds") or [],
            "pretraining": metrics.get("pretraining") or {}}


# --- other corpora ---------------------------------------------------------------------------------


def _silver(files: Files) -> dict | None:
    cutoff = files.read_json(SILVER_CUTOFF)
    if cutoff is None:
        return None
    pairs = [(split, files.count_lines(f"{SILVER_DATA}/{split}.jsonl")) for split in SPLITS]
    gold = cutoff.get("gold") or {}
    return {"chosen": cutoff.get("chosen") or {}, "gold": gold, "rule": cutoff.get("rule"),
            "similarity": cutoff.get("similarity") or {}, "pairs": pairs,
            "n": gold.get("dev_pairs")}


RELATED_WORK_COLUMNS = (("papers", "papers"), ("with section", "papers_with_section"),
                        ("sentences", "sentences"), ("with citation", "share_sentences_with_citation"),
                        ("anchors", "anchors"), ("mapped", "share_anchors_mapped"),
                        ("cited papers", "cited_papers"), ("with title", "cited_with_title"),
                        ("with abstract", "cited_with_abstract"), ("bad records", "bad_records"))


def _related_work(stats: dict | None) -> dict | None:
    if not stats or "overall" not in stats:
        return None
    rows = [*(stats.get("per_source") or {}).items(), ("all", stats["overall"])]
    return {"columns": [label for label, _ in RELATED_WORK_COLUMNS],
            "rows": [{"source": source, "cells": [row.get(key) for _, key in RELATED_WORK_COLUMNS]}
                     for source, row in rows],
            "n": stats["overall"].get("sentences")}


# --- rendering -------------------------------------------------------------------------------------


@cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("citeworth.results", "templates"),
                      autoescape=select_autoescape(default=True), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(number=number, percent=percent, score=score, duration=duration, tojson_pretty=_pretty)
    return env


def render(page: Page, base: str = ".") -> str:
    """The HTML page; ``base`` prefixes the page's own links (images, Data Docs, stylesheet), relative
    to the page so that Airflow may serve it under any base URL."""
    return _environment().get_template("page.html.j2").render(page=page, s=page.sections, base=base)


def number(value: Any, digits: int = 1) -> str:
    """An int with thousands separators, a float with ``digits`` decimals, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.{digits}f}"


def percent(share: float | None, digits: int = 1) -> str:
    """A share (0..1) as a percent."""
    return "–" if share is None else f"{100 * share:.{digits}f}%"


def score(value: float | None) -> str:
    """A score (0..1) ×100, as the paper's tables print them."""
    return "–" if value is None else f"{100 * value:.2f}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _pretty(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def image(files: Files, relative: str) -> bytes | None:
    """An image the page links: a PNG a stage wrote under a plot folder, or a chart drawn from the
    CSV beside it (``<chart>.png`` from ``<chart>.csv``). None for anything else."""
    paths = ResultPaths.from_params(params_of(files))
    if not relative.endswith(".png") or not any(relative.startswith(f"{d}/") for d in paths.image_dirs()):
        return None
    stored = files.read_bytes(relative)
    if stored is not None:
        return stored
    stem = relative.rsplit("/", 1)[-1].removesuffix(".png")
    data = files.read_bytes(relative.removesuffix(".png") + ".csv") if stem in CHARTS else None
    return None if data is None else chart_png(stem, data)
