"""citeworth.orchestration: what the DAGs do besides running stages (params, shards, versions, results)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from citeworth.core.errors import StageFailed
from citeworth.core.params import ParamsError
from citeworth.orchestration import params_file, versioning, workspace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A project folder with the real params.yaml and dvc.yaml (no data)."""
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _git(root: Path, *args: str) -> str:
    return versioning.git(root, *args)


def test_form_fields_fan_out_to_their_params_sections():
    updates = params_file.form_updates({
        "source": "demo", "release": None, "sample_size": 50,
        "overrides": {"assemble_baseline": {"per_field": 10}, "validate": {"examples": 2}},
    })
    assert updates == {
        "download": {"source": "demo"},
        "assemble": {"per_field": 50},
        "assemble_baseline": {"per_field": 10},  # an explicit override wins over the fan-out
        "validate": {"examples": 2},
    }
    assert params_file.form_updates({"source": None, "overrides": {}}) == {}


def test_apply_params_edits_values_and_keeps_the_file_otherwise_byte_identical(project):
    original = (project / "params.yaml").read_text()
    before = yaml.safe_load(original)["assemble"]["per_field"]
    changed = params_file.apply_params(project, {"assemble": {"per_field": 7}})
    assert changed == {"assemble": {"per_field": 7}}
    edited = (project / "params.yaml").read_text()
    assert yaml.safe_load(edited)["assemble"]["per_field"] == 7
    assert [line for line in edited.splitlines() if line not in original.splitlines()] == \
        [next(line for line in edited.splitlines() if line.strip().startswith("per_field: 7"))]
    params_file.apply_params(project, {"assemble": {"per_field": before}})
    assert (project / "params.yaml").read_text() == original  # comments, anchors, nulls all kept


def test_apply_params_is_a_no_op_when_nothing_changes(project):
    current = yaml.safe_load((project / "params.yaml").read_text())["assemble"]["out_dir"]
    stamp = (project / "params.yaml").stat().st_mtime_ns
    assert params_file.apply_params(project, {"assemble": {"out_dir": current}}) == {}
    assert (project / "params.yaml").stat().st_mtime_ns == stamp


def test_apply_params_rejects_unknown_keys_with_the_stage_message_and_writes_nothing(project):
    original = (project / "params.yaml").read_text()
    with pytest.raises(ParamsError, match=r"assemble\.sampel: unknown key"):
        params_file.apply_params(project, {"assemble": {"sampel": 3}})
    with pytest.raises(ParamsError, match="no section 'nonsense'"):
        params_file.apply_params(project, {"nonsense": {"x": 1}})
    assert (project / "params.yaml").read_text() == original


