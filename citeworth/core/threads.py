"""torch's CPU thread count for the span of a stage (the setting is process-wide)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Use ``threads`` CPU threads inside the block (None or 0: torch's default), then restore,
    so a stage run in a long-lived process (a test, a worker) leaves the setting as it found it."""
    import torch

    previous = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
