"""The scaling stage's parameters (its ``params.yaml`` section)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from citeworth.core.params import Params
from citeworth.models.spec import AnyModelSpec


class CurveParams(Params):
    model: AnyModelSpec
    """The model of every point: a ``train.catalog`` entry (the same mapping trains the same fit)."""
    sizes: list[int | None]
    """Training sentences of each point, smallest first (null: every training sentence); each point trains
    on a seeded sample of whole training paragraphs (``max_train_sentences``), the smaller samples inside
    the larger."""


class ScalingParams(Params):
    data_dir: Path
    """The dataset (assemble's out_dir): every point tests on all of its test split."""
    curves: dict[str, CurveParams | None]
    """Curve name -> the model and its sizes (null: leave that curve out, e.g. in a profile)."""
    seed: int = 1
    """Each point's sample and training seed (train.seeds' first, so a point with a Table 4 model's
    budget is that model's fit, loaded from checkpoints/finished/)."""
    points_dir: Path
    """One metrics file per point (skipped when current: an interrupted run resumes)."""
    checkpoints_dir: Path = Path("checkpoints")
    """Resumable fits under scaling/, finished fits shared with the train stage under finished/."""
    metrics_path: Path
    """Every curve's points (JSON)."""
    plots_dir: Path
    """points.csv (a DVC plot) and scaling.png."""
    table_path: Path
    """The points as Markdown."""
    threads: int | None = Field(None, ge=1)
    """torch CPU threads (null: torch's default)."""
