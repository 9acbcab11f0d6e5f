"""Flatten the dataset (and raw papers) into the tables the expectation suites validate.

The dataset is one paragraph per JSONL line; expectations are about sentences, paragraphs and
splits, so each gets its own table. Columns are collected as lists while the JSONL streams by, so
only the flat table itself is ever in memory (no list of parsed records).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.identity import group_copies, identifier_keys
from citeworth.core.io import read_jsonl
from citeworth.core.paper import Paper
from citeworth.core.schema import CITE_WORTHY, FIELD_OF_STUDY, SPLITS, shard_key
from citeworth.quality.markers import residual_marker_mask
from citeworth.sources.base import BadRecord


@dataclass(frozen=True)
class Table:
    """A named table to validate; failure examples show a row's key columns, the checked columns
    and the context columns (e.g. the sentence a derived flag was computed from)."""

    name: str
    frame: pd.DataFrame
    key_columns: tuple[str, ...]
    context_columns: tuple[str, ...] = ()


def dataset_tables(data_dir: Path, prefix: str = "") -> dict[str, Table]:
    """The sentence and paragraph tables of ``data_dir/{train,dev,test}.jsonl``."""
    ids = _columns("split", "paper_id", "section_idx", "field")
    sentences = _columns(*ids, "text", "label", "starts_with_capital", "has_citation_text")
    paragraphs = _columns(*ids, "sentences", "source", "shard")
    for split, record in _records(data_dir):
        values = {"split": split, "paper_id": record.get("paper_id"),
                  "section_idx": record.get("section_idx"), "field": _field(record.get(FIELD_OF_STUDY))}
        samples = record.get("samples") or []
        texts = [sample.get("text") for sample in samples]
        for name, value in values.items():
            paragraphs[name].append(value)
            sentences[name].extend([value] * len(samples))
        paragraphs["sentences"].append(len(samples))
        paragraphs["source"].append(record.get("source"))
        paragraphs["shard"].append(record.get("shard"))
        sentences["text"].extend(texts)
        sentences["label"].extend(sample.get("label") for sample in samples)
        sentences["starts_with_capital"].extend(bool(text) and text[0].isupper() for text in texts)
        sentences["has_citation_text"].extend(bool(sample.get("citation_text")) for sample in samples)
    frame = pd.DataFrame(sentences)
    frame["cite_worthy"] = frame["label"] == CITE_WORTHY
    frame["has_residual_marker"] = residual_marker_mask(frame["text"])
    keys = ("split", "paper_id", "section_idx")
    return {
        f"{prefix}sentences": Table(f"{prefix}sentences", frame, keys, ("text",)),
        f"{prefix}paragraphs": Table(f"{prefix}paragraphs", pd.DataFrame(paragraphs), keys),
    }


def split_tables(sentences: pd.DataFrame, paragraphs: pd.DataFrame,
                 curated_dir: Path | None = None) -> dict[str, Table]:
    """Derived tables for split integrity: papers and paper identities per split, label and field
    shares, shared texts. Rows keep the dataset's (deterministic) order of first occurrence."""
    papers = paragraphs[["paper_id", "split"]].drop_duplicates()
    texts = sentences[["text", "split"]].dropna().drop_duplicates()
    labels = (sentences.groupby("split", sort=True)
              .agg(sentences=("cite_worthy", "size"), cite_worthy_share=("cite_worthy", "mean")))
    tables = [
        Table("split_papers", papers.reset_index(drop=True), ("paper_id", "split")),
        Table("split_identities", split_identities(paragraphs, curated_dir),
              ("identity", "split", "paper_id")),
        Table("split_texts", texts.reset_index(drop=True), ("split",)),
        Table("split_labels", labels.reset_index(), ("split",)),
        Table("split_fields", _field_shares(paragraphs), ("split", "field")),
    ]
    return {table.name: table for table in tables}


