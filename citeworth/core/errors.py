"""Errors a stage raises to fail its run with a clear, specific message: ``StageFailed`` (CLI exit
code 1), and ``InputError`` for what the user gave (exit 2)."""

import errno
import os
import shutil
from pathlib import Path


class StageFailed(RuntimeError):
    """The stage ran but its result must stop the pipeline (e.g. a violated critical expectation)."""


class InputError(Exception):
    """An input or setting the user gave names nothing usable: ``citeworth`` exits 2 with the
    message, which names it, and no traceback. Raised as one of the two below, which handlers of
    the standard errors they also are still catch."""


class MissingInput(InputError, FileNotFoundError):
    """No file matches an input's glob (or its metadata pattern)."""


class InvalidSetting(InputError, ValueError):
    """An environment variable whose value cannot be used."""


def disk_full(exc: BaseException, where: str | os.PathLike) -> StageFailed | None:
    """``exc`` as a StageFailed naming the full disk and what to do, when it is (or was raised
    from) ENOSPC; else None: the bare "[Errno 28] No space left on device" names neither the disk
    nor the way out."""
    while exc is not None and not (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        exc = exc.__cause__ or exc.__context__
    if exc is None:
        return None
    path = Path(exc.filename or where)
    folder = next((parent for parent in (path, *path.parents) if parent.exists()), Path(where))
    free = shutil.disk_usage(folder).free / 2**20
    return StageFailed(f"no space left on the disk holding {path} ({free:.0f} MiB free now): free space "
                       "there, or point CITEWORTH_WORKSPACES at a larger disk, and run it again (outputs "
                       "are written whole or not at all: the finished ones are kept)")
