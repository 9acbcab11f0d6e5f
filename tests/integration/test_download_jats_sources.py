"""The eLife and Europe PMC download sources on a slice of their real files: from the data mirror (which
stores them as ``.gz``), from a mirror with a broken copy (a clear error, then a rerun that resumes), and
over real HTTP from Python's ``http.server`` serving a folder laid out like the origin (plain files)."""

from __future__ import annotations

import functools
import gzip
import json
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from citeworth.download.params import DownloadParams
from citeworth.download.registry import REGISTRIES
from citeworth.download.remote import select
from citeworth.download.stage import download

ELIFE_SLICE = ["github/elifesciences/elife-articles/elife000[0-4]*.xml"]  # 11 articles
# 5 articles, in the folder whose name has spaces (percent-encoded in URLs)
EUROPEPMC_SLICE = ["github/0AlphaZero0/*/Pipeline Dataset Creation/articlesOA/PMC3[0-3]*.xml"]  # 10


def sliced(source: str, include: list[str]) -> list:
    return select(REGISTRIES[source].remote_files(), include)


def release_dir(out: Path, source: str) -> Path:
    return out / source / REGISTRIES[source].resolve("latest")


@pytest.mark.parametrize(("source", "include"), [("elife", ELIFE_SLICE), ("europepmc", EUROPEPMC_SLICE)])
def test_a_slice_lands_from_the_gzipped_mirror_verified_and_a_rerun_is_a_no_op(source, include, mirror,
                                                                               tmp_path):
    files = sliced(source, include)
    assert len(files) in (10, 11)
    first = download(DownloadParams(source=source, release="latest", out_dir=tmp_path, include=include,
                                    mirror=str(mirror)))
    folder = release_dir(tmp_path, source)
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    assert [e["file"] for e in manifest["files"]] == sorted(f.path for f in files)
    assert {e["sha256"] for e in manifest["files"]} == {f.sha256 for f in files}
    assert all(b"<article" in (folder / f.path).read_bytes()[:2000] for f in files)
    again = download(DownloadParams(source=source, release="latest", out_dir=tmp_path, include=include,
                                    mirror=str(mirror)))
    assert (first["fetched"], again["fetched"], again["skipped"]) == (len(files), 0, len(files))


def broken_mirror(mirror: Path, tmp_path: Path, files: list) -> Path:
    """A copy of the slice's stored ``.gz`` files."""
    copy = tmp_path / "mirror"
    for file in files:
        (copy / file.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mirror / (file.path + ".gz"), copy / (file.path + ".gz"))
    return copy


def run_download(project: Path, mirror: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citeworth.cli", "run", "download", "--workers", "1",
                           "-S", "source=elife", "-S", "release=latest",
                           "-S", f"include={json.dumps(ELIFE_SLICE)}",
                           "-S", f"mirror={mirror}"], cwd=project, capture_output=True, text=True)


@pytest.mark.parametrize("damage", ["truncated", "other_bytes"])
def test_a_broken_stored_copy_fails_clearly_and_a_rerun_resumes(damage, mirror, tmp_path):
    files = sliced("elife", ELIFE_SLICE)
    copy = broken_mirror(mirror, tmp_path, files)
    victim = copy / (files[2].path + ".gz")
    stored = victim.read_bytes()
    if damage == "truncated":
        victim.write_bytes(stored[: len(stored) // 2])
    else:  # a whole gzip file of the public file with one byte changed: the sha256 differs
        public = bytearray(gzip.decompress(stored))
        public[len(public) // 2] ^= 1
        victim.write_bytes(gzip.compress(bytes(public), mtime=0))
    shutil.copy(Path(__file__).parents[2] / "params.yaml", tmp_path / "params.yaml")
    failed = run_download(tmp_path, copy)
    expected = {"truncated": f"{files[2].path}.gz in the mirror is truncated",
                "other_bytes": f"{files[2].origin}: sha256 "}[damage]
    assert failed.returncode == 1 and expected in failed.stderr and "Traceback" not in failed.stderr
    folder = release_dir(tmp_path / "raw", "elife")
    # nothing of the broken copy is kept (a transfer the failure cut short keeps its .part, to resume)
    assert not (folder / files[2].path).exists() and not (folder / (files[2].path + ".part")).exists()
    victim.write_bytes(stored)  # the mirror mended
    resumed = run_download(tmp_path, copy)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["fetched"] >= 1 and summary["fetched"] + summary["skipped"] == len(files)
    assert (folder / files[2].path).read_bytes() == gzip.decompress(stored)


@pytest.fixture
def origin_like(mirror, tmp_path):
    """Python's own http.server serving the Europe PMC slice as plain files, laid out like the mirror
    (what the origin serves: the public files themselves), on a loopback port."""
    root = tmp_path / "origin"
    for file in sliced("europepmc", EUROPEPMC_SLICE):
        (root / file.path).parent.mkdir(parents=True, exist_ok=True)
        (root / file.path).write_bytes(gzip.decompress((mirror / (file.path + ".gz")).read_bytes()))
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_over_http_with_spaces_in_paths_and_an_interrupted_file_resumed(origin_like, tmp_path):
    files = sliced("europepmc", EUROPEPMC_SLICE)
    folder = release_dir(tmp_path, "europepmc")
    whole = (tmp_path / "origin" / files[0].path).read_bytes()
    part = folder / (files[0].path + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(whole[:1000])  # a transfer cut after 1,000 bytes
    summary = download(DownloadParams(source="europepmc", release="latest", out_dir=tmp_path,
                                      include=EUROPEPMC_SLICE, mirror=origin_like))
    assert summary["fetched"] == len(files) and not part.exists()
    assert (folder / files[0].path).read_bytes() == whole
