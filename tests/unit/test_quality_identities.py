"""The gate's paper identities per split: a paper is known by every identifier curation recorded for
it, so two copies of one paper in two splits are caught whatever their paper ids."""

from __future__ import annotations

import pandas as pd
import pytest

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_jsonl
from citeworth.quality.tables import split_identities

# Dataset papers (split, source, shard, paper id), one row per paragraph.
PARAGRAPHS = pd.DataFrame(
    [("train", "jats", "a", "PMC1"), ("train", "jats", "a", "PMC1"), ("test", "s2orc_json", "b", "111"),
     ("train", "s2orc_json", "b", "222"), ("dev", "tei", "c", "t2"), ("dev", "tei", "c", "t9")],
    columns=["split", "source", "shard", "paper_id"])
COPIES = {
    "jats__a": [{"paper_id": "PMC1", "ids": {"pmcid": "PMC1", "doi": "10.1/one"}, "fallback": None}],
    "s2orc_json__b": [{"paper_id": "111", "ids": {"s2": "111", "pmcid": "PMC1"}, "fallback": None},
                      {"paper_id": "222", "ids": {"s2": "222"}, "fallback": "fallback:2"}],
    "tei__c": [{"paper_id": "t2", "ids": {}, "fallback": "fallback:2"},
               {"paper_id": "t9", "ids": {}, "fallback": None}],
}


def curated(folder, copies=COPIES):
    for key, records in copies.items():
        write_jsonl(folder / "papers" / f"{key}.jsonl", records)
    return folder


def test_copies_of_one_paper_in_two_splits_are_one_identity_in_two_rows(tmp_path):
    table = split_identities(PARAGRAPHS, curated(tmp_path))
    assert table.to_dict("records") == [
        {"identity": "doi:10.1/one", "split": "train", "paper_id": "PMC1"},
        {"identity": "doi:10.1/one", "split": "test", "paper_id": "111"},  # shares PMC1's PMC id
        {"identity": "s2:222", "split": "train", "paper_id": "222"},
        {"identity": "s2:222", "split": "dev", "paper_id": "t2"},  # no identifier: the fallback key
        {"identity": "paper_id:t9", "split": "dev", "paper_id": "t9"},  # nothing but its id
    ]
    assert table["identity"].duplicated(keep=False).sum() == 4  # what identity_in_one_split flags


def test_without_curated_shards_papers_are_known_by_their_ids():
    table = split_identities(PARAGRAPHS, None)
    assert list(table["identity"]) == ["paper_id:PMC1", "paper_id:111", "paper_id:222", "paper_id:t2",
                                       "paper_id:t9"]


def test_a_dataset_paper_curation_has_no_record_of_is_named(tmp_path):
    copies = {**COPIES, "tei__c": COPIES["tei__c"][:1]}
    with pytest.raises(StageFailed, match=r"paper 't9' \(dev\) has no record in .*papers/tei__c.jsonl"):
        split_identities(PARAGRAPHS, curated(tmp_path, copies))
    with pytest.raises(StageFailed, match="no curated papers in"):
        split_identities(PARAGRAPHS, tmp_path / "nowhere")
