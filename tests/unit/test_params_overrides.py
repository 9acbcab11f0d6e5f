"""An override means one thing whichever door it comes in by -- ``citeworth run -S``, ``dvc exp run
-S`` (DVC's edit of params.yaml) or the Airflow form (``params_file``, then the stage's params in that
workspace): it is merged by key path, so only the keys it names change, in the section it names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citeworth.cli import main as cli
from citeworth.core.errors import StageFailed
from citeworth.core.params import ParamsError, apply_overrides, parse_assignments, to_dict
from citeworth.orchestration import params_file, workspace
from citeworth.stages import stage_params

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "params.yaml"
# The sections whose inputs are `*demo_inputs`, aliases of curate's `inputs: &demo_inputs`.
ALIASES_OF_CURATE_INPUTS = ("curate_baseline", "related_work", "silver", "validate", "export", "works")
ONE_JATS_FOLDER = [{"reader": "jats", "glob": "raw/*.nxml", "release": "t"}]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A project folder with the shipped params.yaml and dvc.yaml (no data)."""
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _trigger(project: Path, form: dict) -> None:
    """What a DAG run's ``open_workspace`` does with its form."""
    params_file.apply_params(project, params_file.form_updates({"overrides": {}, **form}))


def test_a_form_override_of_one_nested_key_keeps_its_siblings(project):
    _trigger(project, {"overrides": {"curate_baseline": {"rules": {"min_sentences": 2}}}})
    rules = workspace.stage_params(project, "curate_baseline").rules
    assert rules.mode == "spans-only"  # still the Table 3 baseline, not a full CiteWorth curation
    assert rules.min_sentences == 2
    original, edited = SHIPPED.read_text().splitlines(), (project / "params.yaml").read_text().splitlines()
    assert [line for line in edited if line not in original] == ["    min_sentences: 2"]
    assert len(edited) == len(original) + 1


def test_a_form_override_of_an_aliased_list_changes_only_the_section_it_names(project):
    aliases = {section: workspace.stage_params(project, section) for section in ALIASES_OF_CURATE_INPUTS}
    _trigger(project, {"overrides": {"curate": {"inputs": ONE_JATS_FOLDER}}})
    assert {section: workspace.stage_params(project, section) for section in aliases} == aliases
    assert workspace.stage_params(project, "curate") == stage_params("curate", {"inputs": ONE_JATS_FOLDER},
                                                                     SHIPPED)  # what the CLI builds
    edited = (project / "params.yaml").read_text()
    assert edited.count("&demo_inputs") == 1  # the other sections still share one list
    assert edited.count("*demo_inputs") == SHIPPED.read_text().count("*demo_inputs") - 1


def test_an_override_inside_a_mapping_yaml_shares_changes_only_that_key_path(project):
    """``sentence`` is ``&sentence`` (merged into sentence_noweight and pu) and its optim
    ``&demo_optim`` (solo's too): changing the sentence model's learning rate changes no other model."""
    shipped = to_dict(stage_params("train", path=SHIPPED))["catalog"]
    _trigger(project, {"overrides": {"train": {"catalog": {"sentence": {"optim": {"lr": 0.5}}}}}})
    cli = stage_params("train", parse_assignments(["catalog.sentence.optim.lr=0.5"]), SHIPPED)
    sentence = shipped["sentence"]
    expected = {**shipped, "sentence": {**sentence, "optim": {**sentence["optim"], "lr": 0.5}}}
    assert to_dict(workspace.stage_params(project, "train"))["catalog"] == expected
    assert to_dict(cli)["catalog"] == expected


# (stage, citeworth run STAGE -S ..., dvc exp run -S ..., the Airflow form)
DOORS = [
    ("curate_baseline", ["rules.min_sentences=2"], ["+curate_baseline.rules.min_sentences=2"],
     {"overrides": {"curate_baseline": {"rules": {"min_sentences": 2}}}}),
    ("curate", ["inputs=[{reader: jats, glob: raw/*.nxml, release: t}]"],
     ["curate.inputs=[{reader:jats,glob:'raw/*.nxml',release:t}]"],
     {"overrides": {"curate": {"inputs": ONE_JATS_FOLDER}}}),
    ("train", ["models=[tfidf_lr]", "seeds=[1, 2]"], ["train.models=[tfidf_lr]", "train.seeds=[1,2]"],
     {"models": ["tfidf_lr"], "overrides": {"train.seeds": [1, 2]}}),
    ("transfer", ["downstream.finetune.optim.epochs=6"], ["transfer.downstream.finetune.optim.epochs=6"],
     {"overrides": {"transfer": {"downstream": {"finetune": {"optim": {"epochs": 6}}}}}}),
    ("assemble", ["per_field=50"], ["assemble.per_field=50"], {"sample_size": 50}),
]


@pytest.mark.parametrize(("stage", "cli_args", "dvc_args", "form"), DOORS, ids=[door[0] for door in DOORS])
def test_the_cli_dvc_and_the_airflow_form_build_the_same_params(project, tmp_path_factory, stage, cli_args,
                                                                 dvc_args, form):
    from dvc.utils.hydra import apply_overrides as dvc_set_params  # what `dvc exp run -S` runs

    from_cli = stage_params(stage, parse_assignments(cli_args), SHIPPED)
    dvc_project = tmp_path_factory.mktemp("dvc_door")
    shutil.copy(SHIPPED, dvc_project / "params.yaml")
    dvc_set_params(dvc_project / "params.yaml", dvc_args)
    _trigger(project, form)
    assert from_cli != stage_params(stage, path=SHIPPED)
    assert stage_params(stage, path=dvc_project / "params.yaml") == from_cli
    assert workspace.stage_params(project, stage) == from_cli


def test_a_mapping_value_merges_like_its_key_paths():
    document = {"rules": {"mode": "spans-only", "min_sentences": 3}, "out_dir": "interim"}
    merged = {"rules": {"mode": "spans-only", "min_sentences": 2}, "out_dir": "interim"}
    assert apply_overrides(document, parse_assignments(["rules={min_sentences: 2}"])) == merged
    assert apply_overrides(document, {"rules.min_sentences": 2}) == merged
    assert apply_overrides(document, {"rules": {"min_sentences": 2}}) == merged
    assert document["rules"]["min_sentences"] == 3  # the document itself is left as it was


@pytest.mark.parametrize(("override", "message"), [
    ("split=[0.7", "override split: '\\[0.7' is not a YAML value"),
    ("rules.mode.strict=true", "rules.mode.strict: rules.mode is 'spans-only', not a mapping"),
    ("workers", "override 'workers' is not key=value"),
])
def test_a_bad_override_is_a_params_error_naming_it(capsys, override, message):
    stage = "assemble" if override.startswith("split") else "curate_baseline"
    assert cli(["run", stage, "--params", str(SHIPPED), "-S", override]) == 2
    assert message.replace("\\", "") in capsys.readouterr().err
    with pytest.raises(ParamsError, match=message):
        stage_params(stage, parse_assignments([override]), SHIPPED)


def test_values_reach_the_stage_process_typed(project):
    """``off`` stays the string it is (parsed as YAML text it would be the boolean false)."""
    with pytest.raises(StageFailed, match="no curated paragraphs under off/paragraphs"):
        workspace.run_stage(project, "assemble", {"in_dir": "off"})

