"""Running cells: train a field's model (once per seed, cached), score it on each test field.

Each cell writes ``<cells_dir>/<train>__<test>.json`` and is skipped when that file's fingerprint
(data version, split, model, seeds and ``CODE``) is current. The model of a train field is cached
under ``cache_dir`` (outside DVC's outputs, so DVC cannot tell when it is stale: the same
fingerprint does) so that the N cells sharing it train it once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.fingerprint import current_record, fingerprint
from citeworth.core.io import write_json
from citeworth.core.params import to_dict
from citeworth.core.schema import SPLITS
from citeworth.models import data
from citeworth.models.base import SPEC_FILE, load_trained
from citeworth.models.evaluation import aggregate_seeds, rounded
from citeworth.models.fitting import evaluate, fit_model, model_spec
from citeworth.studies.domains.params import DomainsParams
from citeworth.studies.domains.splits import cell_data, cell_path, slug

log = logging.getLogger(__name__)

METRIC_KEYS = ("precision", "recall", "f1")
# The code a cell's result and a cached model come from, this module's import closure (the splits,
# the models): not Table 5's formatting or plots.
CODE = (__name__,)


@dataclass
class CellRunner:
    params: DomainsParams
    parts: dict
    version: str

    def __post_init__(self) -> None:
        self.spec = model_spec("domains", self.params.model)
        # torch's threads too: they may change float sums
        self.base = {"data": self.version, "split": list(self.params.split),
                     "split_seed": self.params.split_seed, "model": to_dict(self.spec),
                     "threads": self.params.threads, "group_by": self.params.group_by}

    def cell_fingerprint(self, train_field: str, test_field: str) -> str:
        return fingerprint(CODE, **self.base, train=train_field, test=test_field,
                           seeds=list(self.params.seeds), test_part=self.params.out_of_domain_test)

    def cell(self, train_field: str, test_field: str) -> dict[str, list[dict]]:
        return cell_data(self.parts, train_field, test_field, self.params.out_of_domain_test)

    def current_cell(self, train_field: str, test_field: str) -> dict | None:
        """The cell's saved result if it is current (same data, split, model, seeds and code)."""
        path = cell_path(self.params.cells_dir, train_field, test_field)
        return current_record(path, self.cell_fingerprint(train_field, test_field))

    def matrix(self, fields: list[str]) -> dict[str, dict[str, dict]]:
        """Every cell's current result, train field -> test field; fails naming cells not run (or
        run on other data, params or code) yet."""
        results = {(a, b): self.current_cell(a, b) for a in fields for b in fields}
        missing = [f"[{a}, {b}]" for (a, b), result in results.items() if result is None]
        if missing:
            raise StageFailed(f"{len(missing)} cell(s) not run yet with this data, params and code: "
                              f"{', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}; run them with "
                              "-S 'cells=...' or cells=all")
        return {a: {b: results[a, b] for b in fields} for a in fields}

    def run_cells(self, cells: list[tuple[str, str]]) -> int:
        """Run the cells that are not current, training each train field's model once per seed."""
        pending: dict[str, list[str]] = defaultdict(list)
        for train_field, test_field in cells:
            if self.current_cell(train_field, test_field) is None:
                pending[train_field].append(test_field)
        for train_field, tests in pending.items():
            scores: dict[str, list[dict]] = {t: [] for t in tests}
            for seed in self.params.seeds:
                trained = self.trained_model(train_field, seed)
                for test_field in tests:
                    metrics = evaluate(trained, self.cell(train_field, test_field)["test"])
                    scores[test_field].append({k: metrics[k] for k in (*METRIC_KEYS, "n", "n_positive")})
            for test_field in tests:
                self.write_cell(train_field, test_field, scores[test_field])
        return sum(len(t) for t in pending.values())

    def trained_model(self, train_field: str, seed: int):
        """The model of ``train_field`` and ``seed``: from the cache if current, else trained and cached."""
        directory = Path(self.params.cache_dir) / slug(train_field) / f"seed{seed}"
        expected = fingerprint(CODE, **self.base, train=train_field, seed=seed)
        if _cached(directory, expected):
            log.info("domains: reusing the %s model (seed %d) from %s", train_field, seed, directory)
            return load_trained(directory)
        cell = self.cell(train_field, train_field)
        log.info("domains: training on %s (seed %d): %d train / %d dev paragraphs", train_field, seed,
                 len(cell["train"]), len(cell["dev"]))
        trained = fit_model(self.spec, cell["train"], cell["dev"], seed,
                            out_dir=directory.with_name(f"{directory.name}.fit"))
        try:
            trained.save(directory, extra={"fingerprint": expected})
        except OSError:
            # Mapped cells of one train field may run at once: the same model, saved by another task.
            if not _cached(directory, expected):
                raise
        return trained

    def write_cell(self, train_field: str, test_field: str, per_seed: list[dict]) -> None:
        cell = self.cell(train_field, test_field)
        aggregated = aggregate_seeds(per_seed)
        write_json(cell_path(self.params.cells_dir, train_field, test_field), {
            "train_field": train_field, "test_field": test_field, "in_domain": train_field == test_field,
            "fingerprint": self.cell_fingerprint(train_field, test_field),
            **{k: round(aggregated[k]["mean"], 6) for k in METRIC_KEYS},
            "f1_std": round(aggregated["f1"]["std"], 6),
            "per_seed": [{"seed": s, **rounded(m)}
                         for s, m in zip(self.params.seeds, per_seed, strict=True)],
            "data": {part: _counts(cell[part]) for part in SPLITS},
        })
        log.info("domains: %s -> %s F1 %.4f", train_field, test_field, aggregated["f1"]["mean"])


def _cached(directory: Path, expected: str) -> bool:
    return current_record(directory / SPEC_FILE, expected) is not None


def _counts(records: list[dict]) -> dict:
    return {"papers": len({r["paper_id"] for r in records}), "paragraphs": len(records),
            "sentences": len(data.sentences(records)), "cite_worthy": int(data.labels(records).sum())}

