"""Errors a stage raises to fail its run with a clear, specific message: ``StageFailed`` (CLI exit
code 1), and ``InputError`` for what the user gave (exit 2)."""


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
