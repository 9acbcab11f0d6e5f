"""The default download: the embedded demo corpus from the data mirror (CITEWORTH_MIRROR), no network.

The ``demo_project`` / ``mirror`` fixtures (tests/conftest.py) run ``citeworth run download`` once per
session in a project folder, with CITEWORTH_MIRROR pointing at the mirror."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from citeworth.core.errors import StageFailed
from citeworth.download.demo import LATEX_METADATA, LATEX_METADATA_PATH, demo_registry
from citeworth.download.params import DownloadParams, LegacyS2orcParams
from citeworth.download.stage import download

UNARXIVE = "github/IllDepence/unarXive/doc/unarXive_data_sample"


DEMO = {"source": "demo", "release": "latest"}  # the newest demo release


@pytest.fixture(scope="module")
def demo_dir(demo_project) -> Path:
    """The demo downloaded by `citeworth run download` in a project (the shared session fixture)."""
    return demo_project / "raw" / "demo" / "demo-v2"


def files_under(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def test_the_demo_lands_where_curation_looks_for_it(demo_dir):
    for file in demo_registry():
        assert (demo_dir / file.path).stat().st_size == file.size
    assert (demo_dir / UNARXIVE / "arXiv_src_2212_086.jsonl").exists()
    assert len(list(demo_dir.glob("github/allenai/s2orc-doc2json/tests/s2orc/*/*.json"))) == 8
    assert (demo_dir / "github/allenai/s2orc/data/metadata/sample.jsonl").exists()
    assert (demo_dir / "github/allenai/scibert/data/text_classification/sci-cite/train.txt").exists()
    assert not list(demo_dir.rglob("*.part")) and not list(demo_dir.rglob("*.tmp"))


def test_the_manifest_lists_every_file_sorted_with_checksums(demo_dir):
    manifest = json.loads((demo_dir / "MANIFEST.json").read_text())
    assert (manifest["source"], manifest["release"]) == ("demo", "demo-v2")
    names = [f["file"] for f in manifest["files"]]
    assert names == sorted(names)
    on_disk = set(files_under(demo_dir)) - {"MANIFEST.json"}
    assert set(names) == on_disk
    registry = {f.path: f for f in demo_registry()}
    for entry in manifest["files"]:
        assert set(entry) - {"unpacked_from"} == {"file", "size", "sha256", "origin"}  # no times
        if entry["file"] in registry:
            assert entry["sha256"] == registry[entry["file"]].sha256
            assert entry["origin"].startswith("https://raw.githubusercontent.com/")
        elif entry["file"] == LATEX_METADATA_PATH:  # the project's category rows of the LaTeX papers
            assert entry["sha256"] == hashlib.sha256(LATEX_METADATA.read_bytes()).hexdigest()
        else:
            assert entry["unpacked_from"] == f"{UNARXIVE}.tar.gz"


def test_a_second_run_is_a_no_op(demo_dir):
    manifest = (demo_dir / "MANIFEST.json").read_bytes()
    before = files_under(demo_dir)
    summary = download(DownloadParams(**DEMO, out_dir=demo_dir.parents[1]))
    assert (summary["fetched"], summary["skipped"], summary["bytes_fetched"]) == (0, len(demo_registry()), 0)
    assert (demo_dir / "MANIFEST.json").read_bytes() == manifest
    after = files_under(demo_dir)
    assert {k: v for k, v in after.items() if k != "MANIFEST.json"} == \
        {k: v for k, v in before.items() if k != "MANIFEST.json"}


def test_a_damaged_file_or_unpacked_member_is_restored(mirror, tmp_path):
    download(DownloadParams(**DEMO, out_dir=tmp_path, include=["github/IllDepence/*"]))
    release = tmp_path / "demo" / "demo-v2"
    manifest = (release / "MANIFEST.json").read_bytes()
    (release / "github/IllDepence/unarXive/doc/data_format.md").write_text("damaged")
    (release / UNARXIVE / "README").unlink()
    summary = download(DownloadParams(**DEMO, out_dir=tmp_path, include=["github/IllDepence/*"]))
    assert summary["fetched"] == 1 and summary["unpacked_files"] == 3
    assert (release / UNARXIVE / "README").exists()
    assert (release / "MANIFEST.json").read_bytes() == manifest


def test_a_missing_mirror_folder_fails_clearly(mirror, tmp_path):
    with pytest.raises(StageFailed, match="mirror folder .* does not exist"):
        download(DownloadParams(**DEMO, out_dir=tmp_path, mirror=str(tmp_path / "nowhere")))


def test_a_release_name_cannot_escape_the_output_folder(tmp_path):
    params = DownloadParams(source="s2orc_legacy", release="../../elsewhere", out_dir=tmp_path,
                            s2orc_legacy=LegacyS2orcParams(urls_file=tmp_path / "urls.txt"))
    (tmp_path / "urls.txt").write_text("https://example.org/a/metadata_0.jsonl.gz\n")
    with pytest.raises(StageFailed, match="cannot name a folder"):
        download(params)


def test_an_older_release_lacks_the_optional_inputs_and_that_is_no_error(mirror, tmp_path):
    """demo-v1 has no PLOS or LaTeX papers: with download.release set to it, every stage's shards
    are those of the files it holds."""
    from citeworth.curate.stage import shards
    from citeworth.orchestration import params_file
    from citeworth.stages import stage_params

    shutil.copy(Path(__file__).resolve().parents[2] / "params.yaml", tmp_path / "params.yaml")
    params_file.apply_params(tmp_path, {"download": {"release": "demo-v1"}})
    summary = download(stage_params("download", path=tmp_path / "params.yaml").model_copy(
        update={"out_dir": tmp_path / "raw"}))
    assert (summary["release"], summary["files"]) == ("demo-v1", 42)
    curate = stage_params("curate", path=tmp_path / "params.yaml")
    with contextlib.chdir(tmp_path):  # inputs are relative to the project root
        found = shards(curate)
    assert {s.reader for s in found} == {"unarxive", "s2orc_json", "jats", "tei"}
    assert all(s.release in ("demo-v1", "2023-sample") or s.reader == "s2orc_json" for s in found)
    assert not any("PLOS" in path for s in found for path in s.paths)
