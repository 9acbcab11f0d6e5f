"""Keep secrets out of logs, manifests and error messages.

Presigned URLs carry their signature in the query string and the S2 API key travels in a header;
both must never be printed. ``redact`` strips every URL query string and every registered secret;
``install_log_redaction`` applies it to the loggers that print request URLs (urllib3 at DEBUG).
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit, urlunsplit

REDACTED = "<redacted>"
_URL_QUERY = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s?#'\"<>]*|(?<![\w/])/[^\s?#'\"<>]*)\?[^\s'\"<>]+", re.I)
_SECRETS: set[str] = set()
# Loggers that print request lines; our own loggers only ever log redacted origins.
_URL_LOGGERS = ("urllib3.connectionpool", "urllib3.util.retry", "botocore.endpoint", "botocore.auth")


def register_secret(value: str | None) -> None:
    """Redact ``value`` (e.g. an API key) wherever ``redact`` runs from now on."""
    if value:
        _SECRETS.add(value)


def redact(text: object) -> str:
    """``text`` with URL query strings and registered secrets replaced by ``<redacted>``."""
    out = _URL_QUERY.sub(rf"\1?{REDACTED}", str(text))
    for secret in _SECRETS:
        out = out.replace(secret, REDACTED)
    return out


def public_url(url: str) -> str:
    """The URL without query string, fragment or user info: safe to log and to record as an origin."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class RedactingFilter(logging.Filter):
    """Rewrites a record's message through ``redact`` before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


def install_log_redaction() -> None:
    for name in _URL_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
