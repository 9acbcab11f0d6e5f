"""The params schema: every stage's params are one typed model (pydantic) with each key's type, default
and help; params.yaml gives only what dvc.yaml names and the demo's own choices; a wrong value is a
params error naming its key (exit 2), never a traceback or a value silently taken."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from citeworth.cli import main
from citeworth.core.params import ParamsError, load_document, parse_assignments, to_dict
from citeworth.stages import STAGES, params_class, stage_function, stage_params

ROOT = Path(__file__).resolve().parents[2]
PARAMS = ROOT / "params.yaml"


@pytest.mark.parametrize(("stage", "override", "message"), [
    ("download", "retries=two", "download.retries: input should be a valid integer; got 'two'"),
    ("download", "retries='4'", "download.retries: input should be a valid integer; got '4'"),
    ("curate", "rules.mode=bogus", "curate.rules.mode: must be one of citeworth or spans-only; got 'bogus'"),
    ("curate", "rules.min_sentences=3.5", "curate.rules.min_sentences: input should be a valid integer"),
    ("assemble", "split=[0.5, 0.5]", "assemble.split: must be three non-negative fractions summing to 1"),
    ("validate", "field_share.maxx=1", "validate.field_share.maxx: unknown key"),
    ("train", "catalog.crnn.optim.lr=fast", "train.catalog.crnn.optim.lr: input should be a valid number"),
    ("export", "format=bibtex", "export.format: must be one of unarxive or grabcite; got 'bibtex'"),
])
def test_a_value_that_does_not_fit_its_key_is_a_params_error_naming_the_key(stage, override, message):
    with pytest.raises(ParamsError) as raised:
        stage_params(stage, parse_assignments([override]), PARAMS)
    assert message in str(raised.value)


@pytest.mark.parametrize("override", ["rules.mode=bogus", "rules.min_sentences=two", "workers=2"])
def test_the_cli_exits_2_with_the_key_and_no_traceback(tmp_path, monkeypatch, capsys, override):
    monkeypatch.chdir(tmp_path)  # no raw data here: a params error must come before any work
    assert main(["run", "curate", "--params", str(PARAMS), "-S", override]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"citeworth: curate.{override.split('=')[0]}: ") and "Traceback" not in err


# How many processes, threads or requests run at once is a knob (citeworth.core.knobs), no param: it
# changes no output, so it must neither make a stage stale nor a run an experiment. (torch's threads
# and the device are params: they change the numbers, see docs/ARCHITECTURE.md.)
KNOB = re.compile(r"(^|[._])(workers|num_workers|n_jobs|jobs|processes|concurrency|parallelism)$")


@pytest.mark.parametrize("stage", STAGES)
def test_no_stage_takes_a_knob_as_a_param(stage):
    from citeworth.core.params import describe

    keys = [key.path for key in describe(params_class(stage_function(stage)))]
    assert keys and [key for key in keys if KNOB.search(key)] == []


def test_the_models_catalog_is_typed_per_kind():
    from citeworth.models.spec import ContextSpec, CrnnSpec, SentenceSpec, TfidfSpec

    catalog = stage_params("train", path=PARAMS).catalog
    assert [type(catalog[name]) for name in ("tfidf_lr", "crnn", "pu", "context")] == [
        TfidfSpec, CrnnSpec, SentenceSpec, ContextSpec]
    assert catalog["context"].context.window == 256 and catalog["tfidf_lr"].optim is None
    with pytest.raises(ParamsError, match=r"train\.catalog\.crnn: kind crnn does not read section\(s\)"):
        stage_params("train", {"catalog.crnn.tfidf": {"C": 1.0}}, PARAMS)
    with pytest.raises(ParamsError, match="train.catalog.bert: input tag 'bert'"):
        stage_params("train", {"catalog.bert": {"kind": "bert"}}, PARAMS)


def test_to_dict_is_plain_json_data_in_field_order():
    curate = to_dict(stage_params("curate", path=PARAMS))
    assert list(curate) == ["inputs", "out_dir", "rules"]
    assert curate["out_dir"] == "interim" and curate["rules"]["mode"] == "citeworth"
    assert yaml.safe_load(yaml.safe_dump(curate)) == curate  # nothing but plain values


def _model_of(annotation, value):
    """The model class a params.yaml mapping is validated as (a union's member by ``kind``)."""
    members = [a for a in _flat(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
    if len(members) > 1:
        kind = value.get("kind")
        of_kind = [m for m in members if kind in typing.get_args(m.model_fields["kind"].annotation)]
        return (of_kind or members)[0]
    return members[0] if members else None


def _flat(annotation):
    args = typing.get_args(annotation)
    return [a for arg in args for a in _flat(arg)] if args else [annotation]


def _repeated_defaults(model: type[BaseModel], values: dict, where: str):
    """The keys of ``values`` whose value equals the model's default for it."""
    for key, value in values.items():
        info = model.model_fields[key]
        item = typing.get_args(info.annotation)[-1] if typing.get_origin(info.annotation) is dict else None
        if item is not None and _model_of(item, {}) is not None:  # a mapping of models: train.catalog
            for name, entry in value.items():
                yield from _repeated_defaults(_model_of(item, entry), entry, f"{where}.{key}.{name}")
        elif isinstance(value, dict) and (inner := _model_of(info.annotation, value)):
            yield from _repeated_defaults(inner, value, f"{where}.{key}")
        elif not info.is_required() and value == _default(info):
            yield f"{where}.{key}"


def _default(info) -> object:
    return to_jsonable_python(info.get_default(call_default_factory=True))


def test_no_params_yaml_value_merely_repeats_its_code_default():
    """A default lives in one place, the code (with its help): params.yaml only departs from it."""
    document = load_document(PARAMS)
    repeated = [key for stage in STAGES
                for key in _repeated_defaults(params_class(stage_function(stage)), document[stage], stage)]
    assert repeated == []


def test_every_value_dvc_yaml_names_is_required_so_params_yaml_gives_it():
    """dvc.yaml interpolates paths and tracks some keys of params.yaml: each must be there, so none may
    have a code default that params.yaml could leave out."""
    text = (ROOT / "dvc.yaml").read_text()
    named = set(re.findall(r"\$\{(\w+)\.(\w+)", text))
    tracked = re.findall(r"^\s+- (\w+\.\w+)(?:\.\$\{.*\})?$", text, re.M)  # params: - train.seeds
    named |= {tuple(key.split(".")[:2]) for key in tracked}
    named = {(section, key) for section, key in named if section in STAGES}
    assert ("train", "seeds") in named and ("download", "release") in named
    defaulted = [f"{section}.{key}" for section, key in sorted(named)
                 if not params_class(stage_function(section)).model_fields[key].is_required()]
    assert defaulted == []


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_run_stage_help_lists_every_key_with_its_type_default_and_help(stage, capsys):
    from citeworth.core.params import describe

    with pytest.raises(SystemExit) as done:
        main(["run", stage, "--params", str(PARAMS), "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    keys = describe(params_class(stage_function(stage)))
    assert keys and all(key.help for key in keys)
    for key in keys:
        assert f"\n  {key.path}  ({key.type}; default: {key.default}" in out
        assert key.help.split()[0] in out


def test_run_help_shows_nested_keys_kinds_and_params_yaml_values(capsys):
    with pytest.raises(SystemExit):
        main(["run", "curate_baseline", "--params", str(PARAMS), "--help"])
    out = capsys.readouterr().out
    assert f'\n  rules.mode  (citeworth | spans-only; default: "citeworth", {PARAMS}: "spans-only")' in out
    with pytest.raises(SystemExit):
        main(["run", "train", "--params", str(PARAMS), "-h"])
    out = capsys.readouterr().out
    assert "\n  catalog.NAME.optim.lr  (float; default: 8.075e-06)" in out
    kinds = "tfidf_lr | crnn | transformer | sentence | context"
    assert f"\n  catalog.NAME.kind  ({kinds}; default: required)" in out
    assert "(kind crnn, transformer, sentence, context)" in out  # optim: the kinds that read it
