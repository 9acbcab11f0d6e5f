"""The similarity cutoff, chosen on a human-scored gold file.

The gold file is tab-separated with a header: ``split`` (``dev``: tunes the cutoff; ``test``:
scores the annotator and the models), ``citing_id`` (pairs of one citing sentence share it),
``citing``, ``cited`` and ``score`` (0-5, Houngbo & Mercer's scale; ``positive_score`` and above
is a positive pair). Every cutoff of the grid labels the dev pairs (positive: rounded cosine at
least the cutoff); the cutoff with the highest MCC wins, ties broken by balanced accuracy, then
by the lower cutoff.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeworth.core.errors import StageFailed
from citeworth.corpora.silver.params import CutoffParams
from citeworth.models.evaluation import binary_metrics

GOLD_COLUMNS = ("split", "citing_id", "citing", "cited", "score")
GOLD_SPLITS = ("dev", "test")


@dataclass(frozen=True)
class GoldPair:
    split: str
    citing_id: str
    citing: str
    cited: str
    score: int


def load_gold(path: Path) -> list[GoldPair]:
    """The gold file's pairs; a clear error naming the line for anything malformed."""
    path = Path(path)
    if not path.exists():
        raise StageFailed(f"gold file {path} not found (silver.gold_path)")
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        if tuple(reader.fieldnames or ()) != GOLD_COLUMNS:
            raise StageFailed(f"{path}: the header must be {' / '.join(GOLD_COLUMNS)} (tab-separated), "
                              f"not {reader.fieldnames}")
        pairs = [_gold_pair(row, f"{path}:{reader.line_num}") for row in reader]
    if not any(pair.split == "dev" for pair in pairs):
        raise StageFailed(f"{path}: no dev pairs to tune the cutoff on")
    return pairs


def _gold_pair(row: dict, where: str) -> GoldPair:
    if None in row or any(value is None or not value.strip() for value in row.values()):
        raise StageFailed(f"{where}: expected {len(GOLD_COLUMNS)} non-empty tab-separated fields")
    if row["split"] not in GOLD_SPLITS:
        raise StageFailed(f"{where}: split {row['split']!r} is not one of {GOLD_SPLITS}")
    if row["score"] not in {str(score) for score in range(6)}:
        raise StageFailed(f"{where}: score {row['score']!r} is not an integer from 0 to 5")
    return GoldPair(row["split"], row["citing_id"], row["citing"].strip(), row["cited"].strip(),
                    int(row["score"]))


def grid(params: CutoffParams, decimals: int) -> list[int]:
    """The cutoffs tried, in units of 10^-decimals (as ``similarity.quantise`` rounds cosines)."""
    unit = 10 ** decimals
    start, stop, step = (round(value * unit) for value in (params.start, params.stop, params.step))
    if step <= 0 or stop < start:
        raise StageFailed(f"silver.cutoff: need start <= stop and step > 0 at {decimals} decimals, "
                          f"got {params}")
    return list(range(start, stop + 1, step))


def tune(scores: np.ndarray, labels: np.ndarray, cutoffs: list[int],
         decimals: int) -> tuple[dict, list[dict]]:
    """(the chosen cutoff's row, every cutoff's row): each row is the cutoff (a float) and the
    gold-dev metrics of labelling ``scores >= cutoff`` positive."""
    rows = [{"cutoff": round(cutoff / 10 ** decimals, decimals), **binary_metrics(labels, scores >= cutoff)}
            for cutoff in cutoffs]
    chosen = max(zip(cutoffs, rows, strict=True),
                 key=lambda item: (item[1]["mcc"], item[1]["balanced_accuracy"], -item[0]))[1]
    return chosen, rows
