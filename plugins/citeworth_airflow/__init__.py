"""What Airflow needs beyond the citeworth library: task callables, a DVC versioning operator,
a Semantic Scholar hook and the results page. The DAG files in ``dags/`` only wire these up.

Everything heavy (the stages, DVC, torch) is imported inside task bodies, never at module level,
so a DAG file that imports this package still parses in milliseconds.
"""

import logging
import time
from pathlib import Path


def project() -> Path:
    """The project checkout the tasks work in: $CITEWORTH_PROJECT_DIR, else the folder above plugins/."""
    from citeworth.orchestration.workspace import project_dir

    return project_dir(default=Path(__file__).resolve().parents[2])


FOLLOW_EVERY_S = 30.0  # how often the results page looks at the git remote (the remote form)
_followed_at: float | None = None  # when it last did (time.monotonic)


def results_root() -> Path:
    """Where the results page reads: the branch's latest versioned results (a worktree the version
    step refreshes; in the remote form one following the git remote), else the project checkout
    itself (results of `dvc repro` there)."""
    from citeworth.orchestration.git_remote import remote_url
    from citeworth.orchestration.runs import results_view

    root = project()
    if (url := remote_url()) and (_followed_at is None or time.monotonic() - _followed_at >= FOLLOW_EVERY_S):
        _follow(root, url)
    return results_view(root) or root


def _follow(root: Path, url: str) -> None:
    global _followed_at
    from citeworth.core.errors import StageFailed
    from citeworth.orchestration.experiments import follow_remote

    try:
        follow_remote(root, url)
        _followed_at = time.monotonic()
    except (OSError, StageFailed) as exc:  # the remote out of reach: the page shows what it had
        logging.getLogger(__name__).warning("results page: could not follow %s: %s", url, exc)


def page_root() -> Path:
    """Where the results page reads by default: the checkout when it holds results of its own (a
    `dvc repro` there), else the latest results: in a deployment runs build in their own workspaces
    and the checkout holds none."""
    from citeworth.orchestration.workspace import RESULT_FILES

    root = project()
    return root if any((root / path).is_file() for path in RESULT_FILES.values()) else results_root()
