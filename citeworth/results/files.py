"""The result files a page shows, read from the working copy or from a version in git.

A data version is a git ref (a tag ``data/<source>/<release>``, or a ``runs/<run id>`` branch).
Most results are small files DVC keeps in git (``cache: false``): they are read with ``git show``.
Outputs DVC caches (the Data Docs site) are found through the ref's ``dvc.lock`` in the local DVC
cache; a file in neither is simply absent, and the page leaves its section out.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

TAG_PATTERN = "data/*/*"  # data/<source>/<release>
RUN_BRANCH_PREFIX = "runs/"  # runs/<run id>: a run's results recorded on a branch
RUN_BRANCH_PATTERN = RUN_BRANCH_PREFIX + "*"
DVC_CACHE = Path(".dvc") / "cache" / "files" / "md5"


class Files:
    """Reads project-relative paths; ``None`` when a file is not there."""

    label = "working copy"
    ref: str | None = None

    def read_bytes(self, relative: str) -> bytes | None:
        raise NotImplementedError

    def read_text(self, relative: str) -> str | None:
        data = self.read_bytes(relative)
        return None if data is None else data.decode("utf-8")

    def read_json(self, relative: str) -> Any:
        text = self.read_text(relative)
        return None if text is None else json.loads(text)

    def count_lines(self, relative: str) -> int | None:
        data = self.read_bytes(relative)
        return None if data is None else data.count(b"\n")


class WorkingCopy(Files):
    """The files in the project folder: what the stages wrote last."""

    def __init__(self, root: Path):
        self.root = root.resolve()

    def read_bytes(self, relative: str) -> bytes | None:
        path = _inside(self.root, relative)
        return path.read_bytes() if path is not None and path.is_file() else None


class Version(Files):
    """The files as committed at git ref ``ref``, DVC-cached outputs through its dvc.lock."""

    def __init__(self, root: Path, ref: str):
        self.root, self.ref, self.label = root.resolve(), ref, ref
        self._lock: dict | None = None

    def read_bytes(self, relative: str) -> bytes | None:
        if _inside(self.root, relative) is None:
            return None
        committed = self._git_show(relative)
        return committed if committed is not None else self._from_dvc_cache(PurePosixPath(relative))

    def _git_show(self, relative: str) -> bytes | None:
        shown = subprocess.run(["git", "show", f"{self.ref}:{relative}"], cwd=self.root, capture_output=True)
        return shown.stdout if shown.returncode == 0 else None

    def _from_dvc_cache(self, relative: PurePosixPath) -> bytes | None:
        for out, md5 in self._locked_outputs():
            if relative == out:
                return self._cached(md5)
            if out in relative.parents and md5.endswith(".dir"):
                listing = json.loads(self._cached(md5) or b"[]")
                inner = relative.relative_to(out).as_posix()
                entry = next((e for e in listing if e.get("relpath") == inner), None)
                return self._cached(entry["md5"]) if entry else None
        return None

    def _locked_outputs(self) -> list[tuple[PurePosixPath, str]]:
        if self._lock is None:
            text = self._git_show("dvc.lock")
            self._lock = (yaml.safe_load(text) or {}) if text else {}
        stages = (self._lock.get("stages") or {}).values()
        return [(PurePosixPath(out["path"]), out["md5"])
                for stage in stages for out in (stage or {}).get("outs", []) if out.get("md5")]

    def _cached(self, md5: str) -> bytes | None:
        path = self.root / DVC_CACHE / md5[:2] / md5[2:]
        return path.read_bytes() if path.is_file() else None


@dataclass(frozen=True)
class Ref:
    """A version the picker offers: a data tag or a run branch."""

    name: str
    kind: str  # "data version" | "run"
    date: str  # ISO 8601, from git
    commit: str
    subject: str

    @property
    def results_of(self) -> str:
        """Whose results: an experiment (a run with its own values, on its branch) or the defaults
        (a data tag: only runs on the defaults tag data versions)."""
        return f"experiment ({self.name})" if self.kind == "run" else "defaults"


def list_refs(root: Path) -> list[Ref]:
    """Data version tags, then ``runs/*`` branches, each newest first; none outside git."""
    refs = []
    for pattern, namespace, kind in ((TAG_PATTERN, "refs/tags", "data version"),
                                     (RUN_BRANCH_PATTERN, "refs/heads", "run")):
        listed = subprocess.run(
            ["git", "for-each-ref", "--sort=-refname", "--sort=-creatordate",  # newest; ties by name
             "--format=%(refname:strip=2)%00%(creatordate:iso-strict)%00%(objectname)%00%(*objectname)"
             "%00%(contents:subject)", f"{namespace}/{pattern}"],
            cwd=root, capture_output=True, text=True)
        for line in listed.stdout.splitlines() if listed.returncode == 0 else []:
            name, date, obj, peeled, subject = line.split("\0")
            refs.append(Ref(name, kind, date, peeled or obj, subject))
    return refs


def head_commit(root: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def open_files(root: Path, version: str | None) -> Files:
    """The working copy, or the listed ref ``version`` (anything else is refused: no arbitrary git revs)."""
    if not version:
        return WorkingCopy(root)
    if version not in {ref.name for ref in list_refs(root)}:
        raise LookupError(f"no data version or run {version!r}")
    return Version(root, version)


def _inside(root: Path, relative: str) -> Path | None:
    """``root/relative`` when it stays inside ``root``, else None."""
    if not relative or PurePosixPath(relative).is_absolute():
        return None
    path = (root / relative).resolve()
    return path if path.is_relative_to(root) else None
