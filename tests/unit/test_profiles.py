"""A params profile's own build (citeworth.orchestration.profiles, `make study`): its workspace, its
branch runs/<profile>, the move to a newer commit keeping what it built, and the Airflow form's
profile field. Real git and DVC on the tiny project (tests/tiny_project.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tiny_project import build_tiny_project

from citeworth.core.params import ParamsError
from citeworth.core.workspaces import profile_workspace
from citeworth.orchestration import params_file, profiles
from citeworth.orchestration.versioning import dvc, dvc_status, git

PROFILE = "extends: ../params.yaml\nassemble: {per_field: 7}\n"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = build_tiny_project(tmp_path / "project")
    (root / "params").mkdir()
    (root / "params" / "tiny.yaml").write_text(PROFILE)
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "a profile")
    return root


def params_of(root: Path) -> dict:
    return yaml.safe_load((root / "params.yaml").read_text())


def test_a_profile_builds_in_its_own_workspace_and_versions_on_its_branch(project, monkeypatch):
    monkeypatch.delenv("CITEWORTH_WORKSPACES", raising=False)
    before = (project / "out" / "first.txt").read_text()
    workspace = profiles.open_profile(project, "tiny")
    assert workspace == profile_workspace(project, "tiny")
    assert params_of(workspace)["assemble"]["per_field"] == 7
    assert params_of(project)["assemble"]["per_field"] is None  # the checkout keeps the defaults
    dvc(workspace, "repro", "--quiet")
    assert (workspace / "out" / "first.txt").read_text() == "7"
    assert (project / "out" / "first.txt").read_text() == before

    version = profiles.version_profile(project, "tiny")
    assert version["ref"] == "refs/heads/runs/tiny" and version["created"]
    head = git(project, "rev-parse", "HEAD")
    assert git(project, "rev-parse", "runs/tiny^") == head  # one commit on top of the code it ran
    assert yaml.safe_load(git(project, "show", "runs/tiny:params.yaml"))["assemble"]["per_field"] == 7
    assert git(project, "show", "runs/tiny:stats.json") == '{"n": 1}'


def test_opened_at_a_newer_commit_the_workspace_moves_there_keeping_its_build(project, monkeypatch):
    monkeypatch.delenv("CITEWORTH_WORKSPACES", raising=False)
    workspace = profiles.open_profile(project, "tiny")
    dvc(workspace, "repro", "--quiet")
    profiles.version_profile(project, "tiny")
    (project / "NOTES.md").write_text("a change that touches no stage\n")
    git(project, "add", "--all")
    git(project, "commit", "--quiet", "-m", "notes")
    new_head = git(project, "rev-parse", "HEAD")

    assert profiles.open_profile(project, "tiny") == workspace
    assert git(workspace, "rev-parse", "HEAD") == new_head and (workspace / "NOTES.md").exists()
    assert params_of(workspace)["assemble"]["per_field"] == 7
    assert dvc_status(workspace) == {}  # its dvc.lock and outputs kept: nothing to rebuild
    profiles.version_profile(project, "tiny")
    assert git(project, "rev-parse", "runs/tiny^") == new_head  # the branch follows the code


def test_an_unknown_profile_is_named_with_those_there_are(project):
    with pytest.raises(ParamsError, match=r"no profile 'nope'.*profiles: tiny"):
        profiles.open_profile(project, "nope")
    assert profiles.main(["path", "tiny", "--project", str(project)]) == 0
    assert profiles.main(["version", "tiny", "--project", str(project)]) == 2  # nothing built yet


def test_a_run_form_naming_a_profile_lays_it_under_the_other_fields(project):
    assert params_file.form_updates({"profile": "tiny"}, project) == {"assemble": {"per_field": 7}}
    updates = params_file.form_updates({"profile": "tiny", "sample_size": 3}, project)
    assert updates["assemble"]["per_field"] == 3 and updates["assemble_baseline"]["per_field"] == 3
