"""DVC stages that do not depend on each other, run side by side and recorded as ``dvc repro`` would.

    python -m citeworth.orchestration.side_by_side --jobs 2 train@pu train@context domains ...

DVC runs one stage at a time. On a machine with several cores the stages that need only what is
already built (after ``dvc repro validate``: every cell of the train matrix, the studies, the
silver corpus, the related-work dataset, the exports) can run ``--jobs`` at a time instead: each
stage runs its own ``cmd`` from dvc.yaml (the process ``dvc repro`` would start, so the same bytes)
in the project root, with its output in ``logs/<stage>.log``. Stages start in the order given: list
the longest first, so that the last to start are the shortest and the cores finish together.
Naming a foreach / matrix stage (``train``) names each of its cells, in dvc.yaml's order; a stage
named twice runs once, where it was first named. A stage DVC finds current is not run.

The stages' inputs must be current and none may depend on another named stage (both checked in
DVC's graph before anything starts). When they have run, ``dvc commit --force`` records them in
dvc.lock and the DVC cache, as ``dvc repro`` records a stage it ran, so ``dvc repro`` afterwards
finds them current (it would otherwise delete their outputs and run them again). The first failure
starts no further stage; the running ones finish and are recorded, the failed stage's log tail is
shown and the exit status is 1.

What each stage cost is written beside its log, ``logs/<stage>.cost.json``: wall seconds, CPU
seconds (user + system, the stage's whole process tree) and peak resident memory (the largest
process of the tree), read from the kernel by the small process each stage runs under
(``citeworth.orchestration.measured``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.core.io import write_json
from citeworth.orchestration.versioning import record_outputs

LOG_DIR = Path("logs")
LOG_TAIL_LINES = 30


@dataclass(frozen=True)
class Stage:
    name: str  # DVC's address: "domains", "train@pu"
    cmd: str


def plan(root: Path, targets: Sequence[str]) -> list[Stage]:
    """The stages of ``root``'s dvc.yaml that ``targets`` name and that are not current, in the
    order named; fails when one depends on another named stage, or on a stage that is not current."""
    import networkx as nx
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        named = {stage.name: stage for target in targets for stage in _collect(repo, root, target)}
        changed = _changed(repo, named.values())
        to_run = {name: stage for name, stage in named.items() if name in changed}
        upstream = {name: set(nx.descendants(repo.index.graph, stage)) for name, stage in to_run.items()}
        clashes = [f"{name} needs {', '.join(needs)}" for name, ups in upstream.items()
                   if (needs := sorted(s.name for s in ups if s.name in to_run))]
        if clashes:
            raise StageFailed(f"stages named together must not depend on each other: {'; '.join(clashes)}")
        if stale := sorted(_changed(repo, set().union(*upstream.values()))):
            raise StageFailed(f"not current, so the named stages cannot start: {', '.join(stale)} "
                              f"(run `dvc repro {' '.join(stale)}` first)")
    return [Stage(name, stage.cmd) for name, stage in to_run.items()]


def _collect(repo, root: Path, target: str) -> list:
    """The stages ``target`` names in ``root``'s dvc.yaml (a foreach / matrix name: all its cells)."""
    from dvc.exceptions import DvcException

    try:  # by the file's path: DVC reads a bare name against the working directory
        stages = repo.stage.collect(f"{root / 'dvc.yaml'}:{target}")
    except DvcException as exc:
        raise StageFailed(f"no stage {target!r} in {root / 'dvc.yaml'}: {exc}") from exc
    if any(isinstance(stage.cmd, list) for stage in stages):  # dvc.yaml allows a list; ours are one line
        raise StageFailed(f"{target}: a stage with a list of commands cannot run side by side")
    return stages


def _changed(repo, stages) -> set[str]:
    """The names of ``stages`` whose recorded deps, params or outs differ from the workspace's."""
    stages = list(stages)
    if not stages:
        return set()
    status = repo.status(targets=[stage.addressing for stage in stages])  # keyed by address
    return {stage.name for stage in stages if stage.addressing in status}


@dataclass(frozen=True)
class Outcome:
    stage: Stage
    returncode: int | None = None  # None: not started (an earlier stage failed)


