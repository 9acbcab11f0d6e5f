"""``{{section.key}}`` references in params.yaml: resolved by the params loader for every stage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citeworth.core.params import ParamsError, resolve_references
from citeworth.orchestration import params_file
from citeworth.stages import stage_params

ROOT = Path(__file__).resolve().parents[2]
# Every stage that reads the downloaded release, and where.
RELEASE_READERS = {"curate": "inputs", "curate_baseline": "inputs", "validate": "raw_inputs",
                   "related_work": "inputs", "export": "inputs"}


def test_references_resolve_to_scalars_of_the_document_themselves_resolved():
    document = {"download": {"release": "demo-v2", "dir": "raw/{{download.release}}"},
                "curate": {"glob": "{{download.dir}}/*.xml", "n": 3}}
    resolved = resolve_references({"inputs": [{"glob": "{{download.dir}}/a/{{curate.n}}"}], "k": 1}, document)
    assert resolved == {"inputs": [{"glob": "raw/demo-v2/a/3"}], "k": 1}


@pytest.mark.parametrize(("value", "message"), [
    ("{{download.nothing}}", r"\{\{download.nothing\}\} names no value"),
    ("{{download}}", "must name a string or number"),
    ("{{loop.a}}", "refers to itself"),
])
def test_a_bad_reference_is_a_params_error_naming_it(value, message):
    document = {"download": {"release": "x"}, "loop": {"a": "{{loop.b}}", "b": "{{loop.a}}"}}
    with pytest.raises(ParamsError, match=message):
        resolve_references({"glob": value}, document, "curate")


def test_switching_the_release_is_one_params_change_that_every_stage_follows(tmp_path):
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    for release in ("demo-v1", "demo-v2"):
        params_file.apply_params(tmp_path, {"download": {"release": release}})
        for stage, key in RELEASE_READERS.items():
            specs = getattr(stage_params(stage, path=tmp_path / "params.yaml"), key)
            assert specs and all(s.glob.startswith(f"raw/demo/{release}/") for s in specs), stage
            assert all(s.release in (None, release) for s in specs)
        downstream = stage_params("transfer", path=tmp_path / "params.yaml").downstream
        assert downstream.data_root.parts[:3] == ("raw", "demo", release)
    assert "demo-v1" not in (ROOT / "params.yaml").read_text().split("\ncurate:")[1]
