"""Source readers: raw files of each format -> the one ``Paper`` model (citeworth/core/paper.py).

``discover_shards`` turns a glob into shards (the units of parallel work); ``read_shard`` streams
a shard's Papers, and a ``BadRecord`` for every record it cannot read (quarantined by the caller,
never dropped silently). Reading continues after a bad record, except after a truncated or
corrupt gzip stream, which ends the shard.

Readers:

- ``unarxive``: unarXive JSONL (``arXiv_src_*.jsonl``), one file per shard; release "2023-sample"
  unless given.
- ``s2orc_json``: S2ORC single-paper JSON of the 20190928 / 20200705 / 20210101 releases; one
  folder per shard (see below), release = the folder's name; ``metadata`` = an optional S2ORC metadata JSONL
  (e.g. the 20200705 ``sample.jsonl``) for MAG fields and filter facts.
- ``s2orc_legacy``: S2ORC 20200705 ``pdf_parses_N.jsonl.gz`` joined with ``metadata_N.jsonl.gz``;
  the glob may match both kinds (or only the parses, with ``metadata`` a glob of the metadata files).
- ``s2_api``: Semantic Scholar datasets API ``s2orc`` files, one per shard; ``metadata`` = one
  ``papers`` dataset JSONL(.gz) for fields of study; release = given, or a date-like folder.
- ``jats``: JATS XML (PMC ``.nxml``, eLife, Europe PMC), one article per file, one folder per shard;
  fields of study from the article's subjects / journal / references (see jats.py); no ``metadata``.
- ``tei``: GROBID TEI XML (``.tei.xml``), one paper per file, one folder per shard; ``metadata`` =
  an optional JSONL keyed by file stem for fields of study and filter facts (see tei.py).
Both: release = given, else a date-like folder, else "unversioned". A folder of more than
``FILES_PER_SHARD`` files (s2orc_json, jats, tei) is cut into shards of that many, so that thousands
of articles in one folder curate on every worker.
- ``arxiv_latex``: LaTeX sources (citeworth/sources/latex/): the glob matches arXiv bulk tars
  (``arXiv_src_YYMM_NNN.tar``, one shard each), e-prints (``<id>.gz``) or ``.tex`` files (one paper
  each), or folders (one paper each: every file under the folder); ``metadata`` = JSON lines in the
  arXiv metadata snapshot's shape keyed by ``id`` (categories, title, DOI); release = given, else
  the tar's month (``arXiv_src_2212_001.tar`` -> 2212), else "unversioned".
"""

from __future__ import annotations

import dataclasses
import glob as globbing
import hashlib
import importlib
import logging
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from citeworth.core.errors import MissingInput
from citeworth.core.paper import Paper
from citeworth.sources import base
from citeworth.sources.base import BadRecord, Shard
from citeworth.sources.latex import files as latex_files

if TYPE_CHECKING:
    from citeworth.sources.inputs import InputSpec

__all__ = ["BadRecord", "InputSpec", "READERS", "Shard", "discover_shards", "input_shards", "read_shard"]
log = logging.getLogger(__name__)



def _reader(module: str) -> Callable[[Shard], Iterator[Paper | BadRecord]]:
    """``module``'s ``read``, imported at the first shard it reads: importing this package (as
    ``citeworth check`` does for the LaTeX parser) loads no reader and none of their dependencies."""
    def read(shard: Shard) -> Iterator[Paper | BadRecord]:
        return importlib.import_module(module).read(shard)

    return read


READERS: dict[str, Callable[[Shard], Iterator[Paper | BadRecord]]] = {
    "unarxive": _reader("citeworth.sources.unarxive"),
    "s2orc_json": _reader("citeworth.sources.s2orc"),
    "s2orc_legacy": _reader("citeworth.sources.s2orc_legacy"),
    "s2_api": _reader("citeworth.sources.s2_api"),
    "jats": _reader("citeworth.sources.jats"),
    "tei": _reader("citeworth.sources.tei"),
    "arxiv_latex": _reader("citeworth.sources.latex.reader"),
}

# Files of one folder curated together at most (one-file-per-paper readers: s2orc_json, jats, tei): a
# folder of thousands of articles becomes shards that every worker process (or Airflow task) takes a
# share of. 250 eLife or Europe PMC articles curate in 5-8 CPU seconds: shards small enough to balance
# two workers on eLife's 1,781 articles (the largest shard 8 of the set's 49 CPU seconds), large enough
# that the per-shard cost (four files written, the fingerprint, the store) stays small.
FILES_PER_SHARD = 250
_BULK_TAR = re.compile(r"^arXiv_src_(\d{4})_\d+\.tar$")
_LEGACY_NAME = re.compile(r"^(metadata|pdf_parses)_(.+?)\.jsonl(?:\.gz)?$")
_RELEASE_DIR = re.compile(r"^(\d{4}-\d{2}-\d{2}|\d{8})")


