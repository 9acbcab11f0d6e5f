"""Sources described by two tables shipped beside this module: a release calendar and a file registry.

- ``<source>_releases.tsv``, the calendar: ``release``, ``published`` (``YYYY-MM-DD``) and what the
  release ``adds``, oldest first;
- ``<source>_files.tsv``, the registry: each file's ``path`` (in a mirror laid out like
  ``../shared/data``: ``github/OWNER/REPO/<path after the commit>``), its ``origin_url`` (pinned to a
  commit), ``sha256`` and ``bytes`` of the public file, ``licence`` and ``since``, the first release
  that holds it. A release holds every file whose ``since`` is that release or an older one
  (releases only add files), so a new release is a calendar row plus its files' rows, no code.

Files are fetched from the origin URL, or from a mirror (``download.mirror`` / ``$CITEWORTH_MIRROR``,
see ``mirror.py``, which also reads a file the mirror stores as ``<path>.gz``), and land at
``raw/<source>/<release>/<path>``, checked against the registry. A row whose origin is
``citeworth:<name>`` is a file the project wrote and ships beside this module (the demo's LaTeX
categories), checked against its row too.

The registries hold URLs and checksums, never the data. ``scripts/registry_from_sources.py`` writes
the eLife and Europe PMC registries from the data mirror's ``SOURCES.tsv``.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.download.mirror import GzipFallback, configured_mirror, from_mirror
from citeworth.download.params import DownloadParams
from citeworth.download.remote import Digests, InlineFile, Plan, RemoteFile, select
from citeworth.download.transports import HttpTransport, LocalTransport, Network, http_session

HERE = Path(__file__).parent
PROJECT_ORIGIN = "citeworth:"  # origin of a file the project ships beside this module
LATEST = "latest"
REGISTRY_COLUMNS = ("path", "origin_url", "sha256", "bytes", "licence", "since")


@dataclass(frozen=True)
class Release:
    name: str
    published: str  # YYYY-MM-DD
    adds: str


@dataclass(frozen=True)
class Registry:
    """One source's calendar and files (``<source>_releases.tsv``, ``<source>_files.tsv``)."""

    source: str

    @property
    def calendar_path(self) -> Path:
        return HERE / f"{self.source}_releases.tsv"

    @property
    def files_path(self) -> Path:
        return HERE / f"{self.source}_files.tsv"

    def releases(self) -> list[Release]:
        """The release calendar, oldest first."""
        rows = _tsv(self.calendar_path)
        releases = [Release(row["release"], row["published"], row["adds"]) for row in rows]
        dates = [r.published for r in releases]
        if dates != sorted(dates) or len(set(dates)) != len(dates):
            raise StageFailed(f"{self.calendar_path.name}: releases must be listed oldest first, "
                              "one per date")
        return releases

    def published(self) -> dict[str, str]:
        """Release name -> its publication date."""
        return {release.name: release.published for release in self.releases()}

    def resolve(self, name: str) -> str:
        """``name`` if the calendar lists it; ``latest``: the newest release."""
        names = [r.name for r in self.releases()]
        if name == LATEST:
            return names[-1]
        if name not in names:
            raise StageFailed(f"the {self.source} source has releases {', '.join(names)} (or {LATEST!r}); "
                              f"not {name!r}")
        return name

    def remote_files(self, release: str = LATEST) -> list[RemoteFile]:
        """The files ``release`` holds that are fetched (``url`` == ``origin``), in registry order."""
        return [_remote(row) for row in self._release_rows(release) if not _shipped(row)]

    def shipped_files(self, release: str = LATEST) -> list[InlineFile]:
        """The files ``release`` holds that the project ships (checked against their registry sha256)."""
        return [self._inline(row) for row in self._release_rows(release) if _shipped(row)]

    def licences(self, release: str = LATEST) -> dict[str, str]:
        """Each file of ``release`` (its path in the release folder) and its licence, as recorded."""
        return {row["path"]: row["licence"] for row in self._release_rows(release)}

    def plan(self, params: DownloadParams, net: Network) -> Plan:
        release = self.resolve(params.release)
        files = select(self.remote_files(release), params.include)  # a mirror need hold only these
        mirror = configured_mirror(params)
        http, local = HttpTransport(http_session(net), net.timeout), LocalTransport()
        if mirror is not None:
            files = from_mirror(files, mirror, self.source)
            http, local = GzipFallback(http), GzipFallback(local)
        return Plan(release, files, {"http": http, "file": local}, self.shipped_files(release))

    def _release_rows(self, release: str) -> list[dict[str, str]]:
        names = [r.name for r in self.releases()]
        upto = names.index(self.resolve(release))
        rows = _tsv(self.files_path)
        unknown = sorted({row["since"] for row in rows} - set(names))
        if unknown:
            raise StageFailed(f"{self.files_path.name}: 'since' names release(s) {unknown} "
                              f"not in {self.calendar_path.name}")
        return [row for row in rows if names.index(row["since"]) <= upto]

    def _inline(self, row: dict[str, str]) -> InlineFile:
        """A shipped file, refused when its bytes are not the ones the registry names."""
        source = HERE / row["origin_url"].removeprefix(PROJECT_ORIGIN)
        content = source.read_bytes()
        digests = Digests()
        digests.update(content)
        if problem := digests.mismatch(_remote(row)):
            raise StageFailed(f"{source.name}: {problem} ({self.files_path.name} row {row['path']}); "
                              "update the registry row with the file")
        return InlineFile(row["path"], row["origin_url"], content)


