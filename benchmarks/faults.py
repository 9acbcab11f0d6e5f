"""The fault suite on the native Celery cluster, as a report: each fault an operator meets injected
while real work runs, and what happened (``tests/integration/test_cluster_faults.py``).

    python benchmarks/faults.py                  # every fault (`make faults`)
    python benchmarks/faults.py --only postgresql   # one fault again, the others' records kept

Runs that test module (``CITEWORTH_FAULT_TESTS=1``) with its report written to a scratch file, then
writes ``benchmarks/results/faults.json``: for each fault (a list under ``faults``) the run's
outcome, the seconds from the fault until every task that was running or waiting at it had
finished (``recovery_seconds``), the tasks Airflow retried, the shards the same run redid when
triggered again, the DVC objects a version records that S3 lacks (``objects_lost``), the objects
and versions half-written or published twice (``half_published``), the processes left behind and
the setting that makes it so; with the pytest outcome of each test and the suite's wall time.
Exits 1 when a test failed (the report still says which).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "faults.json"
MODULE = "tests/integration/test_cluster_faults.py"


def _tests_in_order() -> list[str]:
    """The module's test functions, in the order they run (the report keeps it)."""
    tree = ast.parse((ROOT / MODULE).read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


ORDER = _tests_in_order()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="EXPR", help="run only the tests pytest -k EXPR selects (e.g. "
                        "postgresql): their records replace those of the same tests in the results "
                        "file, the others are kept, each with the commit and date of its own run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        report, junit = Path(scratch) / "faults.json", Path(scratch) / "junit.xml"
        env = {**os.environ, "CITEWORTH_FAULT_TESTS": "1", "CITEWORTH_FAULTS_REPORT": str(report)}
        selected = ["-k", args.only] if args.only else []
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", MODULE,
                               *selected, f"--junitxml={junit}", "-s"], cwd=ROOT, env=env)
        seconds = time.perf_counter() - began
        faults = json.loads(report.read_text())["faults"] if report.exists() else []
        outcomes = _outcomes(junit) if junit.exists() else {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    for fault in faults:
        fault.update(commit=commit, date=date.today().isoformat())
    if not args.only:
        results = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "command": "python benchmarks/faults.py", "suite_minutes": round(seconds / 60, 1),
            "tests": outcomes, "faults": faults}
    else:  # the earlier full run's, with these tests' new records
        results = json.loads(RESULTS.read_text())
        rerun = {fault["test"] for fault in faults}
        kept = [fault for fault in results["faults"] if fault["test"] not in rerun]
        results["faults"] = sorted(kept + faults, key=lambda fault: ORDER.index(fault["test"]))
        results["tests"].update(outcomes)
    results["objects_lost"] = sum(fault["objects_lost"] for fault in results["faults"])
    results["half_published"] = sum(fault["half_published"] for fault in results["faults"])
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"{len(results['faults'])} faults, {results['objects_lost']} objects lost, "
          f"{results['half_published']} half-published; this run {seconds / 60:.1f} min: {RESULTS}")
    return 0 if done.returncode == 0 else 1


def _outcomes(junit: Path) -> dict[str, str]:
    """Each test's outcome (passed, failed, skipped) from pytest's JUnit XML."""
    import xml.etree.ElementTree as ElementTree

    outcomes = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        kinds = {child.tag for child in case}
        outcomes[case.get("name")] = ("failed" if kinds & {"failure", "error"}
                                      else "skipped" if "skipped" in kinds else "passed")
    return outcomes


if __name__ == "__main__":
    sys.exit(main())
