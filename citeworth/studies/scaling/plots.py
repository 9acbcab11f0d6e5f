"""The scaling curves as a CSV (DVC plots), a PNG (two panels: F1 and ROC AUC) and a Markdown table."""

from __future__ import annotations

from pathlib import Path

from citeworth.core.io import atomic_write

COLUMNS = ("curve", "train_sentences", "f1", "roc_auc", "pr_auc")


def points_csv(curves: dict) -> str:
    rows = [",".join(COLUMNS)]
    for name, curve in curves.items():
        rows += [",".join(str(value) for value in (name, *(point[k] for k in COLUMNS[1:])))
                 for point in curve["points"]]
    return "\n".join(rows) + "\n"


def points_table(metrics: dict) -> str:
    lines = ["# Data scaling: test scores against training sentences", "",
             f"Every point tests on all {metrics['test_sentences']:,} test sentences; the training split "
             f"holds {metrics['train_sentences']:,}. Each point trains on a seeded sample of whole training "
             f"paragraphs (seed {metrics['seed']}; a smaller sample is part of every larger one). F1 ×100 "
             "of the cite-worthy class with its 95% bootstrap interval.", "",
             "| model | training sentences | F1 | 95% CI | ROC AUC | PR AUC |",
             "|---|---:|---:|---|---:|---:|"]
    for curve in metrics["curves"].values():
        for p in curve["points"]:
            low, high = p["f1_ci"]
            lines.append(f"| {curve['label']} | {p['train_sentences']:,} | {100 * p['f1']:.2f} | "
                         f"{100 * low:.1f}–{100 * high:.1f} | {_ratio(p['roc_auc'])} | "
                         f"{_ratio(p['pr_auc'])} |")
    return "\n".join(lines) + "\n"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def curve_figure(curves: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, panels = plt.subplots(1, 2, figsize=(10, 4))
    for (key, title), axes in zip((("f1", "F1 (cite-worthy) ×100"), ("roc_auc", "ROC AUC ×100")), panels,
                                  strict=True):
        for curve in curves.values():
            points = [p for p in curve["points"] if p[key] is not None]
            axes.plot([p["train_sentences"] for p in points], [100 * p[key] for p in points], marker="o",
                      label=curve["label"])
        axes.set_xscale("log")
        axes.set_xlabel("training sentences (log scale)")
        axes.set_title(title)
        axes.grid(True, alpha=0.3)
    panels[0].legend()
    figure.suptitle("Does more data pay? Test scores against training-set size")
    figure.tight_layout()
    with atomic_write(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=110, metadata={"Software": None})
    plt.close(figure)