@dataclass(frozen=True)
class Bundle(Registry):
    """A source whose releases bundle releases of other registry sources: its calendar's ``parts``
    column names them (``demo:demo-v2 elife:6c97171``); it has no files table of its own. A
    release's files are its parts' files, each at its own mirror path (two parts holding one path
    are refused), under ``raw/<source>/<release>/`` like any release's."""

    def parts(self, release: str = LATEST) -> list[tuple[Registry, str]]:
        name = self.resolve(release)
        row = next(row for row in _tsv(self.calendar_path) if row["release"] == name)
        parts = [part.partition(":") for part in row["parts"].split()]
        if unknown := [source for source, _, _ in parts if source not in REGISTRIES or source == self.source]:
            raise StageFailed(f"{self.calendar_path.name}: release {name} bundles unknown source(s) "
                              f"{unknown}")
        return [(REGISTRIES[source], part_release) for source, _, part_release in parts]

    def remote_files(self, release: str = LATEST) -> list[RemoteFile]:
        files = [file for registry, part in self.parts(release) for file in registry.remote_files(part)]
        paths = [file.path for file in files]
        if len(set(paths)) != len(paths):
            raise StageFailed(f"the parts of {self.source} {release} hold the same path twice")
        return files

    def shipped_files(self, release: str = LATEST) -> list[InlineFile]:
        return [file for registry, part in self.parts(release) for file in registry.shipped_files(part)]

    def licences(self, release: str = LATEST) -> dict[str, str]:
        return {path: licence for registry, part in self.parts(release)
                for path, licence in registry.licences(part).items()}


# The sources whose releases are registries shipped with the package (the study bundles the others).
REGISTRIES: dict[str, Registry] = {name: Registry(name) for name in ("demo", "elife", "europepmc")}
REGISTRIES["study"] = Bundle("study")


def _tsv(path: Path) -> list[dict[str, str]]:
    return list(_read_tsv(path, path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=8)
def _read_tsv(path: Path, _mtime: int) -> tuple[dict[str, str], ...]:
    """The rows of a tab-separated table (cached while the file is unchanged: the largest registry
    has thousands of rows and is read several times a run)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return tuple(csv.DictReader(handle, delimiter="\t"))


def _shipped(row: dict[str, str]) -> bool:
    return row["origin_url"].startswith(PROJECT_ORIGIN)


def _remote(row: dict[str, str]) -> RemoteFile:
    return RemoteFile(path=row["path"], origin=row["origin_url"], url=row["origin_url"],
                      size=int(row["bytes"]), sha256=row["sha256"])
