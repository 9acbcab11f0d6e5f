"""The LaTeX reader on the four mirrored LaTeX papers, with the demo's arXiv-style category rows:
identifiers, fields, every in-text citation resolved, and SciPy's reference to SymPy linked to the
SymPy paper by DOI and normalised title."""

from __future__ import annotations

import pytest

from citeworth.core.paper import Paper
from citeworth.download.demo import LATEX_METADATA
from citeworth.sources import BadRecord, discover_shards, read_shard
from citeworth.sources.latex.bibliography import normalised_title

PAPERS = {
    "2004.14974": "github/allenai/s2orc-doc2json/tests/latex/2004.14974.gz",
    "scipy-1.0": "github/scipy/scipy-articles/scipy-1.0",
    "sympy-paper": "github/scolobb/sympy-paper",
    "minimap2": "github/lh3/minimap2/tex",
}


@pytest.fixture(scope="module")
def papers(mirror) -> dict[str, Paper]:
    found = {}
    for path in PAPERS.values():
        for shard in discover_shards("arxiv_latex", str(mirror / path), metadata=str(LATEX_METADATA)):
            for item in read_shard(shard):
                assert not isinstance(item, BadRecord), item
                found[item.paper_id] = item
    return found


def test_ids_titles_and_fields(papers):
    assert {pid: (p.ids, p.fields_of_study[0]) for pid, p in papers.items()} == {
        "2004.14974": ({"arxiv": "2004.14974", "doi": "10.18653/v1/2020.emnlp-main.609"}, "cs.CL"),
        "scipy-1.0": ({"arxiv": "1907.10121", "doi": "10.1038/s41592-019-0686-2"}, "cs.MS"),
        "sympy-paper": ({"doi": "10.7717/peerj-cs.103"}, "cs.SC"),
        "minimap2": ({"arxiv": "1708.01492", "doi": "10.1093/bioinformatics/bty191"}, "q-bio.GN"),
    }
    assert papers["2004.14974"].metadata["main_file"] == "emnlp2020.tex"  # not the stale _old-*.tex


def test_every_in_text_citation_is_resolved(papers):
    for paper in papers.values():
        cites = [c for p in paper.paragraphs for c in p.cite_spans]
        assert cites and all(c.ref_id in paper.bib_entries for c in cites), paper.paper_id
        assert all(
            p.text[c.start : c.end] == f"{{{{cite:{c.ref_id}}}}}"
            for p in paper.paragraphs
            for c in p.cite_spans
        )


def test_scipy_cites_the_sympy_paper_by_doi_and_title(papers):
    scipy, sympy = papers["scipy-1.0"], papers["sympy-paper"]
    entry = scipy.bib_entries["doi:10.7717/peerj-cs.103"]
    assert entry.ids["doi"] == sympy.ids["doi"]
    assert (
        normalised_title(entry.title) == normalised_title(sympy.title) == "sympy symbolic computing in python"
    )
    assert entry.authors[0] == "Meurer" and entry.year == 2017
    # SciPy's own alias \inlinecite{...} stands for \citen: its citations are in the text too.
    assert sum("{{cite:" in p.text for p in scipy.paragraphs) > 40
