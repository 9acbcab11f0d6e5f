"""What the study at scale costs and finds: `make study` from a fresh clone, every stage's wall, CPU
and peak memory, curation throughput beside the demo's, the projection to S2ORC, and the results.

    python benchmarks/study.py --run      # clone HEAD beside this checkout, `make study` there, collect
    python benchmarks/study.py            # collect from this checkout's study build (make study ran here)
    python benchmarks/study.py --resume   # the clone's build stopped: HEAD there, make study again

``--run`` clones this checkout's HEAD into ``--clone`` (default ``../citeworth-study-bench``, removed
first), runs ``make study`` there with ``CITEWORTH_MIRROR`` as set (the setup included: a fresh
clone's venv, pip's download cache as this machine has it) and times it. Collecting reads the build's
workspace (``citeworth profile path study``): each stage's cost from ``logs/<stage>.cost.json``
(side_by_side's records: the stage's whole process tree, read by its launcher), the curated
shards' stats, Table 2, the gate, Table 4 with the per-collection scores, the findings, the
scaling curves and Table 5. It curates the demo corpus once more in a scratch folder (a fresh shard
store: nothing reused) for the throughput beside it, measured in the same run. Writes
``benchmarks/results/study.json`` and copies the study's figures to ``docs/assets/study/`` for the
results page of the docs (``python -m citeworth.docs.reference --write`` then regenerates
docs/study-results.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "study.json"
FIGURES = ROOT / "docs" / "assets" / "study"
S2ORC_PAPERS = 8_100_000  # S2ORC 20200705's full-text papers (the paper's corpus)
COMMAND = "python benchmarks/study.py --run"
LIMIT_S = 90 * 60


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="clone HEAD and run `make study` there first")
    parser.add_argument("--clone", type=Path, default=ROOT.parent / "citeworth-study-bench",
                        help="where --run clones to (default: %(default)s; removed first)")
    parser.add_argument("--resume", action="store_true",
                        help="pull HEAD into the existing --clone and run `make study` there again (its "
                             "finished stages reused): recorded as a resumed run, with the stages that "
                             "had failed before")
    parser.add_argument("--out", type=Path, default=RESULTS, help="default: %(default)s")
    args = parser.parse_args(argv)
    project, timing = ROOT, None
    if args.run:
        project, timing = args.clone.resolve(), run_make_study(args.clone.resolve())
    elif args.resume:
        project, timing = args.clone.resolve(), resume_make_study(args.clone.resolve())
    results = collect(project, timing)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    print(json.dumps({k: results[k] for k in ("make_study", "curation")}, indent=2))
    return 0


def run_make_study(clone: Path) -> dict:
    """``make study`` in a fresh clone of HEAD: wall and CPU seconds (of every process it started)."""
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    return _timed_make_study(clone)


def resume_make_study(clone: Path) -> dict:
    """``make study`` again in ``clone`` at this checkout's HEAD, after a run that stopped: the costs
    of the stages that had failed are kept beside the timing (the rerun overwrites their logs)."""
    logs = _workspace(clone) / "logs"
    failed = {stage: cost for stage, cost in _stage_costs(logs).items() if cost["returncode"] != 0}
    subprocess.run(["git", "fetch", "--quiet", str(ROOT), "HEAD"], cwd=clone, check=True)
    # the benchmark's own clone: an amended commit would not fast-forward
    subprocess.run(["git", "reset", "--quiet", "--hard", "FETCH_HEAD"], cwd=clone, check=True)
    return {**_timed_make_study(clone), "fresh_clone": False, "within_limit": None,
            "failed_before": failed, "commit": _git(clone, "rev-parse", "HEAD")}


def _timed_make_study(clone: Path) -> dict:
    load_before = os.getloadavg()
    start, before = time.perf_counter(), os.times()
    done = subprocess.run(["make", "study"], cwd=clone)
    after = os.times()
    return {"returncode": done.returncode, "wall_s": round(time.perf_counter() - start, 1),
            "cpu_s": round(after.children_user + after.children_system
                           - before.children_user - before.children_system, 1),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "within_limit": done.returncode == 0 and time.perf_counter() - start <= LIMIT_S,
            "limit_s": LIMIT_S, "fresh_clone": True}


def _workspace(project: Path) -> Path:
    return Path(subprocess.run([sys.executable, "-m", "citeworth.cli", "profile", "path", "study"],
                               cwd=project, check=True, capture_output=True, text=True).stdout.strip())


def collect(project: Path, timing: dict | None) -> dict:
    workspace = _workspace(project)
    stages = _stage_costs(workspace / "logs")
    curation = _curation(workspace, stages)
    results = {
        "command": COMMAND, "date": datetime.now(UTC).strftime("%Y-%m-%d"), "machine": _machine(),
        "commit": _git(project, "rev-parse", "HEAD"),
        "workspace": str(workspace.relative_to(project)),  # no path of this machine
        "make_study": timing, "stages": stages,
        "stage_totals": {"wall_s": round(sum(s["wall_s"] for s in stages.values()), 1),
                         "cpu_s": round(sum(s["cpu_s"] for s in stages.values()), 1),
                         "peak_rss_mb": max((s["peak_rss_mb"] for s in stages.values()), default=None)},
        "curation": curation,
        "projection_s2orc": _projection(curation, stages),
        **_study_results(workspace),
    }
    _copy_figures(workspace)
    return results


def _stage_costs(logs: Path) -> dict[str, dict]:
    costs = {}
    for path in sorted(logs.glob("*.cost.json")):
        cost = json.loads(path.read_text())
        costs[cost["stage"]] = {key: cost[key] for key in ("wall_s", "cpu_s", "peak_rss_mb", "returncode")}
    return costs


def _curation(workspace: Path, stages: dict) -> dict:
    """Papers read and kept by every curated shard, per collection input, and the throughput beside the
    demo's, curated once more here."""
    totals = {"papers_read": 0, "papers_kept": 0, "sentences": 0, "shards": 0, "quarantined": 0}
    rejected: dict[str, int] = {}
    for path in (workspace / "interim" / "stats").glob("*.json"):
        stats = json.loads(path.read_text())
        curation = stats.get("curation") or {}
        totals["papers_read"] += curation.get("papers", 0)
        totals["papers_kept"] += curation.get("papers_kept", 0)
        totals["sentences"] += curation.get("sentences", 0)
        totals["shards"] += 1
        totals["quarantined"] += sum((stats.get("quarantined") or {}).values())
        for reason, n in (curation.get("papers_rejected") or {}).items():
            rejected[reason] = rejected.get(reason, 0) + n
    cpu = (stages.get("curate@citeworth") or {}).get("cpu_s")
    demo = _demo_curation()
    per_cpu_s = round(totals["papers_read"] / cpu, 1) if cpu else None
    no_fields = rejected.get("no_fields_of_study", 0)
    return {**totals, "papers_rejected": dict(sorted(rejected.items())),
            "no_fields_of_study_share": round(no_fields / max(totals["papers_read"], 1), 4),
            "cpu_s": cpu, "wall_s": (stages.get("curate@citeworth") or {}).get("wall_s"),
            "papers_per_cpu_s": per_cpu_s, "demo": demo,
            "ratio_to_demo": round(per_cpu_s / demo["papers_per_cpu_s"], 2) if per_cpu_s and demo else None}


