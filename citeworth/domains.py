"""The domains stage (§5, Table 5, Figure 1): how does the field of study affect cite-worthiness?

An N×N matrix of the context model (or any model of ``citeworth.training``): train on one field,
test on another. Every field's papers are split 80/10/10 by paper (at least one paper in each
part, so a field needs three papers); an in-domain cell trains on the field's train part
(early stopping on its dev part) and tests on its test part; an out-of-domain cell trains the same
way and tests on *all* of the target field. A paper has one field, so no paper is ever in both a
cell's training and test data (checked, not assumed).

Cells run one at a time (``cells: [[train, test]]``, for a DVC matrix stage or mapped Airflow
tasks) or all at once (``cells: all``); each writes ``metrics/domains/<train>__<test>.json`` and
is skipped when that file's fingerprint (data version, split, model, seeds) is current. The model
of a train field is cached under ``cache_dir`` so that the N cells sharing it train it once.

The aggregation (``aggregate: true``) reads every cell and adds the embedding analysis of
Aharoni & Goldberg (2020), as the paper's code does it: mean-pooled encoder states per sentence,
PCA, a Gaussian mixture with one component per field, cluster purity, Euclidean distances between
the field clusters (their centroids in the PCA space), and per test field the σ of F1 over train
fields and Pearson's ρ between F1 and distance. Outputs: ``metrics/domains.json``, a heatmap and a
PCA scatter under ``plots/domains/``, ``reports/table5.md``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citeworth.errors import StageFailed
from citeworth.evaluation import aggregate_seeds
from citeworth.io import atomic_write, dumps, read_jsonl, write_json, write_text
from citeworth.models import data, encoders, loop
from citeworth.models.base import SPEC_FILE, load_trained
from citeworth.params import to_dict
from citeworth.training import evaluate, fit_model, model_spec

log = logging.getLogger(__name__)

# The paper's five fields (paper mode); the table abbreviates as Table 5 does.
PAPER_FIELDS = ["Chemistry", "Engineering", "Computer Science", "Psychology", "Biology"]
ABBREVIATIONS = {"Chemistry": "Ch", "Engineering": "E", "Computer Science": "CS", "Psychology": "P",
                 "Biology": "B", "Medicine": "M", "Physics": "Ph", "Mathematics": "Ma",
                 "Materials Science": "MS", "Economics": "Ec"}
PARTS = ("train", "dev", "test")
METRIC_KEYS = ("precision", "recall", "f1")


@dataclass
class EmbeddingParams:
    encoder: str = "embedded"  # the paper: bert-base-uncased
    sentences_per_field: int | None = 2000  # drawn with ``seed`` from all of the field (null: all)
    max_length: int = 128
    batch_size: int = 64
    cluster_dims: int = 50  # PCA dimensions the mixture clusters in (the paper's code: 50)
    seed: int = 1000


@dataclass
class DomainsParams:
    data_dir: Path = Path("data/citeworth")
    # The fields of the matrix; null: every field with at least ``min_papers`` papers.
    fields: list[str] | None = None
    min_papers: int = 3
    min_fields: int = 3
    split: list[float] = field(default_factory=lambda: [0.8, 0.1, 0.1])
    split_seed: int = 1
    # "all", or the cells to run now: [[train field, test field], ...] (names or slugs such as
    # computer_science); [] runs none (an aggregation-only step).
    cells: str | list[list[str]] = "all"
    aggregate: bool = True  # read every cell and write the matrix, embeddings, plots and Table 5
    seeds: list[int] = field(default_factory=lambda: [1])
    # The model of every cell: a ``citeworth.training`` model spec (the mapping of a train.catalog entry).
    model: dict = field(default_factory=lambda: {"kind": "context", "encoder": "embedded"})
    embedding: EmbeddingParams = field(default_factory=EmbeddingParams)
    cells_dir: Path = Path("metrics/domains")
    cache_dir: Path = Path("checkpoints/domains")  # trained models per train field (outside DVC outs)
    metrics_path: Path = Path("metrics/domains.json")
    plots_dir: Path = Path("plots/domains")
    table_path: Path = Path("reports/table5.md")
    threads: int | None = None  # torch CPU threads (null: torch's default)


def domains(params: DomainsParams) -> dict:
    set_threads(params.threads)
    records = load_records(Path(params.data_dir))
    fields = select_fields(records, params)
    parts = field_parts(records, fields, params.split, params.split_seed)
    cells = requested_cells(params.cells, fields)
    runner = _CellRunner(params, parts, data.dataset_version(_split_files(params.data_dir)))
    run = runner.run_cells(cells)
    summary: dict = {"fields": fields, "cells_run": run, "cells_current": len(cells) - run}
    if params.aggregate:
        metrics = aggregate(fields, parts, params)
        summary["diagonal_f1"] = {f: metrics["matrix"][f][f]["f1"] for f in fields}
        summary["cluster_purity"] = metrics["clusters"]["purity"]
    return summary


# ---------------------------------------------------------------------------------------------
# Data: fields, their paper-level parts, the cells


def set_threads(threads: int | None) -> None:
    if threads:
        import torch

        torch.set_num_threads(threads)


def _split_files(data_dir: Path) -> list[Path]:
    return [Path(data_dir) / f"{s}.jsonl" for s in data.SPLITS]


def load_records(data_dir: Path) -> list[dict]:
    """Every paragraph of the dataset (train, dev and test): the study re-splits each field."""
    missing = [str(p) for p in _split_files(data_dir) if not p.exists()]
    if missing:
        raise StageFailed(f"missing {', '.join(missing)}: run the assemble stage first")
    return [r for path in _split_files(data_dir) for r in read_jsonl(path)]


def papers_by_field(records: list[dict]) -> dict[str, dict[str, list[dict]]]:
    """field -> paper id -> its paragraphs (in dataset order)."""
    grouped: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        grouped[data.field_of(record)][record["paper_id"]].append(record)
    return grouped


def select_fields(records: list[dict], params: DomainsParams) -> list[str]:
    counts = {f: len(papers) for f, papers in papers_by_field(records).items()}
    if params.fields is not None:
        short = {f: counts.get(f, 0) for f in params.fields if counts.get(f, 0) < params.min_papers}
        if short:
            raise StageFailed(f"fields with fewer than {params.min_papers} papers cannot be split "
                              f"train/dev/test: {short}")
        return list(params.fields)
    fields = sorted(f for f, n in counts.items() if n >= params.min_papers)
    if len(fields) < params.min_fields:
        raise StageFailed(f"the domain study needs at least {params.min_fields} fields with "
                          f"{params.min_papers}+ papers; {params.data_dir} has papers per field {counts}")
    return fields


def field_parts(records: list[dict], fields: list[str], fractions: list[float],
                seed: int) -> dict[str, dict[str, list[dict]]]:
    """field -> train/dev/test paragraphs: the field's papers in seeded order, cut by paper count
    (80/10/10 by default) with at least one paper in each part."""
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) < 0:
        raise StageFailed(f"split must be three non-negative fractions summing to 1, got {fractions}")
    grouped = papers_by_field(records)
    parts = {}
    for name in fields:
        papers = sorted(grouped[name], key=lambda pid: hashlib.sha256(f"{seed}:{pid}".encode()).hexdigest())
        n = len(papers)
        n_test = max(1, round(fractions[2] * n))
        n_dev = max(1, round(fractions[1] * n))
        cut = {"train": papers[:n - n_dev - n_test], "dev": papers[n - n_dev - n_test:n - n_test],
               "test": papers[n - n_test:]}
        parts[name] = {part: [r for pid in sorted(ids) for r in grouped[name][pid]]
                       for part, ids in cut.items()}
    return parts


def cell_data(parts: dict, train_field: str, test_field: str) -> dict[str, list[dict]]:
    """A cell's train / dev / test paragraphs; raises if a paper would be on both sides."""
    own = parts[train_field]
    test = own["test"] if train_field == test_field else [r for p in PARTS for r in parts[test_field][p]]
    cell = {"train": own["train"], "dev": own["dev"], "test": test}
    seen = {part: {r["paper_id"] for r in cell[part]} for part in PARTS}
    leaked = (seen["train"] | seen["dev"]) & seen["test"]
    if leaked:
        raise StageFailed(f"cell {train_field} -> {test_field}: papers in both training and test data: "
                          f"{sorted(leaked)[:5]}")
    return cell


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def requested_cells(cells: str | list, fields: list[str]) -> list[tuple[str, str]]:
    """The (train, test) cells to run: "all" (row by row) or the listed pairs, by name or slug."""
    if cells == "all":
        return [(a, b) for a in fields for b in fields]
    if isinstance(cells, str):
        raise StageFailed(f"cells must be 'all' or a list of [train, test] pairs, got {cells!r}")
    by_name = {f: f for f in fields} | {slug(f): f for f in fields}
    chosen = []
    for pair in cells:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise StageFailed(f"a cell is a [train field, test field] pair, got {pair!r}")
        unknown = [p for p in pair if p not in by_name]
        if unknown:
            raise StageFailed(f"cell {pair}: {unknown} not among the study's fields {fields}")
        chosen.append((by_name[pair[0]], by_name[pair[1]]))
    return chosen


