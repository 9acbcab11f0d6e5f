"""A recorded GROBID service on 127.0.0.1 for the tests: a real HTTP server with GROBID's API.

``/api/isalive`` answers ``true``, ``/api/version`` the version recorded in the TEI, and
``/api/processFulltextDocument`` takes the multipart upload and answers with the real TEI GROBID
wrote for the mirrored PDF (grobid_client_python's test_pdf). What it answers for a PDF can be
scripted by file name (``script["a.pdf"] = ["busy", "ok"]``, one action per request, the last
repeating; ``default`` for unscripted names):

``ok`` (200 + TEI), ``busy`` (503), ``error`` (500), ``no_content`` (204), ``("slow", seconds)``
(wait, then 200), ``truncated`` (Content-Length of the whole TEI, half of it sent, connection
closed), ``malformed`` (200 with half a TEI), ``drop`` (connection closed without an answer).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RECORDED = "github/kermitt2/grobid_client_python/resources/test_pdf/0046d83a-edd6-4631-b57c-755cdcce8b7f"
RECORDED_VERSION = "0.6.1"  # <application version="0.6.1" ident="GROBID"> in the recorded TEI


class RecordedGrobid:
    def __init__(self, mirror: Path):
        self.tei = (mirror / f"{RECORDED}.tei.xml").read_bytes()
        self.pdf = mirror / f"{RECORDED}.pdf"
        self.script: dict[str, list] = {}
        self.default: str | tuple = "ok"
        self.requests: list[dict] = []  # {"file": name, "fields": {name: [values]}} per upload
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RecordedGrobid:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_action(self, name: str):
        with self._lock:
            actions = self.script.get(name)
            if not actions:
                return self.default
            return actions.pop(0) if len(actions) > 1 else actions[0]

    def uploads(self, name: str) -> int:
        return sum(1 for request in self.requests if request["file"] == name)


def _handler(grobid: RecordedGrobid) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet test output
            pass

        def do_GET(self) -> None:
            answers = {"/api/isalive": b"true", "/api/version": RECORDED_VERSION.encode()}
            if self.path not in answers:
                return self._send(404, b"not found")
            self._send(200, answers[self.path], "text/plain")

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path != "/api/processFulltextDocument":
                return self._send(404, b"not found")
            name, fields = _multipart(self.headers.get("Content-Type", ""), body)
            with grobid._lock:
                grobid.requests.append({"file": name, "fields": fields})
            if name is None:
                return self._send(400, b"no input file")
            self._act(grobid.next_action(name))

        def _act(self, action) -> None:
            tei = grobid.tei
            if isinstance(action, tuple) and action[0] == "slow":
                time.sleep(action[1])
                action = "ok"
            if action == "ok":
                self._send(200, tei, "application/xml")
            elif action == "busy":
                self._send(503, b"")
            elif action == "error":
                self._send(500, b"[GENERAL] An exception occurred while running Grobid.")
            elif action == "no_content":
                self._send(204, b"")
            elif action == "malformed":
                self._send(200, tei[: len(tei) // 2], "application/xml")
            elif action == "truncated":
                self.send_response(200)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(tei)))
                self.end_headers()
                self.wfile.write(tei[: len(tei) // 2])
                self.wfile.flush()
                self.close_connection = True
            elif action == "drop":
                self.close_connection = True
            else:
                raise ValueError(f"unknown action {action!r}")

        def _send(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 204:
                self.wfile.write(body)

    return Handler


def _multipart(content_type: str, body: bytes) -> tuple[str | None, dict[str, list[str]]]:
    """The uploaded file's name (field ``input``) and the other form fields."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    name, fields = None, defaultdict(list)
    for part in message.iter_parts() if message.is_multipart() else []:
        field = part.get_param("name", header="content-disposition")
        if field == "input":
            name = part.get_filename()
        else:
            fields[field].append(part.get_content().strip())
    return name, dict(fields)
