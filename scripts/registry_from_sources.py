"""Write the registries of the ``elife`` and ``europepmc`` download sources from a data mirror.

Reads the mirror's ``SOURCES.tsv`` (one row a public file: its path in the mirror, origin URL pinned
to a commit, sha256 and size of the public file, licence) and writes, for each source, beside
``citeworth/download/registry.py``:

- ``<source>_files.tsv``: the rows under the source's repository folder, sorted by path, with
  ``since`` = the source's one release (URLs and checksums only, never the data);
- ``<source>_releases.tsv``: the release, dated by the newest publication date among its articles
  (a snapshot is at least as new as its newest article), and what it adds.

    python scripts/registry_from_sources.py [MIRROR]     # default: $CITEWORTH_MIRROR

Run it again when the mirror's sets change; a changed set is a new release (a new name), so that
downloads and curated shards of the old one stay what they were.
"""

from __future__ import annotations

import csv
import gzip
import os
import re
import sys
from pathlib import Path

from citeworth.download.registry import HERE, REGISTRY_COLUMNS

# One release per pinned snapshot of the public files:
# - elife "6c97171": every file is pinned to commit 6c97171 of elifesciences/elife-articles, so the
#   commit names the snapshot;
# - europepmc "oa-cc-v1": the files are pinned to six commits of the repository (each file to the one
#   that added it), so no commit names the set: it is the first snapshot of its Creative Commons
#   open-access articles.
SOURCES = {
    "elife": ("github/elifesciences/elife-articles/", "6c97171",
              "eLife research and other articles 2012-2016 (JATS 1.1)"),
    "europepmc": ("github/0AlphaZero0/Text-Classification-Data-Citation-EuropePMC/", "oa-cc-v1",
                  "Europe PMC open-access full texts with a Creative Commons licence (NLM 2.3 to JATS 1.2)"),
}
_PUB_DATE = re.compile(rb"<pub-date[^>]*>(.*?)</pub-date>", re.S)
_PART = {part: re.compile(rb"<%s>\s*(\d+)\s*</%s>" % (part, part)) for part in (b"year", b"month", b"day")}


def main(mirror: Path) -> None:
    with open(mirror / "SOURCES.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for source, (prefix, release, adds) in SOURCES.items():
        chosen = sorted((row for row in rows if row["path"].startswith(prefix)), key=lambda row: row["path"])
        write_tsv(HERE / f"{source}_files.tsv", REGISTRY_COLUMNS,
                  [{**{key: row[key] for key in REGISTRY_COLUMNS[:-1]}, "since": release} for row in chosen])
        published = max(newest_date(stored(mirror, row["path"])) for row in chosen)
        write_tsv(HERE / f"{source}_releases.tsv", ("release", "published", "adds"),
                  [{"release": release, "published": published, "adds": f"{len(chosen):,} {adds}"}])
        print(f"{source}: {len(chosen)} files, release {release} published {published}")


def stored(mirror: Path, path: str) -> bytes:
    """The public file at ``path``, stored plain or as ``<path>.gz``."""
    plain = mirror / path
    return plain.read_bytes() if plain.is_file() else gzip.decompress((mirror / (path + ".gz")).read_bytes())


def newest_date(article: bytes) -> str:
    """The latest ``<pub-date>`` of a JATS article as ``YYYY-MM-DD`` ("" when it has none)."""
    dates = [""]
    for block in _PUB_DATE.findall(article):
        parts = {name: int(found.group(1)) if (found := pattern.search(block)) else 1
                 for name, pattern in _PART.items()}
        if _PART[b"year"].search(block):
            dates.append(f"{parts[b'year']:04d}-{parts[b'month']:02d}-{parts[b'day']:02d}")
    return max(dates)


def write_tsv(path: Path, columns: tuple[str, ...], rows: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, columns, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["CITEWORTH_MIRROR"]))
