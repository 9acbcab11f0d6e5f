"""Where `make demo`'s time goes: every stage process's wall and CPU time, from a fresh clone.

    python benchmarks/demo_phases.py --fresh --label fresh_clone   # `make demo` as a newcomer runs it
    python benchmarks/demo_phases.py --rev main --label before --keep /tmp/demo-before

Clones the repository at ``--rev`` into a scratch folder and runs ``scripts/demo.sh`` there (the
steps of `make demo` after its setup) with ``CITEWORTH_MIRROR`` as set (a local mirror keeps the
download off the network). With ``--fresh`` the clone first makes its own venv (``make setup``,
timed: pip's download cache as this machine has it) and the demo runs on that, so ``fresh_clone_s``
is what `make demo` takes from a fresh clone, install included (the README's and getting-started's
figure, generated from the ``fresh_clone`` run: ``python -m citeworth.docs.reference --write``);
without it the venv running this script is used and the install is not timed.
Every ``citeworth`` process the demo starts -- directly or as a DVC stage's command -- runs through
a shim on PATH that records its arguments, start, end and CPU time (user + system of it and of the
children it waited for: a train stage's worker processes, when it has any); what is left of the
demo's wall time is DVC's own work (hashing, the lock, the cache). Then ``dvc repro`` runs once more
and must start no stage (the demo must leave the pipeline current). Reported per process and per
phase (data: download to validate; train; the other stages), the load average sampled every 2 s
(other tenants of a shared machine stretch wall time, hardly CPU time), the Table 4 rows, and a
sha256 of every output file for comparing two builds (``--compare``). Writes ``--out`` (default
benchmarks/results/demo_phases.json, the runs keyed by ``--label``).

    python benchmarks/demo_phases.py --compare /tmp/demo-before /tmp/demo-after

compares two kept builds file by file (JSON without its digests of the code -- fingerprints, the
silver embeddings' cache key -- and metrics without their wall-clock runtime keys, the one declared
exception, see citeworth/models/train.py), lists what differs and keeps that under ``--label``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "demo_phases.json"
# The folders the demo writes its outputs into (params.yaml), compared by --compare.
OUTPUT_DIRS = ("data", "interim", "interim_baseline", "metrics", "models", "plots", "reports")
# Files whose bytes carry wall-clock times (the declared exception) or run-specific logs.
RUNTIME_JSON = ("metrics/models/", "metrics/models.json")
RUNTIME_TEXT = ("reports/table4.md",)
SKIPPED_PARTS = ("dvclive",)  # DVCLive's logs carry timestamps
# JSON keys holding digests of the code (fingerprints; the silver embeddings' cache key): another
# version of the code has others by design.
DIGESTS_OF_CODE = ("fingerprint", "cache_key")
FRESH_CLONE_TARGET_S = 900  # the README's first command, install included, on 2 cores
DATA_STAGES = ("download", "pdf2tei", "curate", "curate_baseline", "assemble", "assemble_baseline",
               "validate")

SHIM = textwrap.dedent("""\
    #!{python}
    import json, os, subprocess, sys, time
    start = time.time()
    child = subprocess.Popen([{real!r}, *sys.argv[1:]])
    _, status, usage = os.wait4(child.pid, 0)
    end = time.time()
    record = {{"args": sys.argv[1:], "start": start, "end": end, "wall_s": round(end - start, 2),
              "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "rc": os.waitstatus_to_exitcode(status),
              "max_rss_mib": round(usage.ru_maxrss / 1024)}}
    with open({log!r}, "a") as log:
        log.write(json.dumps(record) + "\\n")
    sys.exit(record["rc"])
    """)


class LoadSampler(threading.Thread):
    """The 1-minute load average and the machine's memory in use every ``every`` seconds until stopped."""

    def __init__(self, every: float = 2.0):
        super().__init__(daemon=True)
        self.every, self.samples, self.memory, self.done = every, [], [], threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.every):
            self.samples.append(os.getloadavg()[0])
            self.memory.append(memory_in_use_mib())

    def summary(self) -> dict:
        s = self.samples or [os.getloadavg()[0]]
        return {"min": round(min(s), 2), "mean": round(sum(s) / len(s), 2), "max": round(max(s), 2),
                "samples": len(s)}


