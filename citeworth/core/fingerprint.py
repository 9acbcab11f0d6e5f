"""Fingerprints of finished work: what a cached result must match to be reused."""

from __future__ import annotations

import hashlib
from typing import Any

from citeworth.core.io import dumps


def digest(obj: Any) -> str:
    """A short, stable digest of JSON-able ``obj`` (canonical JSON, sorted keys)."""
    return hashlib.sha256(dumps(obj).encode()).hexdigest()[:16]