def test_plan_shards_lists_shards_and_drops_outputs_of_shards_no_longer_listed(project):
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["curate"]["inputs"] = [{"reader": "unarxive", "glob": "raw/u/*.jsonl"},
                                  {"reader": "tei", "glob": "raw/t/*.tei.xml", "release": "r"}]
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    for name in ("raw/u/a.jsonl", "raw/t/paper.tei.xml"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("")
    out = project / params["curate"]["out_dir"]
    kept = [out / "paragraphs" / "unarxive__a.jsonl", out / "stats" / "unarxive__a.json",
            out / "paragraphs" / "tei__t.jsonl"]
    stale = [out / "paragraphs" / "unarxive__old.jsonl", out / "quarantine" / "unarxive__old.jsonl",
             out / "stats" / "unarxive__old.json"]
    for path in kept + stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    here = Path.cwd()
    assert workspace.plan_shards(project, "curate") == ["unarxive__a", "tei__t"]  # a TEI folder: one shard
    assert Path.cwd() == here  # the call ran in the project without moving this process
    assert all(path.exists() for path in kept)
    assert not any(path.exists() for path in stale)


def test_a_stage_error_crosses_the_process_boundary_with_its_message(project):
    with pytest.raises(StageFailed, match="unarxive: no files match"):
        workspace.plan_shards(project, "curate")  # the demo inputs are not downloaded here
    with pytest.raises(ParamsError, match="unknown key"):
        workspace.run_stage(project, "assemble", {"sampel": 3})


@pytest.mark.parametrize("fork", ["1", ""])
def test_the_stage_child_runs_the_root_s_own_code_in_the_root_forked_or_new(tmp_path, monkeypatch, fork):
    """A run's workspace holds the commit the run started from: its stage code, not this process's,
    is what the child runs, whether a new interpreter (the default) or a fork of this process (a
    cluster worker's, $CITEWORTH_STAGE_FORK=1) that keeps the libraries it imported; errors cross alike."""
    import citeworth

    root = tmp_path / "workspace"
    shutil.copytree(Path(citeworth.__file__).parent, root / "citeworth",
                    ignore=shutil.ignore_patterns("__pycache__"))
    child = root / "citeworth" / "orchestration" / "workspace.py"
    source = child.read_text()
    marked = source.replace("def _plan_cells() -> list[list[str]]:\n",
                            "def _plan_cells() -> list[list[str]]:\n    return [[os.getcwd(), __file__]]\n")
    assert marked != source
    child.write_text(marked)
    (root / "params.yaml").write_text("assemble: {}\n")
    monkeypatch.setenv(workspace.STAGE_FORK_ENV, fork)
    assert workspace.plan_cells(root) == [[str(root), str(child)]]
    assert Path.cwd() != root and Path(workspace.__file__) != child  # this process kept its own
    with pytest.raises(ParamsError, match="unknown key"):
        workspace.run_stage(root, "assemble", {"sampel": 3})


def test_resolve_release_prefers_the_request_then_the_release_of_the_run_s_date(project):
    assert workspace.resolve_release(project, "demo", "2099-01-01") == "2099-01-01"
    # the demo calendar: demo-v1 published 2024-01-01, demo-v2 2024-02-01
    assert workspace.resolve_release(project, "demo", None, as_of="2024-01-14") == "demo-v1"
    assert workspace.resolve_release(project, "demo", "latest", as_of="2024-02-04") == "demo-v2"
    assert workspace.resolve_release(project, "demo", None) == "demo-v2"  # a trigger: as of now


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A git + DVC repo with one stage whose metric git keeps, and a recorded lock."""
    (tmp_path / "params.yaml").write_text("assemble: {}\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  assemble:\n    cmd: echo\n    outs:\n      - data\n"
        "    metrics:\n      - stats.json:\n          cache: false\n")
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages:\n  assemble:\n    cmd: echo\n"
                                       "    outs:\n    - path: data\n      md5: aaa.dir\n")
    (tmp_path / "stats.json").write_text('{"sentences": 10}\n')
    _git(tmp_path, "init", "--quiet", "--initial-branch", "main")
    subprocess.run([sys.executable, "-m", "dvc", "init", "--quiet"], cwd=tmp_path, check=True)
    _git(tmp_path, "add", "--all")
    _git(tmp_path, "commit", "--quiet", "-m", "init")
    return tmp_path


def _version(repo: Path) -> str:
    """Commit the workspace's lock and metric as a run's version step does (onto main, from HEAD)."""
    head = _git(repo, "rev-parse", "HEAD")
    return versioning.publish(repo, ["assemble"], "version", ref="refs/heads/main", start=head)["commit"]


def test_a_data_version_is_tagged_once_per_release_and_reruns_change_nothing(repo):
    (repo / "stats.json").write_text('{"sentences": 11}\n')
    (repo / ".gitignore").write_text("/data\n")  # as `dvc repro` writes it for the cached output
    commit = _version(repo)
    first = versioning.tag_data_version(repo, "demo", "v1", commit, ["assemble"])
    assert first["created"] and first["commit"] == _git(repo, "rev-parse", "main")
    assert _git(repo, "show", "data/demo/v1:stats.json") == '{"sentences": 11}'  # metrics go with it
    assert _git(repo, "show", "data/demo/v1:.gitignore") == "/data"
    assert _version(repo) == commit  # nothing new to commit
    again = versioning.tag_data_version(repo, "demo", "v1", commit, ["assemble"])
    assert again == {**first, "created": False}
    assert versioning.versioned_releases(repo, "demo") == ["v1"]


def test_a_release_rebuilt_with_other_hashes_is_refused(repo):
    versioning.tag_data_version(repo, "demo", "v1", _version(repo), ["assemble"])
    lock = repo / "dvc.lock"
    lock.write_text(lock.read_text().replace("aaa.dir", "bbb.dir"))
    rebuilt = _version(repo)
    with pytest.raises(StageFailed, match="data/demo/v1 already exists with different dataset hashes"):
        versioning.tag_data_version(repo, "demo", "v1", rebuilt, ["assemble"])
    forced = versioning.tag_data_version(repo, "demo", "v1", rebuilt, ["assemble"], replace=True)
    assert forced["created"] and "bbb.dir" in _git(repo, "show", "data/demo/v1:dvc.lock")


def test_latest_results_reads_what_exists(repo):
    (repo / "metrics").mkdir()
    (repo / "metrics" / "models.json").write_text(json.dumps({"tfidf_lr": {"f1": 0.5}}))
    versioning.tag_data_version(repo, "demo", "v1", _version(repo), ["assemble"])
    results = workspace.latest_results(repo)
    assert results["models"] == {"tfidf_lr": {"f1": 0.5}}
    assert results["dataset"] is None and results["quality"] is None
    assert results["versions"] == ["data/demo/v1"]


def test_apply_params_leaves_aliases_their_value_and_adds_missing_keys(tmp_path):
    (tmp_path / "params.yaml").write_text(
        "curate:\n  inputs: &inputs\n    - reader: unarxive\n      glob: raw/a/*.jsonl\n"
        "  out_dir: interim  # shards\n\n"
        "curate_baseline:\n  inputs: *inputs\n  rules:\n    mode: spans-only\n")
    new_inputs = [{"reader": "unarxive", "glob": "raw/b/*.jsonl"}]
    changed = params_file.apply_params(tmp_path, {
        "curate": {"inputs": new_inputs, "out_dir": "curated"},
        "curate_baseline": {"out_dir": "interim_b"}})
    assert changed == {"curate": {"inputs": new_inputs, "out_dir": "curated"},
                       "curate_baseline": {"out_dir": "interim_b"}}
    # the alias keeps its value, written out where it was (no other alias: no anchor left to name)
    assert (tmp_path / "params.yaml").read_text() == (
        "curate:\n  inputs:\n    - reader: unarxive\n      glob: raw/b/*.jsonl\n"
        "  out_dir: curated  # shards\n\n"
        "curate_baseline:\n  inputs:\n    - reader: unarxive\n      glob: raw/a/*.jsonl\n"
        "  rules:\n    mode: spans-only\n  out_dir: interim_b\n")


def test_the_shipped_params_file_round_trips_byte_for_byte():
    text = (ROOT / "params.yaml").read_text()
    assert params_file.round_trip(params_file._yaml().load(text)) == text


def test_a_run_keeps_every_comment_anchor_alias_and_merge_of_the_real_params_file(project):
    original = (project / "params.yaml").read_text()
    comments = [line.split("#", 1)[1] for line in original.splitlines() if "#" in line]
    new_inputs = [{"reader": "unarxive", "glob": "raw/x/*.jsonl"}]
    changed = params_file.apply_params(project, {"curate": {"inputs": new_inputs, "out_dir": "interim_x"},
                                                 "train": {"models": ["tfidf_lr"]}})
    assert changed == {"curate": {"inputs": new_inputs, "out_dir": "interim_x"},
                       "train": {"models": ["tfidf_lr"]}}
    edited = (project / "params.yaml").read_text()
    assert all(comment in edited for comment in comments)  # those of the old inputs move with them
    for syntax in ("inputs: &demo_inputs", "raw_inputs: *demo_inputs", "sentence: &sentence",
                   "<<: *sentence", "optim: &demo_optim", "optim: *demo_optim"):
        assert edited.count(syntax) == original.count(syntax), syntax
    # curate_baseline, the first alias of &demo_inputs, now holds the anchor and the old inputs
    assert edited.count("inputs: *demo_inputs") == original.count("inputs: *demo_inputs") - 1
    before, values = yaml.safe_load(original), yaml.safe_load(edited)
    assert {section for section in values if values[section] != before[section]} == {"curate", "train"}
    assert values["train"]["catalog"]["pu"]["max_length"] == 80  # merged from &sentence
    assert values["train"]["models"] == ["tfidf_lr"] and values["curate"]["out_dir"] == "interim_x"
    assert "  models: [tfidf_lr]\n" in edited  # a flow-style list stays one


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return "\tZ" not in Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1][:4]
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc (Linux)")
def test_a_stage_child_dies_with_a_killed_orchestrator(project):
    """kill -9 of an Airflow task must not leave its stage running: the child dies with it
    (core.processes.die_with_parent, the same as a pool worker)."""
    import signal
    import socket
    import time

    with socket.socket() as silent:  # a mirror that accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        params = yaml.safe_load((project / "params.yaml").read_text())
        port = silent.getsockname()[1]
        params["download"].update(mirror=f"http://127.0.0.1:{port}", timeout=120, retries=1)
        (project / "params.yaml").write_text(yaml.safe_dump(params))
        script = ("import sys; from pathlib import Path; from citeworth.orchestration import workspace; "
                  "workspace.run_stage(Path(sys.argv[1]), 'download')")
        orchestrator = subprocess.Popen([sys.executable, "-c", script, str(project)])
        deadline = time.monotonic() + 60
        while not (children := _children(orchestrator.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert children, "the stage child never started"
        time.sleep(1)  # let it reach the download
        orchestrator.send_signal(signal.SIGKILL)
        orchestrator.wait()
        deadline = time.monotonic() + 20
        while any(map(_alive, children)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_alive, children))
