"""The domains stage (§5, Table 5, Figure 1): how does the field of study affect cite-worthiness?

An N×N matrix of the context model (or any model kind of ``citeworth.models``): train on one
field, test on another (``splits``: the fields' paper-level parts and the cells; ``cells``: running
them with fingerprinted results and a cache of trained models).

Cells run one at a time (``cells: [[train, test]]``, for a DVC matrix stage or mapped Airflow
tasks) or all at once (``cells: all``). The aggregation (``aggregate: true``) reads every cell and
adds the embedding analysis (``clusters``): per test field the σ of F1 over train fields and
Pearson's ρ between F1 and cluster distance. Outputs: ``metrics/domains.json``, a heatmap and a
PCA scatter under ``plots/domains/`` (``plots``), ``reports/table5.md`` (``tables``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from citeworth.core.fingerprint import data_version
from citeworth.core.io import write_json, write_text
from citeworth.core.threads import torch_threads
from citeworth.studies.domains.cells import METRIC_KEYS, CellRunner
from citeworth.studies.domains.clusters import cluster_fields, embed_fields, pearson
from citeworth.studies.domains.params import DomainsParams
from citeworth.studies.domains.plots import heatmap, scatter
from citeworth.studies.domains.splits import (
    field_parts,
    load_records,
    requested_cells,
    select_fields,
    split_files,
)
from citeworth.studies.domains.tables import table5


def domains(params: DomainsParams) -> dict:
    records = load_records(Path(params.data_dir))
    fields = select_fields(records, params)
    parts = field_parts(records, fields, params.split, params.split_seed, params.group_by)
    cells = requested_cells(params.cells, fields)
    with torch_threads(params.threads):
        runner = CellRunner(params, parts, data_version(split_files(params.data_dir)))
        run = runner.run_cells(cells)
        summary: dict = {"fields": fields, "cells_run": run, "cells_current": len(cells) - run}
        if params.aggregate:
            metrics = aggregate(fields, parts, runner.matrix(fields), params)
            summary["diagonal_f1"] = {f: metrics["matrix"][f][f]["f1"] for f in fields}
            summary["cluster_purity"] = metrics["clusters"]["purity"]
    return summary


def aggregate(fields: list[str], parts: dict, matrix: dict[str, dict[str, dict]],
              params: DomainsParams) -> dict:
    """The matrix (train field -> test field -> cell result), σ, clusters, ρ; writes every output."""
    f1 = np.array([[matrix[a][b]["f1"] for b in fields] for a in fields])  # rows: train, columns: test
    vectors, labels = embed_fields(parts, fields, params.embedding)
    clusters = cluster_fields(vectors, labels, fields, params.embedding)
    distance = np.array([[clusters["distances"][a][b] for b in fields] for a in fields])
    metrics = {
        "fields": fields,
        "group_by": params.group_by,
        "out_of_domain_test": params.out_of_domain_test,
        "matrix": {a: {b: {k: matrix[a][b][k] for k in (*METRIC_KEYS, "f1_std")} for b in fields}
                   for a in fields},
        "sigma": {b: round(float(f1[:, j].std()), 6) for j, b in enumerate(fields)},
        "sigma_in_domain": round(float(np.diag(f1).std()), 6),
        "rho": {b: pearson(f1[:, j], distance[:, j]) for j, b in enumerate(fields)},
        "clusters": {k: v for k, v in clusters.items() if k != "points"},
        "data": {a: {b: matrix[a][b]["data"] for b in fields} for a in fields},
        "model": params.model.model_dump(mode="json", exclude_unset=True),  # as params.yaml gives it
        "seeds": list(params.seeds),
    }
    write_json(Path(params.metrics_path), metrics)
    plots = Path(params.plots_dir)
    heatmap(f1, fields, plots / "heatmap.png")
    scatter(clusters["points"], labels, fields, plots / "pca.png")
    write_text(Path(params.table_path), table5(metrics))
    return metrics
