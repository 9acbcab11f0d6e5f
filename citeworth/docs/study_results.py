"""The study's results page of the documentation (docs/study-results.md), generated from
``benchmarks/results/study.json`` (written by ``python benchmarks/study.py --run``) by
``python -m citeworth.docs.reference --write``: every figure on it comes from that file, the
command, machine and date it records shown above them, and the figures the benchmark copied to
``docs/assets/study/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STUDY_RESULTS = Path("benchmarks/results/study.json")
GPU_RESULTS = Path("benchmarks/results/study_gpu.json")  # benchmarks/study_gpu.py, where a GPU is lent
FIGURES = "assets/study"


def study_results_page(root: Path) -> str | None:
    """The page, or None when the study has not been benchmarked yet."""
    path = root / STUDY_RESULTS
    if not path.is_file():
        return None
    study = json.loads(path.read_text(encoding="utf-8"))
    sections = [
        _header(study),
        _cost(study),
        _dataset(study),
        _table4(study),
        _findings(study),
        _gpu(study, root),
        _per_collection(study),
        _scaling(study, root),
        _table5(study, root),
        _stages(study),
    ]
    return "\n".join(section for section in sections if section)


def _section(heading: str, *parts: str) -> str:
    """A page section: its ``## heading``, then its paragraphs and tables."""
    return "\n".join([f"## {heading}\n", *parts])


def _percent(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def _number(value: Any) -> str:
    return "–" if value is None else f"{value:,}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    return (
        "\n".join(
            [
                "| " + " | ".join(header) + " |",
                "|" + "---|" * len(header),
                *("| " + " | ".join(row) + " |" for row in rows),
            ]
        )
        + "\n"
    )


def _header(study: dict) -> str:
    machine = study.get("machine") or {}
    return "\n".join(
        [
            f"<!-- Generated from `{STUDY_RESULTS}` by `python -m citeworth.docs.reference --write`: run "
            f"`{study['command']}` to measure again, not edit this page. -->",
            "# Study results\n",
            f"Every figure below is from `{STUDY_RESULTS}`, written by `{study['command']}` on "
            f"{study['date']} at commit `{study['commit'][:12]}` ({machine.get('cores')} cores, "
            f"{machine.get('cpu')}, {machine.get('memory_gb')} GB, Python {machine.get('python')}). "
            "What the study is and how to run it: [Study at scale](study.md).\n",
        ]
    )


def _cost(study: dict) -> str:
    run, curation, projection = (
        study.get("make_study") or {},
        study["curation"],
        study.get("projection_s2orc"),
    )
    lines = ["## Cost\n"]
    if run.get("fresh_clone"):
        lines.append(
            f"`make study` from a fresh clone: **{run['wall_s'] / 60:.1f} minutes** wall "
            f"({run['cpu_s'] / 60:.1f} CPU minutes), exit status {run['returncode']}, setup included; "
            f"load average {run['load_average_before'][0]} before, {run['load_average_after'][0]} after.\n"
        )
    elif run:
        failed = ", ".join(
            f"{stage} failed (exit {cost['returncode']} after {cost['wall_s'] / 60:.1f} minutes)"
            for stage, cost in sorted(run.get("failed_before", {}).items()))
        lines.append(
            "**Not a fresh-clone time.** The fresh clone's `make study` stopped: "
            f"{failed or 'no stage failed'}; "
            f"`python benchmarks/study.py --resume` ran it again at commit "
            f"`{run['commit'][:12]}`, every finished stage reused: {run['wall_s'] / 60:.1f} minutes wall "
            f"({run['cpu_s'] / 60:.1f} CPU minutes), exit status {run['returncode']}. Each stage's own "
            "cost is in the last table.\n"
        )
    demo = curation.get("demo") or {}
    lines.append(
        f"Curation read **{_number(curation['papers_read'])}** papers in {curation['shards']} shards and "
        f"kept {_number(curation['papers_kept'])} ({_number(curation['sentences'])} sentences); "
        f"{curation['cpu_s']} CPU s, **{curation['papers_per_cpu_s']} papers per CPU second** "
        f"against the demo's {demo.get('papers_per_cpu_s')} measured in the same run "
        f"({demo.get('papers_read')} papers, {demo.get('cpu_s')} CPU s): "
        f"{curation.get('ratio_to_demo')}×. Papers rejected as having no field of study: "
        f"{_percent(curation['no_fields_of_study_share'])}% of those read.\n"
    )
    if projection:
        lines.append(
            f"Projected linearly to S2ORC's {_number(projection['papers'])} papers, the data stages "
            f"take {projection['total_cpu_hours']:,} CPU hours: {projection['hours_on_2_cores']:,} "
            f"hours on this machine's 2 cores, {projection['hours_on_64_cores']:,} on 64 "
            f"(per stage: "
            + ", ".join(f"{k} {v:,} h" for k, v in projection["cpu_hours"].items())
            + f"). It assumes {projection['assumes']}.\n"
        )
    return "\n".join(lines)


