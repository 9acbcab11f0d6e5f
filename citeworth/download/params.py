"""The ``download:`` section of params.yaml as typed dataclasses.

No secret ever lives here (params.yaml is versioned and read by DVC): the S2 API key is read from the
environment variable named by ``s2_api.api_key_env``; S3 credentials come from boto3's default chain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from citeworth.core.params import Params

SOURCES = ("demo", "elife", "europepmc", "study", "s2_api", "s2orc_legacy", "arxiv_s3")


class S3Params(Params):
    endpoint_url: str | None = None
    """an S3-compatible endpoint; None lets boto3 read AWS_ENDPOINT_URL"""
    region: str = "us-east-1"
    """The bucket's region."""
    unsigned: bool = False
    """anonymous access to a public bucket"""


class S2ApiParams(Params):
    base_url: str = "https://api.semanticscholar.org/datasets/v1"
    """The Semantic Scholar datasets API."""
    datasets: list[str] = Field(default_factory=lambda: ["s2orc", "papers"])
    """The datasets of a release fetched (s2orc: full texts; papers: metadata)."""
    diff_from: str | None = None
    """fetch the incremental diffs from this release instead of full files"""
    api_key_env: str = "S2_API_KEY"
    """The environment variable holding the API key (never the key itself)."""


class LegacyS2orcParams(Params):
    s3_uri: str | None = None
    """s3://bucket/prefix holding metadata/ and pdf_parses/ shards"""
    urls_file: Path | None = None
    """or a text file with one (presigned) URL per line"""


class ArxivParams(Params):
    bucket: str = "arxiv"
    """arXiv's requester-pays S3 bucket."""
    manifest_key: str = "src/arXiv_src_manifest.xml"
    """The bulk-source manifest in the bucket."""
    month_from: str | None = None
    """YYMM or YYYY-MM, inclusive; None: same as month_to"""
    month_to: str | None = None
    """YYMM or YYYY-MM, inclusive; None: the release month"""
    requester_pays: bool = True
    """Send the requester-pays header (arXiv's bucket charges the reader)."""
    categories: bool = False
    """also fetch each paper's categories from arXiv's OAI-PMH (download/oai.py)"""
    oai_url: str = "https://oaipmh.arxiv.org/oai"
    """arXiv's OAI-PMH endpoint, for categories."""
    oai_delay: float = 3.0
    """seconds between OAI-PMH requests, as arXiv asks of harvesters"""


class DownloadParams(Params):
    source: Literal[SOURCES]
    """The corpus: demo (a public mirror of sample files) | elife (eLife's JATS articles) | europepmc (Europe
    PMC open-access JATS articles) | study (the demo, eLife and Europe PMC in one release: params/study.yaml)
    | s2_api (Semantic Scholar datasets) | s2orc_legacy (S2ORC 20200705 shards) | arxiv_s3 (arXiv bulk
    sources)."""
    release: str
    """a release name, or "latest" (the newest; demo, elife, europepmc, study: of its calendar)"""
    out_dir: Path
    """Files land in <out_dir>/<source>/<release>/ with MANIFEST.json."""
    mirror: str | None = None
    """demo, elife, europepmc: mirror folder or http(s) URL (a file may be stored there as <path>.gz);
    CITEWORTH_MIRROR also sets it"""
    include: list[str] = Field(default_factory=list)
    """fnmatch patterns on paths; empty: every file"""
    unpack: list[str] = Field(default_factory=lambda: [".tar.gz", ".tgz"])
    """Archives unpacked (safely) into a folder beside them, by suffix."""
    max_unpack_bytes: int = 8 << 30
    """Refuse an archive that would unpack to more bytes than this (a zip bomb)."""
    timeout: float = 60.0
    """Seconds to connect and to read."""
    retries: int = 5
    """Attempts per request (429/5xx/throttling) and per file (resumed transfers)."""
    backoff: float = 1.0
    """Exponential backoff base and jitter, seconds."""
    verify_existing: bool = True
    """re-hash files already present (False: trust size + manifest)"""
    s3: S3Params = Field(default_factory=S3Params)
    """S3 access; credentials come only from the environment / boto3's chain, never from here."""
    s2_api: S2ApiParams = Field(default_factory=S2ApiParams)
    """The Semantic Scholar datasets API (source s2_api)."""
    s2orc_legacy: LegacyS2orcParams = Field(default_factory=LegacyS2orcParams)
    """S2ORC 20200705 shards (source s2orc_legacy): set s3_uri or urls_file."""
    arxiv: ArxivParams = Field(default_factory=ArxivParams)
    """arXiv's bulk sources (source arxiv_s3); the release is a month (YYMM) or latest."""
