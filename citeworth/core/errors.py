"""Errors a stage raises to fail its run with a clear, specific message (CLI exit code 1)."""


class StageFailed(RuntimeError):
    """The stage ran but its result must stop the pipeline (e.g. a violated critical expectation)."""
