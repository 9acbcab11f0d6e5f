"""Curation throughput on the native Celery cluster: 1 vs 2 CPU worker hosts, in one run.

    python benchmarks/cluster_throughput.py              # 20 shards of the recombined corpus
    python benchmarks/cluster_throughput.py --shards 40

A throwaway clone of this checkout gets the demo corpus (`citeworth run download`, from
CITEWORTH_MIRROR when set) and, committed into it, the recombined benchmark corpus
(benchmarks/recombined_corpus.py: distinct papers made of paragraphs of different real papers, so
no content cache profits from repetition). `citeworth cluster up` starts PostgreSQL, Redis,
moto_server, a bare git remote, the scheduler host and two CPU worker hosts (one task slot each,
nothing shared but the git remote, S3 and the broker). Then the same `citeworth_dataset` run is
triggered twice with curate and curate_baseline reading the corpus: first with cpu2's worker
stopped (1 host), then with both (2 hosts), the S3 shard store emptied before each so that every
shard is curated. Reported: the wall time from the first curate shard task's start to the last
one's end, per setting, the tasks each host ran, and the ratio. Writes
benchmarks/results/cluster_throughput.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

from citeworth.orchestration import cluster as native
from citeworth.orchestration.phases import parse as parse_phases

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cluster_throughput.json"
CORPUS = "bench/recombined"  # in the throwaway clone, committed there
CURATION_TASKS = ("curate_shard", "curate_baseline_shard")
RUN_TIMEOUT_S = 3600


def _run(command: list[str], cwd: Path, env: dict | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed in {cwd}:\n{done.stderr[-3000:]}")
    return done.stdout


def prepare_project(work: Path, shards: int, papers_per_shard: int) -> tuple[Path, list[dict]]:
    """A clone of this checkout's HEAD with the recombined corpus committed; its curate inputs."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from recombined_corpus import write_corpus

    project = work / "project"
    _run(["git", "clone", "--quiet", str(ROOT), str(project)], work)
    _run([sys.executable, "-m", "citeworth.cli", "run", "download"], project)
    from citeworth.stages import stage_params

    inputs = stage_params("curate", path=project / "params.yaml").inputs
    sources = [dataclasses.replace(spec, glob=str(project / spec.glob),
                                   metadata=spec.metadata and str(project / spec.metadata))
               for spec in inputs]
    manifest = write_corpus(project / CORPUS, shards=shards, papers_per_shard=papers_per_shard,
                            inputs=sources)
    corpus_inputs = [{**spec, "glob": f"{CORPUS}/*.jsonl"} for spec in manifest["curate_inputs"]]
    _run(["git", "add", CORPUS], project)
    _run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "--quiet",
          "-m", "benchmark corpus"], project)
    print(f"corpus: {manifest['shards']} shards, {manifest['papers']} papers")
    return project, corpus_inputs


class Api:
    def __init__(self, cluster: native.Cluster):
        self.base = f"{cluster.api_url}/api/v2"
        self.session = cluster.api_session()

    def __call__(self, method: str, path: str, **kwargs) -> dict:
        response = self.session.request(method, f"{self.base}{path}", timeout=30, **kwargs)
        response.raise_for_status()
        return response.json()


def _empty_shard_store(cluster: native.Cluster) -> None:
    bucket, _, prefix = cluster.shared_env()["CITEWORTH_SHARD_STORE"].removeprefix("s3://").partition("/")
    s3 = cluster.s3()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=item["Key"])


def measure(api: Api, cluster: native.Cluster, corpus_inputs: list[dict]) -> dict:
    """Trigger one dataset run on the corpus; the curation span, the tasks per host and where each
    shard task's time went. The run is stopped once its curation is done: what follows is not
    measured (and the synthetic corpus need not pass the quality gate)."""
    _empty_shard_store(cluster)
    overrides = {"curate": {"inputs": corpus_inputs}, "curate_baseline": {"inputs": corpus_inputs}}
    run = "/dags/citeworth_dataset/dagRuns"
    run_id = api("POST", run, json={"logical_date": None, "conf": {"overrides": overrides, "push": False}})[
        "dag_run_id"]
    deadline = time.time() + RUN_TIMEOUT_S
    while not (curation := _finished_curation(api, f"{run}/{run_id}")):
        if time.time() > deadline or api("GET", f"{run}/{run_id}")["state"] == "failed":
            sys.exit(f"the curation of run {run_id} did not finish: see the cluster's logs in {cluster.root}")
        time.sleep(5)
    api("PATCH", f"{run}/{run_id}", json={"state": "failed"})  # stop the rest; the next run may start
    start = min(datetime.fromisoformat(task["start_date"]) for task in curation)
    end = max(datetime.fromisoformat(task["end_date"]) for task in curation)
    span = (end - start).total_seconds()
    hosts = Counter(task["hostname"] for task in curation)
    return {"run_id": run_id, "curation_seconds": round(span, 1), "shard_tasks": len(curation),
            "shard_tasks_per_host": dict(sorted(hosts.items())),
            **_overhead(cluster, run_id, curation, span, len(hosts))}


