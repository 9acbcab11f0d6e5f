"""The silver stage end to end on the project's fixture corpus (two papers citing a third), and the
paper's Table 1 examples against the cutoff the stage tunes on the gold file."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from silver_corpus import write_silver_corpus

from citeworth.core.errors import StageFailed
from citeworth.core.io import read_jsonl, sha256_file
from citeworth.core.params import build
from citeworth.corpora.silver.cleaning import clean
from citeworth.corpora.silver.params import SilverParams, SimilarityParams
from citeworth.corpora.silver.similarity import Embedder, quantise
from citeworth.corpora.silver.stage import silver
from citeworth.models.encoders import encoder_digest
from citeworth.quality.silver import check_silver

ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "gold" / "citation_linkage.tsv"
PAPER = "citation-linkage-silver-corpus-roy-mercer.txt"
TINY_MODEL = {"hidden": 16, "optim": {"batch_size": 8, "epochs": 1, "max_steps": 2, "eval_batch_size": 32}}


def stage_params(root: Path, glob: str, **values) -> SilverParams:
    return build(SilverParams, {
        "inputs": [{"reader": "s2orc_json", "glob": glob}], "data_dir": str(root / "data" / "citeworth"),
        "gold_path": str(GOLD), "out_dir": str(root / "data" / "silver"),
        "reports_dir": str(root / "reports" / "silver"),
        "metrics_path": str(root / "reports" / "silver" / "metrics.json"),
        "models_dir": str(root / "models" / "silver"), "checkpoints_dir": str(root / "checkpoints"),
        "similarity": {"cache_dir": str(root / "cache")}, "model": TINY_MODEL, **values}, where="silver")


def outputs(params: SilverParams) -> dict[str, bytes]:
    folders = [Path(params.out_dir), Path(params.reports_dir), Path(params.models_dir)]
    return {str(path): path.read_bytes() for folder in folders for path in sorted(folder.rglob("*"))
            if path.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("silver")
    params = stage_params(root, write_silver_corpus(root))
    return params, silver(params)


def pairs_of(params: SilverParams, split: str) -> list[dict]:
    return list(read_jsonl(Path(params.out_dir) / f"{split}.jsonl"))


def test_the_fixture_corpus_is_linked_and_everything_unpaired_is_counted(built):
    params, counts = built
    assert counts["papers"] == 4 and counts["citing_papers"] == 2
    # a-citing: 2 sentences cite c-cited by DOI, 1 d-abstract, 1 an outside paper; b-citing cites
    # c-cited by title and itself
    linked = counts["citations_linked"], counts["citations_not_in_corpus"], counts["self_citations"]
    assert linked == (4, 1, 1)
    assert (counts["sentences_unresolved_citation"], counts["sentences_too_many_citations"]) == (1, 1)
    assert (counts["cited_papers_full_text"], counts["cited_papers_abstract"]) == (1, 1)
    assert counts["pairs_scored"] == 3 * 8 + 3  # three sentences x c-cited's 8, one x d-abstract's 3
    train, dev, test = (pairs_of(params, split) for split in ("train", "dev", "test"))
    assert {p["citing_paper_id"] for p in train} == {"a-citing"} and dev == []
    assert {p["citing_paper_id"] for p in test} == {"b-citing"}
    assert {(p["cited_paper_id"], p["cited_from"]) for p in train} == {("c-cited", "full_text"),
                                                                       ("d-abstract", "abstract")}
    best = max(train, key=lambda p: p["score"] if p["citing_id"].endswith("#s00000") else -1)
    assert best["label"] == 1 and best["cited_original"].startswith("Tissue stored at minus eighty degrees")
    assert best["citing_text"] == clean(best["citing_original"]) and "[1]" not in best["citing_original"]
    assert counts["pairs_train"] + counts["pairs_test"] == len(train) + len(test)


def test_every_citing_sentence_keeps_as_many_negatives_as_positives(built):
    params, counts = built
    by_sentence: dict[str, list[int]] = {}
    for split in ("train", "dev", "test"):
        for pair in pairs_of(params, split):
            by_sentence.setdefault(pair["citing_id"], []).append(pair["label"])
    assert len(by_sentence) == counts["citing_sentences_with_positive"] == 4
    assert all(labels.count(1) == labels.count(0) > 0 for labels in by_sentence.values())
    metrics = json.loads(Path(params.metrics_path).read_text())
    assert metrics["quality"]["silver_balance.positives_equal_negatives"]["success"]
    assert (Path(params.reports_dir) / "quality" / "index.html").exists()


def test_the_quality_check_fails_an_unbalanced_corpus(built, tmp_path):
    params, _ = built
    tampered = tmp_path / "silver"
    shutil.copytree(params.out_dir, tampered)
    lines = (tampered / "train.jsonl").read_text().splitlines()
    negative = next(i for i, line in enumerate(lines) if json.loads(line)["label"] == 0)
    (tampered / "train.jsonl").write_text("\n".join(lines[:negative] + lines[negative + 1:]) + "\n")
    with pytest.raises(StageFailed, match="silver_balance.positives_equal_negatives"):
        check_silver(tampered, tmp_path / "site")


def test_cutoff_json_records_the_grid_the_choice_and_the_hashes(built):
    params, _ = built
    cutoff = json.loads((Path(params.reports_dir) / "cutoff.json").read_text())
    assert cutoff["gold"]["sha256"] == sha256_file(GOLD) and cutoff["gold"]["dev_pairs"] == 49
    assert cutoff["similarity"]["encoder_sha256"] == encoder_digest("embedded")
    assert [row["cutoff"] for row in cutoff["grid"]] == [round(i / 100, 2) for i in range(101)]
    best = max(row["mcc"] for row in cutoff["grid"])
    assert cutoff["chosen"]["mcc"] == best
    assert cutoff["chosen"]["cutoff"] == min(row["cutoff"] for row in cutoff["grid"] if row["mcc"] == best)
    assert all(p["score"] >= cutoff["chosen"]["cutoff"] for p in pairs_of(params, "train") if p["label"] == 1)
    assert all(p["score"] < cutoff["chosen"]["cutoff"] for p in pairs_of(params, "train") if p["label"] == 0)


def test_the_report_has_the_counts_the_cutoff_and_the_model_rows(built):
    params, _ = built
    report = (Path(params.reports_dir) / "report.md").read_text()
    assert "| citations linked to a corpus paper | 4 |" in report
    assert "siamese, trained on the silver corpus" in report and "cosine >= cutoff" in report
    assert (Path(params.models_dir) / "silver" / "siamese_head.safetensors").exists()
    assert (Path(params.models_dir) / "gold" / "siamese_head.safetensors").exists()


@pytest.mark.slow
def test_a_rerun_writes_the_same_bytes(built):
    params, counts = built
    before = outputs(params)
    assert silver(params) == counts
    assert outputs(params) == before


def test_the_curated_samples_can_be_the_citing_sentences_and_tfidf_the_similarity(tmp_path):
    params = stage_params(tmp_path, write_silver_corpus(tmp_path), citing="dataset",
                          similarity={"method": "tfidf", "cache_dir": str(tmp_path / "cache")})
    counts = silver(params)
    assert counts["citations_linked"] == 4 and counts["sentences_too_many_citations"] == 1
    cutoff = json.loads((Path(params.reports_dir) / "cutoff.json").read_text())
    assert cutoff["similarity"]["method"] == "tfidf" and cutoff["similarity"]["vocabulary"] > 100
    ids = {p["citing_id"] for p in pairs_of(params, "train")}
    assert ids and all(re.fullmatch(r"s2orc_json/a-citing#p00000\.00\d", i) for i in ids)


def test_params_are_checked_before_any_work(tmp_path):
    from citeworth.core.params import ParamsError

    with pytest.raises(ParamsError, match="silver.citing"):
        silver(stage_params(tmp_path, "x", citing="abstracts"))
    with pytest.raises(ParamsError, match="unknown rule"):
        silver(stage_params(tmp_path, "x", cleaning=["stemming"]))


# --- the paper's Table 1 ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def paper_text(mirror) -> str:
    """Roy & Mercer's text from ../shared/papers (beside the checkout or the mirror)."""
    for folder in (ROOT.parent / "shared" / "papers", Path(os.environ["CITEWORTH_MIRROR"]).parent / "papers"):
        if (folder / PAPER).exists():
            return (folder / PAPER).read_text(encoding="utf-8")
    pytest.fail(f"{PAPER} not found in ../shared/papers")


