"""A curated shard is reused only while its inputs, rules and code are unchanged.

Airflow's ``curate_shard`` task runs ``citeworth.curate.stage.curate_shard`` one shard at a time and
the version task then ``dvc commit --force``s the outputs: a shard curated by older code must be
curated again, not recorded under the new code's hash.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from citeworth.curate import stage
from citeworth.sources import InputSpec

PAPER = "github/titipata/pubmed_parser/data/1472-6831-8-11.nxml"  # a real PMC article (JATS)


@pytest.fixture
def params(tmp_path, mirror, monkeypatch) -> stage.CurateParams:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "raw").mkdir()
    shutil.copy(mirror / PAPER, tmp_path / "raw" / Path(PAPER).name)
    return stage.CurateParams(inputs=[InputSpec("jats", "raw/*.nxml", release="t")])


@pytest.fixture
def curations(monkeypatch) -> list[int]:
    """One entry per shard actually curated (a finished shard never builds a Curator)."""
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

    edit_code("curate/data/permissible_sections.txt")  # a rule file shipped with the code
    stage.curate_shard(params, key)
    assert len(curations) == 4

    stricter = dataclasses.replace(params, rules=dataclasses.replace(params.rules, min_sentence_chars=30))
    stage.curate_shard(stricter, key)  # a rule in params.yaml
    assert len(curations) == 5


def test_an_edit_outside_the_shard_code_reuses_it(params, curations, edit_code):
    (key,) = stage.list_shards(params)
    stage.curate_shard(params, key)
    edit_code("models/tfidf.py")
    stage.curate_shard(params, key)
    assert len(curations) == 1
