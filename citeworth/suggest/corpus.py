"""The corpus as candidates: every paper of a paper index (``citeworth/corpora/paper_index.py``,
as the silver corpus builds it, body text and bibliographies kept) with its title and abstract,
and as contexts the sentences in which other corpus papers cite it.

``citeworth suggest-index OUT`` writes such an index from the curate stage's inputs of
params.yaml; ``citeworth check --suggest --corpus OUT`` reads it.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from citeworth.core.paper import Paper
from citeworth.core.params import load_section
from citeworth.corpora.paper_index import IndexedPaper, PaperIndex
from citeworth.sources import BadRecord, input_shards, read_shard
from citeworth.sources.base import InputSpec
from citeworth.suggest.candidates import Candidate
from citeworth.suggest.contexts import sentence_bounds

_PLACEHOLDER = re.compile(r"\{\{\w+:[^{}]*\}\}")


class CorpusError(ValueError):
    """The paper index cannot be read."""


def corpus_candidates(path: Path) -> list[Candidate]:
    if not path.is_file():
        raise CorpusError(f"--corpus {path}: no such paper index (write one with `citeworth suggest-index`)")
    try:
        index = PaperIndex(path, keep_text=True)
        try:
            return candidates_of(index, index.papers())
        finally:
            index.close()
    except sqlite3.DatabaseError as exc:
        raise CorpusError(f"--corpus {path}: not a paper index ({exc})") from exc


def candidates_of(index: PaperIndex, papers: Iterable[IndexedPaper]) -> list[Candidate]:
    """A candidate per paper (key: ``source:paper_id``) with the contexts other papers cite it in."""
    papers = list(papers)
    contexts: dict[int, list[str]] = {}
    for citation in citations(index, papers):
        contexts.setdefault(citation.cited, []).append(citation.sentence)
    return [candidate(paper, contexts.get(paper.rowid, [])) for paper in papers]


def candidate(paper: IndexedPaper, contexts: list[str]) -> Candidate:
    return Candidate(f"{paper.source}:{paper.paper_id}", paper.title, (), None,
                     ". ".join(part for part in (paper.title, paper.abstract) if part), contexts)


@dataclass(frozen=True)
class Citation:
    citing: int  # rowids in the index
    cited: int
    sentence: str  # around the citation, placeholders removed


def citations(index: PaperIndex, papers: Iterable[IndexedPaper]) -> Iterator[Citation]:
    """Every citation of one corpus paper by another (resolved through the citing bibliography)."""
    for paper in papers:
        for text, spans in paper.body or ():
            for start, end, ref_ids in spans:
                for ref_id in ref_ids:
                    entry = (paper.bibliography or {}).get(ref_id)
                    cited = index.best_content(entry) if entry else None
                    if cited is not None and cited.rowid != paper.rowid:
                        yield Citation(paper.rowid, cited.rowid, context(text, start, end))


def context(text: str, start: int, end: int) -> str:
    """The sentence around a citation at ``text[start:end]``, placeholders removed."""
    first, after = sentence_bounds(text, start, end)
    sentence = text[first:after]
    return " ".join(_PLACEHOLDER.sub(" ", sentence).split())


def build_index(inputs: list[InputSpec], path: Path) -> dict[str, int]:
    """Every paper the inputs' readers produce into a new paper index at ``path`` (atomically)."""
    counts = {"papers": 0, "bad_records": 0}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)  # left by a killed run
    index = PaperIndex(partial, keep_text=True)
    try:
        for item in add_papers(inputs, index):
            counts["bad_records" if isinstance(item, BadRecord) else "papers"] += 1
        index.db.commit()
    finally:
        index.close()
    partial.replace(path)
    return counts


def add_papers(inputs: list[InputSpec], index: PaperIndex) -> Iterator[Paper | BadRecord]:
    """Every record the inputs' readers produce, each paper added to ``index`` first."""
    for shard in input_shards(inputs):
        for item in read_shard(shard):
            if not isinstance(item, BadRecord):
                index.add(item)
            yield item


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="citeworth suggest-index",
        description="Write the paper index `citeworth check --suggest --corpus INDEX` suggests from: "
        "every paper the curate stage's inputs (params.yaml) read, with its title, abstract, body "
        "text and bibliography.")
    parser.add_argument("output", type=Path, metavar="INDEX", help="the SQLite file to write")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="default: %(default)s")
    args = parser.parse_args(argv)
    inputs = [InputSpec(**spec) for spec in load_section("curate", args.params)["inputs"]]
    counts = build_index(inputs, args.output)
    print(f"citeworth suggest-index: {counts['papers']} papers ({counts['bad_records']} unreadable) "
          f"in {args.output}", file=sys.stderr)
    return 0