def _dataset(study: dict) -> str:
    dataset, gate = study["dataset"], study["gate"]
    overall, splits, fields = dataset["overall"], dataset["splits"], dataset["fields"]
    columns = ["all", *splits, *fields]
    source = {"all": overall, **splits, **fields}
    keys = [
        ("papers", "Papers"),
        ("paragraphs", "Paragraphs"),
        ("sentences", "Sentences"),
        ("cite_worthy", "Cite-worthy"),
        ("cite_worthy_share", "Cite-worthy share"),
    ]

    def cell(column: str, key: str) -> str:
        value = (source[column] or {}).get(key)
        return f"{100 * value:.1f}%" if key.endswith("share") and value is not None else _number(value)

    duplicates = dataset.get("duplicates") or {}
    residual = gate.get("residual_markers") or {}
    return _section(
        "Table 2: the dataset",
        _table(["", *columns], [[label, *(cell(c, key) for c in columns)] for key, label in keys]),
        f"One record per paper: {_number(duplicates.get('copies'))} copies of "
        f"{_number(duplicates.get('papers'))} papers, "
        f"{_number(duplicates.get('papers_in_several_copies'))} "
        f"in several copies (`reports/duplicates.json`). Quality gate: "
        f"**{'passed' if gate.get('success') else 'failed'}**"
        f"{'' if not gate.get('warnings') else ' with warnings: ' + ', '.join(gate['warnings'])}; "
        "residual "
        "citation markers (ours): "
        + ", ".join(f"{name} {values.get('ours_percent')}%" for name, values in sorted(residual.items()))
        + ".\n",
    )


def _table4(study: dict) -> str:
    rows = []
    for name, m in sorted(study["table4"].items(), key=lambda item: -(item[1].get("f1") or 0)):
        low, high = m.get("f1_ci") or (None, None)
        rows.append(
            [
                f"{m['label']} (`{name}`)",
                *_scores(m),
                f"±{100 * (high - low) / 2:.2f}" if low is not None else "–",
                _percent(m.get("roc_auc")),
                _percent(m.get("pr_auc")),
                _percent(m.get("dev_f1")),
                f"{m.get('runtime_seconds', 0) / 60:.1f} min",
            ]
        )
    return _section(
        "Table 4: cite-worthiness detection",
        "Cite-worthy class on the study's test split (×100), one seed; the 95% interval when the test "
        "sentences are drawn again with replacement (1,000 draws) and its half width; ROC AUC and PR AUC "
        "of the scores; the budgets each model trained within are in `params/study.yaml`.\n",
        _table(
            ["Method", "P", "R", "F1", "F1 95% CI", "±", "ROC AUC", "PR AUC", "dev F1", "train time"],
            rows,
        ),
    )


