"""Keep secrets out of logs, manifests and error messages.

What carries a secret, and where it shows:

- presigned URLs carry it in the query string (``X-Amz-Signature``, ``X-Amz-Credential``,
  ``X-Amz-Security-Token``, SigV2 ``Signature``), sometimes percent-encoded inside another string
  (``%3FX-Amz-Signature%3D...``), sometimes without a scheme (``host:port/path?sig=...``);
- URLs with user info (``https://user:pass@host``, ``user:pass@host:port``);
- headers and signing logs at DEBUG: botocore prints the request's headers as a dict
  (``'Authorization': b'AWS4-HMAC-SHA256 Credential=..., Signature=...'``,
  ``'X-Amz-Security-Token': b'...'``), its canonical request (``x-amz-security-token:...``) and
  ``Signature:`` lines; a response body may hold ``<SessionToken>`` elements;
- values the code knows are secret (the S2 API key, the AWS secret key and session token),
  registered with ``register_secret``.

``redact`` rewrites all of these to ``<redacted>``. ``install_log_redaction`` makes every log
record of the process pass through it when it is created, whichever logger made it and whichever
handler prints it (a filter on handlers would be lost: tqdm's ``logging_redirect_tqdm`` swaps the
console handler for its own while a download runs).
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import quote, urlsplit, urlunsplit

REDACTED = "<redacted>"

# Names whose value is a credential: query parameters, headers, dict keys, XML elements. A
# tokenizer's special tokens (``pad_token: [PAD]`` in a model's config log) are vocabulary, not secrets.
_NAME = (r"(?<![A-Za-z_-])(?!(?:pad|unk|cls|sep|mask|bos|eos)_token\b)"
         r"(?:[\w-]*(?:signature|credential|token|api-?key|password|passwd|"
         r"secret(?:[-_]?access)?(?:[-_]?key)?)|authorization|awsaccesskeyid|sig)")
# An HTTP auth scheme in front of the credential of an Authorization value.
_AUTH_SCHEME = r"(?:(?:bearer|basic|digest|token|aws4-hmac-sha256|aws)\s+)?"
_RULES: list[tuple[re.Pattern, str]] = [
    # a query string of name=value pairs after anything (URL, path, host:port/path), plain or encoded
    (re.compile(r"(?<=\S)\?(?=[\w.~%-]+(?:=|%3D))[^\s'\"<>]+", re.I), f"?{REDACTED}"),
    (re.compile(r"(?<=\S)%(?:25)?3F(?=[\w.~-]+%(?:25)?3D)[^\s'\"<>]+", re.I), f"%3F{REDACTED}"),
    # user info: scheme://anything@host, and user:password@host without a scheme
    (re.compile(r"(?<=://)[^\s/?#@'\"<>]+@"), f"{REDACTED}@"),
    (re.compile(r"(?<![^\s'\"(<=,])[^\s/?#@'\"<>:]+:[^\s/?#@'\"<>]+@(?=[\w.-])"), f"{REDACTED}@"),
    # 'X-Amz-Security-Token': b'...', "password": "..." (the value may hold spaces)
    (re.compile(rf"""(?P<key>(?P<q>['"]){_NAME}(?P=q)\s*:\s*b?)(?P<v>['"]).*?(?P=v)""", re.I),
     rf"\g<key>\g<v>{REDACTED}\g<v>"),
    # <SessionToken>...</SessionToken>
    (re.compile(rf"(?P<open><(?P<tag>{_NAME})>)[^<]*(?=</(?P=tag)>)", re.I), rf"\g<open>{REDACTED}"),
    # name=value, name: value, name:\nvalue (botocore's "Signature:" and canonical header lines)
    (re.compile(rf"(?P<key>{_NAME}\s*[=:]\s*){_AUTH_SCHEME}[^\s&'\",;<>]+", re.I), rf"\g<key>{REDACTED}"),
    # name%3Dvalue, once or twice percent-encoded, up to the next encoded '&'
    (re.compile(rf"(?P<key>{_NAME}%(?:25)?3D)(?:(?!%(?:25)?26)[^\s&'\"<>])+", re.I), rf"\g<key>{REDACTED}"),
]
_SECRETS: set[str] = set()
_FACTORY_LOCK = threading.Lock()
_factory_installed = False


def register_secret(value: str | None) -> None:
    """Redact ``value`` (e.g. an API key), also percent-encoded, wherever ``redact`` runs from now on."""
    if value:
        _SECRETS.update({value, quote(value, safe="")})


def redact(text: object) -> str:
    """``text`` with credentials in URLs, headers, signing logs and registered secrets replaced."""
    out = str(text)
    for secret in sorted(_SECRETS, key=len, reverse=True):  # a secret before its own substrings
        out = out.replace(secret, REDACTED)
    for pattern, replacement in _RULES:
        out = pattern.sub(replacement, out)
    return out


def public_url(url: str) -> str:
    """The URL without query string, fragment or user info: safe to log and to record as an origin."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def install_log_redaction() -> None:
    """From now on, every log record's message, traceback and stack text pass through ``redact``."""
    global _factory_installed
    with _FACTORY_LOCK:
        if _factory_installed:
            return
        make_record = logging.getLogRecordFactory()

        def redacting_record(*args, **kwargs) -> logging.LogRecord:
            return _redacted(make_record(*args, **kwargs))

        logging.setLogRecordFactory(redacting_record)
        _factory_installed = True


def _redacted(record: logging.LogRecord) -> logging.LogRecord:
    try:
        message = record.getMessage()
    except (TypeError, ValueError):  # arguments that do not fit the format: keep both, redacted
        message = f"{record.msg} {record.args!r}"
    record.msg, record.args = redact(message), None
    if record.exc_info and not record.exc_text:
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record