def memory_in_use_mib() -> int:
    """The machine's memory in use (MemTotal - MemAvailable), 0 where /proc/meminfo is missing."""
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        return 0
    kib = {line.split(":")[0]: int(line.split()[1]) for line in meminfo.read_text().splitlines()}
    return round((kib["MemTotal"] - kib["MemAvailable"]) / 1024)


def timed(command: list[str], cwd: Path, env: dict) -> dict:
    start = time.time()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if (rc := os.waitstatus_to_exitcode(status)) != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {rc}) in {cwd}")
    return {"wall_s": round(time.time() - start, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "start": start}


def stage_of(args: list[str]) -> str:
    """``run train -S models=[pu]`` -> ``train@pu``; ``run export -S format=x`` -> ``export@x``."""
    if len(args) < 2 or args[0] != "run":
        return " ".join(args)
    name = args[1]
    for value in args[2:]:
        if value.startswith("models=[") and "," not in value:
            return f"{name}@{value[len('models=['):-1]}"
        if value.startswith("format="):
            return f"{name}@{value[len('format='):]}"
    return name


def phases(processes: list[dict], demo: dict) -> dict:
    """Wall span and summed CPU of the data stages, the train processes and the other stages, and
    the wall span of the stages scripts/demo.sh runs side by side (all but the data and the report)."""
    groups: dict[str, list[dict]] = {"data": [], "train": [], "other": []}
    for p in processes:
        name = p["stage"].partition("@")[0]
        groups["data" if name in DATA_STAGES else "train" if name == "train" else "other"].append(p)
    groups["side_by_side"] = [p for p in processes
                              if p["stage"].partition("@")[0] not in (*DATA_STAGES, "report")]
    out = {}
    for group, members in groups.items():
        if members:
            span = max(p["end"] for p in members) - min(p["start"] for p in members)
            out[group] = {"wall_span_s": round(span, 1),
                          "cpu_s": round(sum(p["cpu_s"] for p in members), 1),
                          "process_wall_s": round(sum(p["wall_s"] for p in members), 1)}
    if "side_by_side" in out:
        out["side_by_side"]["stages"] = [p["stage"] for p in groups["side_by_side"]]
    out["dvc_and_rest_s"] = round(demo["wall_s"] - sum(p["wall_s"] for p in _outermost(processes)), 1)
    return out


def _outermost(processes: list[dict]) -> list[dict]:
    """The processes not running inside another one's span (wall time counted once)."""
    ordered = sorted(processes, key=lambda p: p["start"])
    merged, end = [], 0.0
    for p in ordered:
        if p["start"] >= end:
            merged.append(p)
            end = p["end"]
        elif p["end"] > end:
            merged.append({**p, "wall_s": p["end"] - end})
            end = p["end"]
    return merged


def table4_rows(checkout: Path) -> list[str]:
    path = checkout / "reports" / "table4.md"
    return [line for line in path.read_text().splitlines() if line.startswith("|")] if path.exists() else []


def run_demo(rev: str, keep: Path | None, fresh: bool) -> dict:
    checkout = keep or Path(tempfile.mkdtemp(prefix="citeworth-demo-"))
    if checkout.exists() and any(checkout.iterdir()):
        raise SystemExit(f"{checkout} is not empty")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "checkout", "-q", rev], check=True)
    shims = checkout / ".demo_shims"
    shims.mkdir()
    log = shims / "processes.jsonl"
    (checkout / ".git" / "info" / "exclude").write_text("/.demo_shims/\n")
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    setup = timed(["make", "setup"], checkout, env) if fresh else None
    bin_dir = f"{checkout / '.venv' / 'bin'}:" if fresh else ""  # as the Makefile's demo target puts it
    real = shutil.which("citeworth", path=bin_dir + os.environ["PATH"])
    if real is None:
        raise SystemExit("no citeworth on PATH: run with the project's venv on PATH")
    shim = shims / "citeworth"
    shim.write_text(SHIM.format(python=sys.executable, real=real, log=str(log)))
    shim.chmod(0o755)
    env["PATH"] = f"{shims}:{bin_dir}{os.environ['PATH']}"
    sampler = LoadSampler()
    load_before, memory_before = os.getloadavg(), memory_in_use_mib()
    sampler.start()
    demo = timed(["./scripts/demo.sh"], checkout, env)
    sampler.done.set()
    processes = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    again = timed(["dvc", "repro"], checkout, env)
    rerun = [json.loads(line)["args"] for line in log.read_text().splitlines()] if log.exists() else []
    for p in processes:
        p["stage"] = stage_of(p["args"])
        p["start_s"], p["end_s"] = round(p["start"] - demo["start"], 1), round(p["end"] - demo["start"], 1)
    result = {
        "rev": subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip(),
        "checkout": str(checkout),
        "machine": {"cores": os.cpu_count(), "cpu": _cpu_model(), "python": platform.python_version()},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_during": sampler.summary(),
        # the demo's own peak: the machine's memory in use at its highest, less what was in use before
        "peak_memory_mib": max(sampler.memory, default=memory_before) - memory_before,
        "demo": {"wall_s": demo["wall_s"], "cpu_s": demo["cpu_s"]},
        **({"setup": {"wall_s": setup["wall_s"], "cpu_s": setup["cpu_s"]},
            "fresh_clone_s": round(setup["wall_s"] + demo["wall_s"], 1), "target_s": FRESH_CLONE_TARGET_S,
            "met": setup["wall_s"] + demo["wall_s"] <= FRESH_CLONE_TARGET_S} if setup else {}),
        "phases": phases(processes, demo),
        "processes": [{k: p[k] for k in ("stage", "start_s", "end_s", "wall_s", "cpu_s", "max_rss_mib")}
                      for p in sorted(processes, key=lambda p: p["start"])],
        "second_repro": {"wall_s": again["wall_s"], "stages_run": rerun},
        "table4": table4_rows(checkout),
    }
    if rerun:
        print(f"NOT a no-op: a second dvc repro ran {rerun}", file=sys.stderr)
    if keep is None:
        shutil.rmtree(checkout)
    return result


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor()


