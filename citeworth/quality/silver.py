"""The silver citation-linkage corpus' expectations, run by the silver stage on its own output.

The gate's machinery (GX checkpoints, Data Docs without clock or chance, named and graded
outcomes) over two tables of ``data/silver/{train,dev,test}.jsonl``: the pairs, and one row per
citing sentence with its positive and negative pair counts. The critical check is Roy & Mercer's
balance: every citing sentence has as many negative pairs as positive ones.
"""

from __future__ import annotations

from pathlib import Path

import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd

from citeworth.core.io import read_jsonl
from citeworth.core.schema import SPLITS
from citeworth.quality.checkpoints import run_suites
from citeworth.quality.results import enforce
from citeworth.quality.suites import CRITICAL, expect
from citeworth.quality.tables import Table

PAIR_COLUMNS = ("citing_id", "cited_from", "label", "score")


def silver_tables(data_dir: Path) -> dict[str, Table]:
    """``silver_pairs`` (one row per pair) and ``silver_balance`` (one row per citing sentence)."""
    columns: dict[str, list] = {"split": [], **{name: [] for name in PAIR_COLUMNS}}
    for split in SPLITS:
        for pair in read_jsonl(Path(data_dir) / f"{split}.jsonl"):
            columns["split"].append(split)
            for name in PAIR_COLUMNS:
                columns[name].append(pair.get(name))
    pairs = pd.DataFrame(columns)
    balance = (pairs.assign(positives=pairs["label"] == 1, negatives=pairs["label"] == 0)
               .groupby(["split", "citing_id"], sort=True)[["positives", "negatives"]].sum().reset_index())
    return {"silver_pairs": Table("silver_pairs", pairs, ("split", "citing_id")),
            "silver_balance": Table("silver_balance", balance, ("split", "citing_id"))}


def silver_suites() -> dict[str, gx.ExpectationSuite]:
    groups = {
        "silver_pairs": [
            expect(gxe.ExpectColumnValuesToBeInSet, "label_valid", CRITICAL, "a pair's label is 0 or 1",
                   column="label", value_set=[0, 1]),
            expect(gxe.ExpectColumnValuesToBeInSet, "cited_from_valid", CRITICAL,
                   "a cited sentence comes from the cited paper's full text or its abstract",
                   column="cited_from", value_set=["full_text", "abstract"]),
            expect(gxe.ExpectColumnValuesToBeBetween, "score_is_a_cosine", CRITICAL,
                   "a pair's score is a cosine", column="score", min_value=-1.0, max_value=1.0),
        ],
        "silver_balance": [
            expect(gxe.ExpectColumnPairValuesToBeEqual, "positives_equal_negatives", CRITICAL,
                   "every citing sentence has as many negative pairs as positive ones (Roy & Mercer §4.3)",
                   column_A="positives", column_B="negatives"),
            expect(gxe.ExpectColumnValuesToBeBetween, "has_pairs", CRITICAL,
                   "a citing sentence in the corpus has at least one positive pair",
                   column="positives", min_value=1),
        ],
    }
    return {name: gx.ExpectationSuite(name=name, expectations=found) for name, found in groups.items()}


def check_silver(data_dir: Path, site_dir: Path, examples: int = 5) -> dict:
    """Validate the silver corpus (Data Docs at ``site_dir``); ``StageFailed`` on a critical breach.
    Returns each expectation's figures."""
    tables = silver_tables(data_dir)
    suites = silver_suites()
    found = run_suites(tables, {name: suites[name] for name in tables}, Path(site_dir), examples)
    enforce(found, Path(site_dir))
    return {outcome.name: outcome.metrics() for outcome in found}