def _overhead(cluster: native.Cluster, run_id: str, curation: list[dict], span: float, hosts: int) -> dict:
    """Where the shard tasks' time went, from their logs' phase lines (S3, as the UI reads them):
    the median of each phase; a task's overhead is its duration less the stage's own work; the
    per-task cost on a host (the span times the hosts over the tasks) also counts the gaps between
    one task's end and the next one's start (Airflow's dispatch and the task process's start)."""
    prefix = f"airflow/dag_id=citeworth_dataset/run_id={run_id}/"
    phases = []
    for task in curation:
        key = (f"{prefix}task_id={task['task_id']}/map_index={task['map_index']}/"
               f"attempt={task['try_number']}.log")
        if (found := parse_phases(_task_log(cluster, key))) is None:
            sys.exit(f"no phase line in the log {key}")
        phases.append({**found, "duration": task["duration"]})
    work = [entry["stage work"] for entry in phases]
    names = dict.fromkeys(name for entry in phases for name in entry)
    return {"median_phase_seconds": {name: round(statistics.median(e.get(name, 0.0) for e in phases), 2)
                                     for name in names},
            "median_task_overhead_seconds": round(statistics.median(e["duration"] - e["stage work"]
                                                                    for e in phases), 2),
            "per_task_cost_on_a_host_seconds": round(span * hosts / len(curation), 2),
            "mean_work_seconds": round(statistics.mean(work), 2)}


def _task_log(cluster: native.Cluster, key: str, timeout_s: float = 120) -> str:
    """A task's log in the logs bucket: its worker uploads it once the task has ended."""
    s3 = cluster.s3()
    deadline = time.time() + timeout_s
    while True:
        try:
            return s3.get_object(Bucket="citeworth-logs", Key=key)["Body"].read().decode(errors="replace")
        except s3.exceptions.NoSuchKey:
            if time.time() > deadline:
                listed = s3.list_objects_v2(Bucket="citeworth-logs", Prefix=key.rsplit("/task_id=", 1)[0])
                keys = [item["Key"] for item in listed.get("Contents", [])]
                sys.exit(f"no task log {key}; the run's logs: {keys[:20]}")
            time.sleep(2)


def _finished_curation(api: Api, run: str) -> list[dict]:
    """The run's curate shard task instances once all of them succeeded (else [])."""
    tasks = api("GET", f"{run}/taskInstances?limit=1000")["task_instances"]
    curation = [task for task in tasks if task["task_id"] in CURATION_TASKS]
    return curation if curation and all(task["state"] == "success" for task in curation) else []


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=20, help="shards of the recombined corpus (default 20)")
    parser.add_argument("--papers-per-shard", type=int, default=300,
                        help="papers per shard (default 300, about 1 CPU s of curation: the corpus is "
                        "committed into the throwaway clone, so its size is bounded)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (cluster logs) afterwards")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="citeworth-bench-cluster-"))
    work.chmod(0o711)  # PostgreSQL, run as its own user, must reach its data folder
    cluster = native.Cluster(work / "cluster")
    try:
        project, corpus_inputs = prepare_project(work, args.shards, args.papers_per_shard)
        native.up(cluster, project, cpu_workers=2, gpu_workers=0,
                  settings={"AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False"})  # only the runs measured
        api = Api(cluster)
        cluster.stop("cpu2/worker")
        one = measure(api, cluster, corpus_inputs)
        print("1 host:", one)
        native.start_component(cluster, "cpu2/worker")
        deadline = time.time() + 120
        while "cpu2" not in native.worker_queues(cluster) and time.time() < deadline:
            time.sleep(2)
        two = measure(api, cluster, corpus_inputs)
        print("2 hosts:", two)
    finally:
        native.down(cluster)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results = {
        "command": " ".join(["python benchmarks/cluster_throughput.py", *sys.argv[1:]]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_1m_after": round(os.getloadavg()[0], 2),
        "corpus": {"shards": args.shards, "papers_per_shard": args.papers_per_shard,
                   "builder": "benchmarks/recombined_corpus.py"},
        "one_cpu_host": one, "two_cpu_hosts": two,
        "speedup_two_hosts_over_one": round(one["curation_seconds"] / two["curation_seconds"], 2),
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