def _scores(m: dict) -> list[str]:
    """A model's P, R, F1 (bold) and F1 95% interval cells, ×100."""
    low, high = m.get("f1_ci") or (None, None)
    return [
        _percent(m.get("precision"), 2),
        _percent(m.get("recall"), 2),
        f"**{_percent(m.get('f1'), 2)}**",
        f"{_percent(low)}–{_percent(high)}",
    ]


def _findings(study: dict) -> str:
    rows = [
        [
            f["claim"],
            f"**{f['verdict']}**",
            f["metric"],
            "; ".join(
                f"{p['better']} − {p['worse']}: {p['difference']:+.2f} "
                f"({p['ci'][0]:+.2f} to {p['ci'][1]:+.2f})"
                for p in f["pairs"]
            ),
        ]
        for f in study.get("findings") or []
    ]
    return _section(
        "The paper's findings on this data",
        "Each claim of the paper's §5 judged by a paired bootstrap over the test sentences: "
        "shown when every difference's 95% interval lies above 0, reversed when every one lies "
        "below, not shown otherwise (`reports/findings.md`).\n",
        _table(["Finding (the paper)", "Here", "Score", "Differences ×100 (95% CI)"], rows),
    )


def _gpu(study: dict, root: Path) -> str:
    """The MiniLM models again with the paper's budgets on a GPU, beside their CPU-budget rows."""
    path = root / GPU_RESULTS
    if not path.is_file():
        return ""
    gpu = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for name, m in sorted(gpu["models"].items(), key=lambda item: -(item[1].get("f1") or 0)):
        cpu_f1 = (study["table4"].get(name) or {}).get("f1")
        if "f1" not in m:
            rows.append([f"`{name}`", m["status"], *["–"] * 7, _percent(cpu_f1, 2)])
            continue
        rows.append(
            [
                f"{m['label']} (`{name}`)",
                m["status"],
                *_scores(m),
                _percent(m["roc_auc"]),
                _percent(m["pr_auc"]),
                f"{m['train_seconds'] / 60:.1f} min",
                _percent(cpu_f1, 2),
            ]
        )
    return _section(
        "On a GPU with the paper's budgets",
        f"`{GPU_RESULTS}`, written by `{gpu['command']}` on {gpu['date']} at commit `{gpu['commit'][:12]}` "
        f"({gpu['device']}, torch {gpu['machine']['torch']}): the MiniLM models of `params/study-gpu.yaml` "
        "on every training sentence for the paper's three epochs, side by side on the one GPU, tested on "
        f"{_gpu_split(study, gpu)} {gpu['note']} Intervals as in Table 4; no paired test (the "
        "per-sentence scores stayed on the GPU host).\n",
        _table(["Method", "Run", "P", "R", "F1", "F1 95% CI", "ROC AUC", "PR AUC", "train time",
                "F1 in Table 4 (CPU budget)"], rows),
    )


def _gpu_split(study: dict, gpu: dict) -> str:
    """Whether the GPU rows were tested on Table 4's test split (judged by its size), said plainly."""
    sizes = [{m.get("test_sentences") for m in models.values()} - {None}
             for models in (study["table4"], gpu["models"])]
    if sizes[0] == sizes[1]:
        return "the same test split."
    table4, theirs = (", ".join(map(_number, sorted(size))) for size in sizes)
    return (f"**the test split of an earlier build of the study** ({theirs} sentences; Table 4's has "
            f"{table4}): its rows show what the paper's budgets do, not a row-by-row comparison with "
            "Table 4, until the GPU run is repeated on this build.")


def _per_collection(study: dict) -> str:
    best = study.get("best_model")
    scores = (study["table4"].get(best) or {}).get("per_collection") or {}
    rows = [
        [name, _percent(s.get("f1")), _percent(s.get("roc_auc"), 2), _percent(s.get("pr_auc"), 2)]
        for name, s in sorted(scores.items())
    ]
    return (
        "\n".join(
            [
                "## The best model on each collection\n",
                f"The model `citeworth check --model study` uses, the best by dev F1 "
                f"({study['table4'][best]['label']}, `{best}`), on the test sentences of each collection "
                "the study reads.\n",
                _table(["Collection", "F1", "ROC AUC", "PR AUC"], rows),
            ]
        )
        if best
        else ""
    )


