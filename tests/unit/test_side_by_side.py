"""citeworth.orchestration.side_by_side: independent DVC stages run N at a time, then recorded so
that ``dvc repro`` finds them current. Real git and DVC on a project the test writes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from citeworth.core.errors import StageFailed
from citeworth.orchestration import side_by_side
from citeworth.orchestration.versioning import dvc, dvc_status, git

# Each stage notes its name in ../order.log when it starts. `a` and `b` wait for each other (up to
# 20 s): they pass only when they run at the same time.
DVC_YAML = """stages:
  base:
    cmd: echo 1 > base.txt
    outs: [base.txt]
  a:
    cmd: echo a >> ../order.log && touch ../a.started && {await_b} && cat base.txt > a.txt
    deps: [base.txt]
    outs: [a.txt]
  b:
    cmd: echo b >> ../order.log && touch ../b.started && {await_a} && cat base.txt > b.txt
    deps: [base.txt]
    outs: [b.txt]
  c:
    cmd: echo c >> ../order.log && cat base.txt > c.txt
    deps: [base.txt]
    outs: [c.txt]
  after_a:
    cmd: echo after_a >> ../order.log && cat a.txt > after_a.txt
    deps: [a.txt]
    outs: [after_a.txt]
  each:
    foreach: [x, y]
    do:
      cmd: echo ${{item}} > each_${{item}}.txt
      deps: [base.txt]
      outs: ["each_${{item}}.txt"]
  broken:
    cmd: echo broken >> ../order.log && echo 'the broken stage says why' && exit 3
    deps: [base.txt]
    outs: [broken.txt]
"""
AWAIT = ("for i in $(seq 200); do [ -e ../{other}.started ] && break; sleep 0.1; done; "
         "[ -e ../{other}.started ]")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A git + DVC project whose `base` stage is built (every other stage is not)."""
    root = tmp_path_factory.mktemp("side_by_side") / "project"
    root.mkdir()
    (root / "dvc.yaml").write_text(DVC_YAML.format(await_a=AWAIT.format(other="a"),
                                                   await_b=AWAIT.format(other="b")))
    git(root, "init", "--quiet")
    dvc(root, "init", "--quiet")
    dvc(root, "repro", "--quiet", "base")
    return root


@pytest.fixture()
def project(built: Path, tmp_path: Path) -> Path:
    subprocess.run(["cp", "-a", str(built), str(tmp_path / "project")], check=True)
    return tmp_path / "project"


def started(project: Path) -> list[str]:
    log = project.parent / "order.log"
    return log.read_text().split() if log.exists() else []


def test_stages_run_side_by_side_in_the_order_given_and_dvc_repro_finds_them_current(project):
    outcomes = side_by_side.run_stages(project, ["c", "b", "a"], jobs=2)
    assert [o.stage.name for o in outcomes] == ["c", "b", "a"] and {o.returncode for o in outcomes} == {0}
    # c and b start together; a, named last, waits for a free slot (c's); a and b waited for each
    # other: they ran at the same time.
    assert sorted(started(project)[:2]) == ["b", "c"] and started(project)[2] == "a"
    assert (project / "logs" / "c.log").exists()
    assert dvc_status(project, ["a", "b", "c"]) == {}
    dvc(project, "repro", "a", "b", "c")
    assert sorted(started(project)) == ["a", "b", "c"]  # dvc repro ran none of them again
    assert side_by_side.run_stages(project, ["a", "b", "c"], jobs=2) == []  # current: not run


def test_a_foreach_name_names_its_stages_and_a_stage_named_twice_runs_once_where_first_named(project):
    stages = side_by_side.plan(project, ["each@y", "c", "base", "each", "c"])
    assert [s.name for s in stages] == ["each@y", "c", "each@x"]  # base is current
    assert stages[0].cmd == "echo y > each_y.txt"


def test_stages_that_depend_on_each_other_are_refused_before_any_starts(project):
    with pytest.raises(StageFailed, match="after_a needs a"):
        side_by_side.run_stages(project, ["a", "after_a"], jobs=2)
    assert started(project) == []


def test_an_input_that_is_not_current_is_refused(project):
    (project / "base.txt").write_text("changed\n")
    with pytest.raises(StageFailed, match=r"not current.*base.*dvc repro base"):
        side_by_side.run_stages(project, ["c"], jobs=1)
    assert started(project) == []


def test_an_unknown_stage_is_named(project):
    with pytest.raises(StageFailed, match="no stage 'nope'"):
        side_by_side.plan(project, ["nope"])


def test_after_a_failure_no_stage_starts_and_the_finished_ones_are_recorded(project, capsys):
    with pytest.raises(StageFailed, match="broken failed .*not started: a"):
        side_by_side.run_stages(project, ["c", "broken", "a"], jobs=1)
    assert started(project) == ["c", "broken"]
    assert "the broken stage says why" in capsys.readouterr().out  # its log's tail
    assert dvc_status(project, ["c"]) == {}  # recorded
    assert set(dvc_status(project, ["a", "broken"])) == {"a", "broken"}


def test_the_command_line_exits_1_on_a_failure(project, monkeypatch):
    monkeypatch.chdir(project)
    assert side_by_side.main(["--jobs", "1", "broken"]) == 1
    with pytest.raises(SystemExit):
        side_by_side.main(["--jobs", "0", "c"])


def test_each_stage_records_its_wall_cpu_and_peak_memory_beside_its_log(project):
    side_by_side.run_stages(project, ["c"], jobs=1)
    cost = json.loads((project / "logs" / "c.cost.json").read_text())
    assert cost["stage"] == "c" and cost["returncode"] == 0
    assert 0 <= cost["wall_s"] < 60 and 0 <= cost["cpu_s"] < 60
    assert 0.5 < cost["peak_rss_mb"] < 1000  # a shell and cat: a few MB, not KiB or bytes read as MB


def test_a_stopped_stage_stops_the_command_its_shell_started_and_records_the_stop(tmp_path):
    cost = tmp_path / "cost.json"
    launcher = subprocess.Popen([sys.executable, "-m", "citeworth.orchestration.measured", str(cost),
                                 f"sleep 37.25; echo not stopped > {tmp_path / 'after'}"])
    time.sleep(1.5)  # python started, the shell and its sleep too
    launcher.terminate()
    assert launcher.wait(timeout=10) == 128 + signal.SIGTERM
    assert json.loads(cost.read_text())["cpu_s"] >= 0
    time.sleep(0.5)
    assert not (tmp_path / "after").exists()
    assert subprocess.run(["pgrep", "-f", "^sleep 37.25$"], capture_output=True).returncode == 1  # no orphan
