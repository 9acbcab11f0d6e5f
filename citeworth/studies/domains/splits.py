"""The study's data: every field's papers split train/dev/test, and the (train, test) cells.

Every field's papers are split 80/10/10 by paper (at least one paper in each part, so a field needs
three papers). An in-domain cell trains on the field's train part (early stopping on its dev part)
and tests on its test part; an out-of-domain cell trains the same way and tests on *all* of the
target field. A paper has one field, so no paper is ever in both a cell's training and test data
(checked, not assumed).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.io import read_jsonl
from citeworth.core.schema import SPLITS, SUBJECT
from citeworth.models import data
from citeworth.studies.domains.params import DomainsParams


def split_files(data_dir: Path) -> list[Path]:
    return [Path(data_dir) / f"{s}.jsonl" for s in SPLITS]


def load_records(data_dir: Path) -> list[dict]:
    """Every paragraph of the dataset (train, dev and test): the study re-splits each field."""
    missing = [str(p) for p in split_files(data_dir) if not p.exists()]
    if missing:
        raise StageFailed(f"missing {', '.join(missing)}: run the assemble stage first")
    return [r for path in split_files(data_dir) for r in read_jsonl(path)]


def papers_by_field(records: list[dict], group_by: str = "field") -> dict[str, dict[str, list[dict]]]:
    """field (or subject) -> paper id -> its paragraphs (in dataset order)."""
    grouped: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if group := data.field_of(record) if group_by == "field" else record.get(SUBJECT):
            grouped[group][record["paper_id"]].append(record)
    return grouped


def select_fields(records: list[dict], params: DomainsParams) -> list[str]:
    counts = {f: len(papers) for f, papers in papers_by_field(records, params.group_by).items()}
    if params.fields is not None:
        short = {f: counts.get(f, 0) for f in params.fields if counts.get(f, 0) < params.min_papers}
        if short:
            raise StageFailed(f"{params.group_by}s with fewer than {params.min_papers} papers cannot be "
                              f"split train/dev/test: {short}")
        return list(params.fields)
    fields = sorted(f for f, n in counts.items() if n >= params.min_papers)
    fields = _largest(records, fields, params)
    if len(fields) < params.min_fields:
        raise StageFailed(f"the domain study needs at least {params.min_fields} {params.group_by}s with "
                          f"{params.min_papers}+ papers and {params.min_train_sentences}+ training "
                          "sentences; "
                          f"{params.data_dir} has papers per {params.group_by} {counts}")
    return fields


def _largest(records: list[dict], fields: list[str], params: DomainsParams) -> list[str]:
    """``fields`` with at least ``min_train_sentences`` training sentences, the ``max_fields`` largest."""
    if not params.min_train_sentences and params.max_fields is None:
        return fields
    parts = field_parts(records, fields, params.split, params.split_seed, params.group_by)
    size = {f: len(data.sentences(parts[f]["train"])) for f in fields}
    ranked = sorted((f for f in fields if size[f] >= params.min_train_sentences), key=lambda f: (-size[f], f))
    return sorted(ranked[:params.max_fields])


def field_parts(records: list[dict], fields: list[str], fractions: list[float],
                seed: int, group_by: str = "field") -> dict[str, dict[str, list[dict]]]:
    """field -> train/dev/test paragraphs: the field's papers in seeded order, cut by paper count
    (80/10/10 by default) with at least one paper in each part."""
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) < 0:
        raise StageFailed(f"split must be three non-negative fractions summing to 1, got {fractions}")
    grouped = papers_by_field(records, group_by)
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


def cell_data(parts: dict, train_field: str, test_field: str,
              out_of_domain_test: str = "all") -> dict[str, list[dict]]:
    """A cell's train / dev / test paragraphs; raises if a paper would be on both sides."""
    own, target = parts[train_field], parts[test_field]
    whole_target = train_field != test_field and out_of_domain_test == "all"
    test = [r for p in SPLITS for r in target[p]] if whole_target else target["test"]
    cell = {"train": own["train"], "dev": own["dev"], "test": test}
    seen = {part: {r["paper_id"] for r in cell[part]} for part in SPLITS}
    leaked = (seen["train"] | seen["dev"]) & seen["test"]
    if leaked:
        raise StageFailed(f"cell {train_field} -> {test_field}: papers in both training and test data: "
                          f"{sorted(leaked)[:5]}")
    return cell


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def cell_path(cells_dir: Path, train_field: str, test_field: str) -> Path:
    """The metrics file of cell (``train_field``, ``test_field``): by name or slug."""
    return Path(cells_dir) / f"{slug(train_field)}__{slug(test_field)}.json"


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
