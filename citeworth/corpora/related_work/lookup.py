"""Titles and abstracts of cited papers the corpus lacks (the stage asks the corpus' own
``citeworth.corpora.paper_index`` first): from arXiv / Semantic Scholar.

``OnlineLookup`` (off unless ``lookup.providers`` names some) asks the arXiv API or the Semantic
Scholar Graph API: by identifier when the entry has one the service knows, else by title. As
Kobayashi et al. do, a title search counts only on an exact case-insensitive title match. Every
answer, a miss included, is cached on disk, so a rerun asks nothing twice and gives the same
bytes; requests to one service are spaced ``min_interval`` seconds apart (arXiv asks for 3), and
429/5xx answers are retried with backoff.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import requests
from pydantic import Field
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from citeworth.core.io import atomic_write
from citeworth.core.params import Params
from citeworth.corpora.paper_index import title_key

log = logging.getLogger(__name__)

Found = tuple[str | None, str | None]  # (title, abstract)
PROVIDERS = ("arxiv", "semantic_scholar")
_ATOM = "{http://www.w3.org/2005/Atom}"
_S2_ID_PREFIX = {"doi": "DOI", "arxiv": "ARXIV", "pmid": "PMID", "pmcid": "PMCID", "s2": "CorpusId"}


class LookupParams(Params):
    providers: list[Literal[PROVIDERS]] = Field(default_factory=list)
    """arxiv | semantic_scholar, in order; [] = off"""
    arxiv_url: str = "https://export.arxiv.org/api/query"
    """arXiv's query API."""
    semantic_scholar_url: str = "https://api.semanticscholar.org/graph/v1"
    """Semantic Scholar's graph API."""
    api_key_env: str = "S2_API_KEY"
    """Semantic Scholar key (optional), read from this variable"""
    min_interval: float = 3.0
    """seconds between two requests to one service"""
    timeout: float = 30.0
    """Seconds per request."""
    retries: int = 3
    """Attempts per request."""
    cache_dir: Path = Path("cache/related_work")
    """Every answer, misses included: reruns ask nothing twice."""


class OnlineLookup:
    def __init__(self, params: LookupParams, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.params = params
        self.clock, self.sleep = clock, sleep
        self.session = _session(params.retries)
        self._last_request: dict[str, float] = {}
        self.requests = 0
        self.errors = 0

    @property
    def enabled(self) -> bool:
        return bool(self.params.providers)

    def find(self, cited: dict) -> Found | None:
        """The first provider's answer for a cited entry (``{"title", "ids"}``), or None."""
        for provider in self.params.providers:
            query = self._query(provider, cited)
            if query is not None and (found := self._cached(provider, query, cited.get("title"))):
                return found
        return None

    def _query(self, provider: str, cited: dict) -> dict | None:
        ids = cited.get("ids") or {}
        if provider == "arxiv":
            if "arxiv" in ids:
                return {"id_list": ids["arxiv"]}
            title = cited.get("title")
            return {"search_query": f'ti:"{_quoted(title)}"', "max_results": 10} if title else None
        kind = next((kind for kind in _S2_ID_PREFIX if kind in ids), None)
        if kind:
            return {"paper": f"{_S2_ID_PREFIX[kind]}:{ids[kind]}"}
        return {"match": cited["title"]} if cited.get("title") else None

    def _cached(self, provider: str, query: dict, title: str | None) -> Found | None:
        """The answer for ``query``, from the cache or the service; a title search keeps only an
        exact (case-insensitive) title match."""
        key = hashlib.sha256(json.dumps([provider, query], sort_keys=True).encode()).hexdigest()
        path = Path(self.params.cache_dir) / provider / f"{key}.json"
        if path.exists():
            candidates = json.loads(path.read_text())["candidates"]
        else:
            try:
                candidates = self._ask(provider, query)
            except requests.RequestException as exc:
                self.errors += 1
                log.warning("related_work lookup: %s %s failed: %s", provider, query, exc)
                return None
            with atomic_write(path) as handle:
                json.dump({"provider": provider, "query": query, "candidates": candidates}, handle,
                          sort_keys=True, ensure_ascii=False)
        by_id = "id_list" in query or "paper" in query
        for candidate in candidates:
            if by_id or title_key(candidate["title"]) == title_key(title):
                return candidate["title"], candidate["abstract"]
        return None

    def _ask(self, provider: str, query: dict) -> list[dict]:
        self._wait(provider)
        if provider == "arxiv":
            response = self.session.get(self.params.arxiv_url, params=query, timeout=self.params.timeout)
            response.raise_for_status()
            return _atom_entries(response.content)
        headers = {"x-api-key": key} if (key := os.environ.get(self.params.api_key_env)) else {}
        base, fields = self.params.semantic_scholar_url.rstrip("/"), {"fields": "title,abstract"}
        if "paper" in query:
            url, params = f"{base}/paper/{query['paper']}", fields
        else:
            url, params = f"{base}/paper/search/match", {"query": query["match"], **fields}
        response = self.session.get(url, params=params, headers=headers, timeout=self.params.timeout)
        if response.status_code == 404:  # no such paper / no title match
            return []
        response.raise_for_status()
        body = response.json()
        papers = body.get("data", []) if "data" in body else [body]
        return [{"title": p.get("title"), "abstract": p.get("abstract")} for p in papers if p.get("title")]

    def _wait(self, provider: str) -> None:
        """Space requests to one service ``min_interval`` seconds apart."""
        last = self._last_request.get(provider)
        if last is not None and (gap := self.params.min_interval - (self.clock() - last)) > 0:
            self.sleep(gap)
        self._last_request[provider] = self.clock()
        self.requests += 1


def _session(retries: int) -> requests.Session:
    retry = Retry(total=retries, status_forcelist=(429, 500, 502, 503, 504), backoff_factor=1.0,
                  allowed_methods=frozenset({"GET"}), respect_retry_after_header=True)
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def _quoted(title: str) -> str:
    """A title inside arXiv's quoted phrase search: no quotes, no runs of space."""
    return " ".join(re.sub(r'["]', " ", title).split())


def _atom_entries(content: bytes) -> list[dict]:
    """The papers of an arXiv API answer (its error entries, e.g. for a malformed id, left out)."""
    root = ET.fromstring(content)
    return [{"title": " ".join((entry.findtext(f"{_ATOM}title") or "").split()),
             "abstract": " ".join((entry.findtext(f"{_ATOM}summary") or "").split()) or None}
            for entry in root.iter(f"{_ATOM}entry")
            if entry.findtext(f"{_ATOM}title") and "/api/errors" not in (entry.findtext(f"{_ATOM}id") or "")]
