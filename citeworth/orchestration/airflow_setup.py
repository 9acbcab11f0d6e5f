"""``citeworth airflow setup``: what an Airflow installation needs once before it runs the citeworth
DAGs, done through Airflow's own command line for the installation the environment names
($AIRFLOW_HOME, $AIRFLOW__CORE__DAGS_FOLDER, ..., as for every ``airflow`` command):

- the metadata DB migrated (a no-op when it is current; ``airflow standalone`` migrates it too);
- the one-slot pool ``citeworth_versioning`` that serializes the versioning steps: without it
  every version task stays ``scheduled`` for good, with only a warning in the scheduler's log;
- the DAGs parsed into the DB and unpaused (Airflow pauses a new DAG, and a backfill of a paused
  DAG stays queued); it fails, naming the folder, when the DAGs folder does not hold them.

Idempotent: a second run sets the pool back to one slot and the DAGs unpaused, nothing more.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys

from citeworth.core.errors import StageFailed
from citeworth.orchestration.versioning import VERSIONING_POOL, VERSIONING_POOL_DESCRIPTION

log = logging.getLogger(__name__)

DAG_IDS = ("citeworth_dataset", "citeworth_models")


def airflow(*args: str) -> str:
    """``airflow ARGS`` of this interpreter's environment; its stdout, or StageFailed with its output."""
    done = subprocess.run([sys.executable, "-m", "airflow", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise StageFailed(f"`airflow {' '.join(args)}` failed (exit {done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def _json_output(stdout: str) -> object:
    """The JSON line an ``-o json`` command printed last (Airflow prints warnings on stdout too)."""
    return json.loads(next(line for line in reversed(stdout.splitlines()) if line.startswith(("[", "{"))))


def setup() -> dict[str, object]:
    """Migrate the DB, make the versioning pool, parse and unpause the DAGs; what was set."""
    log.info("migrating the metadata DB of AIRFLOW_HOME=%s", os.environ.get("AIRFLOW_HOME", "~/airflow"))
    airflow("db", "migrate")
    airflow("pools", "set", VERSIONING_POOL, "1", VERSIONING_POOL_DESCRIPTION)
    log.info("pool %s: 1 slot", VERSIONING_POOL)
    airflow("dags", "reserialize")
    listed = {dag["dag_id"] for dag in _json_output(airflow("dags", "list", "-o", "json"))}
    if missing := [dag_id for dag_id in DAG_IDS if dag_id not in listed]:
        folder = airflow("config", "get-value", "core", "dags_folder").strip()
        raise StageFailed(f"DAGs {missing} are not in the DAGs folder {folder}: point "
                          "AIRFLOW__CORE__DAGS_FOLDER at the project's dags/ (and "
                          "AIRFLOW__CORE__PLUGINS_FOLDER at its plugins/), or see "
                          "`airflow dags list-import-errors`")
    for dag_id in DAG_IDS:
        airflow("dags", "unpause", dag_id)
    log.info("DAGs %s parsed and unpaused", ", ".join(DAG_IDS))
    return {"pool": {VERSIONING_POOL: 1}, "unpaused": list(DAG_IDS)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citeworth airflow", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("setup", help="migrate the DB, make the versioning pool, parse and unpause the DAGs "
                   "(idempotent)")
    parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        setup()
    except StageFailed as exc:
        print(f"citeworth airflow setup: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