def discover_shards(
    reader: str, glob: str, metadata: str | None = None, release: str | None = None,
    collection: str | None = None,
) -> list[Shard]:
    """The shards of ``reader`` among the files matching ``glob``, sorted by name (their papers
    recorded under ``collection``, None: the reader's name)."""
    if reader not in _DISCOVER:
        raise ValueError(f"unknown reader {reader!r}; readers: {', '.join(READERS)}")
    files = _matches(glob, folders=reader == "arxiv_latex")
    if not files:
        raise MissingInput(f"{reader}: no files match {glob!r} (relative to {os.getcwd()}); "
                                "has the download stage run?")
    shards = _unique_names(_DISCOVER[reader](files, metadata, release))
    if collection is not None:
        shards = [dataclasses.replace(shard, collection=collection) for shard in shards]
    return sorted(shards, key=lambda shard: shard.name)


def input_shards(inputs: Iterable[InputSpec]) -> list[Shard]:
    """The shards of every input, in order; an ``optional`` input that matches no file has none."""
    shards = []
    for spec in inputs:
        if spec.optional and not _matches(spec.glob, folders=spec.reader == "arxiv_latex"):
            log.info("%s: no files match %r; the input is optional, so it is skipped", spec.reader, spec.glob)
            continue
        shards += discover_shards(spec.reader, spec.glob, spec.metadata, spec.release, spec.collection)
    return shards


def __getattr__(name: str):
    """``InputSpec``, imported when asked for (see ``sources.base``)."""
    return getattr(base, name)


def read_shard(shard: Shard) -> Iterator[Paper | BadRecord]:
    """Stream the shard's Papers (and BadRecords), one record in memory at a time."""
    if shard.reader not in READERS:
        raise ValueError(f"shard {shard.name!r} names unknown reader {shard.reader!r}; "
                         f"readers: {', '.join(READERS)}")
    return READERS[shard.reader](shard)


