"""Flatten the dataset (and raw papers) into the tables the expectation suites validate.

The dataset is one paragraph per JSONL line; expectations are about sentences, paragraphs and
splits, so each gets its own table. Columns are collected as lists while the JSONL streams by, so
only the flat table itself is ever in memory (no list of parsed records).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.paper import Paper
from citeworth.core.schema import CITE_WORTHY, FIELD_OF_STUDY, SPLITS
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
    paragraphs = _columns(*ids, "sentences")
    for split, record in _records(data_dir):
        values = {"split": split, "paper_id": record.get("paper_id"),
                  "section_idx": record.get("section_idx"), "field": _field(record.get(FIELD_OF_STUDY))}
        samples = record.get("samples") or []
        texts = [sample.get("text") for sample in samples]
        for name, value in values.items():
            paragraphs[name].append(value)
            sentences[name].extend([value] * len(samples))
        paragraphs["sentences"].append(len(samples))
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


def split_tables(sentences: pd.DataFrame, paragraphs: pd.DataFrame) -> dict[str, Table]:
    """Derived tables for split integrity: papers per split, label and field shares, shared texts.
    Rows keep the dataset's (deterministic) order of first occurrence."""
    papers = paragraphs[["paper_id", "split"]].drop_duplicates()
    texts = sentences[["text", "split"]].dropna().drop_duplicates()
    labels = (sentences.groupby("split", sort=True)
              .agg(sentences=("cite_worthy", "size"), cite_worthy_share=("cite_worthy", "mean")))
    tables = [
        Table("split_papers", papers.reset_index(drop=True), ("paper_id", "split")),
        Table("split_texts", texts.reset_index(drop=True), ("split",)),
        Table("split_labels", labels.reset_index(), ("split",)),
        Table("split_fields", _field_shares(paragraphs), ("split", "field")),
    ]
    return {table.name: table for table in tables}


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
