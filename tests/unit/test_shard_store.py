"""Where curated shards are kept for reuse (one store for every worktree of a repository, or the
folder or bucket the variable names), and how the store stays within its size limit."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from citeworth.core.errors import InvalidSetting
from citeworth.curate import shard_store, store_settings
from citeworth.curate.s3_shard_store import S3ShardStore
from citeworth.curate.shard_store import Entry, LocalShardStore, ShardOutputs


def _git(*args, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_every_worktree_of_a_repository_shares_one_store(tmp_path, monkeypatch):
    monkeypatch.delenv(store_settings.STORE_ENV, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start",
         cwd=project)
    _git("worktree", "add", "-q", "--detach", str(tmp_path / "run"), cwd=project)
    expected = (project / ".git" / "citeworth" / "shards").resolve()
    assert store_settings.configured_store(project / "sub").root == expected
    assert store_settings.configured_store(tmp_path / "run").root.resolve() == expected
    assert store_settings.configured_store(tmp_path / "elsewhere") is None  # no checkout: no store


def test_the_variable_names_a_folder_or_a_bucket_or_turns_the_store_off(tmp_path, monkeypatch):
    monkeypatch.setenv(store_settings.STORE_ENV, str(tmp_path / "store"))
    local = store_settings.configured_store(tmp_path)
    assert isinstance(local, LocalShardStore) and local.root == tmp_path / "store"
    assert local.limit == 20 * 10**9  # the default
    monkeypatch.setenv(store_settings.STORE_ENV, "s3://bucket/some/prefix/")
    monkeypatch.setenv(store_settings.LIMIT_ENV, "500MB")
    remote = store_settings.configured_store(tmp_path)
    assert isinstance(remote, S3ShardStore) and remote.limit == 500 * 10**6
    assert remote.where("abc") == "s3://bucket/some/prefix/abc"
    monkeypatch.setenv(store_settings.STORE_ENV, "off")
    assert store_settings.configured_store(tmp_path) is None


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix"])
def test_an_s3_url_without_a_bucket_is_refused_naming_the_variable(url, monkeypatch):
    """A setting error (``citeworth`` exits 2 with it), not a ValueError's traceback."""
    monkeypatch.setenv(store_settings.STORE_ENV, url)
    with pytest.raises(InvalidSetting, match=rf"^{store_settings.STORE_ENV}: '{url}' names no bucket: give "
                                             "s3://bucket/prefix; or name a folder, or off$"):
        store_settings.configured_store()


@pytest.mark.parametrize(("text", "size"), [
    ("20GB", 20 * 10**9), ("500MB", 500 * 10**6), ("500 mb", 500 * 10**6), ("1.5GiB", 3 * 2**29),
    ("4096", 4096), ("7b", 7), ("2kB", 2000), ("3 KiB", 3072), ("1TB", 10**12), (" 10MiB ", 10 * 2**20)])
def test_sizes_in_decimal_and_binary_units(text, size):
    assert store_settings.parse_size(text) == size


@pytest.mark.parametrize("text", [" ", "0", "0GB", "0.1", "-5MB", "GB", "20 GBs", "20 pc", "1e9", "1,000"])
def test_a_limit_that_is_not_a_positive_size_is_refused_naming_the_variable(text, tmp_path, monkeypatch):
    monkeypatch.setenv(store_settings.STORE_ENV, str(tmp_path / "store"))
    monkeypatch.setenv(store_settings.LIMIT_ENV, text)
    with pytest.raises(ValueError, match=rf"{store_settings.LIMIT_ENV}: '{text}' is not a size.*=off turns"):
        store_settings.configured_store(tmp_path)


def test_the_least_recently_used_go_first_and_the_entry_added_never():
    entries = [Entry("new", 40, 5.0), Entry("old", 30, 1.0), Entry("mid", 20, 3.0), Entry("older", 10, 2.0)]
    def evicted(limit: int, keep: str) -> list[str]:
        return [entry.fingerprint for entry in shard_store.least_recently_used(entries, limit, keep)]

    assert evicted(100, keep="new") == []  # 100 bytes fit
    assert evicted(95, keep="new") == ["old"]
    assert evicted(60, keep="new") == ["old", "older"]
    assert evicted(60, keep="old") == ["older", "mid", "new"]
    assert evicted(1, keep="new") == ["old", "older", "mid"]  # the entry added stays, alone over the limit


# --- the folder store ------------------------------------------------------------------------------

def _finished(folder: Path, stats: str = '{"shard": "x"}\n', size: int = 0) -> ShardOutputs:
    """A finished shard's files (the paragraphs ``size`` bytes)."""
    outputs = ShardOutputs.in_folder(folder)
    folder.mkdir(parents=True)
    for path, text in zip(outputs.files(), ("p" * size + "\n", "c\n", "q\n", stats), strict=True):
        path.write_text(text)
    return outputs


def _read(store, fingerprint: str) -> str | None:
    with store.find(fingerprint) as found:
        return found.stats.read_text() if found else None


def test_an_entry_appears_whole_and_the_first_one_stays(tmp_path):
    finished = _finished(tmp_path / "done")
    store = LocalShardStore(tmp_path / "store", limit=10**6)
    assert _read(store, "abc") is None
    store.add("abc", finished)
    finished.stats.unlink()
    finished.stats.write_text('{"shard": "y"}\n')  # a later run's output (written anew, as all are)
    store.add("abc", finished)
    assert _read(store, "abc") == '{"shard": "x"}\n'
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["abc"]  # no temporaries left


