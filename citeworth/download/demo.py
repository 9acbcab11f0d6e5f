"""The embedded demo corpus: dated releases of public files with pinned origin URLs and sha256 digests.

Two small data files, not code, describe it:

- ``demo_releases.tsv``, the release calendar: ``release``, ``published`` (``YYYY-MM-DD``) and what
  the release ``adds``, oldest first. The dates are the demo's own (the files are older): they make the
  demo a source that updates, so ``latest_release("demo", as_of)`` and a backfill over 2024-01-01 ..
  2024-03-01 meet both releases.
- ``demo_files.tsv``, the registry: each file's path in a mirror laid out like ``../shared/data``
  (``github/OWNER/REPO/<path after the commit>``), its origin URL, sha256, size, licence and
  ``since``, the first release that holds it. A release holds every file whose ``since`` is that
  release or an older one (releases only add files).

Files are fetched from the origin URL, or from a mirror when ``mirror`` / the ``CITEWORTH_MIRROR``
environment variable names one (a folder or an http(s) URL with that layout). Either way they land at
``raw/demo/<release>/<mirror path>`` and are checked against the registry. A row whose origin is
``citeworth:<name>`` is a file the project wrote and ships beside this module: the arXiv-style
category rows of the LaTeX papers (``demo_arxiv_metadata.jsonl`` here, ``arxiv_latex_metadata.jsonl``
in the release; SymPy, not on arXiv, gets the classes of its journal subject, as its row's
``categories_source`` says), so they have fields of study like every other source.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from citeworth.core.errors import StageFailed
from citeworth.download.params import DownloadParams
from citeworth.download.remote import Digests, InlineFile, Plan, RemoteFile
from citeworth.download.transports import HttpTransport, LocalTransport, Network, http_session

HERE = Path(__file__).parent
REGISTRY = HERE / "demo_files.tsv"
CALENDAR = HERE / "demo_releases.tsv"
LATEX_METADATA = HERE / "demo_arxiv_metadata.jsonl"
LATEX_METADATA_PATH = "arxiv_latex_metadata.jsonl"  # in the release folder
PROJECT_ORIGIN = "citeworth:"  # origin of a file the project ships beside this module
MIRROR_ENV = "CITEWORTH_MIRROR"
LATEST = "latest"


@dataclass(frozen=True)
class DemoRelease:
    name: str
    published: str  # YYYY-MM-DD
    adds: str


def demo_releases() -> list[DemoRelease]:
    """The release calendar, oldest first."""
    rows = _tsv(CALENDAR)
    releases = [DemoRelease(row["release"], row["published"], row["adds"]) for row in rows]
    dates = [r.published for r in releases]
    if dates != sorted(dates) or len(set(dates)) != len(dates):
        raise StageFailed(f"{CALENDAR.name}: releases must be listed oldest first, one per date")
    return releases


def resolve_demo_release(name: str) -> str:
    """``name`` if the calendar lists it; ``latest``: the newest release."""
    names = [r.name for r in demo_releases()]
    if name == LATEST:
        return names[-1]
    if name not in names:
        raise StageFailed(f"the demo source has releases {', '.join(names)} (or {LATEST!r}); not {name!r}")
    return name


def demo_registry(release: str = LATEST) -> list[RemoteFile]:
    """The files ``release`` holds that are fetched (``url`` == ``origin``), in registry order."""
    return [_remote(row) for row in _release_rows(release) if not _shipped(row)]


def shipped_files(release: str = LATEST) -> list[InlineFile]:
    """The files ``release`` holds that the project ships (checked against their registry sha256)."""
    return [_inline(row) for row in _release_rows(release) if _shipped(row)]


def configured_mirror(params: DownloadParams) -> str | None:
    """``params.mirror``, else ``$CITEWORTH_MIRROR``; an empty value means: use the origin URLs."""
    return params.mirror or os.environ.get(MIRROR_ENV) or None


def plan_demo(params: DownloadParams, net: Network) -> Plan:
    release = resolve_demo_release(params.release)
    files = demo_registry(release)
    mirror = configured_mirror(params)
    if mirror is not None:
        files = _from_mirror(files, mirror)
    transports = {"http": HttpTransport(http_session(net), net.timeout), "file": LocalTransport()}
    return Plan(release, files, transports, shipped_files(release))


def _tsv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _release_rows(release: str) -> list[dict[str, str]]:
    names = [r.name for r in demo_releases()]
    upto = names.index(resolve_demo_release(release))
    rows = _tsv(REGISTRY)
    unknown = sorted({row["since"] for row in rows} - set(names))
    if unknown:
        raise StageFailed(f"{REGISTRY.name}: 'since' names release(s) {unknown} not in {CALENDAR.name}")
    return [row for row in rows if names.index(row["since"]) <= upto]


def _shipped(row: dict[str, str]) -> bool:
    return row["origin_url"].startswith(PROJECT_ORIGIN)


def _remote(row: dict[str, str]) -> RemoteFile:
    return RemoteFile(path=row["path"], origin=row["origin_url"], url=row["origin_url"],
                      size=int(row["bytes"]), sha256=row["sha256"])


def _inline(row: dict[str, str]) -> InlineFile:
    """A shipped file, refused when its bytes are not the ones the registry names."""
    source = HERE / row["origin_url"].removeprefix(PROJECT_ORIGIN)
    content = source.read_bytes()
    digests = Digests()
    digests.update(content)
    if problem := digests.mismatch(_remote(row)):
        raise StageFailed(f"{source.name}: {problem} ({REGISTRY.name} row {row['path']}); "
                          "update the registry row with the file")
    return InlineFile(row["path"], row["origin_url"], content)


def _from_mirror(files: list[RemoteFile], mirror: str) -> list[RemoteFile]:
    """The same files, read from ``mirror`` instead of their origin URLs."""
    if mirror.startswith(("http://", "https://")):
        base = mirror.rstrip("/")
        return [replace(f, url=f"{base}/{quote(f.path)}") for f in files]
    folder = Path(mirror)
    if not folder.is_dir():
        raise StageFailed(f"mirror folder {folder} does not exist (set {MIRROR_ENV}= to use the origin URLs)")
    missing = [f.path for f in files if not (folder / f.path).is_file()]
    if missing:
        raise StageFailed(
            f"mirror {folder} lacks {len(missing)} demo file(s), e.g. {missing[0]}; "
            f"set {MIRROR_ENV}= to fetch them from their origin URLs"
        )
    return [replace(f, url=str(folder / f.path)) for f in files]
