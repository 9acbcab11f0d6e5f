"""A small GROBID client: one PDF in, its TEI XML out, with the failure modes told apart.

GROBID's REST service answers ``POST /api/processFulltextDocument`` (multipart, the PDF in the
``input`` field, options as further fields) with 200 and the TEI, 204 when it extracted nothing,
400 for a bad request, 500 when it failed on the PDF, and 503 when all its worker threads are busy.
The official Python client writes files in place and skips any file that exists, so a TEI cut short
by a crash is never redone; this client only returns a TEI that arrived whole and parses, and says
why it could not:

- ``PdfRejected``: GROBID cannot read this PDF (204, 400, 500 twice, a TEI that stays malformed or
  truncated, the per-PDF time limit) -- the caller quarantines it and goes on;
- ``GrobidUnavailable``: the service is not there or stays busy (connection errors, 503) after the
  retries -- nothing is wrong with the PDF; the caller stops and a rerun resumes.

Busy answers and connection errors are retried with exponential backoff and jitter (a 503's
``Retry-After`` is honoured). Where the service runs is ``CITEWORTH_GROBID_URL`` unless the params
name it; ``docker/compose.yaml``'s ``grobid`` profile starts one on http://localhost:8070.
"""

from __future__ import annotations

import json
import os
import random
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import requests
from pydantic import Field
from requests.adapters import HTTPAdapter

from citeworth.core.errors import StageFailed
from citeworth.core.params import Params

URL_ENV = "CITEWORTH_GROBID_URL"
DEFAULT_URL = "http://localhost:8070"
START_HINT = (f"start one with `docker compose -f docker/compose.yaml --profile grobid up -d grobid` "
              f"or set {URL_ENV} to a running GROBID")
_CHUNK = 64 * 1024
_DETAIL_CHARS = 300


class GrobidOptions(Params):
    """Form fields of ``processFulltextDocument``, under GROBID's own names (1 = on, 0 = off)."""

    consolidateHeader: int = 1
    """camelCase as GROBID spells them, so params.yaml reads like GROBID's documentation."""
    consolidateCitations: int = 0
    """1 or 2: GROBID looks each reference up (CrossRef / biblio-glutton)"""
    includeRawCitations: int = 1
    """the reference as printed, kept as BibEntry.raw"""
    includeRawAffiliations: int = 0
    """The affiliations as printed."""
    segmentSentences: int = 0
    """<s> elements inside paragraphs"""
    generateIDs: int = 0
    """xml:id attributes on TEI elements."""
    teiCoordinates: list[str] = Field(default_factory=list)
    """e.g. [ref, biblStruct, figure]"""

    def form(self) -> list[tuple[str, str]]:
        fields = []
        for name, value in sorted(self.model_dump().items()):
            values = value if isinstance(value, list) else [value]
            fields += [(name, str(int(item) if isinstance(item, bool) else item)) for item in values]
        return fields


class GrobidUnavailable(StageFailed):
    """No GROBID answers (or it stays busy) at the URL: nothing the PDFs could change."""


