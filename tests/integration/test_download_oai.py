"""arXiv categories over OAI-PMH against a real HTTP server on loopback that answers like arXiv's:
GetRecord in the ``arXiv`` metadata format, ``idDoesNotExist`` errors, and 503 + Retry-After flow
control, which the harvester must wait out and retry."""

from __future__ import annotations

import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from citeworth.download.oai import METADATA_FILE, tar_paper_ids, write_categories
from citeworth.download.remote import DownloadError
from citeworth.download.transports import Network, http_session

RECORD = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-01-01T00:00:00Z</responseDate>
<request verb="GetRecord">https://oaipmh.arxiv.org/oai</request><GetRecord><record>
<header><identifier>oai:arXiv.org:{id}</identifier><datestamp>2023-01-09</datestamp></header>
<metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>{id}</id><created>2022-12-05</created>
<authors><author><keyname>Doe</keyname></author></authors><title>A title
  on two lines</title><categories>{categories}</categories><doi>10.1/{id}</doi></arXiv></metadata>
</record></GetRecord></OAI-PMH>"""
ERROR = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><error code="{code}">{text}</error></OAI-PMH>"""
CATEGORIES = {"2212.00001": "cs.CL cs.LG", "2212.00002": "math.PR", "hep-th/9901001": "hep-th"}


class FakeArxiv:
    """OAI-PMH GetRecord for CATEGORIES; the first request for each id in ``throttle`` gets 503."""

    def __init__(
        self, throttle: set[str] = frozenset(), broken: bool = False, categories: dict | None = None
    ):
        self.categories = CATEGORIES if categories is None else categories
        self.requests: list[tuple[int, str]] = []
        self.throttle = set(throttle)
        self.broken = broken
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/oai"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                query = parse_qs(urlparse(self.path).query)
                identifier = query["identifier"][0].removeprefix("oai:arXiv.org:")
                assert query["verb"] == ["GetRecord"] and query["metadataPrefix"] == ["arXiv"]
                if identifier in fake.throttle:
                    fake.throttle.discard(identifier)
                    return self._answer(503, b"busy", {"Retry-After": "1"}, identifier)
                if fake.broken:
                    return self._answer(
                        200, ERROR.format(code="badArgument", text="nope").encode(), {}, identifier
                    )
                if identifier not in fake.categories:
                    body = ERROR.format(code="idDoesNotExist", text="unknown")
                else:
                    body = RECORD.format(id=identifier, categories=fake.categories[identifier])
                self._answer(200, body.encode(), {"Content-Type": "text/xml"}, identifier)

            def _answer(self, status: int, body: bytes, headers: dict, identifier: str):
                fake.requests.append((status, identifier))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


@pytest.fixture
def session():
    return http_session(Network(retries=3, backoff=0.01, timeout=10))


def bulk_tar(path, names: list[str]) -> None:
    with tarfile.open(path, "w") as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"abc"))


def test_categories_of_a_bulk_tars_papers_with_flow_control_and_resume(tmp_path, session):
    bulk_tar(
        tmp_path / "arXiv_src_2212_001.tar",
        ["2212/2212.00001.gz", "2212/2212.00002.pdf", "2212/2212.99999.gz", "9901/hep-th9901001.gz"],
    )
    ids = tar_paper_ids([tmp_path / "arXiv_src_2212_001.tar"])
    assert ids == ["2212.00001", "2212.00002", "2212.99999", "hep-th/9901001"]
    arxiv = FakeArxiv(throttle={"2212.00002"})
    try:
        path = write_categories(tmp_path, ids, session, arxiv.url, delay=0.0, timeout=10)
        assert path == tmp_path / METADATA_FILE
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert [(r["id"], r["categories"]) for r in rows] == [
            ("2212.00001", "cs.CL cs.LG"),
            ("2212.00002", "math.PR"),
            ("hep-th/9901001", "hep-th"),
        ]
        assert rows[0]["title"] == "A title on two lines" and rows[0]["doi"] == "10.1/2212.00001"
        assert rows[0]["versions"] == [{"version": "v1", "created": "2022-12-05"}]
        assert (503, "2212.00002") in arxiv.requests and (
            200,
            "2212.00002",
        ) in arxiv.requests  # waited, retried
        before = path.read_bytes()
        arxiv.requests.clear()
        write_categories(tmp_path, ids, session, arxiv.url, delay=0.0, timeout=10)
        assert [identifier for _, identifier in arxiv.requests] == ["2212.99999"]  # only the unknown id again
        assert path.read_bytes() == before
    finally:
        arxiv.server.shutdown()


def test_an_oai_error_other_than_an_unknown_id_fails_clearly(tmp_path, session):
    arxiv = FakeArxiv(broken=True)
    try:
        with pytest.raises(DownloadError, match="badArgument"):
            write_categories(tmp_path, ["2212.00001"], session, arxiv.url, delay=0.0, timeout=10)
    finally:
        arxiv.server.shutdown()