def _scaling(study: dict, root: Path) -> str:
    scaling = study.get("scaling")
    if not scaling:
        return ""
    rows = [
        [
            curve["label"],
            _number(p["train_sentences"]),
            _percent(p["f1"], 2),
            f"{_percent(p['f1_ci'][0])}–{_percent(p['f1_ci'][1])}",
            _percent(p["roc_auc"]),
            _percent(p["pr_auc"]),
        ]
        for curve in scaling["curves"].values()
        for p in curve["points"]
    ]
    figure = (
        f"![F1 and ROC AUC against training sentences]({FIGURES}/scaling.png)\n"
        if (root / "docs" / FIGURES / "scaling.png").is_file()
        else ""
    )
    return _section(
        "Does more data pay? The scaling curve",
        f"Each point trains on a seeded sample of the {_number(scaling['train_sentences'])} training "
        f"sentences (smaller samples inside larger ones) and tests on all "
        f"{_number(scaling['test_sentences'])} test "
        "sentences. Where a curve still climbs at its right end, more data pays.\n",
        figure,
        _table(["Model", "Training sentences", "F1", "F1 95% CI", "ROC AUC", "PR AUC"], rows),
    )


def _table5(study: dict, root: Path) -> str:
    table5 = study.get("table5") or {}
    fields = table5.get("fields")
    if not fields:
        return ""
    unit = table5.get("group_by") or "field"
    rows = [[a, *(_percent(table5["matrix"][a][b]["f1"], 2) for b in fields)] for a in fields]
    rows.append(["σ", *(_percent(table5["sigma"][b], 2) for b in fields)])
    data = table5.get("data") or {}
    train = [
        f"{a} {_number(((data.get(a) or {}).get(a) or {}).get('train', {}).get('sentences'))}" for a in fields
    ]
    figure = (
        f"![F1 heatmap]({FIGURES}/heatmap.png)\n"
        if (root / "docs" / FIGURES / "heatmap.png").is_file()
        else ""
    )
    model = table5.get("model") or {}
    whole = table5.get("out_of_domain_test") == "all"
    tested = "all of it" if whole else "its test papers, the same in every row"
    budget = model.get("max_train_sentences") or "all"
    return _section(
        f"Table 5: F1 across {unit}s",
        f"Rows: the {unit} the model trained on ({model.get('label') or model.get('kind')}, {budget} "
        f"training sentences each); columns: the {unit} it was tested on ({tested}). "
        f"Training sentences available per {unit}: {', '.join(train)}.\n",
        _table(["train \\ test", *fields], rows),
        figure,
    )


def _stages(study: dict) -> str:
    rows = [
        [f"`{name}`", f"{cost['wall_s']:,.0f}", f"{cost['cpu_s']:,.0f}", f"{cost['peak_rss_mb']:,.0f}"]
        for name, cost in sorted(study["stages"].items(), key=lambda item: -item[1]["cpu_s"])
    ]
    totals = study["stage_totals"]
    rows.append(
        ["all stages", f"{totals['wall_s']:,.0f}", f"{totals['cpu_s']:,.0f}", f"{totals['peak_rss_mb']:,.0f}"]
    )
    return _section(
        "Every stage's cost",
        "Wall and CPU seconds (the stage's whole process tree) and peak resident memory of its "
        "largest process, from the kernel's accounting when the stage's process ended "
        "(`logs/<stage>.cost.json` in the study's workspace); stages ran two at a time.\n",
        _table(["stage", "wall s", "CPU s", "peak RSS MB"], rows),
    )
