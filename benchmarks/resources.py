"""What the demo and the study take: disk, memory and downloads, measured on real builds, and the
same projected to the paper's scale. The resources page of the docs is written from its results.

    python benchmarks/resources.py --demo /tmp/demo --study "$(citeworth profile path study)"

- **The data**: the dataset each build made (papers, paragraphs, sentences per split, fields).
- **Disk**: each folder of a built checkout (the files' sizes, each file once: hard links once),
  the DVC cache (DVC copies an output into it where the filesystem has no reflinks: the data twice)
  and the install (`.venv`; the author's install from ``author.json``).
- **Memory**: each stage process's peak RSS: the demo's from a ``demo_phases.py`` run
  (``--demo-run``, the label of a run that recorded ``max_rss_mib``; with its peak memory in use,
  all processes together), the study's from ``study.json`` (its stages' ``peak_rss_mb``).
- **Downloads**: the data (the release manifest's file sizes) and the install: the wheels pip would
  fetch for ``requirements.lock`` (``pip install --dry-run --report``; each wheel's size from the
  package index, or from disk for a local wheel).
- **The paper's scale**: the study's bytes per paper read, times the papers the study's own
  projection reads (``study.json``'s ``projection_s2orc``); memory per stage as measured where the
  stage streams (curate: one shard a worker) and as ``identity_index.json`` measured for assemble.

Writes ``benchmarks/results/resources.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# A built checkout's folders, as params.yaml names them (the workspace's total counts everything).
FOLDERS = ("raw", "interim", "interim_baseline", "data", "models", "checkpoints", "metrics", "plots",
           "reports", "cache", ".dvc/cache")
MIB = 1024 * 1024


def disk(path: Path) -> int:
    """Bytes of the files under ``path``: their sizes (not blocks), each inode once, links not followed."""
    seen, total = set(), 0
    for folder, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(folder, name))
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_size
    return total


def folders(checkout: Path) -> dict[str, float]:
    sizes = {name: round(disk(checkout / name) / MIB, 1) for name in FOLDERS if (checkout / name).exists()}
    return dict(sorted(sizes.items(), key=lambda item: -item[1]))


def dataset(checkout: Path) -> dict:
    """The size of the dataset the build made (Table 2's totals, ``reports/dataset_stats.json``)."""
    stats = json.loads((checkout / "reports" / "dataset_stats.json").read_text())
    return {"papers": stats["overall"]["papers"], "paragraphs": stats["overall"]["paragraphs"],
            "sentences": stats["overall"]["sentences"],
            "split_sentences": {name: split["sentences"] for name, split in stats["splits"].items()},
            "field_paragraph_share": dict(sorted(((name, field["paragraph_share"]) for name, field in
                                                  stats["fields"].items()), key=lambda item: -item[1]))}


def data_download(checkout: Path) -> dict:
    """What download fetched: every release manifest's file sizes."""
    manifests = sorted((checkout / "raw").glob("*/*/MANIFEST.json"))
    files = [f for path in manifests for f in json.loads(path.read_text())["files"]]
    return {"releases": [str(p.parent.relative_to(checkout / "raw")) for p in manifests],
            "files": len(files), "mib": round(sum(f["size"] for f in files) / MIB, 1)}


def install_download(python: Path) -> dict:
    """The wheels ``pip install -r requirements.lock`` fetches into an empty environment."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        subprocess.run([str(python), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                        "--report", str(report), "-r", str(ROOT / "requirements.lock")], check=True)
        urls = [item["download_info"]["url"] for item in json.loads(report.read_text())["install"]]
    with ThreadPoolExecutor(16) as pool:
        sizes = dict(zip(urls, pool.map(_size, urls), strict=True))
    biggest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    return {"wheels": len(urls), "mib": round(sum(sizes.values()) / MIB, 1),
            "largest": {url.rsplit("/", 1)[-1]: round(size / MIB, 1) for url, size in biggest}}


def _size(url: str) -> int:
    if url.startswith("file://"):
        return Path(urllib.request.url2pathname(url[len("file://"):])).stat().st_size
    request = urllib.request.Request(url, method="HEAD")
    with urllib.request.urlopen(request, timeout=60) as response:
        return int(response.headers["Content-Length"])


def demo_memory(label: str) -> dict:
    run = json.loads((RESULTS / "demo_phases.json").read_text())[label]
    stages = {p["stage"]: p["max_rss_mib"] for p in run["processes"] if "max_rss_mib" in p}
    if not stages:
        raise SystemExit(f"demo_phases.json[{label!r}] has no max_rss_mib: run benchmarks/demo_phases.py "
                         f"--label {label} with this version of it")
    top = sorted(stages.items(), key=lambda item: -item[1])
    return {"run": label, "rev": run["rev"], "peak_in_use_mib": run["peak_memory_mib"],
            "largest_stage": {"stage": top[0][0], "mib": top[0][1]},
            "stages_mib": dict(top)}


def study_memory(study: dict) -> dict:
    stages = {name: round(cost["peak_rss_mb"] * 1e6 / MIB) for name, cost in study["stages"].items()
              if cost.get("peak_rss_mb")}
    top = sorted(stages.items(), key=lambda item: -item[1])
    return {"largest_stage": {"stage": top[0][0], "mib": top[0][1]},
            # make study runs two stages at a time on 2 cores: the two largest bound what it needs
            "two_largest_together_mib": top[0][1] + top[1][1], "stages_mib": dict(top)}


def paper_scale(study_disk: dict, study: dict) -> dict:
    """The study's bytes per paper read, times the papers the study's projection reads."""
    projection = study["projection_s2orc"]
    read = study["curation"]["papers_read"]
    factor = projection["papers"] / read
    parts = {name: study_disk[name] for name in ("raw", "interim", "interim_baseline", "data")
             if name in study_disk}
    return {"papers": projection["papers"], "from_papers_read": read,
            "assumes": "bytes linear in papers read (each stage writes per paper or per sentence); the "
                       "DVC cache doubles them where the filesystem has no reflinks",
            "disk_gib": {name: round(mib * factor / 1024, 1) for name, mib in parts.items()},
            "disk_gib_total": round(sum(parts.values()) * factor / 1024, 1),
            "download_gib": round(parts.get("raw", 0) * factor / 1024, 1),
            "memory": {
                "curate": "per shard and worker: the study's peak holds (one shard a worker at any size)",
                "assemble": "the duplicate index is on disk (SQLite): identity_index.json measured "
                            f"{_identity_peak()} MiB at 800,000 papers",
                "train": "a GPU job at this scale (params/paper.yaml): the batch, not the corpus, "
                         "sets memory"}}


def _identity_peak() -> float:
    data = json.loads((RESULTS / "identity_index.json").read_text())
    return round(data["at_largest"]["peak_rss_mb"]["sqlite"] * 1e6 / MIB)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", type=Path, default=ROOT,
                        help="a checkout where make demo ran (default: this one)")
    parser.add_argument("--study", type=Path, required=True,
                        help="the study's workspace (citeworth profile path study)")
    parser.add_argument("--demo-run", default="resources",
                        help="the demo_phases.json run whose processes recorded their peak memory")
    parser.add_argument("--out", type=Path, default=RESULTS / "resources.json")
    args = parser.parse_args()
    study = json.loads((RESULTS / "study.json").read_text())
    author = json.loads((RESULTS / "author.json").read_text())
    demo_disk, study_disk = folders(args.demo), folders(args.study)
    study_cache = args.study / ".dvc" / "cache"
    if not study_cache.exists():  # a profile workspace shares its project's cache
        common = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=args.study, capture_output=True,
                                text=True, check=True).stdout.strip()
        study_cache = (args.study / common).resolve().parent / ".dvc" / "cache"
        study_disk[".dvc/cache"] = round(disk(study_cache) / MIB, 1)
    result = {
        "command": "python benchmarks/resources.py " + " ".join(sys.argv[1:]),
        "date": date.today().isoformat(),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "install": {"venv_mib": round(disk(ROOT / ".venv") / MIB, 1),
                    "author_install_mib": author["install_mb"]["author"],
                    "download": install_download(ROOT / ".venv" / "bin" / "python")},
        "demo": {"dataset": dataset(args.demo),
                 "disk_mib": demo_disk, "disk_mib_total": round(sum(demo_disk.values()), 1),
                 "download": data_download(args.demo), "memory": demo_memory(args.demo_run)},
        "study": {"disk_mib": study_disk, "disk_mib_total": round(sum(study_disk.values()), 1),
                  "download": data_download(args.study), "memory": study_memory(study),
                  "papers_read": study["curation"]["papers_read"]},
    }
    result["paper_scale"] = paper_scale(study_disk, study)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