def _unarxive(files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    if metadata:
        raise ValueError("unarxive records carry their own metadata: drop `metadata` for this input")
    from citeworth.sources.unarxive import DEFAULT_RELEASE

    return [Shard("unarxive", _stem(path), (path,), release or DEFAULT_RELEASE) for path in files]


def _s2orc_json(files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    metadata_file = _one_file(metadata, "s2orc_json")
    return [
        Shard("s2orc_json", name, paths, release or Path(paths[0]).parent.name, metadata_file)
        for name, paths in _folder_shards(files)
    ]


def _jats(files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    if metadata:
        raise ValueError("jats articles carry their own metadata: drop `metadata` for this input")
    return _xml_shards("jats", files, None, release)


def _tei(files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    return _xml_shards("tei", files, _one_file(metadata, "tei"), release)


def _xml_shards(reader: str, files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    return [
        Shard(reader, name, paths, release or _release_dir(paths[0]) or "unversioned", metadata)
        for name, paths in _folder_shards(files)
    ]


def _folder_shards(files: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """``(shard name, files)`` for one-file-per-paper readers: each folder's files in sorted order, cut
    into runs of ``FILES_PER_SHARD``. A folder that fits in one run is one shard named after the folder
    (its parent's path hashed in when two folders share a name); a larger one gives ``<name>_0000``,
    ``<name>_0001``..., so files added at the end of a folder leave its earlier shards (and their
    curated copies in the shard store) as they were."""
    folders = _by_folder(files)
    names = Counter(_safe(Path(folder).name) for folder, _ in folders)
    shards = []
    for folder, paths in folders:
        name = _safe(Path(folder).name)
        if names[name] > 1:
            name = f"{name}-{_path_hash(paths[0])}"
        runs = [paths[i:i + FILES_PER_SHARD] for i in range(0, len(paths), FILES_PER_SHARD)]
        if len(runs) == 1:
            shards.append((name, runs[0]))
        else:
            shards += [(f"{name}_{k:04d}", run) for k, run in enumerate(runs)]
    return shards


def _by_folder(files: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Files grouped by their folder, folders and files in sorted order."""
    folders: dict[str, list[str]] = defaultdict(list)
    for path in files:
        folders[str(Path(path).parent)].append(path)
    return [(folder, tuple(paths)) for folder, paths in sorted(folders.items())]


def _s2orc_legacy(files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    by_kind: dict[str, dict[str, list[str]]] = {"metadata": defaultdict(list),
                                                "pdf_parses": defaultdict(list)}
    for path in files + (_matches(metadata) if metadata else []):
        match = _LEGACY_NAME.match(Path(path).name)
        if not match:
            raise ValueError(f"s2orc_legacy: {path} is neither metadata_N.jsonl[.gz] "
                             "nor pdf_parses_N.jsonl[.gz]")
        if path not in by_kind[match.group(1)][match.group(2)]:
            by_kind[match.group(1)][match.group(2)].append(path)
    if not by_kind["pdf_parses"]:
        raise MissingInput(f"s2orc_legacy: no pdf_parses_N.jsonl.gz among {len(files)} matched file(s)")
    shards = []
    for number, parses in sorted(by_kind["pdf_parses"].items()):
        partners = by_kind["metadata"].get(number, [])
        if len(parses) != 1 or len(partners) != 1:
            raise ValueError(f"s2orc_legacy shard {number}: need exactly one pdf_parses_{number} and one "
                             f"metadata_{number} file, found {parses} and {partners} (pass metadata=<glob>)")
        from citeworth.sources.s2orc_legacy import DEFAULT_RELEASE

        shard_release = release or _release_dir(parses[0]) or DEFAULT_RELEASE
        shards.append(Shard("s2orc_legacy", _safe(f"{shard_release}_{number}"), (parses[0],), shard_release,
                            partners[0]))
    return shards


def _s2_api(files: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    metadata_file = _one_file(metadata, "s2_api")
    shards = []
    for path in files:
        shard_release = release or _release_dir(path)
        if not shard_release:
            raise ValueError(f"s2_api: no release given and no date-like folder in {path}; pass release=")
        name = _safe(f"{shard_release}_{_stem(path)}")
        shards.append(Shard("s2_api", name, (path,), shard_release, metadata_file))
    return shards


def _arxiv_latex(matches: list[str], metadata: str | None, release: str | None) -> list[Shard]:
    """One shard per bulk tar, e-print, ``.tex`` file or folder (a folder's shard lists its files)."""
    metadata_file = _one_file(metadata, "arxiv_latex")
    shards = []
    for path in matches:
        if os.path.isdir(path):
            paths = tuple(sorted(str(p) for p in Path(path).rglob("*") if p.is_file()))
            if paths:
                shards.append(Shard("arxiv_latex", _folder_shard_name(Path(path)), paths,
                                    release or "unversioned", metadata_file))
            continue
        month = _BULK_TAR.match(Path(path).name)
        shard_release = release or (month.group(1) if month else _release_dir(path) or "unversioned")
        shards.append(Shard("arxiv_latex", _safe(_stem(path).removesuffix(".tar")), (path,), shard_release,
                            metadata_file))
    return shards


def _folder_shard_name(folder: Path) -> str:
    """A folder's name, with its parent's before a generic one (``minimap2/tex`` -> ``minimap2_tex``)."""
    if folder.name.lower() in latex_files.GENERIC_FOLDERS:
        return _safe(f"{folder.parent.name}_{folder.name}")
    return _safe(folder.name)


_DISCOVER = {
    "unarxive": _unarxive,
    "s2orc_json": _s2orc_json,
    "s2orc_legacy": _s2orc_legacy,
    "s2_api": _s2_api,
    "jats": _jats,
    "tei": _tei,
    "arxiv_latex": _arxiv_latex,
}


def _matches(pattern: str, folders: bool = False) -> list[str]:
    """Files matching ``pattern`` (and folders too when ``folders``), sorted."""
    return sorted(path for path in globbing.glob(pattern, recursive=True)
                  if os.path.isfile(path) or (folders and os.path.isdir(path)))


def _one_file(pattern: str | None, reader: str) -> str | None:
    if pattern is None:
        return None
    found = _matches(pattern)
    if len(found) != 1:
        raise MissingInput(f"{reader}: metadata {pattern!r} must name exactly one file; it matches {found}")
    return found[0]


def _release_dir(path: str) -> str | None:
    """The nearest folder named like a release (2023-11-14, 20200705, 20200705v1) above ``path``."""
    for part in reversed(Path(path).parent.parts):
        if match := _RELEASE_DIR.match(part):
            return match.group(1)
    return None


def _stem(path: str) -> str:
    name = Path(path).name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return _safe(name)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "shard"


def _unique_names(shards: list[Shard]) -> list[Shard]:
    """Shards whose names clash (same file name in two folders) get a suffix from their path."""
    counts = Counter(shard.name for shard in shards)
    return [
        dataclasses.replace(shard, name=f"{shard.name}-{_path_hash(shard.paths[0])}")
        if counts[shard.name] > 1 else shard
        for shard in shards
    ]


def _path_hash(path: str) -> str:
    return hashlib.sha1(path.encode()).hexdigest()[:8]
