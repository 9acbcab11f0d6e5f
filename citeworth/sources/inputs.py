"""``InputSpec``: which reader reads which files, as params.yaml's inputs write it."""

from __future__ import annotations

from pydantic.dataclasses import dataclass as pydantic_dataclass

from citeworth.core.params import PARAMS_CONFIG


@pydantic_dataclass(config=PARAMS_CONFIG)
class InputSpec:
    """Which reader reads which files: a params.yaml entry (curate and validate share them)."""

    reader: str
    """unarxive | s2orc_json | s2orc_legacy | s2_api | jats | tei | arxiv_latex"""
    glob: str
    """Files (relative to the project root) this reader reads; shards are made from them."""
    metadata: str | None = None
    """A separate metadata file (fields of study, filter facts)."""
    release: str | None = None
    """The source release recorded as provenance (null: the reader's guess)."""
    optional: bool = False
    """The files may be absent from a release (the demo's PLOS articles are not in demo-v1): a glob
    that matches nothing then gives no shards instead of an error."""
    collection: str | None = None
    """The collection its papers are recorded under in each curated record (``collection``), so that
    metrics can be split by it (eLife, Europe PMC, PLOS, unarXive...); null: the reader's name."""