class PdfRejected(Exception):
    """GROBID cannot turn this PDF into TEI; ``reason`` is a short code for the quarantine."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class _Transient(Exception):
    """An answer worth asking again (busy, connection error, a body cut short)."""

    def __init__(self, reason: str, detail: str, wait: float | None = None):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.wait = wait


def pooled_session(connections: int) -> requests.Session:
    """A session that keeps a connection per concurrent request (requests' default pool is 10)."""
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=1, pool_maxsize=max(connections, 1))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def service_url(configured: str | None) -> str:
    """The params' URL, else ``$CITEWORTH_GROBID_URL``, else GROBID's default port on this machine."""
    return (configured or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")


@dataclass
class GrobidClient:
    url: str
    timeout: float = 300.0  # seconds for one PDF, upload to last byte of the TEI
    retries: int = 5  # further attempts after a busy answer, a connection error or a cut body
    backoff: float = 2.0  # seconds; doubled each attempt, plus up to as much jitter
    sleep: Callable[[float], None] = time.sleep
    session: requests.Session = field(default_factory=requests.Session)

    def version(self) -> str:
        """The service's GROBID version; ``GrobidUnavailable`` (one line: the URL and how to start
        one) when nothing alive answers."""
        try:
            alive = self.session.get(f"{self.url}/api/isalive", timeout=10)
            if alive.status_code != 200 or alive.text.strip().lower() != "true":
                raise GrobidUnavailable(f"GROBID at {self.url} is not alive (/api/isalive answered "
                                        f"{alive.status_code} {alive.text.strip()[:40]!r}); {START_HINT}")
            answer = self.session.get(f"{self.url}/api/version", timeout=10)
            answer.raise_for_status()
        except requests.RequestException as exc:
            raise GrobidUnavailable(f"no GROBID service answers at {self.url} ({type(exc).__name__}); "
                                    f"{START_HINT}") from exc
        return _version_text(answer.text)

    def fulltext(self, pdf: Path, options: GrobidOptions) -> bytes:
        """The TEI of ``pdf`` (whole and well-formed), or ``PdfRejected`` / ``GrobidUnavailable``."""
        server_errors = 0
        for attempt in range(self.retries + 1):
            try:
                return self._attempt(pdf, options)
            except _Transient as problem:
                last = problem
            except PdfRejected as rejected:
                # A 500 is usually the PDF, but a crashed worker thread answers it too: ask once more.
                server_errors += rejected.reason == "grobid_error"
                if rejected.reason != "grobid_error" or server_errors > 1 or attempt == self.retries:
                    raise
                last = _Transient(rejected.reason, rejected.detail)
            if attempt < self.retries:
                self.sleep(last.wait if last.wait is not None else self._delay(attempt))
        if last.reason in ("busy", "connection_error"):
            raise GrobidUnavailable(f"GROBID at {self.url} stayed unavailable for {pdf.name} after "
                                    f"{self.retries + 1} attempts ({last.reason}: {last.detail}); "
                                    f"{START_HINT}")
        raise PdfRejected(last.reason, f"{last.detail} (after {self.retries + 1} attempts)")

    def _delay(self, attempt: int) -> float:
        base = self.backoff * 2 ** attempt
        return min(base + random.uniform(0, self.backoff), 120.0)

    def _attempt(self, pdf: Path, options: GrobidOptions) -> bytes:
        deadline = time.monotonic() + self.timeout
        try:
            with open(pdf, "rb") as handle, self.session.post(
                f"{self.url}/api/processFulltextDocument",
                files={"input": (pdf.name, handle, "application/pdf")},
                data=options.form(),
                timeout=(10, self.timeout),
                stream=True,
            ) as response:
                return self._answer(response, deadline)
        except requests.exceptions.ConnectTimeout as exc:  # also a Timeout, but the service's fault
            raise _Transient("connection_error", str(exc)[:_DETAIL_CHARS]) from exc
        except requests.exceptions.Timeout as exc:
            raise PdfRejected("timeout", f"no whole answer within {self.timeout:g} s") from exc
        except requests.exceptions.ChunkedEncodingError as exc:
            raise _Transient("truncated_response", str(exc)[:_DETAIL_CHARS]) from exc
        except requests.exceptions.ConnectionError as exc:
            raise _Transient("connection_error", str(exc)[:_DETAIL_CHARS]) from exc

    def _answer(self, response: requests.Response, deadline: float) -> bytes:
        status = response.status_code
        if status == 503:
            raise _Transient("busy", "503: all GROBID threads are in use", _retry_after(response))
        if status == 204:
            raise PdfRejected("no_content", "GROBID extracted no content (204)")
        if status != 200:
            reason = "grobid_error" if status >= 500 else "bad_request"
            raise PdfRejected(reason, f"{status}: {response.text.strip()[:_DETAIL_CHARS]}")
        body = bytearray()
        for chunk in response.iter_content(_CHUNK):
            body += chunk
            if time.monotonic() > deadline:
                raise requests.exceptions.Timeout("per-PDF time limit")
        _check_tei(bytes(body))
        return bytes(body)


def _check_tei(body: bytes) -> None:
    """A 200 whose body is not a whole TEI document (a proxy's page, a stream cut without a
    Content-Length) is asked again, then quarantined."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise _Transient("malformed_tei", f"the answer is not well-formed XML ({exc})") from exc
    if root.tag.rsplit("}", 1)[-1] != "TEI":
        raise _Transient("malformed_tei", f"the answer's root is <{root.tag}>, not <TEI>")


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return min(float(value), 120.0) if value.strip().isdigit() else None


def _version_text(text: str) -> str:
    """GROBID answers ``0.8.1`` (older: a JSON object with a ``version``)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            return str(json.loads(text).get("version") or text)
        except ValueError:
            return text
    return text
