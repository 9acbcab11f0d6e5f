"""The installed citeworth's version: what reports, the language server and the cited-works index
name as the tool that made them."""

from __future__ import annotations

import importlib.metadata


def tool_version() -> str:
    try:
        return importlib.metadata.version("citeworth")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"
