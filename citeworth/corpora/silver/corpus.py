"""Reading the corpus into the work file: every paper into the paper index, the curated papers'
citing sentences linked to the cited papers the index holds, and the cited papers' sentences.

Everything not paired is counted under its reason (``counts``): a citing sentence with an
unresolved citation or too many cited papers, a citation whose paper the corpus does not hold, a
self-citation, a sentence too short once cleaned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.core.io import atomic_write, dumps, read_jsonl
from citeworth.core.schema import SPLITS
from citeworth.corpora.paper_index import IndexedPaper, PaperIndex
from citeworth.corpora.silver.cleaning import clean
from citeworth.corpora.silver.pairs import (
    Sentence,
    Splitter,
    body_sentences,
    cited_entries,
    cited_sentences,
    dataset_sentence,
)
from citeworth.corpora.silver.params import SilverParams
from citeworth.corpora.silver.store import Citing, Store
from citeworth.sources import BadRecord, discover_shards, read_shard


def index_papers(params: SilverParams, index: PaperIndex, quarantine_path: Path, counts: Counter) -> None:
    """Every paper of every input into the index; unreadable records into quarantine."""
    shards = [shard for spec in params.inputs
              for shard in discover_shards(spec.reader, spec.glob, spec.metadata, spec.release)]
    with atomic_write(quarantine_path) as quarantine:
        for shard in tqdm(shards, desc="silver: index", unit="shard"):
            for item in read_shard(shard):
                if isinstance(item, BadRecord):
                    counts["bad_records"] += 1
                    quarantine.write(dumps(asdict(item)) + "\n")
                else:
                    counts["papers"] += 1
                    counts["papers_with_full_text"] += bool(item.paragraphs)
                    index.add(item)


def collect_citing(params: SilverParams, index: PaperIndex, store: Store, split: Splitter,
                   counts: Counter) -> None:
    """The citing sentences of the curated papers, each linked to the paper(s) it cites."""
    missing = [str(Path(params.data_dir) / f"{name}.jsonl") for name in SPLITS
               if not (Path(params.data_dir) / f"{name}.jsonl").exists()]
    if missing:
        raise StageFailed(f"curated dataset file(s) missing: {', '.join(missing)} "
                          "(run the assemble stage first)")
    if params.citing == "dataset":
        found = _dataset_sentences(params, index, counts)
    else:
        _read_curated(params, store)
        found = _full_text_sentences(index, store, split, counts)
    for citing_id, split_name, paper, sentence in found:
        _link(params, index, store, counts, citing_id, split_name, paper, sentence)


def _full_text_sentences(index: PaperIndex, store: Store, split: Splitter,
                         counts: Counter) -> Iterator[tuple[str, str, IndexedPaper, Sentence]]:
    papers = list(store.curated())
    for source, paper_id, split_name in tqdm(papers, desc="silver: citing papers", unit="paper"):
        paper = index.get(source, paper_id)
        if paper is None or not paper.full_text:
            counts["curated_papers_without_text"] += 1
            continue
        counts["citing_papers"] += 1
        for number, sentence in enumerate(body_sentences(paper.body, split)):
            yield f"{source}/{paper_id}#s{number:05d}", split_name, paper, sentence


def _dataset_sentences(params: SilverParams, index: PaperIndex,
                       counts: Counter) -> Iterator[tuple[str, str, IndexedPaper, Sentence]]:
    for split_name in SPLITS:
        for record in read_jsonl(Path(params.data_dir) / f"{split_name}.jsonl"):
            paper = index.get(record.get("source", ""), record["paper_id"])
            if paper is None:
                counts["curated_papers_without_text"] += 1
                continue
            for number, sample in enumerate(record["samples"]):
                citing_id = f"{paper.source}/{paper.paper_id}#p{record['section_idx']:05d}.{number:03d}"
                yield citing_id, split_name, paper, dataset_sentence(sample)


def _read_curated(params: SilverParams, store: Store) -> None:
    """Which papers the curated dataset holds, and in which split."""
    for split_name in SPLITS:
        path = Path(params.data_dir) / f"{split_name}.jsonl"
        if path.exists():
            for record in read_jsonl(path):
                store.add_curated(record.get("source", ""), record["paper_id"], split_name)


def _link(params: SilverParams, index: PaperIndex, store: Store, counts: Counter, citing_id: str,
          split_name: str, paper: IndexedPaper, sentence: Sentence) -> None:
    """Store a citing sentence with each cited paper the index holds (and count what it lacks)."""
    entries, reason = cited_entries(sentence, paper.bibliography, params.max_citations)
    if reason:
        counts[f"sentences_{reason}"] += 1
        return
    text = clean(sentence.text, params.cleaning)
    if len(text) < params.min_chars:
        counts["citing_sentences_too_short"] += 1
        return
    counts["citing_sentences"] += 1
    linked = False
    for ref_id in entries:
        cited = index.best_content(paper.bibliography[ref_id])
        if cited is None:
            counts["citations_not_in_corpus"] += 1
        elif cited.rowid == paper.rowid:
            counts["self_citations"] += 1
        else:
            counts["citations_linked"] += 1
            linked = True
            store.add_citing(Citing(citing_id, split_name, paper.source, paper.paper_id, sentence.text,
                                    store.text_row(text), ref_id, cited.rowid))
    counts["citing_sentences_linked"] += linked


def collect_cited(params: SilverParams, index: PaperIndex, store: Store, split: Splitter,
                  counts: Counter) -> None:
    """The sentences of every cited paper: its full text, else its abstract (cleaned, long enough)."""
    for rowid in tqdm(store.cited_rowids(), desc="silver: cited papers", unit="paper"):
        paper = index.paper(rowid)
        cited_from, sentences = cited_sentences(paper, split)
        counts[f"cited_papers_{cited_from}"] += 1
        kept = []
        for idx, sentence in enumerate(sentences):
            text = clean(sentence.text, params.cleaning)
            if len(text) < params.min_chars:
                counts["cited_sentences_too_short"] += 1
            else:
                kept.append((idx, sentence.text, store.text_row(text)))
        counts["cited_sentences"] += len(kept)
        store.add_cited(paper, cited_from, kept)