class SideBySide:
    """Runs the stages ``jobs`` at a time, in order; after a failure starts no further one."""

    def __init__(self, root: Path, jobs: int, log_dir: Path = LOG_DIR):
        self.root, self.jobs, self.log_dir = root, jobs, root / log_dir
        self.failed = threading.Event()
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()

    def run(self, stages: Sequence[Stage]) -> list[Outcome]:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:  # takes tasks in submission order
            futures = [pool.submit(self._run_one, stage) for stage in stages]
            try:
                return [future.result() for future in futures]
            except BaseException:  # Ctrl-C: stop what runs, start nothing more
                self.failed.set()
                with self.lock:
                    for process in self.running:
                        process.terminate()
                raise

    def log_path(self, stage: Stage) -> Path:
        return self.log_dir / f"{stage.name}.log"

    def _run_one(self, stage: Stage) -> Outcome:
        if self.failed.is_set():
            return Outcome(stage)
        start = time.perf_counter()
        _say(f"{stage.name}: started ({stage.cmd}), log {self.log_path(stage).relative_to(self.root)}")
        cost_path = self.log_dir / f"{stage.name}.cost.json"
        cost_path.unlink(missing_ok=True)
        with open(self.log_path(stage), "wb") as log:
            with self.lock:
                process = subprocess.Popen(
                    [sys.executable, "-m", "citeworth.orchestration.measured", str(cost_path), stage.cmd],
                    cwd=self.root, env=self._env(stage), stdout=log, stderr=subprocess.STDOUT)
                self.running.add(process)
            returncode = process.wait()
            with self.lock:
                self.running.discard(process)
        wall = time.perf_counter() - start
        if returncode != 0:
            self.failed.set()
        measured = (json.loads(cost_path.read_text()) if cost_path.exists()
                    else {"cpu_s": None, "peak_rss_mb": None})  # the launcher was killed
        write_json(cost_path, {"stage": stage.name, "returncode": returncode, "wall_s": round(wall, 1),
                               **measured})
        _say(f"{stage.name}: {'done' if returncode == 0 else f'FAILED (exit {returncode})'} "
             f"in {_duration(wall)}")
        return Outcome(stage, returncode)

    def _env(self, stage: Stage) -> dict[str, str]:
        """The environment ``dvc repro`` gives a stage's command (dvc.stage.run.prepare_kwargs)."""
        return {**os.environ, "DVC_ROOT": str(self.root), "DVC_STAGE": stage.name}


def run_stages(root: Path, targets: Sequence[str], jobs: int) -> list[Outcome]:
    """Plan, run and record ``targets`` (see the module's docstring); raises StageFailed naming
    the stages that failed, after recording those that succeeded."""
    stages = plan(root, targets)
    if not stages:
        _say(f"side by side: every stage of {' '.join(targets)} is current")
        return []
    _say(f"side by side, {jobs} at a time: {' '.join(stage.name for stage in stages)}")
    runner = SideBySide(root, jobs)
    outcomes = runner.run(stages)
    if done := [o.stage.name for o in outcomes if o.returncode == 0]:
        record_outputs(root, done)
    if failed := [o for o in outcomes if o.returncode not in (0, None)]:
        for outcome in failed:
            _say(_tail(runner.log_path(outcome.stage)))
        skipped = [o.stage.name for o in outcomes if o.returncode is None]
        raise StageFailed(f"{', '.join(o.stage.name for o in failed)} failed (logs above)"
                          + (f"; not started: {', '.join(skipped)}" if skipped else ""))
    return outcomes


def _tail(path: Path) -> str:
    """The last lines of a stage's log (a progress bar's carriage-return updates as their last)."""
    lines = [line.rsplit("\r", 1)[-1] for line in path.read_text(errors="replace").splitlines()]
    return f"--- {path} (last {LOG_TAIL_LINES} lines) ---\n" + "\n".join(lines[-LOG_TAIL_LINES:])


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def _say(message: str) -> None:
    print(message, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citeworth.orchestration.side_by_side",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("stages", nargs="+", metavar="STAGE", help="dvc.yaml stages or cells, longest first")
    parser.add_argument("--jobs", type=int, required=True, help="stages at a time (the cores to use)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be 1 or more (got {args.jobs})")
    try:
        run_stages(Path.cwd(), args.stages, args.jobs)
    except StageFailed as exc:
        print(f"side by side: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
