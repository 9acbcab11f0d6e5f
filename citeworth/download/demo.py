"""The embedded demo corpus: a registry of public files with pinned origin URLs and sha256 digests.

``demo_files.tsv`` lists, for each file, its path in a mirror laid out like ``../shared/data``
(``github/OWNER/REPO/<path after the commit>``), its origin URL, sha256, size and licence: metadata,
not data. Files are fetched from the origin URL, or from a mirror when ``mirror`` / the
``CITEWORTH_MIRROR`` environment variable names one (a folder or an http(s) URL with that layout).
Either way they land at ``raw/demo/demo-v1/<mirror path>`` and are checked against the registry.

The LaTeX papers of the demo (SciPy 1.0, SymPy, minimap2, arXiv 2004.14974) come with
``arxiv_latex_metadata.jsonl``, written by the project (``demo_arxiv_metadata.jsonl`` here): one
arXiv-metadata-style row per paper with the categories arXiv lists for it (SymPy, not on arXiv:
the classes of its journal subject, as the row's ``categories_source`` says), so they have fields
of study like every other source.
"""

from __future__ import annotations

import csv
import os
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

from citeworth.core.errors import StageFailed
from citeworth.download.params import DownloadParams
from citeworth.download.remote import InlineFile, Plan, RemoteFile
from citeworth.download.transports import HttpTransport, LocalTransport, Network, http_session

DEMO_RELEASE = "demo-v1"
REGISTRY = Path(__file__).with_name("demo_files.tsv")
LATEX_METADATA = Path(__file__).with_name("demo_arxiv_metadata.jsonl")
LATEX_METADATA_PATH = "arxiv_latex_metadata.jsonl"  # in the release folder
MIRROR_ENV = "CITEWORTH_MIRROR"


def demo_registry() -> list[RemoteFile]:
    """The demo files, fetched from their origin URLs (``url`` == ``origin``)."""
    with open(REGISTRY, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        RemoteFile(path=row["path"], origin=row["origin_url"], url=row["origin_url"],
                   size=int(row["bytes"]), sha256=row["sha256"])
        for row in rows
    ]


def configured_mirror(params: DownloadParams) -> str | None:
    """``params.mirror``, else ``$CITEWORTH_MIRROR``; an empty value means: use the origin URLs."""
    return params.mirror or os.environ.get(MIRROR_ENV) or None


def plan_demo(params: DownloadParams, net: Network) -> Plan:
    if params.release != DEMO_RELEASE:
        raise StageFailed(f"the demo source has one release, {DEMO_RELEASE!r}; not {params.release!r}")
    files = demo_registry()
    mirror = configured_mirror(params)
    if mirror is not None:
        files = _from_mirror(files, mirror)
    transports = {"http": HttpTransport(http_session(net), net.timeout), "file": LocalTransport()}
    metadata = InlineFile(LATEX_METADATA_PATH, f"citeworth:{LATEX_METADATA.name}",
                          LATEX_METADATA.read_bytes())
    return Plan(DEMO_RELEASE, files, transports, [metadata])


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
