"""Table 2 of the paper (and more) computed from the written dataset, plus the curation funnel and
the copies of papers found in several sources (curate/duplicates.py)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.io import read_jsonl
from citeworth.core.schema import CITE_WORTHY, FIELD_OF_STUDY, SPLITS
from citeworth.text.sentences import scispacy_token_counter


def dataset_stats(data_dir: Path, funnel: dict, duplicates: dict,
                  count_tokens: Callable[[str], int] | None = None) -> dict:
    """Figures overall, per split and per field, from ``data_dir/{train,dev,test}.jsonl``, with the
    funnel and the duplicates' counts; tokens as scispacy's tokenizer cuts them (the paper tokenizes
    with scispacy) unless ``count_tokens`` says."""
    count_tokens = count_tokens or scispacy_token_counter()
    lengths: dict[tuple[str, str], list[int]] = defaultdict(list)
    cite: dict[tuple[str, str], int] = defaultdict(int)
    tokens: dict[tuple[str, str], int] = defaultdict(int)
    paragraphs: dict[tuple[str, str], int] = defaultdict(int)
    papers: dict[tuple[str, str], set] = defaultdict(set)
    for split in SPLITS:
        for record in read_jsonl(Path(data_dir) / f"{split}.jsonl"):
            field = record[FIELD_OF_STUDY][0]
            for key in (("overall", ""), ("split", split), ("field", field)):
                paragraphs[key] += 1
                papers[key].add(record["paper_id"])
                for sample in record["samples"]:
                    lengths[key].append(len(sample["text"]))
                    tokens[key] += count_tokens(sample["text"])
                    cite[key] += sample["label"] == CITE_WORTHY

    def figures(key: tuple[str, str]) -> dict:
        n = len(lengths[key])
        return {
            "papers": len(papers[key]),
            "paragraphs": paragraphs[key],
            "sentences": n,
            "tokens": tokens[key],
            "cite_worthy": cite[key],
            "non_cite_worthy": n - cite[key],
            "cite_worthy_share": round(cite[key] / n, 4) if n else 0.0,
            "min_chars": min(lengths[key], default=0),
            "max_chars": max(lengths[key], default=0),
            "mean_chars": round(statistics.fmean(lengths[key]), 1) if n else 0.0,
            "median_chars": statistics.median(lengths[key]) if n else 0,
        }

    overall = figures(("overall", ""))
    fields = {}
    for _, name in sorted(k for k in lengths if k[0] == "field"):
        fields[name] = figures(("field", name))
        fields[name]["paragraph_share"] = round(fields[name]["paragraphs"] / overall["paragraphs"], 4)
        fields[name]["sentence_share"] = round(fields[name]["sentences"] / overall["sentences"], 4)
    return {
        "overall": overall,
        "splits": {s: figures(("split", s)) for s in SPLITS},
        "fields": fields,
        "funnel": funnel,
        "duplicates": duplicates,
    }


def stats_markdown(stats: dict) -> str:
    overall = stats["overall"]
    lines = [
        "# CiteWorth dataset statistics",
        "",
        "## Table 2",
        "",
        "| Metric | # |",
        "|---|---|",
        f"| Total sentences | {overall['sentences']:,} |",
        f"| Total number of tokens | {overall['tokens']:,} |",
        *[f"| {s.capitalize()} sentences | {stats['splits'][s]['sentences']:,} |" for s in SPLITS],
        f"| Total cite-worthy | {overall['cite_worthy']:,} ({100 * overall['cite_worthy_share']:.2f}%) |",
        f"| Total non-cite-worthy | {overall['non_cite_worthy']:,} "
        f"({100 - 100 * overall['cite_worthy_share']:.2f}%) |",
        f"| Min char length | {overall['min_chars']:,} |",
        f"| Max char length | {overall['max_chars']:,} |",
        f"| Average char length | {overall['mean_chars']:,} |",
        f"| Median char length | {overall['median_chars']:,} |",
        *[f"| {name} (share of paragraphs / sentences) | {100 * f['paragraph_share']:.2f}% / "
          f"{100 * f['sentence_share']:.2f}% |" for name, f in sorted(stats["fields"].items())],
        "",
        "Tokens: scispacy's tokenizer. The paper samples paragraphs evenly across its 10 fields "
        "(`assemble.per_field: smallest`); fields with no paragraph are not listed.",
        "",
        "## Per split and field",
        "",
        "| | papers | paragraphs | sentences | cite-worthy share |",
        "|---|---|---|---|---|",
    ]
    rows = [(s, stats["splits"][s]) for s in SPLITS] + sorted(stats["fields"].items())
    lines += [f"| {name} | {f['papers']:,} | {f['paragraphs']:,} | {f['sentences']:,} | "
              f"{100 * f['cite_worthy_share']:.2f}% |" for name, f in rows]
    lines += ["", "## Funnel", "", "```", *_funnel_lines(stats["funnel"]), "```", ""]
    lines += ["## Papers in several copies", "", *_duplicates_lines(stats["duplicates"]), ""]
    return "\n".join(lines)


def _duplicates_lines(counts: dict) -> list[str]:
    by_source = ", ".join(f"{source} {n:,}" for source, n in counts["dropped_by_source"].items())
    return [
        "A paper read from several sources (or twice from one) is kept once; the duplicates report "
        "(assemble.duplicates_path) names each one's copies, the one kept and why.",
        "",
        "| | # |",
        "|---|---|",
        f"| Copies of papers with kept paragraphs | {counts['copies']:,} |",
        f"| Papers found in several copies | {counts['papers_in_several_copies']:,} |",
        f"| Copies left out | {counts['dropped_copies']:,}{f' ({by_source})' if by_source else ''} |",
        f"| Their paragraphs | {counts['dropped_paragraphs']:,} |",
        f"| Papers (one copy each) | {counts['papers']:,} |",
    ]


def _funnel_lines(node: dict, indent: str = "") -> list[str]:
    lines = []
    for key in sorted(node):
        value = node[key]
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines += _funnel_lines(value, indent + "  ")
        else:
            lines.append(f"{indent}{key}: {value:,}" if isinstance(value, int) else f"{indent}{key}: {value}")
    return lines


def summarize(shard_stats: list[dict]) -> dict:
    """Merge per-shard stats into one funnel (sums of counts, merged reason counters)."""
    if failed := [stats["shard"] for stats in shard_stats if "failed" in stats]:
        raise StageFailed(f"shard(s) {failed} failed curation (their stats files say why): "
                          "rerun curate first")
    total: dict = {}
    for stats in shard_stats:
        _add_into(total, {"curation": stats["curation"], "quarantined": stats["quarantined"]})
    total["shards"] = len(shard_stats)
    return total


def _add_into(total: dict, part: dict) -> None:
    for key, value in part.items():
        if isinstance(value, dict):
            _add_into(total.setdefault(key, {}), value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value
