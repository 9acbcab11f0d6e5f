"""``reports/related_work_stats.{json,md}``: what the related-work dataset holds, per source."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from citeworth.corpora.related_work.record import CITED, mapped_anchors

COUNTS = ("papers", "bad_records", "papers_with_section", "sentences", "sentences_with_citation",
          "anchors", "anchors_mapped", "cited_papers", "cited_with_title", "cited_with_abstract",
          "abstracts_from_corpus", "abstracts_from_lookup")
# share name -> (numerator, denominator)
SHARES = {
    "section_found": ("papers_with_section", "papers"),
    "sentences_with_citation": ("sentences_with_citation", "sentences"),
    "anchors_mapped": ("anchors_mapped", "anchors"),
    "cited_with_abstract": ("cited_with_abstract", "cited_papers"),
}


class RelatedWorkStats:
    def __init__(self) -> None:
        self.by_source: dict[str, Counter] = defaultdict(Counter)
        self.titles: Counter = Counter()

    def paper(self, source: str) -> None:
        self.by_source[source]["papers"] += 1

    def bad_record(self, source: str) -> None:
        self.by_source[source]["bad_records"] += 1

    def record(self, pending: dict, finished: dict, origins: dict[str, str]) -> None:
        """Count one record: ``pending`` still holds the mapped entries, ``finished`` the abstracts;
        ``origins`` says where each found abstract came from ("corpus" | "lookup")."""
        counts = self.by_source[finished["source"]]
        mapped = pending[CITED]
        counts["papers_with_section"] += 1
        counts["sentences"] += len(finished["Sentences"])
        counts["sentences_with_citation"] += sum(finished["AnswersCitationWorthiness"])
        counts["anchors"] += sum(finished["CitedNumberList"])
        counts["anchors_mapped"] += mapped_anchors(pending)
        counts["cited_papers"] += len(mapped)
        counts["cited_with_title"] += sum(index in finished["CitedPaperTitle"] for index in mapped)
        counts["cited_with_abstract"] += len(finished["CitedPaperText"])
        for origin in origins.values():
            counts[f"abstracts_from_{origin}"] += 1
        self.titles[finished["section_title"]] += 1

    def to_dict(self, lookup: dict) -> dict:
        overall = Counter()
        for counts in self.by_source.values():
            overall.update(counts)
        return {
            "overall": _row(overall),
            "per_source": {source: _row(counts) for source, counts in sorted(self.by_source.items())},
            "lookup": lookup,
        }

    def section_titles(self) -> list[tuple[str, int]]:
        """Titles of the sections found, most frequent first (for the report, not the metrics)."""
        return sorted(self.titles.items(), key=lambda item: (-item[1], item[0]))


def _row(counts: Counter) -> dict:
    row: dict = {name: counts.get(name, 0) for name in COUNTS}
    for share, (numerator, denominator) in SHARES.items():
        row[f"share_{share}"] = round(row[numerator] / row[denominator], 4) if row[denominator] else None
    return row


def markdown(stats: dict, titles: list[tuple[str, int]], data_path: Path) -> str:
    columns = [("papers", "papers"), ("with section", "papers_with_section"), ("sentences", "sentences"),
               ("with citation", "share_sentences_with_citation"), ("anchors", "anchors"),
               ("mapped", "share_anchors_mapped"), ("cited papers", "cited_papers"),
               ("with title", "cited_with_title"), ("with abstract", "cited_with_abstract"),
               ("bad records", "bad_records")]
    rows = [*stats["per_source"].items(), ("**all**", stats["overall"])]
    lines = [
        "# Related-work dataset (Kobayashi et al. format)",
        "",
        "Related-work sections found, their sentences, citation anchors mapped to a bibliography entry and "
        "cited papers whose abstract was found (in the corpus, or by the optional lookup). "
        f"Data: `{data_path.as_posix()}`.",
        "",
        "| source | " + " | ".join(name for name, _ in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
        *(f"| {source} | {' | '.join(_cell(row[key]) for _, key in columns)} |" for source, row in rows),
        "",
        f"Abstracts from the corpus: {stats['overall']['abstracts_from_corpus']}, from the lookup: "
        f"{stats['overall']['abstracts_from_lookup']} (providers: "
        f"{', '.join(stats['lookup']['providers']) or 'none, off'}; requests {stats['lookup']['requests']}, "
        f"errors {stats['lookup']['errors']}).",
        "",
        "## Section titles found",
        "",
        "| title | papers |",
        "|---|---|",
        *(f"| {title} | {count} |" for title, count in titles),
        "",
    ]
    return "\n".join(lines)


def _cell(value) -> str:
    if value is None:
        return "–"
    return f"{value:.1%}" if isinstance(value, float) else str(value)
