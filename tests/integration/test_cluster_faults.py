"""The faults an operator meets, each injected while real work runs on the native Celery cluster
(``citeworth cluster up``; its S3 API behind a proxy the test can take down, as a load balancer
goes down): Redis killed and started again, PostgreSQL restarted, S3 unreachable for 60 s, the
scheduler killed (with a second scheduler running, then alone), the workspace's disk full, a
worker host lost for good.

Each fault gets a dataset run of its own (new curation rules: every baseline shard is curated
again, over both cpu hosts). After each, what must hold:

1. the run ends green (after Airflow's retries);
2. nothing is lost or half-published: every DVC object on S3 holds the bytes its name says, every
   output a branch's or tag's dvc.lock records is on S3 whole, each version is committed once;
3. the same run again redoes no shard (each one is found in the shard store);
4. no process is left behind (every process of the cluster is in a running component's group).

Each test records its fault for ``benchmarks/results/faults.json`` (written by
``python benchmarks/faults.py``, which runs this module). About 35 minutes on 2 cores, so it runs
where asked for: ``CITEWORTH_FAULT_TESTS=1`` (``make faults``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from cluster_fixture import cluster_dir, native_cluster, require_cluster_programs
from dvc_workspace import fresh_workspace, git
from outage_proxy import OutageProxy
from test_airflow_backfill import _tiny_defaults
from test_cluster import SETTINGS, Deployment

from citeworth.orchestration import cluster as native
from citeworth.orchestration.versioning import DATASET_STAGES

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    os.environ.get("CITEWORTH_FAULT_TESTS") != "1",
    reason="the fault suite takes about 35 min: set CITEWORTH_FAULT_TESTS=1 (or run `make faults`)")]

REPORT_ENV = "CITEWORTH_FAULTS_REPORT"
OUTAGE_S = 60
RUN_TIMEOUT_S = 1800
SHARD_TASK = "curate_baseline_shard"
# What a shard task logs when it finds its shard done (citeworth.curate.stage): in the store, or in
# the host's workspace.
REUSED = ("was curated before with these rules and code", "already curated with these inputs, rules and code")


@dataclass
class Faulted:
    """One fault injected into one run, and what the checks found."""

    fault: str
    run_id: str
    setting: str
    began: float = 0.0
    cleared: float = 0.0
    recovered: float = 0.0
    at_fault: set[tuple[str, int]] = field(default_factory=set)  # tasks running or waiting at the fault
    restarted: list[str] = field(default_factory=list)  # components a supervisor started again
    record: dict = field(default_factory=dict)


class FaultCluster(Deployment):
    """The running cluster, its S3 proxy and the fault records."""

    def __init__(self, running, proxy: OutageProxy):
        super().__init__(running, running.project)
        self.proxy = proxy
        self.records: list[dict] = []

    # -- runs ----------------------------------------------------------------------------------------
    def trigger(self, run_id: str, conf: dict) -> None:
        self.airflow("dags", "trigger", "citeworth_dataset", "--run-id", run_id, "--conf", json.dumps(conf))

    def tasks(self, run_id: str) -> list[dict]:
        return self.task_instances("citeworth_dataset", run_id)

    def wait_until(self, what: str, ready, timeout: float = 900, every: float = 0.5):
        deadline = time.time() + timeout
        while not (found := ready()):
            assert time.time() < deadline, f"not {what} after {timeout:.0f} s"
            time.sleep(every)
        return found

    def final_state(self, run_id: str, dag_id: str = "citeworth_dataset") -> str:
        """The run's state once it is success or failed."""
        def ended() -> str | None:
            state = self.api(f"/dags/{dag_id}/dagRuns/{run_id}")["state"]
            return state if state in ("success", "failed") else None

        return self.wait_until(f"{dag_id} run {run_id} finished", ended, timeout=RUN_TIMEOUT_S, every=3)

    def running_shards(self, run_id: str, hosts: int = 1) -> list[dict]:
        """The baseline shards running on at least ``hosts`` hosts at once (waits for them)."""
        def running() -> list[dict]:
            tasks = [task for task in self.tasks(run_id)
                     if task["task_id"] == SHARD_TASK and task["state"] == "running" and task["hostname"]]
            return tasks if len({task["hostname"] for task in tasks}) >= hosts else []

        return self.wait_until(f"{SHARD_TASK} running on {hosts} hosts", running)

    def running_task(self, run_id: str, task_id: str) -> dict:
        return self.wait_until(f"{task_id} running", lambda: next(
            (task for task in self.tasks(run_id)
             if task["task_id"] == task_id and task["state"] == "running"), None), timeout=1500)

    def unfinished(self, run_id: str) -> set[tuple[str, int]]:
        return {(task["task_id"], task["map_index"]) for task in self.tasks(run_id)
                if task["state"] in ("running", "queued", "scheduled", "up_for_retry", "restarting")}

    def finish(self, faulted: Faulted) -> str:
        """Wait for the run to end; ``faulted.recovered``: when every task that was running or
        waiting at the fault had succeeded."""
        deadline = time.time() + RUN_TIMEOUT_S
        while (state := self.api(f"/dags/citeworth_dataset/dagRuns/{faulted.run_id}")["state"]) not in (
                "success", "failed"):
            assert time.time() < deadline, self.tasks(faulted.run_id)
            if not faulted.recovered:
                done = {(task["task_id"], task["map_index"]) for task in self.tasks(faulted.run_id)
                        if task["state"] in ("success", "skipped")}
                if faulted.at_fault <= done:
                    faulted.recovered = time.time()
            time.sleep(2)
        faulted.recovered = faulted.recovered or time.time()
        return state

    # -- the four checks ---------------------------------------------------------------------------
    def check(self, faulted: Faulted, conf: dict, state: str) -> dict:
        tasks = self.tasks(faulted.run_id)
        assert state == "success", [(t["task_id"], t["map_index"], t["state"], t["try_number"])
                                    for t in tasks]
        lost, damaged = self.objects_lost()
        assert not damaged, f"half-written objects on S3: {damaged}"
        assert not lost, f"objects a version records but S3 lacks: {lost}"
        twice = self.published_twice()
        assert not twice, f"versions committed more than once: {twice}"
        redone, reused = self.rerun(f"{faulted.run_id}-again", conf)
        assert redone == 0, f"the rerun curated {redone} shards again"
        left = self.processes_left()
        assert not left, f"processes outside every running component: {left}"
        retried = [f"{t['task_id']}[{t['map_index']}]" for t in tasks if t["try_number"] > 1]
        faulted.record = {
            "fault": faulted.fault, "test": os.environ["PYTEST_CURRENT_TEST"].split("::")[-1].split()[0],
            "outcome": state, "run_id": faulted.run_id,
            "fault_seconds": round(faulted.cleared - faulted.began, 1),
            "recovery_seconds": round(faulted.recovered - faulted.began, 1),
            "tasks_retried": len(retried), "retried": sorted(retried),
            "rerun_shards_redone": redone, "rerun_shards_reused": reused,
            "objects_lost": len(lost), "half_published": len(damaged) + len(twice),
            "processes_left": len(left), "components_restarted": faulted.restarted,
            "setting": faulted.setting}
        self.records.append(faulted.record)
        print(json.dumps(faulted.record, indent=2))
        return faulted.record

    def objects_lost(self) -> tuple[list[str], list[str]]:
        """(outputs some ref's dvc.lock records that S3 lacks, S3 objects whose bytes differ from
        their name) over every branch and tag of the git remote, for the dataset stages."""
        objects = self.s3_objects("citeworth-dvc")
        damaged = [key for key, body in objects.items() if key.startswith("store/files/md5/")
                   and hashlib.md5(body).hexdigest() != "".join(key.split("/")[-2:]).removesuffix(".dir")]
        bare = self.cluster.bare_repo
        refs = git(bare, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags").split()
        lost = set()
        for ref in refs:
            shown = subprocess.run(["git", "show", f"{ref}:dvc.lock"], cwd=bare, capture_output=True,
                                   text=True)
            if shown.returncode:
                continue
            for name, entry in (yaml.safe_load(shown.stdout) or {}).get("stages", {}).items():
                if name.split("@")[0] not in DATASET_STAGES:
                    continue
                for out in entry.get("outs", []):
                    lost.update(f"{ref}:{name}:{key}" for key in self._missing(objects, out["md5"]))
        return sorted(lost), damaged

    @staticmethod
    def _missing(objects: dict[str, bytes], md5: str) -> list[str]:
        key = f"store/files/md5/{md5[:2]}/{md5[2:]}"
        if key not in objects:
            return [key]
        if not md5.endswith(".dir"):
            return []
        return [f"store/files/md5/{e['md5'][:2]}/{e['md5'][2:]}" for e in json.loads(objects[key])
                if f"store/files/md5/{e['md5'][:2]}/{e['md5'][2:]}" not in objects]

    def published_twice(self) -> list[str]:
        """Runs (or releases) with more than one versioning commit on the git remote, and data
        version tags on a commit that is not their own version's."""
        bare = self.cluster.bare_repo
        subjects = git(bare, "log", "--all", "--format=%s").splitlines()
        versions = [subject for subject in subjects if subject.startswith(("Experiment ", "Data version "))]
        wrong = [tag for tag in git(bare, "tag", "--list", "data/*").split()
                 if not git(bare, "log", "-1", "--format=%s", tag).startswith(f"Data version {tag} (")]
        return sorted({subject for subject in versions if versions.count(subject) > 1} | set(wrong))

    def rerun(self, run_id: str, conf: dict) -> tuple[int, int]:
        """(shards curated again, shards found in the shard store) by the same run again (a run of
        a release already versioned is skipped whole: nothing redone)."""
        self.trigger(run_id, conf)
        assert self.final_state(run_id) == "success", self.tasks(run_id)
        redone = reused = 0
        for task in self.tasks(run_id):
            if task["task_id"] == SHARD_TASK and task["state"] == "success":  # a skipped one has no log
                key = (f"airflow/dag_id=citeworth_dataset/run_id={run_id}/task_id={SHARD_TASK}/"
                       f"map_index={task['map_index']}/attempt={task['try_number']}.log")
                log = self.running.wait_for_log(key)
                found = any(said in log for said in REUSED)
                reused += found
                redone += not found
        if "release" in conf:
            resolved = next(task for task in self.tasks(run_id) if task["task_id"] == "resolve_release")
            assert resolved["state"] == "skipped" and not reused, resolved
        else:
            assert reused, "the rerun curated no baseline shard"
        return redone, reused

    def processes_left(self) -> list[str]:
        """Processes naming the cluster's folder outside the process group of every running component."""
        groups = {pid for pid in self.cluster.status().values() if pid}
        groups |= {pid for pid in map(self.cluster.pid, self.cluster.started) if pid}
        left = []
        for proc in Path("/proc").iterdir():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                group = os.getpgid(int(proc.name))
            except (OSError, ValueError):
                continue
            if str(self.cluster.root) in cmdline and group not in groups:
                left.append(f"{proc.name} (group {group}): {cmdline[:200]}")
        return left

    def bring_back(self, faulted: Faulted, settle_s: float = 60) -> None:
        """``citeworth cluster up`` as a process supervisor runs it (compose's ``restart: always``,
        systemd's ``Restart=always``): whenever a component is down, until all have run for
        ``settle_s`` (the scheduler, dag-processor and triggerer exit when the DB goes away, some
        only when they next reach for it, some while `up` waits for them to be healthy: `up` is
        then run again). ``faulted.cleared``: when `up` first succeeded."""
        deadline, running_since = time.time() + 300, None
        while running_since is None or time.time() < running_since + settle_s:
            if any(pid is None for pid in self.cluster.status().values()):
                running_since = None
                try:
                    faulted.restarted += native.up(self.cluster)
                except native.ClusterError as exc:  # one exited while `up` waited for it
                    assert time.time() < deadline, exc
                    time.sleep(2)
                    continue
                faulted.cleared = faulted.cleared or time.time()
            running_since = running_since or time.time()
            time.sleep(2)


def _recurate(min_sentences: int) -> dict:
    """A run whose baseline rules differ from every earlier one: each baseline shard curated again."""
    return {"overrides": {"curate_baseline": {"rules": {"min_sentences": min_sentences}}}}


@pytest.fixture(scope="module")
def faults(tmp_path_factory, mirror):
    require_cluster_programs()
    project = fresh_workspace(tmp_path_factory.mktemp("faults-project"))
    _tiny_defaults(project)
    root = cluster_dir("citeworth-faults-")
    state = root / "cluster" / "cluster.json"
    proxy = OutageProxy(lambda: json.loads(state.read_text())["ports"]["s3"])
    # DVC, the shard store and git's data versions reach S3 through the proxy (the task logs do not)
    settings = {**SETTINGS, "AWS_ENDPOINT_URL_S3": proxy.url, "AWS_ENDPOINT_URL": proxy.url}
    try:
        with native_cluster(project, root / "cluster", cpu_workers=2, gpu_workers=1,
                            settings=settings) as running:
            harness = FaultCluster(running, proxy)
            # Each new data version triggers a models run; they wait (paused) so as not to hold the
            # cpu hosts: the disk fault runs its own.
            harness.airflow("dags", "pause", "citeworth_models")
            harness.trigger("defaults", {})  # the newest release's data version: what the faults build on
            assert harness.final_state("defaults") == "success", harness.tasks("defaults")
            yield harness
            if report := os.environ.get(REPORT_ENV):
                Path(report).write_text(json.dumps({"faults": harness.records}, indent=2) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _faulted(faults: FaultCluster, fault: str, run_id: str, conf: dict, setting: str,
             hosts: int = 2) -> Faulted:
    """The run ``run_id`` triggered and curating baseline shards on ``hosts`` hosts at once: the
    moment to inject ``fault`` (``began`` and the tasks unfinished then are recorded)."""
    faults.trigger(run_id, conf)
    faults.running_shards(run_id, hosts=hosts)
    faulted = Faulted(fault, run_id, setting, at_fault=faults.unfinished(run_id))
    faulted.began = time.time()
    return faulted


def test_redis_killed_and_started_again_while_shards_run_on_two_hosts(faults):
    conf = _recurate(3)
    faulted = _faulted(faults, "redis killed (kill -9) and started again", "redis", conf,
                       "redis-server --appendonly yes --appendfsync always (the broker's queue survives "
                       "a restart); task_acks_late with prefetch 1")
    os.killpg(faults.cluster.pid("redis"), signal.SIGKILL)
    faults.wait_until("redis gone", lambda: faults.cluster.pid("redis") is None)
    faults.bring_back(faulted)
    faults.check(faulted, conf, faults.finish(faulted))


def test_postgresql_restarted_while_tasks_run_and_the_scheduler_schedules(faults):
    conf = _recurate(4)
    faulted = _faulted(faults, "postgresql restarted (fast shutdown, then start)", "postgres", conf,
                       "the scheduler, dag-processor and triggerer exit when the DB goes away: a supervisor "
                       "starts them again (`citeworth cluster up`); the task runners retry the API server")
    assert any(task[0] == SHARD_TASK for task in faulted.at_fault)
    faults.cluster.stop("postgres")  # SIGINT: PostgreSQL's fast shutdown
    faults.bring_back(faulted)
    faults.check(faulted, conf, faults.finish(faulted))


def test_s3_unreachable_for_60s_during_shard_writes_and_the_versioning_push(faults):
    conf = {"release": "demo-v1"}  # a new data version: shards stored, outputs pushed, a tag
    faulted = _faulted(faults, "S3 unreachable for 60 s (twice: shard writes, dvc push and tagging)",
                       "s3-demo-v1", conf, "task retries (2, 30 s doubling); boto3 standard retries", hosts=1)
    with faults.proxy.outage(OUTAGE_S):
        pass
    faults.running_task("s3-demo-v1", "version")
    with faults.proxy.outage(OUTAGE_S):
        pass
    faulted.cleared = time.time()
    state = faults.finish(faulted)
    assert git(faults.cluster.bare_repo, "tag", "--list", "data/demo/demo-v1").strip() == "data/demo/demo-v1"
    faults.check(faulted, conf, state)


def _fill(folder: Path) -> Path:
    """A ballast file taking every free byte of ``folder``'s filesystem."""
    ballast = folder / "ballast"
    with open(ballast, "wb") as out:
        free = shutil.disk_usage(folder).free
        try:
            os.posix_fallocate(out.fileno(), 0, free)
        except OSError:
            pass  # as full as it gets
    return ballast


@contextlib.contextmanager
def _small_disks(*folders: Path, size: str = "2g") -> Iterator[None]:
    """A tmpfs of ``size`` mounted over each of ``folders`` (hosts' run workspaces), unmounted
    after: mounting needs root."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem over a host's workspaces needs root (CI runs as root)")
    mounted = []
    try:
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                                  capture_output=True, text=True)
            if done.returncode:
                pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): the disk fault needs one")
            mounted.append(folder)
        yield
    finally:
        for folder in mounted:
            subprocess.run(["umount", "--lazy", str(folder)], check=True)


DISK_FULL = "no space left on the disk holding"


def _log_of(faults: FaultCluster, run_id: str, task: dict, attempt: int,
            dag_id: str = "citeworth_dataset") -> str:
    index = f"map_index={task['map_index']}/" if task["map_index"] >= 0 else ""
    return faults.running.wait_for_log(f"airflow/dag_id={dag_id}/run_id={run_id}/task_id={task['task_id']}/"
                                       f"{index}attempt={attempt}.log", timeout_s=120)


def test_scheduler_killed_beside_a_second_one_and_then_alone(faults):
    conf = _recurate(5)
    cluster = faults.cluster
    second = f"{native.SCHEDULER_HOST}/scheduler-2"
    cluster.start(second, [sys.executable, "-m", "airflow", "scheduler"],
                  cluster.host_env(native.SCHEDULER_HOST), cluster.host_dir(native.SCHEDULER_HOST))
    try:
        faulted = _faulted(faults, "scheduler killed (kill -9): with a second scheduler, then alone and "
                           "started again", "scheduler", conf, "several schedulers on PostgreSQL (row "
                           "locks); the orphaned tasks adopted by the scheduler that runs")
        first = f"{native.SCHEDULER_HOST}/scheduler"
        os.killpg(cluster.pid(first), signal.SIGKILL)
        # the second one schedules on: more shards end while the first is down
        def shards_ended() -> set[int]:
            return {t["map_index"] for t in faults.tasks("scheduler") if t["task_id"] == SHARD_TASK
                    and t["state"] == "success"}

        ended = shards_ended()
        faults.wait_until("a shard finished under the second scheduler", lambda: shards_ended() - ended,
                          timeout=600)
        native.up(cluster)  # the first one back
        cluster.stop(second)
        faults.wait_until("a task running",
                          lambda: any(t["state"] == "running" for t in faults.tasks("scheduler")))
        os.killpg(cluster.pid(first), signal.SIGKILL)  # now the only one
        time.sleep(10)
        faults.bring_back(faulted, settle_s=0)
    finally:
        cluster.stop(second)
    faults.check(faulted, conf, faults.finish(faulted))


def test_the_workspace_disk_full_during_shard_writes_and_at_a_training_checkpoint(faults):
    conf = _recurate(6)
    cluster = faults.cluster
    cpu2, gpu1 = (cluster.host_dir(host) / "scratch" / "runs" for host in ("cpu2", "gpu1"))
    with _small_disks(cpu2, gpu1):
        faulted = _faulted(faults, "disk full: a cpu host's workspaces during curation, the gpu host's at "
                           "a training checkpoint", "disk-full", conf, "outputs and checkpoints written "
                           "whole or not at all (a temporary file renamed); the stage fails naming the "
                           "full disk; task retries; training resumes from its last checkpoint")
        ballast = _fill(cpu2)
        failed = faults.wait_until("a task failed on the full disk", lambda: next(
            (t for t in faults.tasks("disk-full") if t["hostname"] == "cpu2"
             and t["state"] == "up_for_retry"), None), timeout=600)
        assert DISK_FULL in _log_of(faults, "disk-full", failed, failed["try_number"])
        ballast.unlink()  # the operator frees space: the retries go through
        faulted.cleared = time.time()
        record = faults.check(faulted, conf, faults.finish(faulted))
        record.update(_disk_full_at_a_training_checkpoint(faults, gpu1))


# A model with checkpoints (the TF-IDF model has none), on a budget: two epochs, a checkpoint at each
# evaluation (every 25 steps).
CHECKPOINTED = {"models": ["crnn"], "overrides": {"train": {"catalog": {"crnn": {"optim": {
    "epochs": 2, "patience": 10}}}}}}


def _disk_full_at_a_training_checkpoint(faults: FaultCluster, runs: Path,
                                        models_run: str = "disk-full-train") -> dict:
    """A models run on the version the defaults built, the gpu host's disk filled once training has
    written its first checkpoint: the next checkpoint fails, the task fails naming the disk, and
    once space is freed its retry resumes from the checkpoint that was written whole."""
    for waiting in faults.api("/dags/citeworth_models/dagRuns")["dag_runs"]:  # the versions' own, paused
        faults.session.delete(f"{faults.running.api_url}/api/v2/dags/citeworth_models/dagRuns/"
                              f"{waiting['dag_run_id']}", timeout=60).raise_for_status()
    faults.airflow("dags", "unpause", "citeworth_models")
    faults.airflow("dags", "trigger", "citeworth_models", "--run-id", models_run, "--conf",
                   json.dumps({"data_version": "data/demo/demo-v2", **CHECKPOINTED}))

    def train() -> dict | None:
        return next((t for t in faults.task_instances("citeworth_models", models_run)
                     if t["task_id"] == "train_model"), None)

    faults.wait_until("a first training checkpoint", lambda: list(runs.glob("*/checkpoints/crnn/*/last.pt")),
                      timeout=900, every=0.2)
    began = time.time()
    ballast = _fill(runs)
    failed = faults.wait_until("train_model failed on the full disk",
                               lambda: (t := train()) and t["state"] == "up_for_retry" and t, timeout=600)
    assert DISK_FULL in _log_of(faults, models_run, failed, failed["try_number"], "citeworth_models")
    ballast.unlink()
    trained = faults.wait_until("train_model trained", lambda: (t := train()) and t["state"] in (
        "success", "failed") and t, timeout=900)
    assert trained["state"] == "success", trained
    resumed = re.search(r"resuming from \S+ at step (\d+)",
                        _log_of(faults, models_run, trained, trained["try_number"], "citeworth_models"))
    assert resumed, "the retry did not resume from the checkpoint"
    # The rest of the models run (silver, the domain cells, ...) is not this fault's: stopped.
    faults.session.patch(f"{faults.running.api_url}/api/v2/dags/citeworth_models/dagRuns/{models_run}",
                         json={"state": "failed"}, timeout=60).raise_for_status()
    faults.airflow("dags", "pause", "citeworth_models")
    return {"training": f"train_model failed naming the full disk, then resumed from its step "
                        f"{resumed[1]} checkpoint on try {trained['try_number']} once space was freed",
            "training_recovery_seconds": round(time.time() - began, 1)}


def test_a_worker_host_lost_for_good(faults):
    conf = _recurate(7)
    faulted = _faulted(faults, "a worker host lost for good (its processes killed, its folder removed)",
                       "host-lost", conf, "task_instance_heartbeat_timeout (60 s here): the lost task is "
                       "failed and retried on another host; acks_late")
    os.killpg(faults.cluster.pid("cpu2/worker"), signal.SIGKILL)
    shutil.rmtree(faults.cluster.host_dir("cpu2"))
    faulted.cleared = time.time()
    state = faults.finish(faulted)
    ran_on = {t["hostname"] for t in faults.tasks("host-lost") if t["state"] == "success" and t["hostname"]}
    assert "cpu1" in ran_on
    faults.check(faulted, conf, state)
