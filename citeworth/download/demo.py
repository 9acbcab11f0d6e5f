"""The embedded demo corpus: dated releases of public files with pinned origin URLs and sha256 digests.

A registry source (``registry.py``) described by two data files beside this module:

- ``demo_releases.tsv``, the release calendar. The dates are the demo's own (the files are older):
  they make the demo a source that updates, so ``latest_release("demo", as_of)`` and a backfill over
  2024-01-01 .. 2024-03-01 meet both releases.
- ``demo_files.tsv``, the registry of each file's mirror path, origin URL, sha256, size, licence and
  ``since``, the first release that holds it.

Files land at ``raw/demo/<release>/<mirror path>``. A row whose origin is ``citeworth:<name>`` is a
file the project wrote and ships beside this module: the arXiv-style category rows of the LaTeX
papers (``demo_arxiv_metadata.jsonl`` here, ``arxiv_latex_metadata.jsonl`` in the release; SymPy,
not on arXiv, gets the classes of its journal subject, as its row's ``categories_source`` says), so
they have fields of study like every other source.
"""

from __future__ import annotations

from citeworth.download.registry import HERE, LATEST, REGISTRIES, Release
from citeworth.download.remote import InlineFile, RemoteFile

DEMO = REGISTRIES["demo"]
LATEX_METADATA = HERE / "demo_arxiv_metadata.jsonl"
LATEX_METADATA_PATH = "arxiv_latex_metadata.jsonl"  # in the release folder


def demo_releases() -> list[Release]:
    """The demo's release calendar, oldest first."""
    return DEMO.releases()


def demo_registry(release: str = LATEST) -> list[RemoteFile]:
    """The files the demo ``release`` holds that are fetched, in registry order."""
    return DEMO.remote_files(release)


def shipped_files(release: str = LATEST) -> list[InlineFile]:
    """The files the demo ``release`` holds that the project ships."""
    return DEMO.shipped_files(release)
