"""S2ORC 20200705 shard pairs: ``metadata_N.jsonl.gz`` + ``pdf_parses_N.jsonl.gz``, joined by paper_id.

Memory: neither file is held. The parses are streamed, and a cursor walks the metadata file
forward to each parse's row (a merge join). The release writes a shard's parses in the order of
its metadata rows, so the cursor only steps forward; the rows it passes that may still get a parse
(``has_pdf_parse`` not false) are kept in a small buffer of compact PaperFacts, which stays near
empty for aligned files. If the files are not aligned the join stays correct and the buffer grows
to at most the shard's rows with parses (PaperFacts, a few hundred bytes each) -- still far less
than the parses, which are never buffered. A metadata row without a parse produces no Paper; a
parse without a metadata row is quarantined as ``missing_metadata``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path

from citeworth.core.paper import Paper
from citeworth.sources.base import BadRecord, RecordError, Shard, bad_record, guarded
from citeworth.sources.facts import PaperFacts, metadata_rows, paper_id_of, s2orc_row_facts
from citeworth.sources.lines import iter_json_lines
from citeworth.sources.s2orc import paper_from_s2orc

DEFAULT_RELEASE = "20200705"


class MetadataCursor:
    """Forward-only lookup of metadata rows by paper id, buffering the rows it skips."""

    def __init__(self, path: str, shard: Shard):
        self.name = Path(path).name
        self.shard = shard
        self._rows = metadata_rows(path, shard, paper_id_of)
        self._ahead: dict[str, PaperFacts] = {}
        self.broken = False  # the file broke off (truncated or corrupt): rows after it are unknown

    @property
    def buffered(self) -> int:
        return len(self._ahead)

    def find(self, paper_id: str) -> Generator[BadRecord, None, PaperFacts | None]:
        """The row's facts (None when the file has no such row, or broke off before it); yields
        the bad rows passed."""
        if paper_id in self._ahead:
            return self._ahead.pop(paper_id)
        if self.broken:
            return None
        for item in self._rows:
            if isinstance(item, BadRecord):
                yield item
                if item.fatal:
                    self.broken = True
                    return None
                continue
            found = item.paper_id == paper_id
            if not found and item.row.get("has_pdf_parse") is False:
                continue  # no parse will ask for this row
            facts = item.facts(self.shard, s2orc_row_facts)
            if isinstance(facts, BadRecord):
                yield facts  # the row is quarantined; its parse then has no metadata
            elif not found:
                self._ahead.setdefault(item.paper_id, facts)
            if found:
                return None if isinstance(facts, BadRecord) else facts
        return None


def read(shard: Shard) -> Iterator[Paper | BadRecord]:
    """The shard's Papers; a parse whose metadata row is missing is quarantined as
    ``missing_metadata``, or as ``metadata_truncated`` once the metadata file has broken off, so
    every parse after the break is counted, not lost."""
    if not shard.metadata:
        raise ValueError(f"s2orc_legacy shard {shard.name!r} has no metadata file to join with")
    cursor = MetadataCursor(shard.metadata, shard)
    for item in iter_json_lines(shard.paths[0], shard):
        if isinstance(item, BadRecord):
            yield item
            continue
        line, record = item
        location = f"line {line.number}"
        paper_id = guarded(shard, location, line.data, paper_id_of, record)
        if isinstance(paper_id, BadRecord):
            yield paper_id
            continue
        facts = yield from cursor.find(paper_id)
        if facts is None:
            reason, why = ("metadata_truncated", "broke off before its row") if cursor.broken \
                else ("missing_metadata", "has no row")
            error = RecordError(reason, f"{paper_id}: {cursor.name} {why}")
            yield bad_record(shard, location, error, line.data)
        else:
            yield guarded(shard, location, line.data, paper_from_s2orc, record, facts, shard)
