"""The dataset DAG with ``source=arxiv_s3`` over the LaTeX reader, for real: a bulk-style
``arXiv_src_2004_001.tar`` built from the mirrored sources (gzipped-tar members, a gzipped single
``.tex``, a PDF) in a requester-pays bucket of ``moto_server`` on loopback, categories from an OAI-PMH
server on loopback, and ``dag.test()`` of ``citeworth_dataset`` in a fresh workspace. The DAG is not
changed for this: the source and the reader come from the run's params."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile

import boto3
import pytest
from dvc_workspace import checked_out, fresh_workspace, git
from test_airflow_dags import airflow_env, dag_test
from test_download_oai import FakeArxiv

pytestmark = pytest.mark.slow

EPRINT = "github/allenai/s2orc-doc2json/tests/latex/2004.14974.gz"
SCIPY = "github/scipy/scipy-articles/scipy-1.0"
MINIMAP2 = "github/lh3/minimap2/tex/minimap2.tex"
PDF = "github/kermitt2/grobid_client_python/resources/test_pdf/0046d83a-edd6-4631-b57c-755cdcce8b7f.pdf"
TAR = "src/arXiv_src_2004_001.tar"
CATEGORIES = {"2004.14974": "cs.CL", "2004.00002": "cs.MS cs.DS", "2004.00003": "q-bio.GN"}


def _tar_gz(folder) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.add(path, arcname=path.relative_to(folder).as_posix())
    return buffer.getvalue()


def bulk_tar(mirror) -> bytes:
    """arXiv's layout: ``YYMM/<id>.gz`` (a gzipped tar or a gzipped single .tex) and ``YYMM/<id>.pdf``."""
    members = {
        "2004/2004.14974.gz": (mirror / EPRINT).read_bytes(),  # the real e-print: a gzipped tar
        "2004/2004.00002.gz": _tar_gz(mirror / SCIPY),  # SciPy 1.0's folder as a gzipped tar
        "2004/2004.00003.gz": gzip.compress(
            (mirror / MINIMAP2).read_bytes(), mtime=0
        ),  # one .tex, its .bib absent
        "2004/2004.00004.pdf": (mirror / PDF).read_bytes(),  # a PDF-only submission
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_dataset_dag_builds_a_dataset_from_an_arxiv_bulk_tar(tmp_path, mirror, moto, migrated_db):
    data = bulk_tar(mirror)
    s3 = boto3.client("s3", endpoint_url=moto["endpoint"], region_name="us-east-1")
    s3.create_bucket(Bucket="arxiv")
    s3.put_object(Bucket="arxiv", Key=TAR, Body=data)
    manifest = (
        f"<arXivSRC><file><filename>{TAR}</filename><md5sum>{hashlib.md5(data).hexdigest()}</md5sum>"
        f"<size>{len(data)}</size><yymm>2004</yymm><seq_num>1</seq_num></file></arXivSRC>"
    )
    s3.put_object(Bucket="arxiv", Key="src/arXiv_src_manifest.xml", Body=manifest.encode())
    oai = FakeArxiv(categories=CATEGORIES)
    workspace = fresh_workspace(tmp_path / "workspace")
    env = airflow_env(tmp_path / "home", workspace, migrated_db, AWS_ENDPOINT_URL=moto["endpoint"])
    inputs = [{"reader": "arxiv_latex", "glob": f"raw/arxiv_s3/2004/{TAR}",
               "metadata": "raw/arxiv_s3/2004/arxiv_metadata.jsonl"}]
    conf = {
        "source": "arxiv_s3",
        "release": "2004",
        "push": False,
        "overrides": {
            "download": {"arxiv": {"categories": True, "oai_url": oai.url, "oai_delay": 0}},
            # An override touches only the section it names: every stage that reads the raw papers
            # is given the release's inputs (params.yaml's sections alias one list for the demo).
            **{section: {"inputs": inputs}
               for section in ("curate", "curate_baseline", "related_work", "silver", "export")},
            # Two of four members cannot give a paper (PDF only; no bibliography): a tiny shard's
            # share, and two papers cannot fill bounded dev/test splits of several fields.
            "validate": {
                "raw_inputs": inputs,
                "max_bad_raw_records": 0.5,
                "soft_checks": {"arxiv_s3": [
                    "split_fields.field_share_in_bounds",
                    "split_labels.all_splits_present",
                    "split_labels.cite_worthy_share_in_bounds",
                ]},
            },
        },
    }
    try:
        result = dag_test("citeworth_dataset", conf, workspace, env)
    finally:
        oai.server.shutdown()
    skipped = {task for task, state in result["tasks"].items() if state != "success"}
    assert skipped == {"train_models[-1]"}, result["tasks"]  # an experiment is no new data version
    # Its own inputs and checks make the run an experiment: its version is the branch runs/<run id>.
    [experiment] = git(workspace, "branch", "--list", "runs/*", "--format=%(refname:short)").splitlines()
    assert git(workspace, "tag", "--list", "data/*") == ""  # not the source's data version
    workspace = checked_out(workspace, experiment, "arxiv")

    release = workspace / "raw" / "arxiv_s3" / "2004"
    assert (release / TAR).read_bytes() == data
    rows = [json.loads(line) for line in (release / "arxiv_metadata.jsonl").read_text().splitlines()]
    assert {row["id"]: row["categories"] for row in rows} == CATEGORIES
    [stats] = (workspace / "interim" / "stats").glob("arxiv_latex__*.json")
    stats = json.loads(stats.read_text())
    assert stats["quarantined"] == {"no_bibliography": 1, "pdf_only": 1} and stats["truncated_at"] is None
    assert stats["curation"]["papers"] == 2 and stats["curation"]["kept"] > 0
    kept = [
        json.loads(line)
        for split in ("train", "dev", "test")
        for line in (workspace / "data" / "citeworth" / f"{split}.jsonl").read_text().splitlines()
    ]
    assert {row["paper_id"] for row in kept} <= {"2004.14974", "2004.00002"} and kept
    assert {row["source"] for row in kept} == {"arxiv_latex"}
