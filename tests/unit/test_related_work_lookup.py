"""The optional cited-abstract lookup against a local server that speaks the arXiv API (Atom) and
the Semantic Scholar Graph API: exact title matches only, identifiers first, a disk cache, spacing
between requests, errors counted and not cached."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from test_related_work import write_corpus

from citeworth.core.params import ParamsError, build
from citeworth.corpora.related_work.lookup import LookupParams, OnlineLookup
from citeworth.corpora.related_work.stage import DATASET_FILE, RelatedWorkParams, related_work
from citeworth.sources import InputSpec

ATOM = '<feed xmlns="http://www.w3.org/2005/Atom">{}</feed>'
ENTRY = "<entry><id>{id}</id><title>{title}</title><summary>{summary}</summary></entry>"
ARXIV = {"2101.00001": ("Attention Is\n  All You Need", "Transformers.")}
ARXIV_TITLES = [("Attention is all you need: a survey", "Not this one."),
                ("ATTENTION IS ALL YOU NEED", "Yes.")]
BY_TITLE = ("Not in the Corpus", "From S2 by title.")
S2_IDS = {"DOI:10.5/x": {"title": "By DOI", "abstract": "From S2 by DOI."}}
S2_TITLES = {"not in the corpus": {"title": "Not in the Corpus", "abstract": "From S2 by title."},
             "almost": {"title": "Almost the title, but longer", "abstract": "Wrong paper."}}


class Service:
    def __init__(self):
        self.requests: list[tuple[str, dict, dict]] = []
        self.fail = False
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        server.daemon_threads = True
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def _handler(self):
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urlsplit(self.path)
                query = {key: values[0] for key, values in parse_qs(parts.query).items()}
                service.requests.append((parts.path, query, dict(self.headers)))
                if service.fail:
                    return self._send(500, "text/plain", "down")
                if parts.path == "/api/query":
                    return self._send(200, "application/atom+xml", ATOM.format(_arxiv(query)))
                if parts.path == "/graph/v1/paper/search/match":
                    found = S2_TITLES.get(query["query"].lower())
                    return self._send(200, "application/json", json.dumps({"data": [found]})) if found else \
                        self._send(404, "application/json", '{"error": "Title match not found"}')
                found = S2_IDS.get(unquote(parts.path.removeprefix("/graph/v1/paper/")))
                return self._send(200, "application/json", json.dumps(found)) if found else \
                    self._send(404, "application/json", '{"error": "Paper not found"}')

            def _send(self, status, kind, body):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _arxiv(query: dict) -> str:
    if "id_list" in query:
        if query["id_list"] in ARXIV:
            title, summary = ARXIV[query["id_list"]]
            return ENTRY.format(id=f"http://arxiv.org/abs/{query['id_list']}v1", title=title, summary=summary)
        return ENTRY.format(id="http://arxiv.org/api/errors#incorrect_id_format", title="Error",
                            summary="incorrect id format")
    return "".join(ENTRY.format(id=f"http://arxiv.org/abs/x{i}", title=t, summary=s)
                   for i, (t, s) in enumerate(ARXIV_TITLES))


@pytest.fixture
def service():
    service = Service()
    yield service
    service.server.shutdown()
    service.server.server_close()


class Clock:
    """A clock that only sleeps move: the spacing of requests is checked without waiting."""

    def __init__(self):
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def lookup(service, tmp_path, providers, clock=None, **overrides) -> OnlineLookup:
    params = LookupParams(providers=providers, arxiv_url=f"{service.url}/api/query",
                          semantic_scholar_url=f"{service.url}/graph/v1", cache_dir=tmp_path / "cache",
                          retries=1, **overrides)
    clock = clock or Clock()
    return OnlineLookup(params, clock=clock, sleep=clock.sleep)


def test_arxiv_by_id_then_by_exact_title(service, tmp_path):
    online = lookup(service, tmp_path, ["arxiv"])
    assert online.find({"title": "whatever", "ids": {"arxiv": "2101.00001"}}) == (
        "Attention Is All You Need", "Transformers.")
    assert online.find({"title": "Attention is all you need.", "ids": {}}) == ARXIV_TITLES[1]
    assert online.find({"title": "Attention", "ids": {}}) is None  # only near misses come back
    assert online.find({"title": None, "ids": {"arxiv": "bad id"}}) is None  # arXiv's error entry is no paper
    assert service.requests[1][1]["search_query"] == 'ti:"Attention is all you need."'


def test_semantic_scholar_by_identifier_and_by_title_with_the_key_from_the_environment(service, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.setenv("S2_API_KEY", "secret-key")
    online = lookup(service, tmp_path, ["semantic_scholar"])
    assert online.find({"title": "ignored", "ids": {"doi": "10.5/x"}}) == ("By DOI", "From S2 by DOI.")
    assert online.find({"title": "Not in the corpus", "ids": {}}) == BY_TITLE
    assert online.find({"title": "almost", "ids": {}}) is None  # S2's best match is not the same title
    assert online.find({"title": None, "ids": {"pmid": "1"}}) is None  # 404
    assert {headers.get("x-api-key") for _, _, headers in service.requests} == {"secret-key"}
    assert service.requests[0][1]["fields"] == "title,abstract"


def test_answers_and_misses_are_cached_so_a_rerun_asks_nothing(service, tmp_path):
    queries = [{"title": "Not in the corpus", "ids": {}}, {"title": "Unknown", "ids": {}}]
    first = [lookup(service, tmp_path, ["arxiv", "semantic_scholar"]).find(q) for q in queries]
    asked = len(service.requests)
    again = lookup(service, tmp_path, ["arxiv", "semantic_scholar"])
    assert [again.find(q) for q in queries] == first
    assert len(service.requests) == asked and again.requests == 0


def test_requests_to_one_service_are_spaced(service, tmp_path):
    clock = Clock()
    online = lookup(service, tmp_path, ["arxiv"], clock=clock, min_interval=3.0)
    for title in ("one", "two", "three"):
        online.find({"title": title, "ids": {}})
    assert clock.sleeps == [3.0, 3.0]


def test_a_failing_service_is_counted_not_cached(service, tmp_path):
    service.fail = True
    online = lookup(service, tmp_path, ["semantic_scholar"])
    assert online.find({"title": "Not in the corpus", "ids": {}}) is None
    assert online.errors == 1 and len(service.requests) == 2  # one retry
    service.fail = False
    assert online.find({"title": "Not in the corpus", "ids": {}}) == BY_TITLE


def test_unknown_providers_are_refused():
    with pytest.raises(ParamsError, match=r"lookup.providers\[0\]: must be one of arxiv or semantic_scholar"):
        build(LookupParams, {"providers": ["crossref"]}, where="related_work.lookup")


def test_the_stage_fills_what_the_corpus_lacks_from_the_lookup(service, tmp_path):
    write_corpus(tmp_path / "tei")
    params = RelatedWorkParams(
        inputs=[InputSpec(reader="tei", glob=str(tmp_path / "tei" / "*.tei.xml"))],
        out_dir=tmp_path, stats_path=tmp_path / "stats.json", table_path=tmp_path / "stats.md",
        lookup=LookupParams(providers=["semantic_scholar"], semantic_scholar_url=f"{service.url}/graph/v1",
                            cache_dir=tmp_path / "cache", min_interval=0))
    summary = related_work(params)
    record = json.loads((params.out_dir / DATASET_FILE).read_text())
    assert record["CitedPaperText"] == {"1": "Abstract of B.", "2": "Abstract of C.", "3": BY_TITLE[1]}
    assert (summary["abstracts_from_corpus"], summary["abstracts_from_lookup"]) == (2, 1)
    assert json.loads(params.stats_path.read_text())["lookup"]["requests"] == 1  # what the corpus lacks