def _demo_curation() -> dict:
    """The demo corpus curated in a scratch project (its own shard store: nothing reused)."""
    with tempfile.TemporaryDirectory(prefix="study-bench-demo-") as scratch:
        scratch = Path(scratch)
        shutil.copy(ROOT / "params.yaml", scratch / "params.yaml")
        env = {**os.environ, "CITEWORTH_SHARD_STORE": str(scratch / "store"), "CITEWORTH_WORKERS": "1"}
        cli = [sys.executable, "-m", "citeworth.cli", "run"]
        subprocess.run([*cli, "download"], cwd=scratch, env=env, check=True, capture_output=True)
        before, start = os.times(), time.perf_counter()
        done = subprocess.run([*cli, "curate"], cwd=scratch, env=env, check=True, capture_output=True,
                              text=True)
        after, wall = os.times(), time.perf_counter() - start
    summary = json.loads(done.stdout[done.stdout.index("{"):])
    cpu = after.children_user + after.children_system - before.children_user - before.children_system
    papers = summary["curation"]["papers"]
    return {"papers_read": papers, "papers_kept": summary["curation"]["papers_kept"],
            "cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "workers": 1,
            "papers_per_cpu_s": round(papers / cpu, 1)}


def _projection(curation: dict, stages: dict) -> dict:
    """The data stages' CPU time scaled linearly from the study's papers read to S2ORC's 8.1M."""
    papers = curation["papers_read"]
    if not papers:
        return {}
    data = ("curate@citeworth", "curate@baseline", "assemble@citeworth", "assemble@baseline", "validate")
    per_paper = {name: stages[name]["cpu_s"] / papers for name in data if name in stages}
    cpu_hours = {name: round(value * S2ORC_PAPERS / 3600, 1) for name, value in per_paper.items()}
    total = sum(cpu_hours.values())
    return {"papers": S2ORC_PAPERS, "from_papers": papers, "cpu_hours": cpu_hours,
            "total_cpu_hours": round(total, 1), "hours_on_2_cores": round(total / 2, 1),
            "hours_on_64_cores": round(total / 64, 1),
            "assumes": "CPU time linear in papers read (curation is per shard; assemble's duplicate index "
                       "is n log n on disk, benchmarks/results/identity_index.json); training is not "
                       "projected: at S2ORC's size it is a GPU job (params/study-gpu.yaml, "
                       "params/paper.yaml)"}


def _study_results(workspace: Path) -> dict:
    def read(relative: str):
        path = workspace / relative
        return json.loads(path.read_text()) if path.is_file() else None

    stats = read("reports/dataset_stats.json") or {}
    summary = read("reports/quality/summary.json") or {}
    models = read("metrics/models.json") or {}
    best = max(models, key=lambda name: (models[name].get("dev_f1") or 0, name)) if models else None
    domains = read("metrics/domains.json") or {}
    return {
        "dataset": {key: stats.get(key) for key in ("overall", "splits", "fields", "duplicates")},
        "gate": {"success": summary.get("success"), "critical_failures": summary.get("critical_failures"),
                 "warnings": summary.get("warnings"), "residual_markers": summary.get("residual_markers"),
                 "markers_removed_percent": summary.get("markers_removed_percent")},
        "table4": models, "best_model": best,
        "findings": (read("metrics/findings.json") or {}).get("findings"),
        "scaling": read("metrics/scaling.json"),
        "table5": {key: domains.get(key) for key in ("fields", "group_by", "out_of_domain_test", "matrix",
                                                    "sigma", "sigma_in_domain", "model", "data")},
    }


def _copy_figures(workspace: Path) -> None:
    FIGURES.mkdir(parents=True, exist_ok=True)
    for relative in ("plots/scaling/scaling.png", "plots/domains/heatmap.png"):
        if (workspace / relative).is_file():
            shutil.copy(workspace / relative, FIGURES / Path(relative).name)


def _machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() \
        else platform.processor()
    return {"cores": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)}


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