def table1_examples(text: str) -> list[tuple[str, str]]:
    """The (citing, cited) statements of the paper's Table 1, their trailing citations dropped.
    The table is laid out in tab-separated rows whose third cell holds the statements' lines."""
    lines = text[text.index("Table 1:"):].splitlines()[1:]
    content = []
    for line in lines:
        if line.strip() and "\t" not in line:
            break  # the paper's text resumes
        cells = line.split("\t")
        if len(cells) > 2 and cells[2].strip():
            content.append(cells[2].strip())
    statements = re.findall(r"(.+?)\s*\([A-Z][^()]*?,\s*\d{4}\)\s*", " ".join(content))
    return list(zip(statements[0::2], statements[1::2], strict=True))


def test_the_tuned_cutoff_links_each_of_table_1_s_examples(built, paper_text):
    """Each of the three linked pairs scores at least the cutoff tuned on the gold dev pairs, and
    each citing statement scores its own cited statement above the other examples' cited ones."""
    params, _ = built
    examples = table1_examples(paper_text)
    assert len(examples) == 3 and examples[1][0].startswith("DNA samples are frequently harmed")
    cutoff = json.loads((Path(params.reports_dir) / "cutoff.json").read_text())["chosen"]["cutoff"]
    embedder = Embedder(SimilarityParams(cache_dir=Path(params.similarity.cache_dir)))
    citing, cited = (embedder.embed([clean(pair[side]) for pair in examples]) for side in (0, 1))
    scores = quantise(citing @ cited.T, 4) / 1e4  # rows: citing statements, columns: cited ones
    assert all(scores[i, i] >= cutoff for i in range(3)), (scores, cutoff)
    assert all(np.argmax(scores[i]) == i for i in range(3)), scores