def test_an_entry_is_sized_by_its_files_each_inode_once(tmp_path):
    store = LocalShardStore(tmp_path / "store", limit=10**6)
    store.add("abc", _finished(tmp_path / "done", stats="{}\n", size=999))
    (entry,) = store.entries()
    assert entry.size == 1000 + 2 + 2 + 3  # hard links to the outputs count in full, once
    assert (tmp_path / "store" / "abc" / "paragraphs.jsonl").stat().st_nlink == 2  # linked, not copied


def test_adding_evicts_the_least_recently_used_entries_down_to_the_limit(tmp_path, caplog):
    store = LocalShardStore(tmp_path / "store", limit=3500)  # three entries of ~1 kB fit, not four
    for name in ("a", "b", "c"):
        store.add(name, _finished(tmp_path / name, size=1000))
    assert _read(store, "a")  # used: now the most recently used
    with caplog.at_level(logging.INFO, logger="citeworth.curate.shard_store"):
        store.add("d", _finished(tmp_path / "d", size=1000))
    assert sorted(e.fingerprint for e in store.entries()) == ["a", "c", "d"]  # b went, not a
    assert "over its limit of 3500 bytes: evicted b" in caplog.text
    assert sum(e.size for e in store.entries()) <= 3500
    assert [p.name for p in (tmp_path / "store").iterdir() if p.name.startswith(".")] == []

    store.add("huge", _finished(tmp_path / "huge", size=10_000))  # alone over the limit: kept, all else not
    assert [e.fingerprint for e in store.entries()] == ["huge"]
    assert _read(store, "huge") is not None


def test_a_reader_keeps_what_it_found_while_an_eviction_removes_the_entry(tmp_path):
    store = LocalShardStore(tmp_path / "store", limit=10**6)
    store.add("abc", _finished(tmp_path / "done", size=100))
    with store.find("abc") as found:
        store.discard("abc")  # what eviction does: moved aside, then deleted
        assert not (tmp_path / "store" / "abc").exists()
        assert found.paragraphs.read_text() == "p" * 100 + "\n"
        assert found.stats.read_text() == '{"shard": "x"}\n'
    assert _read(store, "abc") is None  # moved aside: simply not found
    assert list((tmp_path / "store").iterdir()) == []  # the reader's scratch is gone too


def test_an_entry_moved_aside_while_found_is_not_found(tmp_path, monkeypatch):
    store = LocalShardStore(tmp_path / "store", limit=10**6)
    store.add("abc", _finished(tmp_path / "done"))
    real_link = os.link

    def link_then_lose_the_entry(source, target):  # an eviction between two of the reader's links
        real_link(source, target)
        if (tmp_path / "store" / "abc").exists():
            store.discard("abc")

    monkeypatch.setattr(shard_store.os, "link", link_then_lose_the_entry)
    assert _read(store, "abc") is None
    assert list((tmp_path / "store").iterdir()) == []


def test_concurrent_adders_and_readers_see_whole_entries_only(tmp_path):
    """Threads adding and reading entries of ~1 kB in a store that holds four: every entry a reader
    finds is whole and its own, and the store ends within its limit with no temporaries."""
    store = LocalShardStore(tmp_path / "store", limit=4500)
    names = [f"e{i}" for i in range(12)]
    finished = {name: _finished(tmp_path / name, f'{{"shard": "{name}"}}\n', size=1000) for name in names}
    seen: list[str] = []

    def work(offset: int) -> None:
        for i in range(36):
            added = names[(i * 5 + offset) % 12]
            store.add(added, finished[added])
            with store.find(names[(i * 7 + offset) % 12]) as found:
                if found:
                    seen.append(found.stats.read_text())
                    assert found.paragraphs.read_text() == "p" * 1000 + "\n"
                    assert found.quarantine.read_text() == "q\n"

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))  # re-raises any thread's failure
    assert seen and set(seen) <= {f'{{"shard": "{name}"}}\n' for name in names}
    assert sum(entry.size for entry in store.entries()) <= 4500
    assert [p.name for p in (tmp_path / "store").iterdir() if p.name.startswith(".")] == []


def test_temporaries_a_killed_process_left_go_after_a_day(tmp_path):
    store = LocalShardStore(tmp_path / "store", limit=10**6)
    (tmp_path / "store").mkdir()
    for name, age in ((".old.x.tmp", 2 * 86400), (".fresh.y.tmp", 60)):
        (tmp_path / "store" / name / "abc").mkdir(parents=True)
        os.utime(tmp_path / "store" / name, (time.time() - age,) * 2)
    store.add("abc", _finished(tmp_path / "done"))
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [".fresh.y.tmp", "abc"]


def test_an_unwritable_store_only_logs(tmp_path, caplog):
    (tmp_path / "file").write_text("not a folder")
    store = LocalShardStore(tmp_path / "file" / "store", limit=10**6)
    with caplog.at_level(logging.INFO, logger="citeworth.curate.shard_store"):
        store.add("abc", _finished(tmp_path / "done"))
        store.discard("abc")
    assert _read(store, "abc") is None
    assert "shard abc not stored in" in caplog.text
