"""Scoring, labelling and balancing each citing sentence's pairs, and writing the kept ones.

A citing sentence is paired with every sentence of each paper it cites: one matrix-vector product
of vectors computed once per distinct sentence, cosines rounded to exact units, positive when at
least the cutoff. Records are built only for the pairs kept, so the cost per scored pair is a dot
product and a comparison.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path

import numpy as np
from tqdm import tqdm

from citeworth.core.io import atomic_write, dumps
from citeworth.core.schema import SPLITS
from citeworth.corpora.silver.balance import balanced
from citeworth.corpora.silver.similarity import Vectors, quantise
from citeworth.corpora.silver.store import CitedPaper, CitedSentence, Citing, Store

Pair = tuple[Citing, CitedPaper, CitedSentence]


def write_pairs(store: Store, vectors: Vectors, texts: list[str], out_dir: Path, cutoff: int, decimals: int,
                seed: int, counts: Counter) -> None:
    """Every citing sentence's kept pairs into ``out_dir/<its split>.jsonl``; ``cutoff`` in units of
    10^-decimals. Counts pairs scored, positive and kept."""
    with contextlib.ExitStack() as stack:
        files = {name: stack.enter_context(atomic_write(out_dir / f"{name}.jsonl")) for name in SPLITS}
        for group in tqdm(store.citing_sentences(), desc="silver: pairs", unit="sentence"):
            pairs, scores = scored_pairs(group, store, vectors, decimals)
            labels = (scores >= cutoff).astype(np.int64)
            kept = balanced(labels, seed, group[0].citing_id)
            split = group[0].split
            counts["pairs_scored"] += len(pairs)
            counts["pairs_positive"] += int(labels.sum())
            counts["citing_sentences_with_positive"] += bool(labels.any())
            counts[f"pairs_{split}"] += len(kept)
            for i in kept:
                record = {**pair_record(*pairs[i], texts), "label": int(labels[i]),
                          "score": round(int(scores[i]) / 10 ** decimals, decimals)}
                files[split].write(dumps(record) + "\n")


def scored_pairs(group: list[Citing], store: Store, vectors: Vectors,
                 decimals: int) -> tuple[list[Pair], np.ndarray]:
    """Every (citing, cited paper, cited sentence) of one citing sentence and its rounded cosine."""
    pairs, scores = [], []
    for citing in group:
        cited = store.cited_paper(citing.cited)
        if cited.sentences:
            scores.append(quantise(vectors.cosines(citing.text_row - 1, cited.vector_rows), decimals))
            pairs += [(citing, cited, sentence) for sentence in cited.sentences]
    return pairs, np.concatenate(scores) if scores else np.zeros(0, dtype=np.int64)


def pair_record(citing: Citing, cited: CitedPaper, sentence: CitedSentence, texts: list[str]) -> dict:
    """A kept pair's record (its label and score added by the caller)."""
    return {"citing_id": citing.citing_id, "citing_source": citing.source, "citing_paper_id": citing.paper_id,
            "citing_original": citing.original, "citing_text": texts[citing.text_row - 1],
            "ref_id": citing.ref_id, "cited_source": cited.source, "cited_paper_id": cited.paper_id,
            "cited_from": cited.cited_from, "cited_idx": sentence.idx, "cited_original": sentence.original,
            "cited_text": texts[sentence.text_row - 1]}
