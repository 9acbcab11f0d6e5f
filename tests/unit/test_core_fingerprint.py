"""The one fingerprint of finished work: data + params + the code that produced it."""

from __future__ import annotations

import pytest

from citeworth.core import fingerprint as fp


def test_code_digest_is_computed_once_per_process(edit_code):
    first = fp.code_digest("citeworth.core.io")
    edit_code("core/io.py")
    fp.code_digest.cache_clear()
    edited = fp.code_digest("citeworth.core.io")
    assert edited != first
    edit_code("core/schema.py")  # the cache is not cleared this time
    assert fp.code_digest("citeworth.core.io") == edited  # code does not change under a running process


def test_source_files_are_named_the_same_on_every_machine():
    assert [name for name, _ in fp.source_files("citeworth.core.io")] == [
        "citeworth/core/__init__.py", "citeworth/core/io.py"]
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        fp.code_digest("no_such_module.x")


def test_fingerprint_changes_with_inputs_and_code_and_not_with_their_order():
    base = fp.fingerprint(["citeworth.core.io", "citeworth.core.schema"], params={"a": 1}, data="v1")
    assert base == fp.fingerprint(["citeworth.core.schema", "citeworth.core.io"], data="v1", params={"a": 1})
    assert base != fp.fingerprint(["citeworth.core.io", "citeworth.core.schema"], params={"a": 2}, data="v1")
    assert base != fp.fingerprint(["citeworth.core.io", "citeworth.core.schema"], params={"a": 1}, data="v2")
    assert base != fp.fingerprint(["citeworth.core.io"], params={"a": 1}, data="v1")


def test_current_record_only_for_the_expected_fingerprint(tmp_path):
    path = tmp_path / "result.json"
    assert fp.current_record(path, "abc") is None  # missing
    path.write_text('{"fingerprint": "abc", "f1": 0.5}')
    assert fp.current_record(path, "abc") == {"fingerprint": "abc", "f1": 0.5}
    assert fp.current_record(path, "other") is None  # made from other inputs or code
    path.write_text('{"fingerprint": "abc", "f1"')
    assert fp.current_record(path, "abc") is None  # unreadable: redo


def test_data_version_reads_names_and_bytes(tmp_path):
    (tmp_path / "a.jsonl").write_text("1\n")
    (tmp_path / "b.jsonl").write_text("2\n")
    version = fp.data_version([tmp_path / "b.jsonl", tmp_path / "a.jsonl"])
    assert version == fp.data_version([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
    (tmp_path / "b.jsonl").write_text("3\n")
    assert fp.data_version([tmp_path / "a.jsonl", tmp_path / "b.jsonl"]) != version


def test_content_version_follows_the_files_not_their_place(tmp_path):
    def shard(where: str, names=("a.xml", "b.xml")) -> list:
        folder = tmp_path / where / "articles"
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text(name)
        return sorted(folder.iterdir())

    version = fp.content_version(shard("v1"))
    assert fp.content_version(shard("v2")) == version  # moved: the same content
    assert fp.content_version(shard("v3", ("a.xml", "c.xml"))) != version  # a file renamed
    renamed_folder = tmp_path / "v4" / "papers"
    renamed_folder.parent.mkdir()
    (tmp_path / "v2" / "articles").rename(renamed_folder)
    assert fp.content_version(sorted(renamed_folder.iterdir())) != version  # readers may read names
    (tmp_path / "v1" / "articles" / "b.xml").write_text("changed")
    edited = sorted((tmp_path / "v1" / "articles").iterdir())
    assert fp.content_version(shard("v5")) != fp.content_version(edited)
    single = tmp_path / "v1" / "articles" / "a.xml"
    assert fp.content_version([single]) == fp.content_version([shard("v6", ("a.xml",))[0]])
