"""A paper's identity across sources: its keys, and copies grouped into papers."""

import pytest

from citeworth.core.identity import (
    IdentityGroups,
    copy_record,
    fallback_key,
    group_copies,
    identifier_keys,
    surname_key,
)
from citeworth.core.paper import Paper


@pytest.mark.parametrize(("name", "surname"), [
    ("Adrián Pérez-Salinas", "perezsalinas"), ("Marylee J van der Meulen", "meulen"),
    ("John Smith Jr.", "smith"), ("Henry Ford II", "ford"), ("  ", ""), (None, ""),
])
def test_surname_key(name, surname):
    assert surname_key(name) == surname


def test_the_fallback_key_ignores_spelling_and_needs_title_author_and_year():
    key = fallback_key("Factors influencing lysis time.", ["John J Dennehy"], 2011)
    assert key and key.startswith("fallback:")
    assert fallback_key(" factors  INFLUENCING lysis time", ["J. Dennehy", "Ing-Nang Wang"], 2011) == key
    assert fallback_key("Factors influencing lysis time", ["John J Dennehy"], 2012) != key
    assert fallback_key("Factors influencing lysis time", ["Ing-Nang Wang"], 2011) != key
    for title, authors, year in ((None, ["Dennehy"], 2011), ("T", [], 2011), ("T", ["D"], None)):
        assert fallback_key(title, authors, year) is None


def test_a_copy_record_carries_what_grouping_and_the_report_need():
    paper = Paper("PMC1", "A title", (), [], source="jats", ids={"pmcid": "PMC1", "doi": "10.1/a"},
                  authors=("Ada Lovelace",), metadata={"year": 2020})
    record = copy_record(paper, 3)
    assert record == {"paper_id": "PMC1", "source": "jats", "ids": {"pmcid": "PMC1", "doi": "10.1/a"},
                      "title": "A title", "fallback": fallback_key("A title", ["Ada Lovelace"], 2020),
                      "paragraphs": 3}
    assert identifier_keys(record["ids"]) == ["doi:10.1/a", "pmcid:PMC1"]


def copy(ids: dict, fallback: str | None = None) -> dict:
    return {"ids": ids, "fallback": fallback}


def test_copies_sharing_an_identifier_are_one_paper_transitively_rooted_at_the_first():
    groups = group_copies([copy({"doi": "x"}), copy({"s2": "1"}), copy({"doi": "x", "s2": "1"}),
                           copy({"doi": "y"})])
    assert [groups.root(n) for n in range(4)] == [0, 0, 0, 3]


def test_the_fallback_links_only_copies_without_an_identifier_kind_in_common():
    groups = group_copies([
        copy({"doi": "x"}, "fallback:f"),   # 0
        copy({"doi": "y"}, "fallback:f"),   # 1: another DOI: not linked to 0, whatever its title ...
        copy({"s2": "9"}, "fallback:f"),    # 2: no kind in common with 0 or 1
        copy({"doi": "z"}, "fallback:g"),   # 3
        copy({}, None),                     # 4: nothing to link by
    ])
    # ... but the S2 copy, which contradicts neither DOI, links both: a paper is every copy linked,
    # through others (a preprint and its published version, each with its own DOI)
    assert {groups.root(n) for n in (0, 1, 2)} == {0} and groups.root(3) == 3 and groups.root(4) == 4


def test_without_a_third_copy_two_dois_stay_two_papers_and_copies_without_ids_link_by_title():
    groups = group_copies([copy({"doi": "x"}, "fallback:f"), copy({"doi": "y"}, "fallback:f"),
                           copy({}, "fallback:g"), copy({}, "fallback:g")])
    assert [groups.root(n) for n in range(4)] == [0, 1, 2, 2]


def test_union_keeps_the_smaller_copy_as_root():
    groups = IdentityGroups(5)
    groups.union(4, 2)
    groups.union(3, 4)
    groups.union(1, 3)
    assert [groups.root(n) for n in range(5)] == [0, 1, 1, 1, 1] and len(groups) == 5
