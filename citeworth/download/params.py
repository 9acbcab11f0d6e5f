"""The ``download:`` section of params.yaml as typed dataclasses.

No secret ever lives here (params.yaml is versioned and read by DVC): the S2 API key is read from the
environment variable named by ``s2_api.api_key_env``; S3 credentials come from boto3's default chain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from citeworth.core.params import Params

SOURCES = ("demo", "s2_api", "s2orc_legacy", "arxiv_s3")


class S3Params(Params):
    endpoint_url: str | None = None
    """an S3-compatible endpoint; None lets boto3 read AWS_ENDPOINT_URL"""
    region: str = "us-east-1"
    unsigned: bool = False
    """anonymous access to a public bucket"""


class S2ApiParams(Params):
    base_url: str = "https://api.semanticscholar.org/datasets/v1"
    datasets: list[str] = Field(default_factory=lambda: ["s2orc", "papers"])
    diff_from: str | None = None
    """fetch the incremental diffs from this release instead of full files"""
    api_key_env: str = "S2_API_KEY"


class LegacyS2orcParams(Params):
    s3_uri: str | None = None
    """s3://bucket/prefix holding metadata/ and pdf_parses/ shards"""
    urls_file: Path | None = None
    """or a text file with one (presigned) URL per line"""


class ArxivParams(Params):
    bucket: str = "arxiv"
    manifest_key: str = "src/arXiv_src_manifest.xml"
    month_from: str | None = None
    """YYMM or YYYY-MM, inclusive; None: same as month_to"""
    month_to: str | None = None
    """YYMM or YYYY-MM, inclusive; None: the release month"""
    requester_pays: bool = True
    categories: bool = False
    """also fetch each paper's categories from arXiv's OAI-PMH (download/oai.py)"""
    oai_url: str = "https://oaipmh.arxiv.org/oai"
    oai_delay: float = 3.0
    """seconds between OAI-PMH requests, as arXiv asks of harvesters"""


class DownloadParams(Params):
    source: Literal[SOURCES]
    release: str
    """a release name, or "latest" (the newest; demo: of its calendar)"""
    out_dir: Path
    mirror: str | None = None
    """demo: mirror folder or http(s) URL; CITEWORTH_MIRROR also sets it"""
    workers: int = 4
    include: list[str] = Field(default_factory=list)
    """fnmatch patterns on paths; empty: every file"""
    unpack: list[str] = Field(default_factory=lambda: [".tar.gz", ".tgz"])
    max_unpack_bytes: int = 8 << 30
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 1.0
    verify_existing: bool = True
    """re-hash files already present (False: trust size + manifest)"""
    s3: S3Params = Field(default_factory=S3Params)
    s2_api: S2ApiParams = Field(default_factory=S2ApiParams)
    s2orc_legacy: LegacyS2orcParams = Field(default_factory=LegacyS2orcParams)
    arxiv: ArxivParams = Field(default_factory=ArxivParams)
