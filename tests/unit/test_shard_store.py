"""Where curated shards are kept for reuse: one store for every worktree of a repository."""

from __future__ import annotations

import subprocess

from citeworth.curate import shard_store


def _git(*args, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_every_worktree_of_a_repository_shares_one_store(tmp_path, monkeypatch):
    monkeypatch.delenv(shard_store.STORE_ENV, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start",
         cwd=project)
    _git("worktree", "add", "-q", "--detach", str(tmp_path / "run"), cwd=project)
    expected = (project / ".git" / "citeworth" / "shards").resolve()
    assert shard_store.default_store(project / "sub") == expected
    assert shard_store.default_store(tmp_path / "run").resolve() == expected
    assert shard_store.default_store(tmp_path / "elsewhere") is None  # no checkout: no store


def test_the_variable_names_the_store_or_turns_it_off(tmp_path, monkeypatch):
    monkeypatch.setenv(shard_store.STORE_ENV, str(tmp_path / "store"))
    assert shard_store.default_store(tmp_path) == tmp_path / "store"
    monkeypatch.setenv(shard_store.STORE_ENV, "off")
    assert shard_store.default_store(tmp_path) is None


def test_an_entry_appears_whole_and_the_first_one_stays(tmp_path):
    finished = shard_store.ShardOutputs.in_folder(tmp_path / "done")
    finished.paragraphs.parent.mkdir()
    for path, text in zip(finished.files(), ("p\n", "q\n", '{"shard": "x"}\n'), strict=True):
        path.write_text(text)
    store = shard_store.ShardStore(tmp_path / "store")
    assert store.find("abc") is None
    store.add("abc", finished)
    finished.stats.unlink()
    finished.stats.write_text('{"shard": "y"}\n')  # a later run's output (written anew, as all are)
    store.add("abc", finished)
    kept = store.find("abc")
    assert kept is not None and kept.stats.read_text() == '{"shard": "x"}\n'
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["abc"]  # no temporaries left