def plan_cells(params: DomainsParams) -> list[list[str]]:
    """Every [train, test] cell of the study by slug, row by row: what a DAG maps one task over
    (each task: ``-S 'cells=[[a, b]]' -S aggregate=false``, then one task with ``cells=[]``)."""
    fields = select_fields(load_records(Path(params.data_dir)), params)
    return [[slug(a), slug(b)] for a, b in requested_cells("all", fields)]


def cell_path(cells_dir: Path, train_field: str, test_field: str) -> Path:
    return Path(cells_dir) / f"{slug(train_field)}__{slug(test_field)}.json"


def _digest(obj: dict) -> str:
    return hashlib.sha256(dumps(obj).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Running cells


@dataclass
class _CellRunner:
    params: DomainsParams
    parts: dict
    version: str

    def __post_init__(self) -> None:
        self.spec = model_spec("domains", dict(self.params.model))
        self.base = {"data": self.version, "split": list(self.params.split),
                     "split_seed": self.params.split_seed, "model": to_dict(self.spec)}

    def cell_fingerprint(self, train_field: str, test_field: str) -> str:
        return _digest({**self.base, "train": train_field, "test": test_field,
                        "seeds": list(self.params.seeds)})

    def is_current(self, train_field: str, test_field: str) -> bool:
        path = cell_path(self.params.cells_dir, train_field, test_field)
        return path.exists() and json.loads(path.read_text()).get("fingerprint") == \
            self.cell_fingerprint(train_field, test_field)

    def run_cells(self, cells: list[tuple[str, str]]) -> int:
        """Run the cells that are not current, training each train field's model once per seed."""
        pending: dict[str, list[str]] = defaultdict(list)
        for train_field, test_field in cells:
            if not self.is_current(train_field, test_field):
                pending[train_field].append(test_field)
        for train_field, tests in pending.items():
            scores: dict[str, list[dict]] = {t: [] for t in tests}
            for seed in self.params.seeds:
                trained = self.trained_model(train_field, seed)
                for test_field in tests:
                    metrics = evaluate(trained, cell_data(self.parts, train_field, test_field)["test"])
                    scores[test_field].append({k: metrics[k] for k in (*METRIC_KEYS, "n", "n_positive")})
            for test_field in tests:
                self.write_cell(train_field, test_field, scores[test_field])
        return sum(len(t) for t in pending.values())

    def trained_model(self, train_field: str, seed: int):
        """The model of ``train_field`` and ``seed``: from the cache if current, else trained and cached."""
        directory = Path(self.params.cache_dir) / slug(train_field) / f"seed{seed}"
        fingerprint = _digest({**self.base, "train": train_field, "seed": seed})
        if _cached(directory, fingerprint):
            log.info("domains: reusing the %s model (seed %d) from %s", train_field, seed, directory)
            return load_trained(directory)
        cell = cell_data(self.parts, train_field, train_field)
        log.info("domains: training on %s (seed %d): %d train / %d dev paragraphs", train_field, seed,
                 len(cell["train"]), len(cell["dev"]))
        trained = fit_model(self.spec, cell["train"], cell["dev"], seed,
                            out_dir=directory.with_name(f"{directory.name}.fit"))
        try:
            trained.save(directory, extra={"fingerprint": fingerprint})
        except OSError:
            # Mapped cells of one train field may run at once: the same model, saved by another task.
            if not _cached(directory, fingerprint):
                raise
        return trained

    def write_cell(self, train_field: str, test_field: str, per_seed: list[dict]) -> None:
        cell = cell_data(self.parts, train_field, test_field)
        aggregated = aggregate_seeds(per_seed)
        write_json(cell_path(self.params.cells_dir, train_field, test_field), {
            "train_field": train_field, "test_field": test_field, "in_domain": train_field == test_field,
            "fingerprint": self.cell_fingerprint(train_field, test_field),
            **{k: round(aggregated[k]["mean"], 6) for k in METRIC_KEYS},
            "f1_std": round(aggregated["f1"]["std"], 6),
            "per_seed": [{"seed": s, **{k: round(v, 6) if isinstance(v, float) else v for k, v in m.items()}}
                         for s, m in zip(self.params.seeds, per_seed, strict=True)],
            "data": {part: _counts(cell[part]) for part in PARTS},
        })
        log.info("domains: %s -> %s F1 %.4f", train_field, test_field, aggregated["f1"]["mean"])


def _cached(directory: Path, fingerprint: str) -> bool:
    saved = directory / SPEC_FILE
    return saved.exists() and json.loads(saved.read_text()).get("fingerprint") == fingerprint


def _counts(records: list[dict]) -> dict:
    return {"papers": len({r["paper_id"] for r in records}), "paragraphs": len(records),
            "sentences": len(data.sentences(records)), "cite_worthy": int(data.labels(records).sum())}


# ---------------------------------------------------------------------------------------------
# Aggregation: matrix, σ, embeddings, ρ, outputs


def read_matrix(fields: list[str], cells_dir: Path) -> dict[str, dict[str, dict]]:
    missing = [f"[{a}, {b}]" for a in fields for b in fields if not cell_path(cells_dir, a, b).exists()]
    if missing:
        raise StageFailed(f"{len(missing)} cell(s) not run yet: {', '.join(missing[:6])}"
                          f"{' ...' if len(missing) > 6 else ''}; run them with -S 'cells=...' or cells=all")
    return {a: {b: json.loads(cell_path(cells_dir, a, b).read_text()) for b in fields} for a in fields}


def aggregate(fields: list[str], parts: dict, params: DomainsParams) -> dict:
    matrix = read_matrix(fields, params.cells_dir)
    f1 = np.array([[matrix[a][b]["f1"] for b in fields] for a in fields])  # rows: train, columns: test
    vectors, labels = embed_fields(parts, fields, params.embedding)
    clusters = cluster_fields(vectors, labels, fields, params.embedding)
    distance = np.array([[clusters["distances"][a][b] for b in fields] for a in fields])
    metrics = {
        "fields": fields,
        "matrix": {a: {b: {k: matrix[a][b][k] for k in (*METRIC_KEYS, "f1_std")} for b in fields}
                   for a in fields},
        "sigma": {b: round(float(f1[:, j].std()), 6) for j, b in enumerate(fields)},
        "sigma_in_domain": round(float(np.diag(f1).std()), 6),
        "rho": {b: pearson(f1[:, j], distance[:, j]) for j, b in enumerate(fields)},
        "clusters": {k: v for k, v in clusters.items() if k != "points"},
        "data": {a: {b: matrix[a][b]["data"] for b in fields} for a in fields},
        "model": params.model,
        "seeds": list(params.seeds),
    }
    write_json(Path(params.metrics_path), metrics)
    plots = Path(params.plots_dir)
    heatmap(f1, fields, plots / "heatmap.png")
    scatter(clusters["points"], labels, fields, plots / "pca.png")
    write_text(Path(params.table_path), table5(metrics))
    return metrics


def embed_fields(parts: dict, fields: list[str], params: EmbeddingParams) -> tuple[np.ndarray, list[str]]:
    """Mean-pooled last-layer states of sentences drawn from each field (all of its parts)."""
    import torch

    texts, labels = [], []
    rng = np.random.default_rng(params.seed)
    for name in fields:
        sentences = data.sentences(r for p in PARTS for r in parts[name][p])
        if params.sentences_per_field is not None and len(sentences) > params.sentences_per_field:
            sentences = [sentences[i] for i in np.sort(rng.choice(len(sentences), params.sentences_per_field,
                                                                  replace=False))]
        texts += sentences
        labels += [name] * len(sentences)
    encoder, tokenizer = encoders.load_encoder_and_tokenizer(params.encoder)
    device = loop.resolve_device("auto")
    encoder.to(device).eval()
    ids = tokenizer(texts, truncation=True, max_length=params.max_length)["input_ids"]
    vectors = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(ids), params.batch_size):
            batch, mask = loop.pad(ids[start:start + params.batch_size], tokenizer.pad_token_id)
            hidden = encoder(input_ids=batch.to(device), attention_mask=mask.to(device)).last_hidden_state
            pooled = (hidden * mask.unsqueeze(-1).to(device)).sum(1) / mask.sum(1, keepdim=True).to(device)
            vectors[start:start + len(batch)] = pooled.float().cpu().numpy()
    return vectors, labels


