"""``reports/silver/report.md``: the corpus' counts, the cutoff, and Table 4/5-style results."""

from __future__ import annotations

# (row label, counts key) of the counts table, in reading order.
COUNT_ROWS = (
    ("papers read into the index", "papers"),
    ("... with full text", "papers_with_full_text"),
    ("records quarantined by their reader", "bad_records"),
    ("curated papers read for citing sentences", "citing_papers"),
    ("curated papers without text in the index", "curated_papers_without_text"),
    ("sentences with an unresolved citation", "sentences_unresolved_citation"),
    ("sentences citing too many papers", "sentences_too_many_citations"),
    ("citing sentences too short once cleaned", "citing_sentences_too_short"),
    ("citing sentences", "citing_sentences"),
    ("... whose cited paper the corpus holds", "citing_sentences_linked"),
    ("citations linked to a corpus paper", "citations_linked"),
    ("citations whose paper the corpus lacks (no pairs)", "citations_not_in_corpus"),
    ("self-citations (no pairs)", "self_citations"),
    ("cited papers found, full text", "cited_papers_full_text"),
    ("cited papers found, abstract only", "cited_papers_abstract"),
    ("cited sentences", "cited_sentences"),
    ("pairs scored", "pairs_scored"),
    ("positives (cosine >= cutoff)", "pairs_positive"),
    ("citing sentences with a positive", "citing_sentences_with_positive"),
    ("pairs kept: train", "pairs_train"),
    ("pairs kept: dev", "pairs_dev"),
    ("pairs kept: test", "pairs_test"),
)
_ROW_NAMES = {
    "annotator": "cosine >= cutoff (the annotator itself)",
    "siamese_silver": "siamese, trained on the silver corpus",
    "siamese_gold": "siamese, trained on the gold dev pairs",
}


def markdown(summary: dict, cutoff: dict, examples: list[dict]) -> str:
    counts, chosen, gold = summary["counts"], cutoff["chosen"], cutoff["gold"]
    similarity = cutoff["similarity"]
    encoder = (f"encoder `{similarity['encoder']}` (sha256 `{similarity['encoder_sha256'][:16]}…`)"
               if similarity["method"] == "embedding" else f"TF-IDF ({similarity['vocabulary']} terms)")
    lines = [
        "# Silver citation-linkage corpus (Roy & Mercer)",
        "",
        "Citing sentences paired with every sentence of the paper they cite, labelled by cosine "
        "similarity at a cutoff tuned on the gold file, all positives and as many random negatives kept "
        "per citing sentence. Data: `data/silver/{train,dev,test}.jsonl`; cutoff: "
        "`reports/silver/cutoff.json`.",
        "",
        "## Counts",
        "",
        "| | |",
        "|---|---:|",
        *(f"| {label} | {counts.get(key, 0):,} |" for label, key in COUNT_ROWS),
        "",
        "## Cutoff",
        "",
        f"{similarity['method']}, {encoder}; cosines rounded to {cutoff['decimals']} decimals. "
        f"Gold `{gold['path']}` (sha256 `{gold['sha256'][:16]}…`): {gold['dev_pairs']} dev pairs "
        f"({gold['dev_positives']} positive), {gold['test_pairs']} test pairs "
        f"({gold['test_positives']} positive); positive = score >= {gold['positive_score']}.",
        "",
        f"Chosen: **{chosen['cutoff']}** ({cutoff['rule']}): MCC {chosen['mcc']:.3f}, balanced accuracy "
        f"{chosen['balanced_accuracy']:.1%}, F1 {chosen['f1']:.3f} on the gold dev pairs.",
        "",
        "## Gold test pairs (as the paper's Tables 4 and 5)",
        "",
        *_table(summary["gold_test"]),
        "",
        "## Silver test pairs",
        "",
        *_table(summary["silver_test"]),
        "",
        "## Examples: each citing sentence's best-scoring cited sentence",
        "",
        *(line for pair in examples for line in _example(pair)),
    ]
    if not examples:
        lines.append("No citing sentence has a positive pair.")
    return "\n".join(lines) + "\n"


def _table(rows: dict) -> list[str]:
    header = ["| model | TP | FP | TN | FN | P | R | F1 | MCC | Acc (%) | BAcc (%) |", "|---" * 11 + "|"]
    body = []
    for name, metrics in rows.items():
        if metrics is None:
            body.append(f"| {_ROW_NAMES[name]} | – (no pairs to train on or to score) |" + " |" * 9)
            continue
        cells = [str(metrics[key]) for key in ("tp", "fp", "tn", "fn")]
        cells += [f"{metrics[key]:.2f}" for key in ("precision", "recall", "f1", "mcc")]
        cells += [f"{100 * metrics[key]:.2f}" for key in ("accuracy", "balanced_accuracy")]
        body.append(f"| {_ROW_NAMES[name]} | " + " | ".join(cells) + " |")
    return header + body if body else ["No pairs."]


def _example(pair: dict) -> list[str]:
    return [f"- `{pair['citing_id']}` → `{pair['cited_source']}/{pair['cited_paper_id']}` "
            f"({pair['cited_from']}, sentence {pair['cited_idx']}), cosine {pair['score']}:",
            f"  - citing: {pair['citing_original']}", f"  - cited: {pair['cited_original']}"]
