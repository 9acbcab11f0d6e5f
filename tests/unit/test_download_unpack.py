"""Safe tar unpacking: plain files and folders only, never outside the target, size capped."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from citeworth.download.unpack import UnsafeArchive, unpack, unpack_target


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


def folder(name: str) -> tarfile.TarInfo:
    return special(name, tarfile.DIRTYPE)


def test_archive_top_folder_named_like_the_archive_becomes_the_target(tmp_path):
    archive = make_tar(tmp_path / "sample.tar.gz", [folder("sample"), ("sample/a.jsonl", b"{}\n"),
                                                   ("sample/sub/b.txt", b"bee")])
    target = unpack_target(archive, [".tar.gz", ".tgz"])
    assert target == tmp_path / "sample"
    files = unpack(archive, target, max_bytes=1000)
    assert sorted(files) == ["a.jsonl", "sub/b.txt"]
    assert (target / "sub" / "b.txt").read_bytes() == b"bee"
    assert files["a.jsonl"].sha256.hexdigest() == hashlib.sha256(b"{}\n").hexdigest()


def test_archive_without_a_matching_top_folder_keeps_its_layout(tmp_path):
    archive = make_tar(tmp_path / "bundle.tgz", [("x.txt", b"x"), ("other/y.txt", b"y")])
    files = unpack(archive, tmp_path / "bundle", max_bytes=1000)
    assert sorted(files) == ["other/y.txt", "x.txt"]


def test_unpacking_again_replaces_the_folder(tmp_path):
    archive = make_tar(tmp_path / "a.tar.gz", [("new.txt", b"n")])
    target = tmp_path / "a"
    target.mkdir()
    (target / "stale.txt").write_text("old")
    unpack(archive, target, max_bytes=10)
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        (("/etc/evil", b"x"), "absolute path"),
        (("../evil", b"x"), "'..'"),
        (("ok/../../evil", b"x"), "'..'"),
        (special("link", tarfile.SYMTYPE, "/etc/passwd"), "is a link"),
        (special("hard", tarfile.LNKTYPE, "ok.txt"), "is a link"),
        (special("dev", tarfile.CHRTYPE), "device or special file"),
        (special("blk", tarfile.BLKTYPE), "device or special file"),
        (special("fifo", tarfile.FIFOTYPE), "device or special file"),
    ],
)
def test_unsafe_members_are_rejected_before_anything_is_written(tmp_path, member, reason):
    archive = make_tar(tmp_path / "bad.tar.gz", [("ok.txt", b"fine"), member])
    target = tmp_path / "bad"
    with pytest.raises(UnsafeArchive, match=reason):
        unpack(archive, target, max_bytes=1000)
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tar.gz"]


@pytest.mark.parametrize("members", [
    [("data", b"x"), folder("data")],  # a file, then a folder of the same name
    [("data", b"x"), ("data/inner.txt", b"y")],  # a file, then a file inside it
    [folder("data"), ("data", b"x")],  # a folder, then a file of the same name
    [("data/inner.txt", b"y"), ("data", b"x")],
])
def test_a_path_that_is_both_a_file_and_a_folder_is_rejected(tmp_path, members):
    archive = make_tar(tmp_path / "clash.tar.gz", [("ok.txt", b"fine"), *members])
    with pytest.raises(UnsafeArchive, match="'data' is both a file and a folder"):
        unpack(archive, tmp_path / "clash", max_bytes=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clash.tar.gz"]


def test_total_size_is_capped(tmp_path):
    archive = make_tar(tmp_path / "big.tar.gz", [("a", b"x" * 600), ("b", b"y" * 600)])
    with pytest.raises(UnsafeArchive, match="over the cap of 1000"):
        unpack(archive, tmp_path / "big", max_bytes=1000)
    assert not (tmp_path / "big").exists()


def test_a_file_that_is_not_a_tar_fails_clearly(tmp_path):
    archive = tmp_path / "broken.tar.gz"
    archive.write_bytes(b"not a tar at all")
    with pytest.raises(Exception, match="not a readable tar archive"):
        unpack(archive, tmp_path / "broken", max_bytes=1000)


def test_only_configured_suffixes_are_archives(tmp_path):
    assert unpack_target(tmp_path / "x.tar.gz", [".tgz"]) is None
    assert unpack_target(tmp_path / "x.jsonl.gz", [".tar.gz", ".tgz"]) is None
    assert unpack_target(tmp_path / "src.tar", [".tar"]) == tmp_path / "src"