def cluster_fields(vectors: np.ndarray, labels: list[str], fields: list[str],
                   params: EmbeddingParams) -> dict:
    """PCA, then a Gaussian mixture with one component per field; purity and centroid distances."""
    from sklearn.decomposition import PCA
    from sklearn.mixture import GaussianMixture

    dims = min(params.cluster_dims, vectors.shape[1], len(vectors) - 1)
    reduced = PCA(n_components=dims, random_state=params.seed).fit_transform(vectors)
    mixture = GaussianMixture(n_components=len(fields), covariance_type="full", max_iter=150,
                              random_state=params.seed)
    assigned = mixture.fit(reduced).predict(reduced)
    label_array = np.array(labels)
    centroids = {f: reduced[label_array == f].mean(axis=0) for f in fields}
    return {
        "purity": round(cluster_purity(labels, assigned.tolist()), 6),
        "distances": {a: {b: round(float(np.linalg.norm(centroids[a] - centroids[b])), 6) for b in fields}
                      for a in fields},
        "cluster_dims": dims,
        "sentences": {f: int((label_array == f).sum()) for f in fields},
        "encoder": params.encoder,
        "points": PCA(n_components=2, random_state=params.seed).fit_transform(vectors),
    }


def cluster_purity(labels: list, clusters: list) -> float:
    """Share of points whose cluster's majority label is their own label."""
    if not labels:
        raise ValueError("cluster purity of no points")
    members: dict = defaultdict(lambda: defaultdict(int))
    for label, cluster in zip(labels, clusters, strict=True):
        members[cluster][label] += 1
    return sum(max(counts.values()) for counts in members.values()) / len(labels)


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None when either side is constant (undefined)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return round(float(np.corrcoef(x, y)[0, 1]), 6)


