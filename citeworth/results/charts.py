"""Charts of the results page, drawn on the server: bar charts as inline SVG geometry (the template
draws them, so they need no request and no JavaScript), PR curves and confusion matrices as PNGs
from the CSV files the train stage writes for ``dvc plots``."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache

BAR_HEIGHT = 18
BAR_GAP = 6
LABEL_WIDTH = 250  # px left of the bars for their labels
PLOT_WIDTH = 360  # px of the longest bar
CHARTS = ("pr_curve", "confusion")  # PNGs drawn from <name>.csv


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    y: int
    width: float


@dataclass(frozen=True)
class BarChart:
    bars: list[Bar]
    width: int
    height: int
    label_width: int = LABEL_WIDTH
    bar_height: int = BAR_HEIGHT


def bar_chart(rows: list[tuple[str, int]]) -> BarChart:
    """Horizontal bars for ``(label, value)`` rows, in their order, scaled to the largest value."""
    largest = max((value for _, value in rows), default=0) or 1
    bars = [Bar(label, value, i * (BAR_HEIGHT + BAR_GAP), PLOT_WIDTH * value / largest)
            for i, (label, value) in enumerate(rows)]
    return BarChart(bars, LABEL_WIDTH + PLOT_WIDTH + 70, max(len(rows) * (BAR_HEIGHT + BAR_GAP), 1))


def chart_png(name: str, csv_bytes: bytes) -> bytes:
    """The PNG of chart ``name`` (one of CHARTS) from its CSV; the same CSV gives the same bytes."""
    if name not in CHARTS:
        raise ValueError(f"no chart {name!r}; charts: {', '.join(CHARTS)}")
    return _png(name, csv_bytes)


@lru_cache(maxsize=64)
def _png(name: str, csv_bytes: bytes) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(io.StringIO(csv_bytes.decode("utf-8"))))
    figure, axes = plt.subplots(figsize=(3.6, 3.2))
    (_draw_pr_curve if name == "pr_curve" else _draw_confusion)(axes, rows)
    figure.tight_layout()
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=100, metadata={"Software": None})
    plt.close(figure)
    return out.getvalue()


def _draw_pr_curve(axes, rows: list[dict]) -> None:
    ordered = sorted(rows, key=lambda r: float(r["threshold"]))  # the curve as the threshold rises
    axes.plot([float(r["recall"]) for r in ordered], [float(r["precision"]) for r in ordered],
              marker=".", color="#017cee")
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("recall")
    axes.set_ylabel("precision")
    axes.set_title(f"PR curve ({len(rows)} thresholds)", fontsize=9)
    axes.grid(alpha=0.3)


def _draw_confusion(axes, rows: list[dict]) -> None:
    labels = sorted({r["actual"] for r in rows} | {r["predicted"] for r in rows})
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for row in rows:
        counts[index[row["actual"]]][index[row["predicted"]]] += 1
    axes.imshow(counts, cmap="Blues")
    largest = max((max(line) for line in counts), default=0)
    for i, line in enumerate(counts):
        for j, count in enumerate(line):
            axes.text(j, i, str(count), ha="center", va="center",
                      color="white" if count > largest / 2 else "#1a202c")
    short = [label.replace("non-check-worthy", "not cw").replace("check-worthy", "cw") for label in labels]
    axes.set_xticks(range(len(labels)), short)
    axes.set_yticks(range(len(labels)), short)
    axes.set_xlabel("predicted")
    axes.set_ylabel("actual")
    axes.set_title(f"Confusion ({len(rows)} test sentences)", fontsize=9)