def split_identities(paragraphs: pd.DataFrame, curated_dir: Path | None) -> pd.DataFrame:
    """One row per paper identity and split its papers are in (an identity in two splits has two
    rows), named by an identifier of the paper (``doi:...``), else its fallback key, else its id.

    A dataset paper's identifiers are those curation recorded for it (``curated_dir/papers``, every
    copy of it there); papers are grouped as the assemble stage groups them (core/identity.py), so
    two copies of one paper that the dataset holds both are one identity. Without ``curated_dir`` a
    paper is known by its paper id alone."""
    papers = paragraphs[["split", "source", "shard", "paper_id"]].drop_duplicates()
    named = [(split, shard_key(str(source), str(shard)), paper_id)
             for split, source, shard, paper_id in papers.itertuples(index=False)]
    curated = _curated_copies(curated_dir, {(key, paper_id) for _, key, paper_id in named})
    copies, rows = [], []
    for split, key, paper_id in named:
        found = curated.get((key, paper_id))
        if curated_dir and not found:
            raise StageFailed(f"dataset paper {paper_id!r} ({split}) has no record in "
                              f"{Path(curated_dir) / 'papers' / key}.jsonl: the dataset and the curated "
                              "shards differ; run curate and assemble again")
        for copy in found or [{"paper_id": paper_id, "ids": {}, "fallback": None}]:
            copies.append(copy)
            rows.append((split, paper_id))
    groups = group_copies(copies)
    frame = pd.DataFrame([(_identity_name(copies[groups.root(number)]), split, paper_id)
                          for number, (split, paper_id) in enumerate(rows)],
                         columns=["identity", "split", "paper_id"])
    return frame.drop_duplicates(["identity", "split"]).reset_index(drop=True)


def _identity_name(copy: dict) -> str:
    keys = identifier_keys(copy["ids"])
    return keys[0] if keys else copy["fallback"] or f"paper_id:{copy['paper_id']}"


def _curated_copies(curated_dir: Path | None, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], list]:
    """The copy records of the curated shards (``papers/<shard>.jsonl``) for the (shard, paper id)
    pairs ``wanted``; none without ``curated_dir``."""
    if curated_dir is None:
        return {}
    folder = Path(curated_dir) / "papers"
    if not folder.is_dir():
        raise StageFailed(f"no curated papers in {folder} (validate.curated_dir): run curate first")
    found: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for shard in sorted({shard for shard, _ in wanted}):  # only the shards the dataset draws on
        path = folder / f"{shard}.jsonl"
        for copy in read_jsonl(path) if path.is_file() else ():
            if (shard, copy["paper_id"]) in wanted:
                found[(shard, copy["paper_id"])].append(copy)
    return found


def _field_shares(paragraphs: pd.DataFrame) -> pd.DataFrame:
    """Each field's share of each split's paragraphs; a field absent from a split gets share 0."""
    counts = pd.crosstab(paragraphs["split"], paragraphs["field"].fillna(""))
    shares = counts.div(counts.sum(axis=1), axis=0)
    table = shares.stack().rename("share").reset_index()
    return table.sort_values(["split", "field"]).reset_index(drop=True)


def raw_tables(items: Iterable[tuple[str, Paper | BadRecord]]) -> dict[str, Table]:
    """From (reader, Paper or BadRecord) pairs: one row per raw record and one per citation span."""
    records = _columns("reader", "shard", "paper_id", "bad_reason", "paragraphs", "fields_of_study")
    spans = _columns("shard", "paper_id", "paragraph", "start", "end", "text_chars", "span_text",
                     "matches_text")
    for reader, item in items:
        if isinstance(item, BadRecord):
            _append(records, {"reader": reader, "shard": item.shard, "paper_id": None},
                    bad_reason=item.reason, paragraphs=None, fields_of_study=None)
            continue
        ids = {"shard": item.shard, "paper_id": item.paper_id}
        _append(records, {"reader": reader, **ids}, bad_reason=None,
                paragraphs=len(item.paragraphs), fields_of_study=len(item.fields_of_study))
        for number, paragraph in enumerate(item.paragraphs):
            for span in paragraph.cite_spans:
                _append(spans, ids, paragraph=number, start=span.start, end=span.end,
                        text_chars=len(paragraph.text), span_text=span.text,
                        matches_text=paragraph.text[span.start:span.end] == span.text)
    return {
        "raw_records": Table("raw_records", pd.DataFrame(records), ("reader", "shard", "paper_id")),
        "raw_spans": Table("raw_spans", pd.DataFrame(spans), ("shard", "paper_id", "paragraph")),
    }


def _records(data_dir: Path) -> Iterator[tuple[str, dict]]:
    for split in SPLITS:
        path = Path(data_dir) / f"{split}.jsonl"
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(tqdm(handle, desc=f"read {path}", unit=" paragraphs"), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise StageFailed(f"{path}:{number} is not JSON ({exc}); the dataset is corrupt") from exc
                if not isinstance(record, dict):
                    raise StageFailed(f"{path}:{number} is a JSON {type(record).__name__}, not a paragraph")
                yield split, record


def _field(fields: object) -> str | None:
    """The paragraph's one field; several are joined with '|' so the field check names them."""
    if not isinstance(fields, list) or not fields:
        return None
    return "|".join(str(f) for f in fields)


def _columns(*names: str) -> dict[str, list]:
    return {name: [] for name in names}


def _append(columns: dict[str, list], ids: dict, **values: object) -> None:
    for name, column in columns.items():
        column.append(values[name] if name in values else ids[name])