def _abbreviation(name: str) -> str:
    return ABBREVIATIONS.get(name, name)


def table5(metrics: dict) -> str:
    fields = metrics["fields"]
    abbr = [_abbreviation(f) for f in fields]
    seeds = metrics["seeds"]
    lines = [
        "# Table 5: cite-worthiness F1 across fields",
        "",
        "Rows: train field; columns: test field. F1 ×100 of the cite-worthy class"
        + (f", mean over seeds {seeds}" if len(seeds) > 1 else f" (seed {seeds[0]})")
        + ". In-domain cells test on the field's own test papers (80/10/10 by paper); out-of-domain "
        "cells test on all of the target field. σ: standard deviation over train fields; ρ: Pearson "
        "correlation of F1 with the Euclidean distance between the train and test field clusters.",
        "",
        "| Train \\ Test | " + " | ".join(abbr) + " |",
        "|---|" + "---:|" * len(fields),
    ]
    for a, short in zip(fields, abbr, strict=True):
        row = [f"{100 * metrics['matrix'][a][b]['f1']:.2f}" for b in fields]
        lines.append(f"| {short} | " + " | ".join(row) + " |")
    lines.append("| σ | " + " | ".join(f"{100 * metrics['sigma'][b]:.2f}" for b in fields) + " |")
    lines.append("| ρ | " + " | ".join("n/a" if metrics["rho"][b] is None else f"{metrics['rho'][b]:.2f}"
                                       for b in fields) + " |")
    clusters = metrics["clusters"]
    lines += [
        "",
        f"Fields: {', '.join(f'{_abbreviation(f)} = {f}' for f in fields)}.",
        f"σ of the in-domain (diagonal) F1: {100 * metrics['sigma_in_domain']:.2f}.",
        f"Embedding clusters ({clusters['encoder']}, {sum(clusters['sentences'].values())} sentences, "
        f"Gaussian mixture in {clusters['cluster_dims']} PCA dimensions): purity "
        f"{100 * clusters['purity']:.2f}.",
        "",
    ]
    return "\n".join(lines)


