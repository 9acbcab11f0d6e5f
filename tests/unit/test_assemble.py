"""Field sampling and paper-level splits of the assemble stage."""

from pathlib import Path

import pytest

from citeworth.curate.assemble import Entry, sample_by_field, split_by_paper

DUPLICATES = {"copies": 4, "papers": 4, "papers_in_several_copies": 0, "dropped_copies": 0,
              "dropped_paragraphs": 0, "dropped_by_source": {}}


def entries(papers: int, per_paper: int, field: str) -> list[Entry]:
    return [Entry(f"{field[:3]}{p}", i, field, Path("x"), 0, copy=p)
            for p in range(papers) for i in range(per_paper)]


def test_split_never_puts_one_paper_in_two_splits_and_tracks_fractions():
    data = entries(200, 3, "Physics") + entries(100, 2, "Biology")
    splits = split_by_paper(data, [0.8, 0.1, 0.1], seed=1)
    owners = {}
    for name, chunk in splits.items():
        for entry in chunk:
            assert owners.setdefault(entry.paper_id, name) == name
    assert sum(len(c) for c in splits.values()) == len(data)
    for field, total in (("Physics", 600), ("Biology", 200)):
        dev = sum(e.field == field for e in splits["dev"])
        assert 0.08 * total <= dev <= 0.12 * total, (field, dev)


def test_split_is_deterministic_and_seeded():
    data = entries(50, 2, "Physics")
    fractions = [0.8, 0.1, 0.1]
    assert split_by_paper(data, fractions, 1) == split_by_paper(list(reversed(data)), fractions, 1)
    assert split_by_paper(data, fractions, 1) != split_by_paper(data, fractions, 2)


@pytest.mark.parametrize("per_field, expected", [(None, {"Physics": 30, "Biology": 4}),
                                                  ("smallest", {"Physics": 4, "Biology": 4}),
                                                  (10, {"Physics": 10, "Biology": 4})])
def test_sampling_caps_each_field(per_field, expected):
    data = entries(10, 3, "Physics") + entries(2, 2, "Biology")
    kept = sample_by_field(data, per_field, None, seed=1)
    assert {f: sum(e.field == f for e in kept) for f in expected} == expected


def test_sampling_can_restrict_fields():
    data = entries(3, 1, "Physics") + entries(2, 1, "Biology")
    assert {e.field for e in sample_by_field(data, None, ["Biology"], seed=1)} == {"Biology"}


def test_table_2_counts_scispacy_tokens_and_reports_field_shares(tmp_path):
    from citeworth.core.io import write_jsonl
    from citeworth.curate.stats import dataset_stats, stats_markdown

    def record(paper, field, *texts):
        return {"paper_id": paper, "mag_field_of_study": [field],
                "samples": [{"text": t, "label": "non-check-worthy"} for t in texts]}

    sentence = "The IL-2 receptor (CD25) binds IL-2 with high affinity, e.g. in T-cells."
    write_jsonl(tmp_path / "train.jsonl", [record("a", "Biology", sentence, sentence),
                                           record("b", "Biology", sentence),
                                           record("c", "Physics", sentence)])
    write_jsonl(tmp_path / "dev.jsonl", [])
    write_jsonl(tmp_path / "test.jsonl", [record("d", "Physics", sentence)])
    stats = dataset_stats(tmp_path, {}, DUPLICATES)
    scispacy = stats["overall"]["tokens"] // 5
    assert stats["overall"]["tokens"] == 5 * scispacy
    assert scispacy != len(sentence.split()) and 15 <= scispacy <= 25  # "IL-2" stays one token, "(" splits
    fields = stats["fields"]
    assert (fields["Biology"]["paragraph_share"], fields["Physics"]["paragraph_share"]) == (0.5, 0.5)
    assert (fields["Biology"]["sentence_share"], fields["Physics"]["sentence_share"]) == (0.6, 0.4)
    assert "| Physics (share of paragraphs / sentences) | 50.00% / 40.00% |" in stats_markdown(stats)