def output_digests(checkout: Path) -> dict[str, str]:
    """sha256 of every output file; JSON without its digests of the code (``DIGESTS_OF_CODE``) and,
    where they are kept, the wall-clock runtimes."""
    sys.path.insert(0, str(ROOT))
    from citeworth.models.train import RUNTIME_METRICS

    digests = {}
    for folder in OUTPUT_DIRS:
        for path in sorted((checkout / folder).rglob("*")):
            rel = path.relative_to(checkout).as_posix()
            if not path.is_file() or any(part in SKIPPED_PARTS for part in path.parts):
                continue
            content = path.read_bytes()
            if rel.endswith(".json"):
                dropped = {*DIGESTS_OF_CODE, *(RUNTIME_METRICS if rel.startswith(RUNTIME_JSON) else ())}
                content = json.dumps(_without(json.loads(content), dropped), sort_keys=True).encode()
            elif rel in RUNTIME_TEXT:  # Table 4 without its runtime column (the last but one)
                content = "\n".join("|".join(line.split("|")[:-3]) for line in
                                    content.decode().splitlines()).encode()
            digests[rel] = hashlib.sha256(content).hexdigest()
    return digests


def _without(value, keys: set[str]):
    """``value`` (any JSON value) without the ``keys`` of its objects, at any depth."""
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def compare(a: Path, b: Path) -> dict:
    da, db = output_digests(a), output_digests(b)
    return {"files": len(da), "only_in_first": sorted(set(da) - set(db)),
            "only_in_second": sorted(set(db) - set(da)),
            "different": sorted(k for k in set(da) & set(db) if da[k] != db[k])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="HEAD", help="the commit to clone and run")
    parser.add_argument("--label", default="current", help="the key of this run (or comparison) in --out")
    parser.add_argument("--keep", type=Path, help="clone into this (new or empty) folder and keep it")
    parser.add_argument("--fresh", action="store_true",
                        help="time the clone's own setup too (make setup, then the demo on its venv)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("FIRST", "SECOND"),
                        help="compare the outputs of two kept builds instead of running")
    args = parser.parse_args()
    if args.compare:
        result = {**compare(*args.compare), "builds": [str(path) for path in args.compare]}
    else:
        result = run_demo(args.rev, args.keep, args.fresh)
    result["command"] = "python benchmarks/demo_phases.py " + " ".join(sys.argv[1:])
    runs = json.loads(args.out.read_text()) if args.out.exists() else {}
    runs[args.label] = result
    args.out.write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")
    shown = ("different", "only_in_first", "only_in_second") if args.compare else \
        ("fresh_clone_s", "setup", "demo", "phases", "load_average_during", "table4")
    print(json.dumps({k: result[k] for k in shown if k in result}, indent=2))


if __name__ == "__main__":
    main()
