"""The one fingerprint of finished work: data + params + the code that produced it."""

from __future__ import annotations

import sys

import pytest

from citeworth.core import fingerprint as fp


@pytest.fixture
def package(tmp_path, monkeypatch):
    """An importable package ``fp_pkg`` with a module, a rule file and interpreter caches."""
    root = tmp_path / "fp_pkg"
    (root / "data").mkdir(parents=True)
    (root / "__pycache__").mkdir()
    (root / "__init__.py").write_text('"""A package."""\n')
    (root / "rules.py").write_text("LIMIT = 20\n")
    (root / "data" / "sections.txt").write_text("introduction\n")
    (root / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"cache")
    monkeypatch.syspath_prepend(str(tmp_path))
    fp.code_digest.cache_clear()
    yield root
    fp.code_digest.cache_clear()
    sys.modules.pop("fp_pkg", None)


def test_code_digest_covers_the_package_source_and_its_rule_files_not_caches(package):
    names = [name for name, _ in fp.source_files("fp_pkg")]
    assert names == ["fp_pkg/__init__.py", "fp_pkg/data/sections.txt", "fp_pkg/rules.py"]
    before = fp.code_digest("fp_pkg")
    (package / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"other cache")
    (package / ".rules.py.x1.tmp").write_text("half-written")
    fp.code_digest.cache_clear()
    assert fp.code_digest("fp_pkg") == before  # caches and temporaries are not code

    for edited, text in [("rules.py", "LIMIT = 21\n"), ("data/sections.txt", "introduction\nmethods\n")]:
        (package / edited).write_text(text)
        fp.code_digest.cache_clear()
        after = fp.code_digest("fp_pkg")
        assert after != before, edited
        before = after


def test_code_digest_is_computed_once_per_process(package):
    first = fp.code_digest("fp_pkg")
    (package / "rules.py").write_text("LIMIT = 99\n")
    assert fp.code_digest("fp_pkg") == first  # cached: code does not change under a running process


def test_a_single_module_and_an_unknown_one():
    assert fp.source_files("citeworth.core.io")[0][0] == "citeworth.core.io"
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        fp.code_digest("no_such_module")


def test_fingerprint_changes_with_inputs_and_code_and_not_with_their_order(package):
    base = fp.fingerprint(["fp_pkg", "citeworth.core"], params={"a": 1}, data="v1")
    assert base == fp.fingerprint(["citeworth.core", "fp_pkg"], data="v1", params={"a": 1})
    assert base != fp.fingerprint(["fp_pkg", "citeworth.core"], params={"a": 2}, data="v1")
    assert base != fp.fingerprint(["fp_pkg", "citeworth.core"], params={"a": 1}, data="v2")
    assert base != fp.fingerprint(["fp_pkg"], params={"a": 1}, data="v1")


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