def _save_figure(figure, path: Path) -> None:
    with atomic_write(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=120, metadata={"Software": None})


def heatmap(f1: np.ndarray, fields: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    abbr = [_abbreviation(f) for f in fields]
    figure, axes = plt.subplots(figsize=(1.2 * len(fields) + 2, 1.0 * len(fields) + 1.5))
    image = axes.imshow(100 * f1, cmap="viridis")
    axes.set_xticks(range(len(fields)), abbr)
    axes.set_yticks(range(len(fields)), abbr)
    axes.set_xlabel("test field")
    axes.set_ylabel("train field")
    for i in range(len(fields)):
        for j in range(len(fields)):
            axes.text(j, i, f"{100 * f1[i, j]:.1f}", ha="center", va="center", color="white", fontsize=9)
    figure.colorbar(image, ax=axes, label="F1 ×100")
    axes.set_title("Cite-worthiness F1: train × test field")
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)


def scatter(points: np.ndarray, labels: list[str], fields: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label_array = np.array(labels)
    figure, axes = plt.subplots(figsize=(7, 6))
    for name in fields:
        chosen = points[label_array == name]
        axes.scatter(chosen[:, 0], chosen[:, 1], s=6, alpha=0.6, label=name)
        centre = chosen.mean(axis=0)
        axes.annotate(_abbreviation(name), centre, fontsize=11, weight="bold")
    axes.set_xticks([])
    axes.set_yticks([])
    axes.legend(markerscale=3, fontsize=8)
    axes.set_title("Sentence embeddings by field (mean-pooled, PCA 2-D)")
    figure.tight_layout()
    _save_figure(figure, path)
    plt.close(figure)
