"""Programs some integration tests need besides the Python packages: Debian packages that
``make test`` installs where it can (as root with apt-get, as in CI)."""

from __future__ import annotations

import os
import shutil

import pytest


def installed(*names: str, package: str, needed_for: str) -> str:
    """The path of the first of ``names`` on PATH. When none is there the calling test module is
    skipped, saying how to install it; under ``CI=true`` the run fails instead: CI's setup installs
    it, so its absence means a broken setup, not a laptop without it."""
    found = next(filter(None, map(shutil.which, names)), None)
    if found:
        return found
    reason = f"{names[0]} is not installed (Debian: apt-get install {package}): {needed_for}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; with CI=true it must be there (`make test` installs it as root)",
                    pytrace=False)
    pytest.skip(reason, allow_module_level=True)
