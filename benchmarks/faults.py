"""The fault suite on the native Celery cluster, as a report: each fault an operator meets injected
while real work runs, and what happened (``tests/integration/test_cluster_faults.py``).

    python benchmarks/faults.py            # about 40 minutes on 2 cores (`make faults` runs the same tests)

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


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        report, junit = Path(scratch) / "faults.json", Path(scratch) / "junit.xml"
        env = {**os.environ, "CITEWORTH_FAULT_TESTS": "1", "CITEWORTH_FAULTS_REPORT": str(report)}
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", MODULE,
                               f"--junitxml={junit}", "-s"], cwd=ROOT, env=env)
        seconds = time.perf_counter() - began
        faults = json.loads(report.read_text())["faults"] if report.exists() else []
        outcomes = _outcomes(junit) if junit.exists() else {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    results = {
        "date": date.today().isoformat(), "commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": "python benchmarks/faults.py", "suite_minutes": round(seconds / 60, 1),
        "tests": outcomes, "faults": faults,
        "objects_lost": sum(fault["objects_lost"] for fault in faults),
        "half_published": sum(fault["half_published"] for fault in faults),
    }
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"{len(faults)} faults, {results['objects_lost']} objects lost, {results['half_published']} "
          f"half-published, in {seconds / 60:.1f} min: {RESULTS}")
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
