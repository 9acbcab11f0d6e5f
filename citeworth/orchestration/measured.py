"""Run one shell command and write what its process tree cost:
``python -m citeworth.orchestration.measured COST_JSON COMMAND``.

The stage runner starts each stage through this small process rather than directly: on Linux a
process keeps the resident-memory peak of the address space it was started from (exec carries the
high-water mark over), so a stage started straight from a large process (a test worker with torch
loaded) would report that process's size as its own peak. Here the peak and CPU time are those of
the children this process waited for; its own few megabytes never count.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys

RSS_UNITS_PER_MB = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes (macOS), KiB


def main(argv: list[str]) -> int:
    cost_path, command = argv
    # A group of its own, so that stopping the stage (the runner's SIGTERM, a Ctrl-C) reaches the
    # command the shell started, not only the shell.
    process = subprocess.Popen(command, shell=True, start_new_session=True)
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, lambda signum, _: os.killpg(process.pid, signum))
    returncode = process.wait()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(cost_path, "w") as out:
        json.dump({"cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
                   "peak_rss_mb": round(usage.ru_maxrss / RSS_UNITS_PER_MB, 1)}, out)
    return returncode if returncode >= 0 else 128 - returncode  # killed by a signal: as a shell says


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
